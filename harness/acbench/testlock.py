"""The lock that keeps the test suites' machine-state tests apart under pytest-xdist (harness/tests
and memcached/tests conftest.py): an exclusive flock on a file in the pytest run's temporary root,
which every xdist worker's base directory is a child of."""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from typing import Any, Iterator


@contextmanager
def machine_state_lock(tmp_path_factory: Any) -> Iterator[None]:
    """Held while the block runs; released when it ends, also on failure."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    with open(root / "machine-state.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
