"""Parked gets (-o ac_park_threads, policies/core/ac_park.c): a text get/gets of spilled keys over
the network waits without holding its worker thread. `ac_fault=slow_read:N` makes the next N
spill-file reads come back 1 s late, so a fetch is known to be in flight while other clients talk.

- one worker thread (-t 1): while a get of a spilled key waits for its read, other connections
  are served (their answers arrive before the parked one), and the parked answer is byte-exact;
- many connections get the same spilled key at once: every one gets the value, the store reads
  it once;
- a fetch racing with delete, set, append, cas on the same key: the get answers the value before
  or after the change, whole, and afterwards the key holds the change (nothing deleted comes back);
- a get of several keys parks each spilled one and answers in request order (resident, spilled and
  absent keys mixed; also past memcached's 24-token chunks); gat and ac_park_threads=0 read in the
  worker (nothing parked), same answers;
- a failed parked read answers the read error alone, for one key and for the whole command of
  several keys (the command before it on the connection keeps its answer), and the keys read
  back afterwards;
- the server stops (SIGTERM, and SIGUSR1's graceful stop) while a get is parked: exit 0, the
  spill directory removed."""
from __future__ import annotations

import os
import random
import select
import signal
import threading
import time

import pytest

READ_ERROR = b"SERVER_ERROR anti-caching: reading a spilled item failed"


def fill(raw, n: int = 12000, seed: int = 5) -> dict[str, tuple[bytes, int]]:
    """n keys of 1-2 KB (about 18 MB, three times -m 6): the first ones are spilled."""
    rng, stored = random.Random(seed), {}
    for i in range(n):
        k, v, f = f"k{i}", rng.randbytes(rng.randint(1000, 2000)), i
        assert raw.store("set", k, v, flags=f) == b"STORED"
        stored[k] = (v, f)
    return stored


def spilled_keys(srv, stored, n: int) -> list[str]:
    """n keys that are spilled now (not resident), in the order they were stored."""
    with srv.raw() as r:
        resident = r.resident_keys()
    keys = [k for k in stored if k not in resident][:n]
    assert len(keys) == n, f"only {len(keys)} spilled keys"
    return keys


def spilled_key(srv, stored) -> str:
    return spilled_keys(srv, stored, 1)[0]


def pending(raw) -> bool:
    """The server has sent something on raw's connection (non-blocking)."""
    return bool(raw.f.peek(1)) if select.select([raw.sock], [], [], 0)[0] else False


def start(server, threads: int = 1, **ac):
    return server(mem=6, threads=threads, ac={"ac_policy": "lru", **ac})


def test_parked_get_lets_the_worker_serve_others(server):
    srv = start(server, ac_fault="slow_read:1")
    raw = srv.raw()
    stored = fill(raw)
    key = spilled_key(srv, stored)
    recent = list(stored)[-50:]                   # resident: written last
    before = srv.ac()
    a, b = srv.raw(), srv.raw()
    t0 = time.monotonic()
    a.send(f"get {key}\r\n".encode())
    time.sleep(0.1)                               # the fetch is in flight (1 s late)
    for k in recent:                              # the only worker thread serves b meanwhile
        vals, err = b.get(k)
        assert err is None and vals[k][:2] == stored[k], k
    assert b.store("set", "fresh", b"x" * 100) == b"STORED"
    assert not pending(a), "the parked get was answered before the others: it was not parked"
    vals, err = a.read_values()
    waited = time.monotonic() - t0
    assert err is None and vals[key][:2] == stored[key]
    assert waited >= 0.9, waited                  # the slow read was this get's
    st = srv.ac()
    assert st["io_faults_injected"] == 1
    assert st["parked_gets"] - before["parked_gets"] == 1 and st["parked_fetched"] - before["parked_fetched"] == 1
    assert st["park_threads"] == 4 and st["lost_items"] == 0
    # gets: the CAS comes with the value, as from RAM
    key2 = spilled_key(srv, stored)
    vals, err = a.get(key2, cmd="gets")
    assert err is None and vals[key2][:2] == stored[key2] and vals[key2][2] > 0
    vals2, _ = a.get(key2, cmd="gets")
    assert vals2[key2][2] == vals[key2][2]
    stats = srv.stats(None)
    assert int(stats["get_misses"]) == 0, stats   # a parked hit is a hit, not a miss


def test_concurrent_gets_of_one_spilled_key_read_it_once(server):
    srv = start(server, threads=2, ac_fault="slow_read:1")
    raw = srv.raw()
    stored = fill(raw)
    key = spilled_key(srv, stored)
    before = srv.ac()
    clients = [srv.raw() for _ in range(8)]
    for c in clients:
        c.send(f"get {key}\r\n".encode())
    for c in clients:
        vals, err = c.read_values()
        assert err is None and vals[key][:2] == stored[key]
    st = srv.ac()
    assert st["fetched_items"] - before["fetched_items"] == 1, st
    assert st["record_reads"] - before["record_reads"] == 1, st
    assert st["parked_gets"] - before["parked_gets"] >= 1, st


