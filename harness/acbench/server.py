"""memcached-ac command lines and the text-protocol bits the runner needs."""
from __future__ import annotations

import random
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from acbench import paths

DRIVER_OPTION = "ac_driver"


class ServerError(RuntimeError):
    pass


def supports_driver(binary: Path | None = None) -> bool:
    """True when memcached-ac has the in-process driver (`-h` lists ac_driver)."""
    b = binary or paths.binary("memcached-ac")
    try:
        out = subprocess.run([str(b), "-h"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return DRIVER_OPTION in out.stdout + out.stderr


def options(policy: str, spill_dir: Path, extra: dict[str, Any], flags: tuple[str, ...] = ()) -> list[str]:
    """The -o list: the policy, the spill directory, key=value settings, then bare flags."""
    opts = [f"ac_policy={policy}", f"ac_spill_dir={spill_dir}"]
    opts += [f"{k}={v}" for k, v in extra.items()]
    return opts + list(flags)


def server_cmd(item_mb: int, threads: int, opts: list[str], port: int | None) -> list[str]:
    """memcached-ac as a server on 127.0.0.1:port (None: no TCP, e.g. to measure RSS)."""
    cmd = [str(paths.binary("memcached-ac")), "-u", "root", "-U", "0", "-l", "127.0.0.1",
           "-p", str(port if port is not None else 0), "-t", str(threads), "-m", str(item_mb)]
    return cmd + ["-o", ",".join(opts)]


def driver_cmd(item_mb: int, threads: int, opts: list[str], workload_file: str, out_json: Path,
               props: dict[str, Any], trace: str = "") -> list[str]:
    """memcached-ac running the workload in-process (no network) and exiting; with a trace, replaying
    it instead (ycsb-driver/README.md "Replaying a trace"; the properties still apply)."""
    drv = [f"ac_driver_trace={trace}" if trace else f"ac_driver={workload_file}", f"ac_driver_out={out_json}"]
    drv += [f"ac_driver_set={k}={_prop(v)}" for k, v in props.items()]
    return server_cmd(item_mb, threads, opts + drv, None)


def ycsb_mc_cmd(workload_file: str, props: dict[str, Any], port: int, phase: str, out_json: Path,
                threads: int = 1, conns: int = 1, depth: int = 1) -> list[str]:
    cmd = [str(paths.binary("ycsb-mc")), "-P", workload_file]
    for k, v in props.items():
        cmd += ["-p", f"{k}={_prop(v)}"]
    return cmd + ["--server", f"127.0.0.1:{port}", "--phase", phase, "-o", str(out_json),
                  "--threads", str(threads), "--conns", str(conns), "--depth", str(depth)]


def ycsb_trace_cmd(workload_file: str, props: dict[str, Any], out: Path) -> list[str]:
    cmd = [str(paths.binary("ycsb-trace")), "-P", workload_file]
    for k, v in props.items():
        cmd += ["-p", f"{k}={_prop(v)}"]
    return cmd + ["-o", str(out)]


def _prop(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


# Ports for the servers the harness and the tests start are taken below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range), from which every outgoing connection gets its source port: a port
# the kernel hands out for bind(0) may be some client's source port by the time the server binds it
# ("Address already in use"; seen with tier remote's servers while the suite's clients ran).
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LISTEN_SPAN = 12000
FIRST_LISTEN_PORT = 1024


def listen_range() -> tuple[int, int] | None:
    """(lowest, highest) port to pick from: the LISTEN_SPAN ports below the ephemeral range; None if
    there is no room below it (then the kernel picks)."""
    try:
        low = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    if low - 1 - FIRST_LISTEN_PORT < 1000:
        return None
    return max(FIRST_LISTEN_PORT, low - LISTEN_SPAN), low - 1


def free_port() -> int:
    """A port on 127.0.0.1 nothing is bound to now: a random one of listen_range() (another process
    may pick the same one only by chance), else the kernel's choice."""
    span = listen_range()
    if span is not None:
        rng = random.SystemRandom()
        for _ in range(100):
            port = rng.randint(*span)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"memcached-ac exited with status {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise ServerError(f"memcached-ac did not listen on 127.0.0.1:{port} within {timeout:g} s")


def stats(port: int, sub: str = "") -> dict[str, str]:
    """`stats [sub]` as a dict of strings."""
    cmd = f"stats {sub}".strip().encode() + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(cmd)
        buf = b""
        while not buf.endswith(b"END\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise ServerError(f"connection closed during {cmd!r}")
            buf += chunk
            if buf.startswith(b"ERROR") or buf.startswith(b"CLIENT_ERROR"):
                raise ServerError(f"{cmd.decode().strip()}: {buf.decode().strip()}")
    out: dict[str, str] = {}
    for line in buf.decode().splitlines():
        f = line.split(" ", 2)
        if len(f) == 3 and f[0] == "STAT":
            out[f[1]] = f[2]
    return out
