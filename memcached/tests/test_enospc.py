"""A full spill file system (a 4 MiB tmpfs as the spill directory's parent):
stores start failing with memcached's `SERVER_ERROR out of memory storing object`,
io_errors counts the failed block write, refused_disk_full (and refused_items)
each refused store, and every key that was acknowledged
STORED stays readable byte-exact (the open block stays in memory; a read that
finds no memory for a spilled item is served from its record without bringing
it back: read_through_items)."""
from __future__ import annotations

import contextlib
import os
import random
import subprocess
from collections import Counter

import pytest

from mc_helpers import MiB

OOM_STORE = b"SERVER_ERROR out of memory storing object"


@contextlib.contextmanager
def small_tmpfs(path, size="4m"):
    path.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.strip()}")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)]).returncode != 0:
            subprocess.run(["umount", "-l", str(path)])


def fill_until_full(srv, rng):
    """Stores values until the server refuses; returns {key: (value, flags)} of the
    acknowledged ones and the refusal lines."""
    raw = srv.raw()
    stored, refused = {}, []
    for i in range(200000):
        k = f"k{i}"
        v = rng.randbytes(rng.choice([rng.randint(50, 3000), 1024]))
        f = rng.getrandbits(32)
        line = raw.store("set", k, v, flags=f)
        if line == b"STORED":
            stored[k] = (v, f)
        else:
            refused.append(line)
            if len(refused) >= 50:
                break
    return raw, stored, refused


def test_enospc_keeps_acknowledged_items(server, tmp_path, spill_pair_io):
    with small_tmpfs(tmp_path / "mnt") as mnt:
        srv = server(mem=16, ac={**spill_pair_io, "ac_spill_dir": str(mnt / "spill")})
        try:
            raw, stored, refused = fill_until_full(srv, random.Random(3))
            st = srv.ac()
            print(f"\nenospc: {len(stored)} stored ({sum(len(v) for v, _ in stored.values()) / MiB:.1f}"
                  f" MiB), then {Counter(refused)}; {st['blocks_written']} blocks written,"
                  f" {st['store_open_bytes']} bytes in the open block, io_errors {st['io_errors']}")
            assert refused, "the 4 MiB spill file system never filled up"
            assert set(refused) == {OOM_STORE}, Counter(refused)
            assert st["io_errors"] >= 1
            # every refusal counted, with its reason: the spill file system is full
            assert st["refused_disk_full"] == st["refused_items"] == len(refused), st
            assert st["stub_items"] > 0 and st["lost_items"] == 0

            answers = raw.answers(stored)
            st = srv.ac()
            assert answers == {"ok": len(stored)}, \
                f"of {len(stored)} acknowledged keys: {dict(answers)}; stats: " \
                f"fetch_nomem {st['fetch_nomem']} io_errors {st['io_errors']} stub_items {st['stub_items']}"
            # with RAM and disk full, spilled keys were served from their records
            # (transient copies) and stayed spilled
            assert st["read_through_items"] > 0 and st["fetch_nomem"] == 0
            assert st["lost_items"] == 0
        finally:
            srv.stop()
            assert not (mnt / "spill").exists()


def test_enospc_delete_and_touch_of_spilled_keys(server, tmp_path, spill_pair_io):
    """With the spill file system and memory full, delete and touch of a spilled
    key must not answer NOT_FOUND (the key exists), and a key the server says it
    did not find, or deleted, must not come back once memory frees up."""
    with small_tmpfs(tmp_path / "mnt") as mnt:
        srv = server(mem=16, ac={**spill_pair_io, "ac_spill_dir": str(mnt / "spill")})
        try:
            raw, stored, refused = fill_until_full(srv, random.Random(4))
            assert refused
            resident = raw.resident_keys()
            spilled = [k for k in stored if k not in resident]
            assert len(spilled) > 10
            d = raw.call(f"delete {spilled[0]}".encode())
            t = raw.call(f"touch {spilled[1]} 0".encode())
            # free memory: delete resident keys (no fetch needed)
            for k in sorted(resident)[:3000]:
                assert raw.call(f"delete {k}".encode()) == b"DELETED"
            after = raw.get(spilled[0])
            problems = []
            if d == b"DELETED":
                if after != ({}, None):
                    problems.append(f"{spilled[0]} answered DELETED but came back: {after[1] or list(after[0])}")
            elif d.startswith(b"SERVER_ERROR"):
                if after[1] is not None or after[0].get(spilled[0], (None,))[:2] != stored[spilled[0]]:
                    problems.append(f"delete failed with {d!r}, then get gave {after!r}")
            else:
                problems.append(f"delete of stored, spilled {spilled[0]} answered {d!r}; once memory was "
                                f"freed get returned {'its old value' if after[0] else after}")
            if t != b"TOUCHED" and not t.startswith(b"SERVER_ERROR"):
                problems.append(f"touch of stored, spilled {spilled[1]} answered {t!r}")
            assert not problems, "; ".join(problems)
        finally:
            srv.stop()
            assert not (mnt / "spill").exists()
