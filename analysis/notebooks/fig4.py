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
# # Fig 4 — throughput, CPU and I/O
#
# Seed 002, §IV-F, Fig 4: throughput of each approach (log axis), CPU time per operation and disk
# reads per operation against memory/data M/D, one row of panels per skew θ, one figure per
# workload. Every per-operation figure covers the measured run only (harness/README.md).
# Input: `ACBENCH_RESULTS` (a run directory); output: `ACBENCH_FIGURES`.

# %%
import pandas as pd
from IPython.display import Image, display

from acbench.figures import FIG4_PANELS, fig4_frame, plot_fig4
from acplot.cells import by_cell
from acplot.runs import describe_run, figures_dir, load_run, require

df = load_run()
out = figures_dir()
require(df, ["approach", "workload", "zipf_theta", "mem_ratio", "throughput_ops_s", "operations",
             "cpu_user_s", "cpu_sys_s", "disk_read_ios"], "Fig 4")
pd.Series(describe_run(df), name="run")

# %%
for p in plot_fig4(df, out):
    if p.suffix == ".png":
        display(Image(filename=str(p)))

# %% [markdown]
# ## The numbers behind the panels (mean over repetitions)

# %%
data = fig4_frame(df)
tables = {}
for col, label in FIG4_PANELS:
    tables[col] = by_cell(data, col)
    tables[col].to_csv(out / f"fig4-{col}.csv")
tables["throughput_ops_s"].round(0)

# %%
tables["cpu_us_per_op"].round(2)

# %%
tables["disk_reads_per_op"].round(4)
