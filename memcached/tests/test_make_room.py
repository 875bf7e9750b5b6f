"""Making room under concurrency: one focused reproduction per root cause of the
refusals test_mixed_load.py found (memcached/tests/README.md lists them).

All start from a server whose memory is full of small items (-m 16, 1000-byte
values past the limit, so spilling has begun and no class can get a new page)
and then use one slab class of large values, 2 chunks per 1 MiB page (BIG bytes),
whose first page memcached grants past the limit. An upload in progress (the
command line and part of the value sent) holds a chunk that is neither free nor
spillable, exactly as a slow client does."""
from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from mc_helpers import value_for

BIG = 380_000                    # class 38 of the default sizes: 394840-byte chunks, 2 per page
OOM_STORE = b"SERVER_ERROR out of memory storing object"


def fill_small(srv, raw, past: float = 1.3) -> None:
    """1000-byte values until past x -m has been written (memory full, spilling)."""
    mem = int(srv.stats("settings")["maxbytes"])
    n = int(past * mem / 1000)
    for s in range(0, n, 200):
        raw.send(b"".join(b"set f%d 0 0 1000\r\n%s\r\n" % (i, b"%07d|" % i * 125)
                          for i in range(s, min(n, s + 200))))
        for _ in range(s, min(n, s + 200)):
            assert raw.line() == b"STORED"
    assert srv.ac()["spilled_items"] > 0


def big_class_or_none(srv) -> tuple[int, dict] | None:
    """The slab class BIG-byte values go to, once it has a page: (id, its stats); None before."""
    classes: dict[int, dict] = {}
    for k, v in srv.stats("slabs").items():
        cls, _, field = k.partition(":")
        if field:
            classes.setdefault(int(cls), {})[field] = int(v)
    fits = [c for c, s in classes.items() if s["chunk_size"] >= BIG + 100]
    if not fits:
        return None
    c = min(fits, key=lambda c: classes[c]["chunk_size"])
    assert classes[c]["chunk_size"] < 2 * (BIG + 2000) and classes[c]["chunks_per_page"] == 2, classes[c]
    return c, classes[c]


def big_class(srv) -> tuple[int, dict]:
    found = big_class_or_none(srv)
    assert found is not None, f"no class of {BIG}-byte values yet"
    return found


