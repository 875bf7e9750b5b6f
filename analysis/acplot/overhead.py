"""Tables II and III of Zhang et al. (ICDE 2015) from a running server's `stats anticache` (the rows' ac_* columns,
taken at the end of the measured run): what access tracking costs per item held in RAM, and what
book-keeping costs per item spilled, each also as the paper's Eq. (1) overhead ratio
R_extra / (R_extra + R_useful), next to the paper's formula evaluated at our item size S.

The server reports metadata_bytes = the tier's fixed bytes + what the tier charges as it grows +
the policy's own bytes (policies/core/ac_core.c); per tier:
  blocks   (H-Store):  book-keeping = the evicted table (evicted_table_bytes), plus the block buffer
                       (block_size), a data-swapping buffer shown apart
  tuples   (Siberia):  book-keeping = the two Bloom filters (bloom_bytes)
  swap / mmapfile:     book-keeping = the kernel's page table (not in metadata_bytes: 0 here)
  uvmm:                book-keeping = our pager's page table, 8 bytes a 4 KiB page (evicted_table_bytes
                       = uvmm_book_bytes; beside metadata_bytes, under the cgroup's limit); it spills
                       pages, not items, so its per-spilled-item figures stay empty
tracking = metadata_bytes − book-keeping − block buffer (the LRU links, the clock bits and pools,
the classifier's estimate table, log rings and victim lists).
R_useful: resident items × S for tracking, spilled items (stub_items) × S for book-keeping, with
S = item_footprint (the slab chunk an item occupies).
"""
from __future__ import annotations

import pandas as pd

from acplot.loss import ResultsError

PAGE = 4096
REQUIRED = ("approach", "item_footprint", "p_recordcount", "ac_policy", "ac_tier", "ac_metadata_bytes",
            "ac_resident_items", "ac_stub_items", "ac_evicted_table_bytes", "ac_block_size", "ac_bloom_bytes",
            "ac_log_ring_bytes")
KERNEL_TIERS = ("swap", "mmapfile")

# Table II: the paper's method for each policy (a policy "none" over a kernel tier: the page table)
TRACKING_METHOD = {"lru": "LRU", "alru": "ALRU", "logging": "Access Trace Logging",
                   "effpaging": "Access Trace Logging", "none": "Page Table", "vma": "VMA Protection"}
VMA_STRUCT = 176         # bytes of the kernel's vm_area_struct (the paper's Table II)
# Table III: the paper's method for each tier
BOOKKEEPING_METHOD = {"blocks": "Index with Evicted Table", "tuples": "Bloom Filter", "swap": "Page Table",
                      "mmapfile": "Page Table", "uvmm": "Page Table"}


def paper_tracking_ratio(method: str, size: float, log_buffer: float, records: float,
                         granule: float = PAGE) -> float:
    """Table II at item size `size`: LRU 8/(8+S) (two 4-byte offsets), ALRU (22/8)/(22/8+S),
    logging C/(C + count × S) with C the log buffer, page table < 8/(8+4096), VMA protection
    < 176/(176 + Size_vma) with Size_vma our granule (both upper bounds)."""
    if method == "LRU":
        return 8 / (8 + size)
    if method == "ALRU":
        return (22 / 8) / (22 / 8 + size)
    if method == "Access Trace Logging":
        return log_buffer / (log_buffer + records * size)
    if method == "Page Table":
        return 8 / (8 + PAGE)
    if method == "VMA Protection":
        return VMA_STRUCT / (VMA_STRUCT + granule)
    raise ResultsError(f"no Table II formula for {method!r}")


def paper_bookkeeping_ratio(method: str, size: float) -> float:
    """Table III at item size `size`: evicted table 20/(20+S), Bloom filter (10/8)/(10/8+S),
    page table < 8/(8+4096) (an upper bound)."""
    if method == "Index with Evicted Table":
        return 20 / (20 + size)
    if method == "Bloom Filter":
        return (10 / 8) / (10 / 8 + size)
    if method == "Page Table":
        return 8 / (8 + PAGE)
    raise ResultsError(f"no Table III formula for {method!r}")


