"""Where a block merge puts the items it brings back without a request: at the
cold end (H-Store, DeBrabant et al. VLDB 2013 §3.4, §5.1), so they are the next victims unless
they are asked for; the requested item is the hottest.

Scripted on a real server: one slab class (1000-byte values), 4 KiB blocks
(3 records each), ac_merge=block. `lru_crawler metadump all` lists the
resident keys. A get of a spilled key X brings back X and its block-mates M;
one more set needs room, and the spill round takes the class's coldest items,
a block's worth: exactly M first, then the coldest of before. (alru gives
merged items the largest idle time its clock can show, policies/tests/
test_alru.c; whether its sampling picks them next is chance, by design.)
"""
from __future__ import annotations

VSIZE = 1000


def val(k: str) -> bytes:
    return (k.encode() + b"|") * (VSIZE // (len(k) + 1)) + b"." * (VSIZE % (len(k) + 1))


def test_block_merge_puts_unrequested_items_at_the_cold_end(server):
    policy = "lru"
    srv = server(mem=8, threads=1, ac={"ac_policy": policy, "ac_merge": "block", "ac_block_size": "4096"})
    cli = srv.client()
    raw = srv.raw()
    n = 0
    keys = []
    while srv.ac()["stub_items"] < 200:              # a few hundred spilled, in blocks of 3
        batch = {f"m{n + j:05d}": val(f"m{n + j:05d}") for j in range(100)}
        assert not cli.set_many(batch, noreply=False)
        keys += list(batch)
        n += 100
    srv.settled()
    resident0 = raw.resident_keys()
    spilled = [k for k in keys if k not in resident0]
    assert len(spilled) + len(resident0) == len(keys)

    # a spilled key from the middle of the spilled ones: its block comes back whole
    x = spilled[len(spilled) // 2]
    st0 = srv.ac()
    assert cli.get(x) == (val(x), 0)
    st1 = srv.ac()
    assert st1["merged_blocks"] - st0["merged_blocks"] == 1
    resident1 = raw.resident_keys()
    back = resident1 - resident0
    mates = back - {x}
    assert x in back and len(mates) == st1["merged_items"] - st0["merged_items"] >= 1, (back, st1)
    went1 = resident0 - resident1                    # the room the fetch made
    print(f"\n{policy}: fetched {x}, merged {sorted(mates)}, spilled for room {sorted(went1)}")

    # one set that needs room: the block-mates are the first victims
    y = "m-new-0"
    assert cli.set(y, val(y), noreply=False)
    resident2 = raw.resident_keys()
    went2 = resident1 - resident2
    assert mates <= went2, f"merged {sorted(mates)} should be spilled first; spilled {sorted(went2)}"
    assert x in resident2, "the requested item is the hottest"
    # then the coldest of before: the oldest resident keys in write order
    before = sorted(resident1 - back)
    assert went2 - mates == set(before[:len(went2 - mates)]), (sorted(went2), before[:5])
    # everything still there, byte for byte
    got = {}
    for s in range(0, len(keys), 100):
        got.update(cli.get_many(keys[s:s + 100]))
    assert got == {k: (val(k), 0) for k in keys}
    st = srv.ac()
    assert st["lost_items"] == 0 and st["refused_items"] == 0


def test_overwrites_that_empty_a_block_leave_it_to_lazy_compaction(server):
    """Plain sets of spilled keys drop their records unread; the one that takes
    a block below ac_compact_fill (0.5) must not leave it claimed for a merge
    nobody does: the next fetch from the block merges it (its last live record
    comes back with it). 4 KiB blocks of six 644-byte records, spilled in
    write order, so the first six spilled keys share the first block."""
    srv = server(mem=8, threads=1, ac={"ac_policy": "lru", "ac_block_size": "4096"})
    cli = srv.client()
    raw = srv.raw()
    keys = [f"c{i:05d}" for i in range(16000)]          # 600-byte values: ~1.3x -m
    for s in range(0, len(keys), 200):
        assert not cli.set_many({k: k.encode() * 100 for k in keys[s:s + 200]}, noreply=False)
    srv.settled()
    resident = raw.resident_keys()
    first = [k for k in keys if k not in resident][:6]    # the first block
    assert first == keys[:6], first
    st0 = srv.ac()
    for k in first[:4]:                                    # 2 of 6 left live: below 0.5
        assert raw.store("set", k, b"new") == b"STORED"
    st1 = srv.ac()
    assert st1["overwritten_unread"] - st0["overwritten_unread"] == 4
    assert cli.get(first[4]) == (first[4].encode() * 100, 0)
    st2 = srv.ac()
    assert st2["merged_blocks"] - st1["merged_blocks"] == 1, "the fetch did not merge the block"
    assert st2["merged_items"] - st1["merged_items"] == 1
    assert first[5] in raw.resident_keys()
    assert cli.get(first[5]) == (first[5].encode() * 100, 0)
    assert all(cli.get(k) == (b"new", 0) for k in first[:4])
    st = srv.ac()
    assert st["lost_items"] == 0 and st["refused_items"] == 0