def wait_for(pred, what: str, limit: float = 30.0):
    """Polls; the limit only bounds a hang, it asserts no speed."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError(f"gave up waiting for {what}")


class Upload:
    """A set whose value is only partly sent: it holds a chunk until finish()."""

    def __init__(self, srv, key: str, size: int = BIG):
        self.raw, self.key = srv.raw(), key
        self.value = value_for(random.Random(key), key, 0, size)
        self.raw.send(f"set {key} 7 0 {size}\r\n".encode() + self.value[:1000])

    def finish(self) -> bytes:
        self.raw.send(self.value[1000:] + b"\r\n")
        return self.raw.line()


def hold_big_chunks(srv, prefix: str, n: int, used_before: int = 0) -> list[Upload]:
    ups = [Upload(srv, f"{prefix}{i}") for i in range(n)]
    # the uploads reach the server at their own pace: the class may not exist at the first look
    wait_for(lambda: (c := big_class_or_none(srv)) is not None and c[1]["used_chunks"] >= used_before + n,
             f"{n} uploads holding chunks")
    return ups


def store(raw, key: str, size: int = BIG, cmd: str = "set") -> tuple[bytes, bytes]:
    v = value_for(random.Random(key + cmd), key, 1, size)
    return raw.store(cmd, key, v, flags=3), v


def test_class_without_free_chunk_gets_a_page(server, spill_policy):
    """Root cause 1: a class with no free chunk and nothing it could spill (its
    chunks held by requests in progress), at the memory limit, while other
    classes hold plenty of spillable items. Before: `SERVER_ERROR out of memory
    storing object` at once (memcached's slab automover moves pages only toward
    classes that evict, and anti-caching never evicts). Now the allocation
    borrows a page and the server pays it back by moving another class's page
    to the global pool (pages_owed returns to 0)."""
    srv = server(mem=16, ac={"ac_policy": spill_policy})
    raw = srv.raw()
    fill_small(srv, raw)
    ups = hold_big_chunks(srv, "held", 2)
    cls, before = big_class(srv)
    assert before["total_pages"] == 1 and before["used_chunks"] == 2 and before["free_chunks"] == 0
    line, v = store(raw, "third")
    assert line == b"STORED", f"set into class {cls} with both chunks held answered {line!r}"
    for u in ups:
        assert u.finish() == b"STORED"
    for k, want in [("third", v)] + [(u.key, u.value) for u in ups]:
        vals, err = raw.get(k)
        assert err is None and vals[k][0] == want, k
    st = srv.ac()
    assert st["pages_borrowed"] >= 1 and st["refused_items"] == 0, st
    wait_for(lambda: srv.ac()["pages_owed"] == 0, "the borrowed page to be paid back")
    st = srv.ac()
    assert st["pages_repaid"] >= st["pages_borrowed"] and st["lost_items"] == 0, st


@pytest.mark.parametrize("cmd", ["append", "prepend"])
def test_append_when_its_class_is_full(server, spill_policy, cmd):
    """Root cause 2: append/prepend allocate the combined item while holding the
    old one; with the class's other chunk held too, memcached answered
    NOT_STORED, as if the key did not exist."""
    srv = server(mem=16, ac={"ac_policy": spill_policy})
    raw = srv.raw()
    fill_small(srv, raw)
    line, v = store(raw, "A")
    assert line == b"STORED"
    ups = hold_big_chunks(srv, "held", 1, used_before=1)
    extra = b"+" * 500
    line = raw.store(cmd, "A", extra)
    assert line == b"STORED", f"{cmd} to stored key A answered {line!r}"
    assert ups[0].finish() == b"STORED"
    vals, err = raw.get("A")
    assert err is None and vals["A"][0] == (v + extra if cmd == "append" else extra + v)
    assert srv.ac()["refused_items"] == 0


@pytest.mark.parametrize("cmd", ["touch", "append", "delete", "get"])
def test_spilled_item_fetched_into_a_full_class(server, spill_policy, cmd):
    """Root cause 3: a command on a spilled item brings it back into RAM; with
    every chunk of its class held by requests in progress, that fetch answered
    `SERVER_ERROR out of memory fetching a spilled item` (a read was served as a
    transient copy and left the item spilled)."""
    srv = server(mem=16, ac={"ac_policy": spill_policy})
    raw = srv.raw()
    fill_small(srv, raw)
    vals = {}
    for k in ("A", "B", "C"):          # the third spills one of the first two
        line, vals[k] = store(raw, k)
        assert line == b"STORED"
    resident = raw.resident_keys()
    spilled = [k for k in ("A", "B") if k not in resident]
    assert spilled, resident & {"A", "B", "C"}
    target = spilled[0]
    for k in ("A", "B", "C"):
        if k != target:
            assert raw.call(f"delete {k}".encode()) == b"DELETED"
    ups = hold_big_chunks(srv, "held", 2)
    before = srv.ac()
    if cmd == "touch":
        assert raw.call(f"touch {target} 0".encode()) == b"TOUCHED"
    elif cmd == "append":
        assert raw.store("append", target, b"!") == b"STORED"
        vals[target] += b"!"
    elif cmd == "delete":
        assert raw.call(f"delete {target}".encode()) == b"DELETED"
    else:
        got, err = raw.get(target)
        assert err is None and got[target][0] == vals[target]
    after = srv.ac()
    if spill_policy == "logging" and cmd == "get":
        # Siberia: a read of a cold item is served from its record, the item stays cold
        assert after["read_through_items"] == before["read_through_items"] + 1
    else:
        assert after["fetched_items"] == before["fetched_items"] + 1, "the item was not brought back"
    for u in ups:
        assert u.finish() == b"STORED"
    got, err = raw.get(target)
    assert err is None and (got == {} if cmd == "delete" else got[target][0] == vals[target])
    assert srv.ac()["refused_items"] == 0


def test_workers_racing_for_the_room_just_made(server, spill_policy):
    """Root cause 4: the room one request makes by spilling is free memory any
    other request may take before it allocates; memcached's allocation loop
    then found nothing more to spill in the class and gave up. Eight clients
    store large values into the same 2-chunk class at once."""
    srv = server(mem=16, threads=4, ac={"ac_policy": spill_policy})
    fill_small(srv, srv.raw())
    answers: Counter = Counter()
    stored: dict[str, bytes] = {}
    lock = threading.Lock()
    start = threading.Barrier(8)

    def client(t: int) -> None:
        raw = srv.raw()
        rng = random.Random(t)
        start.wait()
        for i in range(12):
            k = f"r{t}-{i}"
            line, v = store(raw, k, rng.randint(BIG, BIG + 12_000))
            with lock:
                answers[line] += 1
                if line == b"STORED":
                    stored[k] = v

    ts = [threading.Thread(target=client, args=(t,)) for t in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    st = srv.ac()
    assert answers == {b"STORED": 96}, f"{dict(answers)}; stats: {st}"
    raw = srv.raw()
    for k, v in stored.items():
        got, err = raw.get(k)
        assert err is None and got[k][0] == v, k
    assert st["refused_items"] == 0 and st["lost_items"] == 0


def test_slab_page_move_keeps_cas(server, spill_policy):
    """Root cause 5: memcached's slab mover copies an item it must move into
    another chunk of its class and links the copy with a new CAS (items.c
    do_item_link), so a `cas` with a token taken before the move answered
    EXISTS although nobody changed the item. Page moves are routine now (every
    borrowed page is repaid by one): a moved item keeps its CAS and its age."""
    srv = server(mem=64, ac={"ac_policy": spill_policy})
    raw = srv.raw()
    n = 2000                           # 1184-byte chunks, 885 per page: 3 pages, 655 free chunks
    for s in range(0, n, 200):
        raw.send(b"".join(b"set c%d 0 0 1000\r\n%s\r\n" % (i, b"%07d|" % i * 125)
                          for i in range(s, min(n, s + 200))))
        for _ in range(s, min(n, s + 200)):
            assert raw.line() == b"STORED"
    tokens = {}
    for i in range(0, 885, 3):         # keys on the first page, the one a move takes
        vals, err = raw.get(f"c{i}", cmd="gets")
        tokens[f"c{i}"] = vals[f"c{i}"][2]
    cls = int(raw.call(b"me c0").split(b"cls=")[1].split()[0])
    moved = int(srv.stats(None)["slabs_moved"])
    assert raw.call(f"slabs reassign {cls} 0".encode()) == b"OK"
    wait_for(lambda: int(srv.stats(None)["slabs_moved"]) > moved, "the page move")
    st = srv.stats(None)
    assert int(st["slab_reassign_rescues"]) > 0, "no item was copied within its class"
    answers = Counter(raw.store("cas", k, b"new", cas=t) for k, t in tokens.items())
    assert answers == {b"STORED": len(tokens)}, dict(answers)


def test_multi_get_whose_merges_push_its_own_keys_to_the_tail(server):
    """lru with block merge: one get of 41 spilled keys from 41 blocks (-m 8,
    32768 x 1 KiB set in key order, ~490 items a block). Each fetch merges its
    block back, which pushes the items this request already holds to the LRU
    tail; they cannot be spilled while it holds them. The victims offered must
    pass over them: once they hid every spillable item (16 tail candidates, all
    held), each further key waited ac_alloc_wait and was refused (41 keys: 9
    refused_timeout, 48 s). Merged block-mates now go to the tail, below the
    held items; the request still holds its earlier keys there."""
    srv = server(mem=8, ac={"ac_policy": "lru", "ac_merge": "block", "ac_alloc_wait": "2s"})
    raw = srv.raw(timeout=300)
    v = b"v" * 1024
    for i in range(32768):
        raw.send(b"set k%06d 0 0 1024 noreply\r\n%s\r\n" % (i, v))
    assert raw.call(b"version").startswith(b"VERSION")
    keys = [f"k{i:06d}" for i in range(0, 32768, 800)]
    vals, err = raw.get(*keys)
    assert err is None and sorted(vals) == keys and all(val[0] == v for val in vals.values()), err
    st = srv.ac()
    # every fetch merged its block (a few of the 41 keys are resident: 6 with
    # the evicted table charged as it grows, none when it was sized up front)
    assert st["merged_blocks"] == st["disk_hits"] >= 30, st
    assert (st["refused_items"], st["alloc_waits"], st["read_through_items"]) == (0, 0, 0), st


def test_refusal_after_the_bounded_wait_is_counted(server):
    """With page borrowing off (ac_borrow_pages=0) a class whose chunks are all
    held can only wait for them: after ac_alloc_wait the store is refused with
    memcached's out-of-memory answer and counted as refused_timeout."""
    srv = server(mem=16, ac={"ac_policy": "lru", "ac_borrow_pages": "0", "ac_alloc_wait": "300ms"})
    raw = srv.raw()
    fill_small(srv, raw)
    ups = hold_big_chunks(srv, "held", 2)
    t0 = time.monotonic()
    line, _ = store(raw, "third")
    waited = time.monotonic() - t0
    assert line == OOM_STORE and waited >= 0.25, (line, waited)
    st = srv.ac()
    assert (st["refused_items"], st["refused_timeout"], st["pages_borrowed"]) == (1, 1, 0), st
    for u in ups:
        assert u.finish() == b"STORED"
    line, _ = store(raw, "third")              # now the held values can be spilled
    assert line == b"STORED"
    assert srv.ac()["refused_items"] == 1


