"""Tier remote (policies/tier/remote.c): spilled records in other memcached servers' memory.
A remote server killed mid-run loses no key (the reads of its records come from the other copy,
the failures counted); a remote answering garbage gives an error or the other copy, never wrong
data; bad settings are refused at start with what is accepted."""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import threading

import pytest

from mc_helpers import HOST, MiB, free_port, server_argv, start_remote_servers, start_server

OOM_STORE = b"SERVER_ERROR out of memory storing object"


def fill(srv, rng, total: int, prefix: str = "r") -> dict[str, bytes]:
    """Stores values of mixed sizes under new keys until `total` bytes were written; {key: value}."""
    raw = srv.raw()
    out, written, i = {}, 0, 0
    while written < total:
        v = rng.randbytes(rng.choice([rng.randint(1, 3000), 1024, rng.randint(20000, 200000)]))
        k = f"{prefix}{i}"
        assert raw.store("set", k, v) == b"STORED", k
        out[k] = v
        written += len(v)
        i += 1
    return out


def read_all(srv, values: dict[str, bytes]) -> int:
    """Reads every key back; returns how many differed (a wrong or missing value)."""
    raw = srv.raw()
    bad = 0
    for k, v in values.items():
        got, err = raw.get(k)
        if err is not None or k not in got or got[k][0] != v:
            bad += 1
    return bad


def test_remote_server_killed_mid_run(server, tmp_path):
    srv = server(mem=16, threads=4, ac={"ac_policy": "lru", "ac_tier": "remote", "ac_remote_timeout": "500ms"})
    assert len(srv.backing) == 2
    rng = random.Random(7)
    values = fill(srv, rng, 48 * MiB)             # 3x -m: most records leave for the remote servers
    st = srv.ac()
    # at least 30 of the 48 MiB left RAM, each record stored twice
    assert st["remote_copies"] == 2 and st["stub_items"] > 0 and st["remote_bytes_sent"] >= 2 * 30 * MiB
    assert st["remote_sets"] == 2 * st["spilled_items"]
    os.kill(srv.backing[0].proc.pid, signal.SIGKILL)   # one of the two dies
    srv.backing[0].proc.wait(10)
    assert read_all(srv, values) == 0                  # every key from the other copy
    more = fill(srv, random.Random(8), 16 * MiB, prefix="n")   # writes after the death
    assert read_all(srv, {**values, **more}) == 0
    st = srv.ac()
    assert st["remote_failures"] > 0 and st["remote_read_fallbacks"] > 0
    # the dead server is passed over for ac_remote_retry (1 s) after each failure, not tried per request
    assert st["remote_skipped"] > st["remote_failures"]
    assert st["remote_unreadable"] == 0 and st["lost_items"] == 0 and st["refused_items"] == 0
    assert st["remote_degraded_puts"] > 0              # writes after the death: one copy each


class FakeServer:
    """A server that speaks just enough of the protocol to accept stores, and answers every get
    with garbage of the given kind."""

    def __init__(self, kind: str):
        self.kind = kind
        self.values: dict[bytes, bytes] = {}
        self.sock = socket.socket()
        self.sock.bind((HOST, 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)

    def _accept(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            self.threads.append(t)

    def _serve(self, c):
        f = c.makefile("rb")
        try:
            while not self.stop.is_set():
                line = f.readline()
                if not line:
                    return
                parts = line.split()
                if parts[0] == b"set":
                    self.values[parts[1]] = f.read(int(parts[4]) + 2)[:-2]
                    c.sendall(b"STORED\r\n")
                elif parts[0] == b"delete":
                    c.sendall(b"DELETED\r\n")
                elif parts[0] == b"get":
                    key = parts[1]
                    if self.kind == "flipped":         # the record stored, one byte of it flipped
                        v = bytearray(self.values.get(key, bytes(1100)))
                        v[len(v) // 2] ^= 0x40
                        c.sendall(b"VALUE " + key + b" 0 %d\r\n" % len(v) + bytes(v) + b"\r\nEND\r\n")
                    elif self.kind == "wrong-key":
                        c.sendall(b"VALUE other 0 3\r\nabc\r\nEND\r\n")
                    else:
                        c.sendall(b"HELLO THERE\r\n")
        except OSError:
            return
        finally:
            c.close()

    def close(self):
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("kind", ["flipped", "wrong-key", "noise"])
def test_remote_garbage_never_wrong_data(server, tmp_path, kind):
    fake = FakeServer(kind)
    good = start_remote_servers(tmp_path, 1)
    try:
        # the fake first: copy 0 of about half the records is on it, copy 1 on the real server
        srv = server(mem=8, threads=2, ac={"ac_policy": "lru", "ac_tier": "remote", "ac_remote_copies": "2",
                                           "ac_remote": f"{HOST}:{fake.port}+{HOST}:{good[0].port}"})
        rng = random.Random(3)
        values = {f"g{i}": rng.randbytes(1000) for i in range(20000)}   # about 20 MB into 8
        raw = srv.raw()
        for k, v in values.items():
            assert raw.store("set", k, v) == b"STORED"
        assert read_all(srv, values) == 0
        st = srv.ac()
        assert st["remote_read_fallbacks"] > 0 and st["remote_unreadable"] == 0
        if kind == "flipped":
            assert st["remote_bad_records"] > 0
        else:
            assert st["remote_garbage"] > 0
        # the fake alone: a spilled item cannot be read, and what comes back is an error, not data
        only = server(mem=8, threads=2, ac={"ac_policy": "lru", "ac_tier": "remote",
                                            "ac_remote": f"{HOST}:{fake.port}"})
        raw = only.raw()
        for k, v in list(values.items())[:12000]:
            assert raw.store("set", k, v) == b"STORED"
        wrong = errors = 0
        for k, v in list(values.items())[:3000]:       # the oldest: spilled
            got, err = raw.get(k)
            if err is not None or k not in got:        # the server's error reply, or no value
                errors += 1
            elif got[k][0] != v:
                wrong += 1
        assert wrong == 0 and errors > 0
        assert only.ac()["remote_unreadable"] > 0
    finally:
        fake.close()
        for b in good:
            b.stop()


@pytest.mark.parametrize("ac,expect", [
    ({"ac_tier": "remote"}, "tier remote needs its servers"),
    ({"ac_tier": "remote", "ac_remote": "127.0.0.1:1"}, "cannot connect to 127.0.0.1:1"),
    ({"ac_tier": "remote", "ac_remote": "nohost"}, "ac_remote must be"),
    ({"ac_tier": "remote", "ac_remote": "127.0.0.1:70000"}, "the port must be a number from 1 to 65535"),
])
def test_remote_bad_settings(tmp_path, ac, expect):
    # the server itself, without the test helpers' remote servers: it must refuse to start
    argv = server_argv(free_port(), ac={"ac_policy": "lru", "ac_spill_dir": str(tmp_path / "spill"), **ac})
    cp = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert cp.returncode != 0
    assert expect in cp.stderr, cp.stderr


def test_remote_copies_beyond_servers(tmp_path):
    good = start_remote_servers(tmp_path, 1)
    try:
        with pytest.raises(RuntimeError) as e:
            start_server(tmp_path, ac={"ac_policy": "lru", "ac_tier": "remote", "ac_remote_copies": "2",
                                       "ac_remote": f"{HOST}:{good[0].port}"})
        assert "ac_remote_copies=2 but ac_remote names 1 server" in str(e.value)
    finally:
        for b in good:
            b.stop()
