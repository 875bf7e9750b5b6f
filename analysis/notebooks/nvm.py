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
# # Anti-caching in NVM — Arulraj, DeBrabant, Pavlo, Stonebraker, Zdonik, Dulloor (NVM+DRAM architecture)
#
# experiments/nvm.toml: data 8x the memory, read-only and read-heavy YCSB at four skews, one driver
# thread in-process. Anti-caching: `lru-nvm` (H-Store's exact LRU over tier nvm: cold records in a
# hash table in an NVM region outside the cell's cgroup, every cache line touched paying the emulated
# latency, 2x DRAM) and `lru-nvm{ac_nvm_latency=8x}`; the disk-oriented design: `ospaging-nvmfile` (a
# DRAM buffer pool, the page cache, over a file on a RAM block device standing for NVM, no latency
# added); `lru` over blocks on the same RAM device. The claims' checks: `analysis/acplot/nvm.py`.
# Input: `ACBENCH_NVM` (a run directory), else the committed `experiments/results/nvm`; output:
# `ACBENCH_FIGURES` (nvm-throughput.png, nvm-throughput.csv, nvm-report.md, nvm-report.csv).

# %%
import pandas as pd
from IPython.display import Image, Markdown, display

from acplot.nvm import check_claims, nvm_path, plot_throughput, throughput_table
from acplot.runs import describe_run, figures_dir, load_run

out = figures_dir()
path = nvm_path()
df = load_run(path) if path is not None else None
display(Markdown(f"NVM run: `{path}`" if path is not None else
                 "**No NVM run**: `acbench run experiments/nvm.toml` and set `ACBENCH_NVM=DIR`."))
if df is not None:
    display(pd.Series(describe_run(df), name="run"))

# %% [markdown]
# ## Throughput per approach and skew (mean of the repetitions, 95 % interval)

# %%
if df is not None:
    table = throughput_table(df)
    table.to_csv(out / "nvm-throughput.csv", index=False)
    display(table.round(1))
    for p in plot_throughput(table, out):
        display(Image(filename=str(p)))

# %% [markdown]
# ## The emulated NVM: DRAM's latency as measured at each cell's start, the extra per line, the
# cache lines touched per operation and the share of the run spent waiting for them

# %%
if df is not None and "ac_nvm_dram_ns" in df.columns:
    n = df[df["ac_nvm_dram_ns"].notna()]
    emu = n.groupby(["approach", "workload", "zipf_theta"]).agg(
        dram_ns=("ac_nvm_dram_ns", "mean"), extra_ns_per_line=("ac_nvm_extra_ns_per_line", "mean"),
        hit_rate=("hit_rate", "mean"), delay_ns=("ac_nvm_delay_ns", "mean"),
        lines=("ac_nvm_lines_read", "mean")).reset_index()
    display(emu.round(3))

# %% [markdown]
# ## The paper's claims

# %%
claims = check_claims(df if df is not None else pd.DataFrame(columns=["approach", "workload"]))
claims.to_csv(out / "nvm-report.csv", index=False)
lines = ["# Anti-caching in NVM: the seed paper's claims", "",
         f"Run: `{path}`" if path is not None else "No run of experiments/nvm.toml.", "",
         "| source | claim | verdict |", "|---|---|---|"]
lines += [f"| {r.source} | {r.claim} | {r.verdict} |" for r in claims.itertuples()]
(out / "nvm-report.md").write_text("\n".join(lines) + "\n")
display(Markdown("\n".join(lines)))
