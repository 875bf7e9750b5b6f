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
# Zhang et al. (ICDE 2015), §IV-F, Fig 4: throughput of each approach (log axis), CPU time per operation, disk
# reads per operation, the disk's read requests per second and their mean latency, and the median and 99th
# percentile of the spill reads' latency against memory/data M/D, one row of panels per skew θ, one figure per
# workload and regime (native: the disk as it is; hdd: the paper's hard disk emulated, fig4-paper-hdd; the
# tables name it beside the workload). Every per-operation figure covers the measured run only (harness/README.md).
# Only cells whose spill directory and swap file were on the disk are drawn: a grid on the RAM
# device (`spill_device` = ram, e.g. fig3-paper) measures hit rates, not the disk's throughput.
# Input: `ACBENCH_RESULTS` (a run directory, or several separated by ':'); output: `ACBENCH_FIGURES`.

# %%
import pandas as pd
from IPython.display import Image, Markdown, display

from acbench.figures import FIG4_PANELS, fig4_tables_frame, plot_fig4
from acplot.cells import by_cell
from acplot.runs import describe_run, disk_rows, figure_rows, figures_dir, load_run, require

every = load_run()
df = figure_rows(disk_rows(every))     # the disk's cells of the paper's figures (data not fitting)
out = figures_dir()
require(every, ["approach", "workload", "zipf_theta", "mem_ratio", "throughput_ops_s", "operations",
                "cpu_user_s", "cpu_sys_s", "disk_read_ios"], "Fig 4")
if df.empty:
    display(Markdown(f"**No cell of these results ran on the disk** ({len(every)} cells on the RAM device): "
                     "Fig 4 needs a run on the disk, e.g. `acbench run experiments/fig4-paper.toml`."))
pd.Series(describe_run(df if not df.empty else every), name="run")

# %%
for p in plot_fig4(df, out) if not df.empty else []:
    if p.suffix == ".png":
        display(Image(filename=str(p)))

# %% [markdown]
# ## The numbers behind the panels (mean over repetitions)

# %%
tables = {}
for col, label in FIG4_PANELS if not df.empty else []:
    tables[col] = by_cell(fig4_tables_frame(df), col)
    tables[col].to_csv(out / f"fig4-{col}.csv")
tables["throughput_ops_s"].round(0) if tables else None

# %%
tables["cpu_us_per_op"].round(2) if tables else None

# %%
tables["disk_reads_per_op"].round(4) if tables else None

# %%
tables["disk_read_ops_s"].round(0) if tables else None

# %%
tables["disk_read_latency_us"].round(1) if tables else None

# %% [markdown]
# Spill reads (the I/O engine's: records, blocks, uvmm's pages), median and 99th percentile of their latency in
# the run; empty for the kernel-paged approaches (their reads are page faults) and for rows older than the
# measurement.

# %%
pd.concat({q: tables[f"spill_read_us_{q}"].round(1) for q in ("p50", "p99")}, axis=1) if tables else None
