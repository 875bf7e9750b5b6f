"""Lazy compaction by copy (-o ac_compact=copy, core/ac_compact.c): a block that fell below
ac_compact_fill has its live records appended to the open block on disk, their evicted-table
entries moved, instead of merged back into RAM (H-Store's lazy compaction, the default). Nothing
enters RAM that a request did not ask for: none is merged (read-only: every item fetched is a disk
hit).
Copies do fill the open block, which moves when the next spill round writes it (rounds spill up
to a block's worth), so the hit counts are near those of a run that never compacts
(ac_compact_fill=0), not equal; in the lookup they are repeatable to the hit, with reads in
flight too. Nothing is lost, refused or wrong: the driver checks every value it reads (its errors
count a mismatch), in the lookup and in the compactor thread."""
from __future__ import annotations

from pathlib import Path

import pytest

from mc_helpers import run_in_process

# small blocks compacted below 90 % live: thousands of copies in a short run
EAGER = "ac_policy=lru,ac_block_size=256K"


def run(tmp_path: Path, ac: str, depth: int = 1, workload: str = "writeheavy") -> dict:
    d = run_in_process(tmp_path, ac, workload, depth)
    a = d["server"]["anticache"]
    assert d["run"]["errors"]["total"] == 0 and d["run"]["reads"]["miss"] == 0, d["run"]
    assert a["lost_items"] == 0 and a["refused_items"] == 0 and a["checksum_errors"] == 0, a
    return a


@pytest.mark.parametrize("workload", ["readonly", "writeheavy"])
def test_copy_keeps_the_hit_counts_of_no_compaction(tmp_path, workload):
    none = run(tmp_path, f"{EAGER},ac_compact_fill=0", workload=workload)
    assert none["copied_blocks"] == none["merged_blocks"] == 0 and none["compact"] == "merge"
    merge = run(tmp_path, f"{EAGER},ac_compact_fill=0.9", workload=workload)
    assert merge["merged_blocks"] > 100 and merge["copied_blocks"] == 0, merge
    assert merge["merged_items"] > 1000, merge
    first = None
    for thread, depth in [("off", 1), ("off", 32), ("on", 1), ("on", 32)]:
        a = run(tmp_path, f"{EAGER},ac_compact_fill=0.9,ac_compact=copy,ac_compact_thread={thread},ac_io=uring",
                depth, workload)
        assert a["compact"] == "copy" and a["compact_thread"] == thread
        # RAM took in only what was asked for (read-only: each fetch a read's disk hit; writes fetch too)
        assert a["merged_blocks"] == a["merged_items"] == 0, a
        assert workload != "readonly" or a["fetched_items"] == a["disk_hits"], a
        if thread == "off":
            first = first or a
            assert (a["mem_hits"], a["disk_hits"]) == (first["mem_hits"], first["disk_hits"]), (depth, a, first)
        # near the run without compaction (the spill rounds' sizes move, nothing else)
        assert abs(a["mem_hits"] - none["mem_hits"]) <= 0.01 * none["mem_hits"], (thread, depth, a, none)
        # in the lookup the copies repeat to the block; the compactor thread copies what it gets to
        # before the run ends (90 and 99 blocks on a loaded machine, where the lookup copies more)
        least = (100, 1000) if thread == "off" else (20, 200)
        assert a["copied_blocks"] > least[0] and a["copied_items"] > least[1], (thread, depth, a)
        assert a["copied_bytes"] >= a["copied_items"] * 1000, a       # records of 10 x 100 B values
        # records left where they were (their key's lock stripe held: the lookup's own, or a
        # request's): few, and taken by a later claim
        assert a["copy_skipped"] <= 0.01 * a["copied_items"], a
        if thread == "on":
            assert a["compact_queued"] > 0, a
        else:
            assert a["compact_queued"] == 0 and a["compact_in_place"] == a["copied_blocks"], a
        # the copies were written: the store wrote more than the spills alone
        assert a["bytes_written"] >= a["spilled_bytes"] + a["copied_bytes"] - 2 * 256 * 1024, a
