"""Helpers for the memcached-ac integration tests: starting and stopping a server,
a pymemcache client that returns flags, a small raw protocol client (text, meta,
binary) for exact reply lines, and deterministic test data."""
from __future__ import annotations

import json
import os
from collections import Counter
import random
import signal
import socket
import stat
import struct
import subprocess
import time
from urllib.parse import unquote
from dataclasses import dataclass, field
from pathlib import Path

from acbench.server import free_port  # noqa: F401  (the tests import it from here)
from pymemcache.client.base import Client

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("MEMCACHED_AC_BIN", ROOT / "build" / "bin" / "memcached-ac"))
HOST = "127.0.0.1"
MiB = 1 << 20


def server_argv(port: int, mem: int = 16, threads: int = 4, ac: dict | None = None,
                extra: tuple[str, ...] = ()) -> list[str]:
    argv = [str(BIN), "-U", "0", "-l", HOST, "-p", str(port), "-m", str(mem), "-u", "root",
            "-t", str(threads), *extra]
    if ac:
        argv += ["-o", ",".join(f"{k}={v}" for k, v in ac.items())]
    return argv


_LISTING: dict | None = None


def keeps_files(ac: dict) -> bool:
    """The pair ac names keeps files in its spill directory (its tier's "files" capability, from
    -o ac_list): the server makes the directory then, and removes it at exit; tier nvm keeps none."""
    global _LISTING
    if _LISTING is None:
        _LISTING = json.loads(subprocess.run([str(BIN), "-o", "ac_list"], stdin=subprocess.DEVNULL,
                                             capture_output=True, text=True, timeout=30, check=True).stdout)
    policies = {p["name"]: p for p in _LISTING["policies"]}
    tier = ac.get("ac_tier") or policies.get(ac.get("ac_policy", "lru"), {}).get("default_tier", "")
    return any(t["name"] == tier and "files" in t["caps"] for t in _LISTING["tiers"])


@dataclass
class Server:
    """One memcached-ac process. stop() always ends it by its own PID."""
    proc: subprocess.Popen
    port: int
    spill_dir: Path | None
    argv: list[str]
    stderr_path: Path
    stopped: bool = False
    exit_code: int | None = None
    _clients: list = field(default_factory=list)
    # tier remote: the memcached servers holding its spilled records, stopped after it
    backing: list = field(default_factory=list)

    def client(self, timeout: float = 60) -> Client:
        c = Client((HOST, self.port), serde=FlagSerde(), connect_timeout=5, timeout=timeout,
                   default_noreply=False, no_delay=True)
        self._clients.append(c)
        return c

    def raw(self, timeout: float = 60) -> "Raw":
        r = Raw(self.port, timeout)
        self._clients.append(r)
        return r

    def stats(self, sub: str | None = "anticache") -> dict[str, str]:
        with Raw(self.port) as r:
            return r.stats(sub)

    def ac(self) -> dict[str, int | str]:
        """`stats anticache` with numeric values as int."""
        return {k: int(v) if v.isdigit() else v for k, v in self.stats("anticache").items()}

    def settled(self, timeout: float = 30) -> dict[str, int | str]:
        """Waits until the budget is settled (`budget_settled`: the slab memory
        within -m minus the book-keeping, no page owed or over, no change of the
        limit pending): a page move spills a page's items at its own time, so
        exact counts are taken after it. Returns `stats anticache` then."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.ac()
            if st.get("budget_settled", 1) == 1:
                return st
            if time.monotonic() > deadline:
                raise TimeoutError(f"the budget did not settle in {timeout} s: {st}")
            time.sleep(0.05)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM (memcached exits normally), SIGKILL if it does not within timeout."""
        if self.stopped:
            return self.exit_code
        for c in self._clients:
            try:
                c.close()
            except Exception:
                pass
        self.stopped = True
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
                self.exit_code = None
                raise AssertionError(f"memcached-ac (pid {self.proc.pid}) ignored SIGTERM for {timeout}s")
        self.exit_code = self.proc.returncode
        for b in self.backing:
            b.stop(timeout)
        return self.exit_code


