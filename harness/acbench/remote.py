"""The remote servers of a cell whose approach runs tier remote (policies/tier/remote.c): stock
memcached-ac processes the harness starts before the cell, outside its cgroup (another server's
memory, RAM-DUR's tier below local memory), each with -M (refuse rather than evict: an evicted
record would be a lost item) and items up to 2 MiB (a record is an item and its header), sized so
that every copy fits. Stopped by their own PIDs when the cell ends, also on failure, and recorded
with acbench's leftovers until then."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from acbench import leftovers, paths, server

MIB = 1 << 20
SERVERS = 2
COPIES = 2
# each server holds COPIES/SERVERS of the records; an item of memcached's slab classes takes up to
# 1.25x its size: 1.5x the data and 64 MiB of slack
MEM_FACTOR = 1.5
MEM_EXTRA_MB = 64


class RemoteError(RuntimeError):
    pass


def uses_remote(options: dict[str, Any]) -> bool:
    return options.get("ac_tier") == "remote"


def server_mb(data_bytes: int, servers: int = SERVERS, copies: int = COPIES) -> int:
    return int(MEM_FACTOR * data_bytes * copies / servers / MIB) + MEM_EXTRA_MB


class RemoteServers:
    """options() names them (ports chosen), start() starts them, stop() stops them by PID."""

    def __init__(self, data_bytes: int, log_dir: Path, servers: int = SERVERS, copies: int = COPIES):
        self.mb = server_mb(data_bytes, servers, copies)
        self.copies = copies
        self.ports = [server.free_port() for _ in range(servers)]
        self.log_dir = Path(log_dir)
        self.procs: list[subprocess.Popen] = []

    def options(self) -> dict[str, str]:
        return {"ac_remote": "+".join(f"127.0.0.1:{p}" for p in self.ports), "ac_remote_copies": str(self.copies)}

    def start(self) -> None:
        for i, port in enumerate(self.ports):
            cmd = [str(paths.binary("memcached-ac")), "-u", "root", "-U", "0", "-l", "127.0.0.1",
                   "-p", str(port), "-t", "2", "-m", str(self.mb), "-M", "-I", "2m"]
            with open(self.log_dir / f"remote{i}.txt", "w") as err:
                p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
            self.procs.append(p)
            leftovers.track_process(p.pid, Path(cmd[0]).name)
            try:
                server.wait_port(port, p)
            except Exception as e:
                raise RemoteError(f"remote server on port {port} did not start: {e}") from e

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait(10)
        self.procs = []
        leftovers.prune_processes()


def for_cell(options: dict[str, Any], data_bytes: int, log_dir: Path) -> RemoteServers | None:
    return RemoteServers(data_bytes, log_dir) if uses_remote(options) else None
