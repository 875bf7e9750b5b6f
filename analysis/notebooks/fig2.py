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
# path (everything in RAM, the same YCSB reads), in % of the baseline, one panel per Zipf θ: instructions, L1
# instruction-cache misses, L1 data-cache misses (callgrind's cache simulator: this machine has no
# hardware counters), time (runs without instrumentation, median of several) and CPU time, user +
# system (getrusage of the read phase, all threads: the kernel's part of vma's faults and alru's
# timer). The baseline is `none-flat`, stock memcached with its segmented LRU off (older tables:
# `none`, stock memcached as shipped). An L1 bar whose method or baseline has fewer than
# `MISS_FLOOR` (0.01) misses per read is left out (a grey ×): such a percentage is a ratio of
# noise. Written by `acbench fig2` (harness/acbench/fig2.py says how each number is taken and what a
# user-space simulator cannot see). Input: `ACBENCH_FIG2` (a fig2.csv or its directory), else the
# committed `experiments/results/fig2/fig2.csv`; output: `ACBENCH_FIGURES` (fig2.png, fig2.pdf, fig2.csv).

# %%
import pandas as pd
from IPython.display import Markdown, display

from acplot.fig2 import METRICS, MISS_FLOOR, bar_table, baseline_of, fig2_path, load_fig2, plot_fig2
from acplot.runs import figures_dir

out = figures_dir()
path = fig2_path()
df = load_fig2(path) if path is not None else None
display(Markdown(f"Fig 2 table: `{path}`" if path is not None else
                 "**No Fig 2 table**: run `acbench fig2 --out DIR` and set `ACBENCH_FIG2=DIR`."))

# %% [markdown]
# ## Per access, and overhead against the baseline
# Per read: instructions, L1 misses, latency (ns), user and system CPU time (ns, all threads), page
# faults and context switches (perf software counters, less a load-only run); the columns a table
# has (older ones lack θ panels, CPU time and the kernel counts).

# %%
if df is not None:
    wanted = ["tracking_method", "zipf_theta", "instructions_per_access", "l1i_misses_per_access",
              "l1d_misses_per_access", "ns_per_access", "user_ns_per_access", "sys_ns_per_access",
              "faults_per_access", "ctx_switches_per_access", "vma_granule_bytes", *(c for c, _ in METRICS)]
    df.to_csv(out / "fig2.csv", index=False)
    display(df[[c for c in wanted if c in df.columns]].round(4))
    src = [f"Measured with: {df['counter_source'].iloc[0]}",
           f"hardware counters: {df.get('hardware_counters', pd.Series(['?'])).iloc[0]}",
           f"overheads against **{baseline_of(df)}**"]
    if "perf_source" in df.columns:
        src.append(f"faults and context switches: {df['perf_source'].iloc[0]}")
    display(Markdown("; ".join(src)))
    hidden = bar_table(df).query("not shown")
    display(Markdown(f"L1 bars left out (< {MISS_FLOOR:g} misses per read): "
                     + ("; ".join(sorted(set(hidden["why"]))) if len(hidden) else "none")))

# %%
if df is not None:
    for p in plot_fig2(df, out / "fig2"):
        print(p.name)
