"""Where a result came from: git revision, kernel, CPU model, date."""
from __future__ import annotations

import datetime
import platform
import subprocess
from pathlib import Path

from acbench import paths


def git_revision() -> str:
    try:
        r = subprocess.run(["git", "-C", str(paths.top()), "describe", "--always", "--dirty", "--abbrev=12"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, str | int]:
    import os
    return {"git_revision": git_revision(), "kernel": platform.release(), "cpu_model": cpu_model(),
            "cpus": os.cpu_count() or 0}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
