"""Faults injected into the spill files' I/O (-o ac_fault, store/io_engine.c: they act at
completion, for every engine alike), under every spilling (policy, tier) pair (`make test`: one
pair per tier, lru and lru+tuples; `make test-full`: every pair):

- the next N reads fail with EIO: a get of a spilled key answers the read error's text, never
  other data (a store whose spill read the tuples tier's on-disk index may be refused instead,
  counted as refused_io_error), and once the fault has cleared every key reads back byte-exact;
- the next N writes fail with EIO or ENOSPC: a store is STORED or refused with memcached's
  out-of-memory text, each refusal counted by its reason, and every acknowledged key reads back
  byte-exact;
- short transfers (half the bytes, whole sectors) are resubmitted: every key byte-exact, no error.

Reads and short transfers also with direct reads (-o ac_io_direct=on: widened to whole units, a
short one goes on from the unit it stopped in).

The pairs run the default engine (uring); read and write faults also under sync, threads and aio
(lru over blocks). Also: each engine named in `stats anticache`, the fallback message's shape,
and the option's refusal text."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from mc_helpers import BIN, ROOT, MiB

READ_ERROR = "SERVER_ERROR anti-caching: reading a spilled item failed"
OOM_STORE = b"SERVER_ERROR out of memory storing object"


def reads_only_to_fetch(pair: dict[str, str]) -> bool:
    """lru and alru over blocks read a spill file only to fetch what a client asked for (tuples
    also reads its on-disk index when it stores, logging reads when it migrates hot items)."""
    return pair["ac_policy"] in ("lru", "alru") and pair.get("ac_tier", "blocks") == "blocks"


def fill(raw, rng, total: int) -> tuple[dict[str, tuple[bytes, int]], Counter]:
    """Stores about total bytes of values (1 B .. 3 KB); returns the acknowledged keys and the
    count of each answer."""
    stored, answers, written, i = {}, Counter(), 0, 0
    while written < total:
        k, v, f = f"k{i}", rng.randbytes(rng.randint(1, 3000)), rng.getrandbits(32)
        line = raw.store("set", k, v, flags=f)
        answers[line] += 1
        if line == b"STORED":
            stored[k] = (v, f)
        written += len(v)
        i += 1
    return stored, answers


def check_read_eio(srv, pair: dict[str, str]) -> None:
    """The server was started with ac_fault=read_eio:3."""
    raw = srv.raw()
    # twice -m: ~11k of ~22k values spilled, each read back twice
    stored, answers = fill(raw, random.Random(11), 32 * MiB)
    # a store whose spill hit a failed read (the tuples tier's index) is refused, and counted so
    assert set(answers) <= {b"STORED", OOM_STORE}, answers
    st = srv.ac()
    assert st["refused_items"] == st["refused_io_error"] == answers[OOM_STORE], (answers, st)
    assert st["stub_items"] > 1000, st
    first = raw.answers(stored)
    st = srv.ac()
    assert st["io_faults_injected"] == 3, st
    # every answer is the value or the read error: never other data, never a miss
    assert set(first) <= {"ok", READ_ERROR}, first
    assert first[READ_ERROR] + answers[OOM_STORE] <= 3, (first, answers)
    if reads_only_to_fetch(pair):
        # each failed read was a get's (a fetch that also merges its block may spend a second
        # read on the same get)
        assert 1 <= first[READ_ERROR], first
    # the fault has cleared: everything comes back, byte-exact
    assert raw.answers(stored) == {"ok": len(stored)}
    st = srv.ac()
    assert st["lost_items"] == 0 and st["checksum_errors"] == 0, st
    assert st["io_failed_transfers"] == 3, st


def check_write_fault(srv, kind: str, reason: str) -> None:
    """The server was started with ac_fault=KIND:2 (a write fault)."""
    raw = srv.raw()
    stored, answers = fill(raw, random.Random(12), 64 * MiB)
    st = srv.ac()
    assert st["io_faults_injected"] == 2, st
    assert set(answers) <= {b"STORED", OOM_STORE}, answers
    refused = answers[OOM_STORE]
    # each refusal counted, with the fault's reason; the later stores went through
    assert st["refused_items"] == st[reason] == refused, (answers, st)
    assert refused < 1000 and st["stub_items"] > 1000, (answers, st)
    assert raw.answers(stored) == {"ok": len(stored)}
    st = srv.ac()
    assert st["lost_items"] == 0 and st["checksum_errors"] == 0, st


WRITE_FAULTS = [("write_enospc", "refused_disk_full"), ("write_eio", "refused_io_error")]


@pytest.mark.parametrize("direct", ["off", "on"])
def test_read_eio_answers_the_error_then_reads_back(server, spill_pair_io, direct):
    srv = server(mem=16, ac={**spill_pair_io, "ac_fault": "read_eio:3", "ac_io_direct": direct})
    check_read_eio(srv, spill_pair_io)


@pytest.mark.parametrize("kind,reason", WRITE_FAULTS)
def test_write_faults_refuse_or_retry_never_lose(server, spill_pair_io, kind, reason):
    srv = server(mem=16, ac={**spill_pair_io, "ac_fault": f"{kind}:2"})
    check_write_fault(srv, kind, reason)


@pytest.mark.parametrize("engine", ["sync", "threads", "aio"])
@pytest.mark.parametrize("fault", ["read_eio", "write_enospc", "write_eio"])
def test_faults_under_the_other_engines(server, engine, fault):
    """The pairs above run the default engine (uring); the same checks over lru and blocks with
    each of the others (uring's buffered writes go through pwrite: store/io_uring.c)."""
    pair = {"ac_policy": "lru", "ac_io": engine}
    if fault == "read_eio":
        check_read_eio(server(mem=16, ac={**pair, "ac_fault": "read_eio:3"}), pair)
    else:
        srv = server(mem=16, ac={**pair, "ac_fault": f"{fault}:2"})
        check_write_fault(srv, fault, dict(WRITE_FAULTS)[fault])
        assert srv.ac()["io_engine"] == engine


@pytest.mark.parametrize("direct", ["off", "on"])
def test_short_transfers_are_resubmitted(server, spill_pair_io, direct):
    srv = server(mem=16, ac={**spill_pair_io, "ac_fault": "short:500", "ac_io_direct": direct})
    raw = srv.raw()
    stored, answers = fill(raw, random.Random(13), 48 * MiB)
    assert answers == {b"STORED": len(stored)}, answers
    assert raw.answers(stored) == {"ok": len(stored)}
    st = srv.ac()
    assert st["io_faults_injected"] == 500 and st["io_short_transfers"] >= 500, st
    assert st["io_failed_transfers"] == 0 and st["lost_items"] == 0 and st["refused_items"] == 0, st


@pytest.mark.parametrize("engine", ["sync", "threads", "aio", "uring"])
def test_engine_in_stats(server, engine):
    srv = server(mem=16, ac={"ac_io": engine})
    raw = srv.raw()
    stored, _ = fill(raw, random.Random(14), 40 * MiB)
    assert raw.answers(stored) == {"ok": len(stored)}
    st = srv.ac()
    assert st["io_engine_requested"] == engine
    # this machine has io_uring and Linux AIO: no fallback
    assert st["io_engine"] == engine, (st["io_engine"], srv.stderr_path.read_text())
    assert st["io_writes"] > 0 and st["io_reads"] > 0 and st["io_failed_transfers"] == 0, st
    assert st["io_write_bytes"] >= st["bytes_written"] > 0


def test_fault_option_refused_with_what_it_accepts():
    import subprocess
    r = subprocess.run([str(BIN), "-u", "root", "-o", "ac_fault=read_eio"], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode != 0
    assert ('ac_fault must be none or KIND:N with KIND read_eio, write_eio, write_enospc, short (half the'
            ' bytes, whole sectors), slow_read or slow_write (1 s late) and N from 1 (e.g. read_eio:1), got "read_eio"') in r.stderr, \
        r.stderr
    r = subprocess.run([str(BIN), "-u", "root", "-o", "ac_policy=none,ac_tier=swap,ac_io=uring"],
                       capture_output=True, text=True, timeout=10, cwd=ROOT)
    assert r.returncode != 0 and "ac_io is an option of spill-file I/O" in r.stderr, r.stderr
