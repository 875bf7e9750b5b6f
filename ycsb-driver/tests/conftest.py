"""Shared fixtures: paths of the built tools and workload files."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

TOP = Path(os.environ.get("TOP", Path(__file__).resolve().parents[2]))
BIN = TOP / "build" / "bin"
WORKLOADS = TOP / "experiments" / "workloads"


def fnvhash64(val: int) -> int:
    """YCSB's Utils.fnvhash64, written from the FNV-1a definition."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= val & 0xFF
        val >>= 8
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    signed = h - (1 << 64) if h >= (1 << 63) else h
    return abs(signed)


@pytest.fixture(scope="session")
def ycsb_trace() -> Path:
    path = BIN / "ycsb-trace"
    assert path.exists(), f"{path} missing: run make -C ycsb-driver all"
    return path


@pytest.fixture(scope="session")
def ycsb_mc() -> Path:
    path = BIN / "ycsb-mc"
    assert path.exists(), f"{path} missing: run make -C ycsb-driver all"
    return path
