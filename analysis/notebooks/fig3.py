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
# # Fig 3 — hit rate and loss against OPT
#
# Zhang et al. (ICDE 2015), §IV-C, Fig 3: the loss in hit rate of each approach against Belady's optimum (OPT)
# under the same memory budget, over the skew θ (x axis) and memory/data M/D (one panel each).
# hit rate = hits / reads (a read not served from RAM is a disk hit, or for the `memcached`
# baseline a miss); loss = 100 × (OPT − hit rate) in percentage points. One figure per workload.
# Input: `ACBENCH_RESULTS` (a run directory); output: `ACBENCH_FIGURES`.

# %%
import pandas as pd
from IPython.display import Image, display

from acbench.figures import fig3_input, plot_decomposition, plot_fig3
from acplot import loss_table
from acplot.cells import by_cell
from acplot.grid import plot_grid
from acplot.runs import describe_run, figure_rows, figures_dir, hit_rate_rows, load_run
from acplot.style import scale_title

# one row per cell (RAM device preferred: experiments/README.md): the paper's approaches over YCSB's
# values where the data does not fit (acplot.runs.figure_rows)
df = figure_rows(hit_rate_rows(load_run()))
out = figures_dir()
pd.Series(describe_run(df), name="run")

# %% [markdown]
# ## Loss against OPT (pp), the paper's Fig 3

# %%
table = loss_table(fig3_input(df))
loss_files = plot_fig3(df, out)
for p in loss_files:
    if p.suffix == ".png":
        display(Image(filename=str(p)))

# %%
loss = by_cell(table, "loss_pp")
loss.to_csv(out / "fig3-loss.csv")
loss.round(2)

# %% [markdown]
# ## Hit rate

# %%
ratios = tuple(sorted(table["mem_ratio"].unique(), reverse=True))
for wl in sorted(table["workload"].unique()):
    png, _ = plot_grid(table, out / f"fig3-hitrate-{wl}", "hit_rate", "hit rate", workload=wl, mem_ratios=ratios,
                       title=scale_title(df[df["workload"] == wl], wl))
    display(Image(filename=str(png)))

# %%
hit = by_cell(table, "hit_rate")
hit.to_csv(out / "fig3-hitrate.csv")
hit.round(4)

# %% [markdown]
# ## The loss decomposed
# loss = [OPT(C) − LRU(C)] + [LRU(C) − LRU(R)] + [LRU(R) − approach]: what exact LRU loses with
# the budget, what the approach's memory overhead costs, what its eviction choices cost
# (harness/README.md). Drawn only when the rows carry the three parts.

# %%
for p in plot_decomposition(df, out):
    if p.suffix == ".png":
        display(Image(filename=str(p)))
