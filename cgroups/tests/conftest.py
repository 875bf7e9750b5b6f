"""Shared helpers for the acg tests: run the executable, find and clean up its groups."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CGROUPS = HERE.parent
sys.path.insert(0, str(CGROUPS))

from acg_lib.detect import detect  # noqa: E402
from acg_lib.errors import AcgError  # noqa: E402
from acg_lib.registry import Registry  # noqa: E402
from acg_lib.remove import remove_group  # noqa: E402

ACG = CGROUPS / "acg"
HOG = HERE / "hog.py"


def real_backend():
    try:
        return detect()
    except AcgError:
        return None


needs_cgroups = pytest.mark.skipif(os.geteuid() != 0 or real_backend() is None,
                                   reason="needs root and a cgroup memory controller")


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def wait_for(pred, what: str, limit: float = 30.0):
    """Poll pred() until it returns something truthy; fail (not time) after `limit` s."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


class AcgRuns:
    """Starts acg processes; removes every group they may have left, by exact path."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.procs: list[subprocess.Popen] = []
        self.backend = real_backend()

    def start(self, *args: str, name: str | None = None) -> subprocess.Popen:
        # SIGINT at its default for acg and the command it runs: a suite started in the background
        # by a shell without job control (make test from `cmd &`) inherits it ignored, so neither
        # acg nor its command would ever see the SIGINT a test sends (60 s timeout)
        p = subprocess.Popen([str(ACG), *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.procs.append(p)
        if name is not None and self.backend is not None:
            self.paths.append(self.backend.group_path(f"{name}.{p.pid}"))
        return p

    def run(self, *args: str, name: str | None = None) -> subprocess.CompletedProcess:
        p = self.start(*args, name=name)
        out, err = p.communicate(timeout=300)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def path_of(self, p: subprocess.Popen, name: str) -> Path:
        return self.backend.group_path(f"{name}.{p.pid}")

    def close(self) -> list[str]:
        problems = []
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            for pipe in (p.stdout, p.stderr):
                if pipe is not None:
                    pipe.close()
        for path in self.paths:
            if path.exists():
                problems.append(f"{path} was left behind")
                remove_group(self.backend, path, [], 10.0)
            Registry().forget_group(path)
        return problems


@pytest.fixture
def acg():
    runs = AcgRuns()
    try:
        yield runs
    finally:
        problems = runs.close()
    assert not problems, problems


def kill_pid(pid: int, cmdline_part: str) -> None:
    """SIGKILL pid if it is still the process we started (its cmdline contains the part)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except FileNotFoundError:
        return
    if cmdline_part in cmd:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
