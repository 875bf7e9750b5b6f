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
# # Fig 2 — CPU overhead of access tracking
#
# Zhang et al. (ICDE 2015), §IV-B-2: what each access-tracking method adds, per access, to the in-memory request
# path (everything in RAM, the same YCSB reads), in % of stock memcached: instructions, L1
# instruction-cache misses, L1 data-cache misses (callgrind's cache simulator: this machine has no
# hardware counters) and time (runs without instrumentation, median of several). Written by
# `acbench fig2` (harness/acbench/fig2.py says how each number is taken and what a user-space
# simulator cannot see). Input: `ACBENCH_FIG2` (a fig2.csv or its directory), else the committed
# `experiments/results/fig2/fig2.csv`; output: `ACBENCH_FIGURES` (fig2.png, fig2.pdf, fig2.csv).

# %%
import pandas as pd
from IPython.display import Markdown, display

from acplot.fig2 import METRICS, fig2_path, load_fig2, plot_fig2
from acplot.runs import figures_dir

out = figures_dir()
path = fig2_path()
df = load_fig2(path) if path is not None else None
display(Markdown(f"Fig 2 table: `{path}`" if path is not None else
                 "**No Fig 2 table**: run `acbench fig2 --out DIR` and set `ACBENCH_FIG2=DIR`."))

# %% [markdown]
# ## Per access, and overhead against the baseline (none)

# %%
if df is not None:
    cols = ["tracking_method", "instructions_per_access", "l1i_misses_per_access", "l1d_misses_per_access",
            "ns_per_access", *(c for c, _ in METRICS)]
    df.to_csv(out / "fig2.csv", index=False)
    display(df[cols].round(3))
    display(Markdown("Measured with: " + str(df["counter_source"].iloc[0]) + "; hardware counters: "
                     + str(df.get("hardware_counters", pd.Series(["?"])).iloc[0])))

# %%
if df is not None:
    for p in plot_fig2(df, out / "fig2"):
        print(p.name)