def overhead_cells(df: pd.DataFrame) -> pd.DataFrame:
    """One row per anti-caching cell (policy none over no tier, the stock cache, is left out)."""
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ResultsError(f"results lack column(s) {', '.join(missing)} needed for Tables II and III "
                           "(the server's policy, tier, evicted table, block size, Bloom filter and log ring "
                           "bytes, which acbench run records in every row; a run made before it did lacks them: "
                           "run it again)")
    d = df[df["ac_tier"].fillna("none") != "none"].copy()
    if d.empty:
        raise ResultsError("no anti-caching cells (every row has tier none)")
    unknown = sorted(set(d["ac_tier"]) - set(BOOKKEEPING_METHOD))
    if unknown:
        raise ResultsError(f"no Table III method for tier(s) {', '.join(map(str, unknown))}")
    unknown = sorted(set(d["ac_policy"]) - set(TRACKING_METHOD))
    if unknown:
        raise ResultsError(f"no Table II method for policy(ies) {', '.join(map(str, unknown))}")
    size = d["item_footprint"].astype(float)
    # the tier's table (evicted_table_bytes: the evicted table, or uvmm's page table) and Bloom filters
    book = d["ac_evicted_table_bytes"].fillna(0) + d["ac_bloom_bytes"].fillna(0)
    buffer = d["ac_block_size"].fillna(0)
    charged = book.where(d["ac_tier"] != "uvmm", 0)       # uvmm's page table is not in metadata_bytes
    tracking = d["ac_metadata_bytes"] - charged - buffer
    if (tracking < 0).any():
        bad = ", ".join(d.loc[tracking < 0, "approach"].astype(str).unique())
        raise ResultsError(f"metadata_bytes below book-keeping + block buffer for {bad}: the columns do not add up")
    resident = d["ac_resident_items"].astype(float)
    stubs = d["ac_stub_items"].astype(float)
    out = pd.DataFrame({"approach": d["approach"], "policy": d["ac_policy"], "tier": d["ac_tier"]})
    for col in ("workload", "zipf_theta", "mem_ratio"):
        if col in d.columns:
            out[col] = d[col]
    out["item_size"] = size
    out["resident_items"] = resident
    out["spilled_items"] = stubs
    out["tracking_bytes"] = tracking
    out["bookkeeping_bytes"] = book
    out["block_buffer_bytes"] = buffer
    out["tracking_per_item"] = tracking / resident.where(resident > 0)
    out["bookkeeping_per_spilled"] = book / stubs.where(stubs > 0)
    out["tracking_ratio"] = tracking / (tracking + resident * size)
    out["bookkeeping_ratio"] = (book / (book + stubs * size)).where(stubs > 0)
    out["paper_tracking"] = d["ac_policy"].map(TRACKING_METHOD)
    granule = (d["ac_vma_granule_bytes"].fillna(PAGE) if "ac_vma_granule_bytes" in d.columns
               else pd.Series(PAGE, index=d.index)).astype(float)
    out["paper_tracking_ratio"] = [
        paper_tracking_ratio(m, s, c, n, g) for m, s, c, n, g in
        zip(out["paper_tracking"], size, d["ac_log_ring_bytes"].fillna(0), d["p_recordcount"].astype(float),
            granule)]
    out["paper_bookkeeping"] = d["ac_tier"].map(BOOKKEEPING_METHOD)
    out["paper_bookkeeping_ratio"] = [paper_bookkeeping_ratio(m, s) for m, s in zip(out["paper_bookkeeping"], size)]
    return out.reset_index(drop=True)


TABLE2 = ("tracking_per_item", "tracking_ratio", "paper_tracking_ratio")
TABLE3 = ("bookkeeping_per_spilled", "bookkeeping_ratio", "paper_bookkeeping_ratio", "block_buffer_bytes")


def overhead_summary(cells: pd.DataFrame, table: int) -> pd.DataFrame:
    """Table II (table=2: tracking) or III (table=3: book-keeping): one row per approach, the mean
    over its cells, ratios in percent; `cells` is overhead_cells()."""
    if table not in (2, 3):
        raise ValueError("table must be 2 or 3")
    keys = ["approach", "policy", "paper_tracking"] if table == 2 else ["approach", "tier", "paper_bookkeeping"]
    cols = list(TABLE2 if table == 2 else TABLE3)
    from acplot.cells import approach_order
    out = cells.groupby(keys, sort=False)[cols].mean()
    out["cells"] = cells.groupby(keys, sort=False).size()
    for c in cols:
        if c.endswith("_ratio"):
            out[c] = 100 * out[c]
    out = out.rename(columns={c: c.replace("_ratio", "_pct") for c in cols})
    order = {a: i for i, a in enumerate(approach_order(list(cells["approach"])))}
    return out.reset_index().sort_values("approach", key=lambda s: s.map(order)).reset_index(drop=True)
