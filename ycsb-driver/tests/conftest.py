"""Shared fixtures: paths of the built tools and workload files."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest
from acbench.server import free_port

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


SERVER = BIN / "memcached-ac"


@contextlib.contextmanager
def running_server(mem_mb: int, ac_options: str, threads: int = 4) -> Iterator[int]:
    """memcached-ac on a free 127.0.0.1 port (yields the port), stopped by its PID."""
    assert SERVER.exists(), f"{SERVER} missing: run make -C memcached all"
    port = free_port()
    cmd = [str(SERVER), "-p", str(port), "-U", "0", "-l", "127.0.0.1", "-m", str(mem_mb),
           "-t", str(threads), "-o", ac_options]
    if os.geteuid() == 0:
        cmd[1:1] = ["-u", "root"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"memcached-ac did not start: {proc.stderr.read()!r}")
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