# tier remote's servers in the tests: stock memcached-ac refusing rather than evicting (-M), items
# up to 2 MiB (a record is an item plus its header), memory for every test's data
REMOTE_MEM_MB = 512
REMOTE_SERVERS = 2


def start_remote_servers(tmp: Path, n: int = REMOTE_SERVERS) -> list[Server]:
    """n stock servers for tier remote; the caller stops them (Server.backing)."""
    out: list[Server] = []
    try:
        for _ in range(n):
            out.append(start_server(tmp, mem=REMOTE_MEM_MB, threads=2, no_ac_options=True, extra=("-M", "-I", "2m")))
    except BaseException:
        for b in out:
            b.stop()
        raise
    return out


def start_server(tmp: Path, mem: int = 16, threads: int = 4, ac: dict | None = None,
                 extra: tuple[str, ...] = (), check_dir_modes: bool = True,
                 no_ac_options: bool = False, popen=subprocess.Popen,
                 start_timeout: float = 15) -> Server:
    """Starts memcached-ac on a free port and waits until it accepts connections.
    ac: the -o ac_* options (ac_policy defaults to lru, ac_spill_dir to a new
    directory under tmp when the policy is not none); no_ac_options: pass none;
    popen: what starts it (e.g. a memory group's popen, which joins the group
    before exec)."""
    ac = dict(ac or {})
    ac.setdefault("ac_policy", "none" if no_ac_options else "lru")
    backing: list[Server] = []
    if not no_ac_options and ac.get("ac_tier") == "remote" and "ac_remote" not in ac:
        backing = start_remote_servers(tmp)
        ac["ac_remote"] = "+".join(f"{HOST}:{b.port}" for b in backing)
    spill_dir = None
    if no_ac_options:
        ac = {}
    elif ac["ac_policy"] != "none":
        ac.setdefault("ac_spill_dir", str(tmp / f"spill-{time.monotonic_ns()}"))
        spill_dir = Path(ac["ac_spill_dir"]) if keeps_files(ac) else None
    last_err = ""
    for _attempt in range(5):
        port = free_port()
        argv = server_argv(port, mem, threads, ac, extra)
        err_path = tmp / f"memcached-{port}.stderr"
        with open(err_path, "wb") as err:
            proc = popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        srv = Server(proc, port, spill_dir, argv, err_path)
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                if check_dir_modes and spill_dir is not None:
                    check_spill_dir_modes(spill_dir)
                srv.backing = backing
                return srv
            except OSError:
                time.sleep(0.02)
        # not up: the port was taken in between, or the server refused to start
        if proc.poll() is None:
            srv.stop()
        last_err = err_path.read_text(errors="replace")
        if "Address already in use" not in last_err and "failed to listen" not in last_err:
            break
    for b in backing:
        b.stop()
    raise RuntimeError(f"memcached-ac did not start: {' '.join(argv)}\n{last_err}")


