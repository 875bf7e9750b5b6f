"""The no-loss workload (with fewer operations on old keys than test_noloss) under
ac_merge=block, ac_lru_sample=4 (H-Store's aLRU), small blocks (records
larger than a block get one of their own) with eager lazy compaction, and
compressed records (lz4 over blocks, zstd over tuples), the I/O engines threads, aio and
uring (-o ac_io) over both tiers, direct reads (-o ac_io_direct), the block writer thread
(-o ac_write_queue), the compactor thread (-o ac_compact_thread) and lazy compaction by
copy (-o ac_compact=copy), in the lookup and in that thread.

Still -m 16 and 4x that written: memcached gives every slab class its first page
even past -m, so with the ~39 classes this mix touches a smaller -m would leave
most keys resident and test little."""
from __future__ import annotations

import zlib

import pytest

from mc_helpers import MiB
from noloss import Workload, check_final, check_old_ops


@pytest.mark.parametrize("name,ac", [
    # 256K blocks: every fetch merges its whole block, and a verify pass over 4x
    # memory with 1M blocks re-spills millions of items (H-Store's thrashing)
    ("merge-block", {"ac_merge": "block", "ac_block_size": "256K"}),
    ("lru-sample-4", {"ac_lru_sample": "4"}),
    ("small-blocks", {"ac_block_size": "256K", "ac_compact_fill": "0.9"}),
    # compressed records (values of repeated words: both codecs shrink them), over both tiers
    ("lz4", {"ac_compress": "lz4"}),
    ("zstd-tuples", {"ac_compress": "zstd", "ac_policy": "lru", "ac_tier": "tuples"}),
    # the I/O engines other than the default uring (-o ac_io), over both tiers, one with
    # compression, and uring's own variants
    ("io-sync", {"ac_io": "sync"}),
    ("io-sync-logging", {"ac_io": "sync", "ac_policy": "logging"}),
    ("io-threads", {"ac_io": "threads"}),
    ("io-aio-tuples", {"ac_io": "aio", "ac_policy": "lru", "ac_tier": "tuples"}),
    ("io-uring-lz4", {"ac_io": "uring", "ac_compress": "lz4"}),
    ("io-uring-logging", {"ac_io": "uring", "ac_policy": "logging"}),
    # direct reads (O_DIRECT) over both tiers; blocks written by the writer thread (a queue of 2)
    ("direct-uring", {"ac_io": "uring", "ac_io_direct": "on"}),
    ("direct-tuples", {"ac_io_direct": "on", "ac_policy": "lru", "ac_tier": "tuples"}),
    ("write-queue", {"ac_write_queue": "2"}),
    # the three together (64 s): make test-full only; make test runs each of them alone
    pytest.param("write-queue-direct-merge-block", {"ac_write_queue": "2", "ac_io_direct": "on", "ac_merge": "block",
                                                    "ac_block_size": "256K"}, marks=pytest.mark.full),
    # lazy compaction's merges in the compactor thread, eager (small blocks merged below 90 % live)
    ("compact-thread", {"ac_compact_thread": "on", "ac_block_size": "256K", "ac_compact_fill": "0.9"}),
    # the block's live records copied to the open block on disk, never into RAM
    ("compact-copy", {"ac_compact": "copy", "ac_block_size": "256K", "ac_compact_fill": "0.9"}),
    ("compact-copy-thread", {"ac_compact": "copy", "ac_compact_thread": "on", "ac_block_size": "256K",
                             "ac_compact_fill": "0.9"}),
])
def test_noloss_variant(server, name, ac):
    srv = server(mem=16, threads=4, ac=ac)
    st = srv.ac()
    for k, v in ac.items():
        field = {"ac_merge": "merge", "ac_lru_sample": "lru_sample", "ac_block_size": "block_size",
                 "ac_compact_fill": "compact_fill", "ac_compress": "compression", "ac_policy": "policy",
                 "ac_tier": "tier", "ac_io": "io_engine", "ac_io_direct": "io_direct",
                 "ac_write_queue": "write_queue", "ac_compact_thread": "compact_thread", "ac_compact": "compact"}[k]
        assert str(st[field]) == {"256K": str(256 * 1024), "0.9": "0.900"}.get(v, v)
    # block-merge brings block-mates back with every fetch: look up which old keys
    # are spilled more often
    w = Workload(srv, mem_mib=16, seed=zlib.crc32(name.encode()), total_factor=4.0, min_old_ops=500,
                 refresh_every=30 if "merge-block" in name else 150, compressible="ac_compress" in ac)
    run = w.execute()
    print(f"\n{name}:", run.summary())
    assert run.written >= 64 * MiB
    check_old_ops(run, min_count=15, min_fraction=0.15 if "merge-block" in name else 0.5)
    check_final(run)
    if "merge-block" in name:
        assert run.final_stats["merged_blocks"] > 0
    if "ac_io_direct" in ac:
        assert run.final_stats["io_direct_files"] == 1
    if "ac_write_queue" in ac:
        # the writer wrote the blocks; no store waited out ac_alloc_wait
        fin = run.final_stats
        assert fin["blocks_written"] > 10 and fin["write_timeouts"] == 0 and fin["refused_items"] == 0, fin
    if "ac_compact_thread" in ac:
        # the lookups handed their claims to the thread, which merged them (a claim's block may
        # have died meanwhile, and one may still be merging as the stats are read)
        fin = run.final_stats
        assert fin["compact_queued"] > 100, fin
    if "ac_block_size" in ac and "ac_compact_fill" in ac:
        # eager compaction did its work, the way ac_compact asks (a merge or a copy per claim)
        fin = run.final_stats
        done, other = ("copied_blocks", "merged_blocks") if ac.get("ac_compact") == "copy" \
            else ("merged_blocks", "copied_blocks")
        assert fin[done] > 100 and fin[other] == 0, fin
        assert ac.get("ac_compact") != "copy" or fin["copied_items"] > 1000 and fin["merged_items"] == 0, fin
    if "ac_compress" in ac:
        # the values shrank (16 random words repeated: at least 2x here), and every one came back
        # byte-exact through the codec (check_final read them all)
        fin = run.final_stats
        assert fin["compress_in_bytes"] > 16 * MiB and fin["compress_out_bytes"] < fin["compress_in_bytes"] / 2
        assert fin["checksum_errors"] == 0