@pytest.mark.parametrize("op", ["delete", "set", "append", "cas"])
def test_fetch_racing_with_a_change(server, op):
    srv = start(server, threads=2, ac_fault="slow_read:1")
    raw = srv.raw()
    stored = fill(raw)
    key = spilled_key(srv, stored)
    old, flags = stored[key]
    a, b = srv.raw(), srv.raw()
    a.send(f"get {key}\r\n".encode())
    time.sleep(0.2)                               # a's read is in flight (1 s late)
    if op == "delete":
        assert b.call(f"delete {key}".encode()) == b"DELETED"
        expect = None
    elif op == "set":
        assert b.store("set", key, b"new value", flags=7) == b"STORED"
        expect = (b"new value", 7)
    elif op == "append":
        assert b.store("append", key, b"+tail") == b"STORED"
        expect = (old + b"+tail", flags)
    else:
        vals, err = b.get(key, cmd="gets")
        assert err is None and vals[key][:2] == (old, flags)
        assert b.store("cas", key, b"swapped", flags=3, cas=vals[key][2]) == b"STORED"
        expect = (b"swapped", 3)
    # the read of a's get goes out without the key's lock, so the change may come before or after
    # its lookup: a sees the value before the change or after it, whole, never a mix
    vals, err = a.read_values()
    assert err is None
    assert (vals[key][:2] if key in vals else None) in ((old, flags), expect)
    vals, err = a.get(key)
    assert err is None
    assert (vals[key][:2] if key in vals else None) == expect   # nothing deleted comes back
    assert srv.ac()["lost_items"] == 0


def test_multi_get_parks_each_spilled_key_in_request_order(server):
    """get s0 r0 nokey s1 r1 s2 while the first read is 1 s late: the only worker serves another
    client meanwhile, then every value comes back in request order, byte-exact (gets: with CAS)."""
    srv = start(server, ac_fault="slow_read:1")
    raw = srv.raw()
    stored = fill(raw)
    s = spilled_keys(srv, stored, 6)
    r = list(stored)[-3:]                         # resident: written last
    before = srv.ac()
    a, b = srv.raw(), srv.raw()
    order = [s[0], r[0], "nokey", s[1], r[1], s[2]]
    a.send(f"get {' '.join(order)}\r\n".encode())
    time.sleep(0.1)                               # a read of a's get is in flight (1 s late)
    vals, err = b.get(r[2])
    assert err is None and vals[r[2]][:2] == stored[r[2]]
    assert not pending(a), "the multi-key get was answered before the other client: it was not parked"
    vals, err = a.read_values()
    assert err is None and list(vals) == [k for k in order if k != "nokey"]
    assert {k: v[:2] for k, v in vals.items()} == {k: stored[k] for k in vals}
    st = srv.ac()
    assert st["parked_gets"] - before["parked_gets"] == 3 and st["parked_fetched"] - before["parked_fetched"] == 3
    assert st["parked_missed"] == before["parked_missed"] and st["lost_items"] == 0
    vals, err = a.get(s[3], r[0], s[4], cmd="gets")
    assert err is None and list(vals) == [s[3], r[0], s[4]]
    assert all(vals[k][:2] == stored[k] and vals[k][2] > 0 for k in vals)
    assert srv.ac()["parked_gets"] - st["parked_gets"] == 2
    assert int(srv.stats(None)["get_misses"]) == 1     # nokey alone: parked hits are hits


def test_not_parked_gat_and_park_off(server):
    srv = start(server)
    raw = srv.raw()
    stored = fill(raw)
    spilled = spilled_keys(srv, stored, 2)
    before = srv.ac()
    vals, err = raw.get(*spilled, cmd="gat", exptime=0)
    assert err is None and {k: v[:2] for k, v in vals.items()} == {k: stored[k] for k in spilled}
    st = srv.ac()
    assert st["parked_gets"] == before["parked_gets"] and st["disk_hits"] - before["disk_hits"] == 2
    off = server(mem=6, threads=1, ac={"ac_policy": "lru", "ac_park_threads": "0"})
    r2 = off.raw()
    stored2 = fill(r2)
    k = spilled_key(off, stored2)
    vals, err = r2.get(k)
    assert err is None and vals[k][:2] == stored2[k]
    st = off.ac()
    assert st["park_threads"] == 0 and st["parked_gets"] == 0 and st["disk_hits"] >= 1


