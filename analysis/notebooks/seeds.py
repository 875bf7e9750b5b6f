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
# # The seed papers' cold tiers: NVM (Arulraj et al.), another server's memory (RAM-DUR), EMT's page cache
#
# **NVM** (experiments/nvm.toml): data 8x the memory, read-only and read-heavy YCSB at four skews,
# one driver thread in-process. Anti-caching: `lru-nvm` (H-Store's exact LRU over tier nvm: cold
# records in a hash table in an NVM region outside the cell's cgroup, the emulated latency paid per
# access to it, 2x DRAM) and `lru-nvm{ac_nvm_latency=8x}`, and both with every cache line paying
# (`ac_nvm_charge=line`); the disk-oriented design: `ospaging-nvmfile` (a DRAM buffer pool, the page
# cache, over a file on a RAM block device standing for NVM, no limit), and the same device limited
# to 64 bytes per line latency at 2x and 8x (`{device_latency=2x|8x}`); `lru` over blocks on the
# RAM device. Claims under both ways of paying the latency: `acplot/nvm.py`.
#
# **Remote memory** (experiments/remote.toml): `lru-remote` (two other servers' memory, two copies,
# loopback TCP) against `lru` (blocks on the disk), M/D 1/4. Claims: `acplot/remote.py`.
#
# **EMT** (experiments/emt.toml): tier emt (our pager as EMT's page cache, read-ahead on and off)
# against ospaging (malloc) and ospaging-file (mmap), scans of 1000 records and uniform random reads,
# memory 200 (unlimited) / 80 / 67 / 50 % of the data. Claims: `acplot/emt.py`. EMT's colours
# (experiments/emt-colours.toml): tier emt with the classifier's hot pages pinned against LRU and
# FIFO alone, skewed reads with a scan every 500 operations, memory 80 / 50 % of the data.
#
# Input: `ACBENCH_NVM`, `ACBENCH_REMOTE`, `ACBENCH_EMT`, `ACBENCH_EMT_COLOURS` (run directories),
# else the committed `experiments/results/nvm`, `remote`, `emt` and `emt-colours`; output:
# `ACBENCH_FIGURES` (nvm-throughput.png, remote-throughput.png, their .csv, emt-slowdown.png and
# .csv, emt-colours.csv, seeds-report.md, seeds-report.csv).

# %%
import pandas as pd
from IPython.display import Image, Markdown, display

from acplot import emt, nvm, remote
from acplot.runs import describe_run, figures_dir, load_run, spec_run
from acplot.seeds import plot_throughput, throughput_table

out = figures_dir()
runs = {name: spec_run(name) for name in ("nvm", "remote", "emt", "emt-colours")}


def shown(p):
    """p relative to the checkout when it is inside it (the report is committed)."""
    from acbench import paths
    try:
        return p.resolve().relative_to(paths.top().resolve())
    except ValueError:
        return p



data = {name: load_run(p) if p is not None else None for name, p in runs.items()}
for name, p in runs.items():
    display(Markdown(f"{name} run: `{p}`" if p is not None else
                     f"**No {name} run**: `acbench run experiments/{name}.toml`, then set "
                     f"`ACBENCH_{name.upper()}=DIR`."))

# %% [markdown]
# ## Throughput per approach and skew (mean of the repetitions, 95 % interval)

# %%
titles = {"nvm": "data 8x memory", "remote": "M/D 1/4"}
for name, df in data.items():
    if df is None or name not in titles:
        continue
    table = throughput_table(df)
    table.to_csv(out / f"{name}-throughput.csv", index=False)
    display(Markdown(f"### {name}"), table.round(1))
    for p in plot_throughput(table, out, f"{name}-throughput", titles[name]):
        display(Image(filename=str(p)))

# %% [markdown]
# ## The emulated NVM: DRAM's latency as measured at each cell's start, the extra per access, and
# over the server's whole life (load, warm-up, run) the accesses, the lines read and the time waited

# %%
df = data["nvm"]
if df is not None and "ac_nvm_dram_ns" in df.columns:
    n = df[df["ac_nvm_dram_ns"].notna()].copy()
    emu = n.groupby(["approach", "workload", "zipf_theta"]).agg(
        dram_ns=("ac_nvm_dram_ns", "mean"), extra_ns=("ac_nvm_extra_ns", "mean"),
        hit_rate=("hit_rate", "mean"), delay_s=("ac_nvm_delay_ns", lambda x: x.mean() / 1e9),
        accesses=("ac_nvm_accesses", "mean"), lines=("ac_nvm_lines_read", "mean")).reset_index()
    display(emu.round(3))
if df is not None and "device_latency" in df.columns:
    # the disk-oriented side's NVM block device: DRAM measured at each cell's start, the limit from it
    dev = df[df["device_latency"].notna()].groupby(["approach", "device_latency"]).agg(
        dram_ns=("device_dram_ns", "mean"), limit_mb_s=("io_limit_bps", lambda x: x.mean() / 1e6),
        read_ios=("cg_io_read_ios", "mean"), cells=("cell_id", "count")).reset_index()
    display(dev.round(1))

# %% [markdown]
# ## EMT: run time against unlimited memory (the same approach at M/D 2), the faults that read data
# (the pager's fetches, the kernel's major faults) and the pages read ahead

# %%
if data["emt"] is not None:
    slow = emt.slowdowns(data["emt"])
    slow.to_csv(out / "emt-slowdown.csv", index=False)
    display(slow.round(2))
    for p in emt.plot_slowdown(slow, out):
        display(Image(filename=str(p)))

# %% [markdown]
# ## EMT's colours: run time and disk hits per read without and with the classifier's hot pages
# pinned, per eviction and memory ratio (speedup: per repetition, 95 % interval)

# %%
if data["emt-colours"] is not None:
    effect = emt.colour_effect(data["emt-colours"])
    effect.to_csv(out / "emt-colours.csv", index=False)
    display(effect.round(3))

# %% [markdown]
# ## The claims

# %%
empty = pd.DataFrame(columns=["approach", "workload"])
claims = pd.concat([nvm.check_claims(data["nvm"] if data["nvm"] is not None else empty),
                    remote.check_claims(data["remote"] if data["remote"] is not None else empty),
                    emt.check_claims(data["emt"] if data["emt"] is not None else empty),
                    emt.check_colour_claim(data["emt-colours"])],
                   ignore_index=True)
claims.to_csv(out / "seeds-report.csv", index=False)
lines = ["# The seed papers' cold tiers: their claims", ""]
lines += [f"- {name}: `{shown(p)}`" if p is not None else f"- {name}: no run" for name, p in runs.items()]
lines += ["", "| source | claim | verdict |", "|---|---|---|"]
lines += [f"| {r.source} | {r.claim} | {r.verdict} |" for r in claims.itertuples()]
(out / "seeds-report.md").write_text("\n".join(lines) + "\n")
display(Markdown("\n".join(lines)))
