"""A block merge (ac_merge=block: H-Store's block-merging, DeBrabant et al. VLDB 2013 §3.4) takes
every live record out of the block it read, so the block's extent goes back to the store. The
block-mates that find no free chunk in RAM (they come back into free chunks only, at the cold end)
are written to the open block as they are, their evicted-table entries moved there, as H-Store's
eviction would write them out again; a mate whose key shares the lock of the fetched key is not
left behind for that lock. Left in the block, they kept its whole extent for good once cold: at the
paper's scale (1M × 1 KB, θ 0.99, M/D 1/2, 3M reads) the spill file held 84 GB for 0.56 GB of live
records, the disk filled, and the store refused 37,038 spills.

Real server, 8 MB of memory, 1000-byte values 4x that, 64 KiB blocks (~60 records): random gets
of spilled keys merge their blocks again and again; afterwards the disk holds the live records'
blocks and no more, nothing was refused, and every value reads back byte for byte."""
from __future__ import annotations

import random

VSIZE = 1000
N = 32000
BLOCK = 64 * 1024


def val(k: str) -> bytes:
    return (k.encode() + b"|") * (VSIZE // (len(k) + 1)) + b"." * (VSIZE % (len(k) + 1))


def test_block_merges_give_their_blocks_back(server):
    srv = server(mem=8, threads=1, ac={"ac_policy": "lru", "ac_merge": "block", "ac_block_size": "64K"})
    cli = srv.client()
    keys = [f"b{i:06d}" for i in range(N)]
    for s in range(0, N, 500):
        assert not cli.set_many({k: val(k) for k in keys[s:s + 500]}, noreply=False)
    srv.settled()
    rng = random.Random(11)
    for _ in range(8000):                    # most of them disk hits: each merges its block
        k = keys[rng.randrange(N)]
        assert cli.get(k) == (val(k), 0), k
    st = srv.ac()
    assert st["merged_blocks"] >= 4000 and st["refused_items"] == 0 and st["lost_items"] == 0, st
    # every block on disk is one the store wrote full of records that are still live (or the open one)
    assert st["store_bytes_on_disk"] <= 1.1 * st["store_live_bytes"] + 2 * BLOCK, \
        f"{st['store_bytes_on_disk']} bytes on disk for {st['store_live_bytes']} live ({st['merged_blocks']} merges)"
    got = {}
    for s in range(0, N, 200):
        got.update(cli.get_many(keys[s:s + 200]))
    assert got == {k: (val(k), 0) for k in keys}
    st = srv.ac()
    assert st["lost_items"] == 0 and st["refused_items"] == 0