def test_failed_parked_read_answers_the_error_alone(server):
    # two failed reads: the fetcher's read ahead, then the lookup's own read (a read ahead that
    # failed is read again)
    srv = start(server, ac_fault="read_eio:2")
    raw = srv.raw()
    stored = fill(raw)
    key = spilled_key(srv, stored)
    raw.send(f"get {key}\r\n".encode())
    assert raw.line() == READ_ERROR               # the whole answer, no END after it
    vals, err = raw.get(key)                      # the connection is in step, the key reads back
    assert err is None and vals[key][:2] == stored[key]
    st = srv.ac()
    assert st["parked_failed"] == 1 and st["io_faults_injected"] == 2 and st["lost_items"] == 0
    assert st["prefetch_reads"] >= 1 and st["prefetch_unused"] >= 1


def test_failed_read_in_a_multi_get_answers_the_error_alone(server):
    """Two spilled keys among resident ones, every read of both failing (a read ahead, then the
    lookup's own, each): the command's whole answer is the error, while the get pipelined before it
    on the same connection keeps its values; afterwards every key reads back."""
    srv = start(server, ac_fault="read_eio:4")
    raw = srv.raw()
    stored = fill(raw)
    s = spilled_keys(srv, stored, 2)
    r = list(stored)[-2:]
    raw.send(f"get {r[0]}\r\nget {s[0]} {r[1]} {s[1]}\r\nget {r[1]}\r\n".encode())
    vals, err = raw.read_values()                 # the first command: answered whole
    assert err is None and vals[r[0]][:2] == stored[r[0]]
    assert raw.line() == READ_ERROR               # the second: the error alone, no VALUE, no END
    vals, err = raw.read_values()                 # the third: in step
    assert err is None and list(vals) == [r[1]] and vals[r[1]][:2] == stored[r[1]]
    vals, err = raw.get(s[0], r[1], s[1])
    assert err is None and {k: v[:2] for k, v in vals.items()} == {k: stored[k] for k in (s[0], r[1], s[1])}
    st = srv.ac()
    assert st["parked_failed"] == 2 and st["io_faults_injected"] == 4 and st["lost_items"] == 0, st


def test_many_clients_parked_and_resident_byte_exact(server):
    """16 connections, each getting 300 random keys (most spilled) while writing new ones: every
    answer byte-exact, nothing lost, parked gets counted."""
    srv = start(server, threads=2)
    raw = srv.raw()
    stored = fill(raw, n=8000)
    errors: list[str] = []

    def client(i: int) -> None:
        rng = random.Random(100 + i)
        c = srv.raw()
        try:
            for j in range(300):
                k = f"k{rng.randrange(8000)}"
                vals, err = c.get(k)
                if err is not None or vals.get(k, (None, None))[:2] != stored[k]:
                    errors.append(f"{k}: {err!r}")
                if j % 10 == 0:
                    assert c.store("set", f"c{i}-{j}", b"v" * rng.randint(1, 3000)) == b"STORED"
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    st = srv.ac()
    assert st["parked_gets"] > 1000 and st["parked_failed"] == 0 and st["lost_items"] == 0, st
    assert st["parked_fetched"] + st["parked_missed"] == st["parked_gets"], st


def test_long_multi_get_is_parked_across_chunks(server):
    """memcached tokenizes a long get in chunks (22 keys, then 23 per chunk): 60 keys, spilled ones
    and resident ones, span three chunks; every value comes back in request order, byte-exact."""
    srv = start(server)
    raw = srv.raw()
    stored = fill(raw)
    spilled = spilled_keys(srv, stored, 45)
    resident = list(stored)[-15:]
    keys = [k for pair in zip(spilled[:15], resident) for k in pair] + spilled[15:]
    before = srv.ac()
    vals, err = raw.get(*keys)
    assert err is None and list(vals) == keys
    assert {k: v[:2] for k, v in vals.items()} == {k: stored[k] for k in keys}
    st = srv.ac()
    assert st["parked_gets"] - before["parked_gets"] == 45 and st["parked_fetched"] - before["parked_fetched"] == 45


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGUSR1])
def test_stop_while_a_get_is_parked(server, sig):
    srv = start(server, threads=2, ac_fault="slow_read:1")
    raw = srv.raw()
    stored = fill(raw)
    key = spilled_key(srv, stored)
    a = srv.raw()
    a.send(f"get {key}\r\n".encode())
    time.sleep(0.2)                               # its read is in flight
    os.kill(srv.proc.pid, sig)
    assert srv.proc.wait(20) == 0, srv.stderr()[-2000:]
    try:                                          # answered before the stop, or the connection closed
        vals, err = a.read_values()
        assert err is None and vals[key][:2] == stored[key]
    except ConnectionError:
        pass
    srv.stopped, srv.exit_code = True, 0
    assert not srv.spill_dir.exists()
