"""Tables II and III (acplot.overhead): exact values on a synthetic frame."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from acplot import ResultsError
from acplot.overhead import overhead_cells, overhead_summary, paper_bookkeeping_ratio, paper_tracking_ratio

NAN = float("nan")


def rows() -> pd.DataFrame:
    base = {"workload": "C", "zipf_theta": 0.99, "mem_ratio": 0.5, "item_footprint": 1184, "p_recordcount": 2000}
    return pd.DataFrame([
        # lru over blocks: 16 B of links per resident item + a 20 B/spilled evicted table + a 64 KiB block buffer
        {**base, "approach": "lru", "ac_policy": "lru", "ac_tier": "blocks", "ac_metadata_bytes": 16 * 1000 + 20000 + 65536,
         "ac_resident_items": 1000, "ac_stub_items": 1000, "ac_evicted_table_bytes": 20000, "ac_block_size": 65536,
         "ac_bloom_bytes": NAN, "ac_log_ring_bytes": NAN},
        # logging over tuples: 50000 B of classifier, 2500 B of Bloom filters
        {**base, "approach": "logging", "ac_policy": "logging", "ac_tier": "tuples", "ac_metadata_bytes": 52500,
         "ac_resident_items": 500, "ac_stub_items": 1500, "ac_evicted_table_bytes": 0, "ac_block_size": NAN,
         "ac_bloom_bytes": 2500, "ac_log_ring_bytes": 4000},
        {**base, "approach": "ospaging", "ac_policy": "none", "ac_tier": "swap", "ac_metadata_bytes": 0,
         "ac_resident_items": 2000, "ac_stub_items": 0, "ac_evicted_table_bytes": 0, "ac_block_size": NAN,
         "ac_bloom_bytes": NAN, "ac_log_ring_bytes": NAN},
        {**base, "approach": "memcached", "ac_policy": "none", "ac_tier": "none", "ac_metadata_bytes": 0,
         "ac_resident_items": 1000, "ac_stub_items": 0, "ac_evicted_table_bytes": 0, "ac_block_size": NAN,
         "ac_bloom_bytes": NAN, "ac_log_ring_bytes": NAN},
    ])


def test_cells_exact() -> None:
    c = overhead_cells(rows()).set_index("approach")
    assert list(c.index) == ["lru", "logging", "ospaging"]                 # the stock cache is left out
    lru, log, osp = c.loc["lru"], c.loc["logging"], c.loc["ospaging"]
    assert lru["tracking_bytes"] == 16000 and lru["tracking_per_item"] == 16.0
    assert lru["bookkeeping_bytes"] == 20000 and lru["bookkeeping_per_spilled"] == 20.0
    assert lru["block_buffer_bytes"] == 65536
    assert lru["tracking_ratio"] == pytest.approx(16000 / (16000 + 1000 * 1184))
    assert lru["bookkeeping_ratio"] == pytest.approx(20000 / (20000 + 1000 * 1184))
    assert lru["paper_tracking"] == "LRU" and lru["paper_tracking_ratio"] == pytest.approx(8 / 1192)
    assert lru["paper_bookkeeping"] == "Index with Evicted Table"
    assert lru["paper_bookkeeping_ratio"] == pytest.approx(20 / 1204)
    assert log["tracking_bytes"] == 50000 and log["tracking_per_item"] == 100.0
    assert log["bookkeeping_per_spilled"] == pytest.approx(2500 / 1500)
    assert log["paper_tracking_ratio"] == pytest.approx(4000 / (4000 + 2000 * 1184))
    assert log["paper_bookkeeping_ratio"] == pytest.approx(1.25 / 1185.25)
    assert osp["tracking_bytes"] == 0 and osp["paper_tracking"] == "Page Table"
    assert math.isnan(osp["bookkeeping_per_spilled"]) and math.isnan(osp["bookkeeping_ratio"])
    assert osp["paper_bookkeeping_ratio"] == pytest.approx(8 / 4104)


def test_summary_means_and_percent() -> None:
    two = pd.concat([rows(), rows().assign(ac_metadata_bytes=lambda d: d["ac_metadata_bytes"] + 1000 * (d["approach"] == "lru"))])
    t2 = overhead_summary(overhead_cells(two), 2)
    assert list(t2.columns) == ["approach", "policy", "paper_tracking", "tracking_per_item", "tracking_pct",
                                "paper_tracking_pct", "cells"]
    lru = t2.set_index("approach").loc["lru"]
    assert lru["cells"] == 2 and lru["tracking_per_item"] == pytest.approx(16.5)      # mean of 16 and 17
    assert lru["paper_tracking_pct"] == pytest.approx(100 * 8 / 1192)
    t3 = overhead_summary(overhead_cells(rows()), 3)
    assert t3["approach"].tolist() == ["lru", "logging", "ospaging"]
    assert t3.set_index("approach").loc["lru", "bookkeeping_pct"] == pytest.approx(100 * 20000 / 1204000)
    with pytest.raises(ValueError):
        overhead_summary(overhead_cells(rows()), 4)


def test_formulas() -> None:
    assert paper_tracking_ratio("ALRU", 1000, 0, 0) == pytest.approx(2.75 / 1002.75)
    assert paper_tracking_ratio("Page Table", 1000, 0, 0) == pytest.approx(8 / 4104)
    # VMA protection: one 176-byte vm_area_struct per granule at most (4 KiB unless given)
    assert paper_tracking_ratio("VMA Protection", 1000, 0, 0) == pytest.approx(176 / 4272)
    assert paper_tracking_ratio("VMA Protection", 1000, 0, 0, 65536) == pytest.approx(176 / 65712)
    with pytest.raises(ResultsError, match="no Table II formula for 'VMA'"):
        paper_tracking_ratio("VMA", 1000, 0, 0)
    with pytest.raises(ResultsError, match="no Table III formula"):
        paper_bookkeeping_ratio("x", 1000)


def test_vma_cell_uses_its_granule() -> None:
    vma = rows().head(1).assign(approach="vma", ac_policy="vma", ac_vma_granule_bytes=16384,
                                ac_metadata_bytes=4 * 100 + 20000 + 65536)
    c = overhead_cells(pd.concat([rows(), vma])).set_index("approach").loc["vma"]
    assert c["paper_tracking"] == "VMA Protection" and c["tracking_bytes"] == 400
    assert c["paper_tracking_ratio"] == pytest.approx(176 / (176 + 16384))


def test_errors() -> None:
    with pytest.raises(ResultsError, match="^results lack column\\(s\\) ac_tier, ac_bloom_bytes needed for Tables II and III"):
        overhead_cells(rows().drop(columns=["ac_tier", "ac_bloom_bytes"]))
    with pytest.raises(ResultsError, match="^no anti-caching cells"):
        overhead_cells(rows().tail(1))
    with pytest.raises(ResultsError, match="^no Table III method for tier\\(s\\) disk"):
        overhead_cells(rows().assign(ac_tier="disk"))
    with pytest.raises(ResultsError, match="^metadata_bytes below book-keeping \\+ block buffer for lru"):
        overhead_cells(rows().assign(ac_metadata_bytes=10))