def test_full_evicted_table_refuses_with_its_reason(server):
    """The evicted table (ac_evicted_max entries) is the spill store's own limit:
    once it is full stores are refused, counted as refused_table_full, and
    every acknowledged item stays readable."""
    srv = server(mem=16, ac={"ac_policy": "lru", "ac_evicted_max": "3000"})
    raw = srv.raw()
    rng = random.Random(5)
    stored, refused = {}, Counter()
    for i in range(40000):
        k = f"k{i}"
        v = value_for(rng, k, 0, 1000)
        line = raw.store("set", k, v)
        if line == b"STORED":
            stored[k] = v
        else:
            refused[line] += 1
            if sum(refused.values()) >= 20:
                break
    st = srv.ac()
    assert refused == {OOM_STORE: 20}, refused
    assert st["refused_table_full"] == st["refused_items"] == 20 and st["stub_items"] == 3000, st
    for k, v in stored.items():
        got, err = raw.get(k)
        assert err is None and got[k][0] == v, k
    assert srv.ac()["lost_items"] == 0


def test_a_held_up_spill_round_is_waited_for_and_counted(server):
    """One spill round at a time (the spill lock; policies/README.md "What stays serial across
    cores"): while one request's round writes its block (1 s late: ac_fault=slow_write:1, no writer
    thread, so the writing request holds the lock), the other client, once it has used the room
    that round made, needs room too and waits for the lock. stats anticache counts the wait."""
    srv = server(mem=16, threads=2, ac={"ac_policy": "lru", "ac_fault": "slow_write:1"})
    assert (srv.ac()["spill_lock_waits"], srv.ac()["spill_lock_wait_ns"]) == (0, 0)
    mem = int(srv.stats("settings")["maxbytes"])
    n = int(1.5 * mem / 1000)
    start = threading.Barrier(2)
    answers: Counter = Counter()
    lock = threading.Lock()

    def client(t: int) -> None:
        raw = srv.raw()
        start.wait()
        for s in range(t, n, 400):
            keys = range(s, min(n, s + 200))
            raw.send(b"".join(b"set w%d 0 0 1000\r\n%s\r\n" % (i, b"%07d|" % i * 125) for i in keys))
            got = Counter(raw.line() for _ in keys)
            with lock:
                answers.update(got)

    ts = [threading.Thread(target=client, args=(t * 200,)) for t in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    st = srv.ac()
    assert answers == {b"STORED": n}, dict(answers)
    assert st["spilled_items"] > 0 and st["refused_items"] == 0 and st["lost_items"] == 0, st
    print(f"\nspill lock: {st['spill_lock_waits']} waits, {st['spill_lock_wait_ns'] / 1e9:.3f} s")
    # the slow write held the lock for 1 s; whoever came for it meanwhile waited (measured: 2-4 waits,
    # 1.008-1.012 s in all)
    assert st["spill_lock_waits"] >= 1, st
    assert st["spill_lock_wait_ns"] >= 500_000_000, st
    raw = srv.raw()
    for i in random.Random(5).sample(range(n), 300):
        got, err = raw.get(f"w{i}")
        assert err is None and got[f"w{i}"][0] == b"%07d|" % i * 125, i
