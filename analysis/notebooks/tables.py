# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Tables II and III — memory overhead of tracking and book-keeping
#
# Zhang et al. (ICDE 2015), §IV-B-1 (Table II) and §IV-D-1 (Table III), measured on the running server: its
# `stats anticache` at the end of each cell's measured run (the rows' `ac_*` columns). Per
# approach: tracking bytes per item held in RAM and book-keeping bytes per spilled item, each also
# as the overhead ratio of the paper's Eq. (1), R_extra / (R_extra + R_useful), next to the paper's
# formula evaluated at our item size S (the 1184-byte slab chunk of a 10 × 100 B record).
# How metadata_bytes is split: `acplot/overhead.py`. Means over the run's cells.
# Input: `ACBENCH_RESULTS`; output: `ACBENCH_FIGURES` (table2.csv, table3.csv, overhead-cells.csv).

# %%
import pandas as pd

from acplot.overhead import overhead_cells, overhead_summary
from acplot.runs import describe_run, figures_dir, hit_rate_rows, load_run, shortage_rows, ycsb_rows

# one row per cell (RAM device preferred: experiments/README.md) over YCSB's values, the cells whose
# data does not fit
df = shortage_rows(ycsb_rows(hit_rate_rows(load_run())))
out = figures_dir()
cells = overhead_cells(df)
cells.to_csv(out / "overhead-cells.csv", index=False)
pd.Series(describe_run(df), name="run")

# %% [markdown]
# ## Table II — access tracking
# `tracking_per_item`: bytes per resident item; `tracking_pct`: Eq. (1) with R_useful = resident
# items × S; `paper_tracking_pct`: the paper's formula at S (LRU 8/(8+S), ALRU (22/8)/(22/8+S),
# logging C/(C + records × S) with C our log rings, page table < 8/(8+4096), an upper bound).
# Our lru charges two 8-byte pointers (the paper: two 4-byte offsets); logging's tracking is its
# estimate table and log rings (the paper charges only the buffer); the kernel's page table is not
# in metadata_bytes (0 here).

# %%
table2 = overhead_summary(cells, 2)
table2.to_csv(out / "table2.csv", index=False)
table2.round(3)

# %% [markdown]
# ## Table III — book-keeping of spilled items
# `bookkeeping_per_spilled`: bytes per spilled item (evicted table, or Bloom filters);
# `bookkeeping_pct`: Eq. (1) with R_useful = spilled items × S; `paper_bookkeeping_pct`: evicted
# table 20/(20+S), Bloom filter (10/8)/(10/8+S), page table < 8/(8+4096). The blocks tier's block
# buffer (a data-swapping buffer, fixed) is shown apart. Paging approaches spill no items.

# %%
table3 = overhead_summary(cells, 3)
table3.to_csv(out / "table3.csv", index=False)
table3.round(3)

# %% [markdown]
# ## Per cell

# %%
cells.round(3)
