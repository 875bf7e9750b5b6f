"""Batched LRU (-o ac_lru_batch=B, policies/policy/lru.c): a worker buffers up to B accesses and
applies them in order before it links, merges or picks victims. With one worker thread the order
at every pick is the strict order (ac_lru_batch=0), so the hit counts are exactly equal: read-only
and write-heavy, over blocks and tuples, with H-Store's block merge, and at driver depth 32. Many
threads with batching on: tests/test_concurrency.py and the no-loss suite run lru at its default."""
from __future__ import annotations

import pytest

from mc_helpers import run_in_process


def counts(d: dict) -> tuple[int, int]:
    a, runp = d["server"]["anticache"], d["run"]
    assert runp["errors"]["total"] == 0 and runp["reads"]["miss"] == 0
    assert a["lost_items"] == 0 and a["refused_items"] == 0 and a["checksum_errors"] == 0
    return a["mem_hits"], a["disk_hits"]


CASES = [("ac_policy=lru", "readonly", [(32, 1), (1024, 1), (32, 32)]),
         ("ac_policy=lru", "writeheavy", [(32, 1), (1024, 1), (32, 32)]),
         ("ac_policy=lru,ac_tier=tuples", "writeheavy", [(32, 1)]),
         ("ac_policy=lru,ac_merge=block", "writeheavy", [(32, 1)])]


@pytest.mark.parametrize("ac,workload,runs", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_batched_counts_equal_strict_at_one_thread(tmp_path, ac, workload, runs):
    strict = run_in_process(tmp_path, f"{ac},ac_lru_batch=0", workload, 1)
    assert strict["server"]["anticache"]["lru_batch"] == 0 and strict["server"]["anticache"]["lru_batches"] == 0
    mem, disk = counts(strict)
    assert disk > 1000, disk                 # memory is short: the order decides what spills
    for batch, depth in runs:
        d = run_in_process(tmp_path, f"{ac},ac_lru_batch={batch}", workload, depth)
        a = d["server"]["anticache"]
        assert a["lru_batch"] == batch and a["lru_batches"] > 0 and a["lru_batched"] >= mem
        assert counts(d) == (mem, disk), (batch, depth, counts(d), (mem, disk))
