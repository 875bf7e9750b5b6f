"""Where things are: the repository, build/bin tools, caches, default results."""
from __future__ import annotations

import os
from pathlib import Path


def top() -> Path:
    """The repository root ($TOP, else the directory above harness/)."""
    env = os.environ.get("TOP")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2]


def build() -> Path:
    return top() / "build"


def binary(name: str) -> Path:
    """A tool in build/bin ($ACBENCH_BIN overrides the directory)."""
    d = os.environ.get("ACBENCH_BIN")
    return (Path(d) if d else build() / "bin") / name


def cache_dir() -> Path:
    d = build() / "acbench"
    d.mkdir(parents=True, exist_ok=True)
    return d


def default_results() -> Path:
    return build() / "results"


def cgroups_dir() -> Path:
    return top() / "cgroups"
