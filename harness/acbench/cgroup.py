"""Access to cgroups/acg_lib (not an installed package: imported from the repository)."""
from __future__ import annotations

import sys
from types import ModuleType

from acbench import paths


def acg() -> ModuleType:
    d = str(paths.cgroups_dir())
    if d not in sys.path:
        sys.path.insert(0, d)
    import acg_lib
    return acg_lib