def run_in_process(tmp: Path, ac: str, workload: str, depth: int = 1, ops: int = 60000, records: int = 20000,
                   mem_mb: int = 12, threads: int = 1, warmup: int = 0, dist: str = "truezipf") -> dict:
    """memcached-ac with its in-process driver (-o ac_driver): ac (the -o ac_* options, a string)
    plus ac_driver_depth=depth, over experiments/workloads/<workload> with `records` records, ops
    operations after `warmup` warm-up operations, request distribution dist (true Zipf), -m mem_mb,
    `threads` driver and worker threads; checks a clean exit and that the spill directory is gone,
    and returns the driver's JSON."""
    out = tmp / f"driver-{time.monotonic_ns()}.json"
    opts = (f"{ac},ac_driver_depth={depth},ac_spill_dir={tmp}/spill,ac_driver={ROOT / 'experiments' / 'workloads' / workload},"
            f"ac_driver_out={out},ac_driver_set=recordcount={records},ac_driver_set=operationcount={ops},"
            f"ac_driver_set=warmupoperations={warmup},"
            f"ac_driver_set=requestdistribution={dist},ac_driver_set=threads={threads}")
    r = subprocess.run([str(BIN), "-u", "root", "-m", str(mem_mb), "-t", str(threads), "-o", opts], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert not (tmp / "spill").exists()
    return json.loads(out.read_text())


def check_spill_dir_modes(d: Path) -> None:
    st = d.stat()
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700, \
        f"{d} mode {oct(st.st_mode)}, want a 0700 directory"
    for f in d.iterdir():
        m = stat.S_IMODE(f.stat().st_mode)
        assert m == 0o600, f"{f} mode {oct(m)}, want 0600"


class FlagSerde:
    """pymemcache serde: values are bytes (or (bytes, flags)); get returns (bytes, flags)."""

    def serialize(self, key, value):
        if isinstance(value, tuple):
            return value
        return value, 0

    def deserialize(self, key, value, flags):
        return value, flags


class Raw:
    """A minimal memcached client over one socket, returning exact reply lines."""

    def __init__(self, port: int, timeout: float = 60):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def close(self):
        try:
            self.f.close()
            self.sock.close()
        except OSError:
            pass

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def line(self) -> bytes:
        ln = self.f.readline()
        if not ln.endswith(b"\r\n"):
            raise ConnectionError(f"connection closed or bad line: {ln!r}")
        return ln[:-2]

    def read(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise ConnectionError("short read")
        return data

    def call(self, cmd: bytes) -> bytes:
        self.send(cmd + b"\r\n")
        return self.line()

    def store(self, cmd: str, key: str, value: bytes, flags: int = 0, exptime: int = 0,
              cas: int | None = None) -> bytes:
        head = f"{cmd} {key} {flags} {exptime} {len(value)}"
        if cas is not None:
            head += f" {cas}"
        self.send(head.encode() + b"\r\n" + value + b"\r\n")
        return self.line()

    def read_values(self) -> tuple[dict[str, tuple[bytes, int, int | None]], bytes | None]:
        """Reads VALUE ... END; returns (values, error line or None)."""
        out = {}
        while True:
            ln = self.line()
            if ln == b"END":
                return out, None
            if not ln.startswith(b"VALUE "):
                return out, ln
            parts = ln.split()
            key, flags, n = parts[1].decode(), int(parts[2]), int(parts[3])
            cas = int(parts[4]) if len(parts) > 4 else None
            data = self.read(n + 2)
            assert data[-2:] == b"\r\n", f"value of {key} not followed by CRLF"
            out[key] = (data[:-2], flags, cas)

    def get(self, *keys: str, cmd: str = "get", exptime: int | None = None):
        head = cmd if exptime is None else f"{cmd} {exptime}"
        self.send(f"{head} {' '.join(keys)}\r\n".encode())
        return self.read_values()

    def mg(self, key: str, flags: str = "v f c") -> tuple[bytes, bytes | None]:
        """Returns (reply line, value or None)."""
        ln = self.call(f"mg {key} {flags}".strip().encode())
        if ln.startswith(b"VA "):
            n = int(ln.split()[1])
            data = self.read(n + 2)
            return ln, data[:-2]
        return ln, None

    def stats(self, sub: str | None = None) -> dict[str, str]:
        self.send(b"stats" + (b" " + sub.encode() if sub else b"") + b"\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END":
                return out
            parts = ln.decode().split(" ", 2)
            assert parts[0] == "STAT", ln
            out[parts[1]] = parts[2] if len(parts) > 2 else ""

    def answers(self, stored: dict[str, tuple[bytes, int]]) -> Counter:
        """Gets every key of stored ({key: (value, flags)}) and counts the answers: "ok" (the
        value and flags exactly), "missing", "DIFFERENT DATA", or the error line (decoded)."""
        out: Counter = Counter()
        for k, (v, f) in stored.items():
            vals, err = self.get(k)
            if err is not None:
                out[err.decode()] += 1
            elif k not in vals:
                out["missing"] += 1
            elif vals[k][:2] != (v, f):
                out["DIFFERENT DATA"] += 1
            else:
                out["ok"] += 1
        return out

    def resident_keys(self) -> set[str]:
        """Keys resident in RAM (`lru_crawler metadump all` lists only linked items;
        spilled ones are stubs in the evicted table)."""
        for _ in range(200):
            self.send(b"lru_crawler metadump all\r\n")
            keys = set()
            while True:
                ln = self.f.readline()
                if not ln:
                    raise ConnectionError("closed during metadump")
                ln = ln.rstrip(b"\r\n")
                if ln.startswith(b"key="):
                    k = ln[4:ln.index(b" ")].decode()
                    keys.add(unquote(k) if "%" in k else k)
                elif ln == b"END":
                    return keys
                elif ln.startswith(b"BUSY"):
                    time.sleep(0.05)
                    break
                else:
                    raise AssertionError(f"metadump: {ln!r}")
        raise TimeoutError("lru_crawler stayed busy")

    # binary protocol: opcode 0x00 GET, 0x1c TOUCH, 0x1d GAT, ...
    @staticmethod
    def binary_request(opcode: int, key: str, extras: bytes = b"", value: bytes = b"",
                       opaque: int = 0xA5A5) -> bytes:
        k = key.encode()
        return struct.pack(">BBHBBHIIQ", 0x80, opcode, len(k), len(extras), 0, 0,
                           len(extras) + len(k) + len(value), opaque, 0) + extras + k + value

    def binary_response(self) -> tuple[int, int, int, bytes, bytes]:
        """The next response: (opcode, status, opaque, extras, value)."""
        rh = self.read(24)
        magic, op, klen, elen, _dt, status, blen, opaque, _cas = struct.unpack(">BBHBBHIIQ", rh)
        assert magic == 0x81, rh
        body = self.read(blen)
        return op, status, opaque, body[:elen], body[elen + klen:]

    def binary(self, opcode: int, key: str, extras: bytes = b"",
               value: bytes = b"") -> tuple[int, bytes, bytes]:
        """One request; returns (status, extras, value)."""
        self.send(self.binary_request(opcode, key, extras, value))
        op, status, opaque, ext, val = self.binary_response()
        assert op == opcode and opaque == 0xA5A5, (op, opaque)
        return status, ext, val

    def binary_quiet(self, opcode: int, key: str, extras: bytes = b"",
                     value: bytes = b"") -> list[tuple[int, int, bytes]]:
        """A quiet request followed by NOOP (0x0a): the responses before the
        NOOP's, as (opcode, status, value)."""
        self.send(self.binary_request(opcode, key, extras, value, opaque=1)
                  + self.binary_request(0x0A, "", opaque=2))
        got = []
        while True:
            op, status, opaque, _ext, val = self.binary_response()
            if op == 0x0A and opaque == 2:
                return got
            got.append((op, status, val))


# ---------------------------------------------------------------- test data

def value_for(rng: random.Random, key: str, version: int, size: int, compressible: bool = False) -> bytes:
    """Deterministic bytes of exactly size bytes, starting with the key and version
    (so a value served under the wrong key or from an older version is visible).
    compressible: the rest is made of 16 random 8-byte words (lz4 and zstd shrink it
    about 2-3x); otherwise random bytes (no codec shrinks them)."""
    tag = f"<{key}#{version}>".encode()
    if size <= len(tag):
        return rng.randbytes(size)
    n = size - len(tag)
    if not compressible:
        return tag + rng.randbytes(n)
    words = [rng.randbytes(8) for _ in range(16)]
    return tag + b"".join(rng.choices(words, k=n // 8 + 1))[:n]


def log_uniform_size(rng: random.Random, lo: int = 1, hi: int = 500 * 1024) -> int:
    """A heavy tail: log-uniform in [lo, hi] (with 1 B .. 500 KiB: half the values
    under ~700 B, one in five over ~37 KiB, the mean ~39 KiB)."""
    return min(hi, max(lo, int(lo * (hi / lo) ** rng.random())))


def mixed_size(rng: random.Random, max_size: int = 500 * 1024) -> int:
    """Many small values, some medium, a few large, log-uniform inside each band."""
    r = rng.random()
    if r < 0.02:
        return rng.randint(1, 8)
    if r < 0.88:
        lo, hi = 8, 2000
    elif r < 0.97:
        lo, hi = 2000, 64 * 1024
    else:
        lo, hi = 64 * 1024, max_size
    return min(max_size, int(lo * (hi / lo) ** rng.random()))
