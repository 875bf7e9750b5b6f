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
# # Beyond the paper: today's policies, memcached's extstore and the kernel's modern offloading
#
# **experiments/modern.toml** (in-process, 100k records of 1 KB, true Zipf θ 0.99 / 0.75 / 0.5,
# M/D 1/2 and 1/4, read-only and write-heavy): lru, alru, logging beside SIEVE, S3-FIFO and
# W-TinyLFU spilling over H-Store's blocks; ospaging over a swap file, over zram (lz4) and under a
# PSI-driven limit (TMO's Senpai); stock memcached. The loss against OPT and its three parts
# (exact LRU's, memory overhead's, the policy's: harness/acbench/decompose.py); the best online
# policy's loss against lru's, where the project's target is at most half at θ 0.99.
#
# **experiments/modern-extstore.toml** (network mode, θ 0.99 / 0.5): memcached's own extstore beside
# stock memcached and lru under the same cgroup limit: hit rates and the items extstore lost.
#
# **experiments/modern-trace.toml**: the policies on a replayed trace.
#
# Input: `ACBENCH_MODERN`, `ACBENCH_MODERN_EXTSTORE`, `ACBENCH_MODERN_TRACE` (run directories), else
# the committed `experiments/results/modern*`; output: `ACBENCH_FIGURES` (modern-loss.png, its .csv,
# modern-best.csv, modern-kernel.csv, modern-extstore.csv, modern-trace.csv, modern-report.md).

# %%
import pandas as pd
from IPython.display import Image, Markdown, display

from acplot import modern
from acplot.runs import figures_dir, load_run, spec_run

out = figures_dir()
names = ("modern", "modern-extstore", "modern-trace")
runs = {name: spec_run(name) for name in names}
data = {name: load_run(p) if p is not None else None for name, p in runs.items()}


def shown(p):
    """p relative to the checkout when it is inside it (the report is committed)."""
    from acbench import paths
    try:
        return p.resolve().relative_to(paths.top().resolve())
    except ValueError:
        return p


def md_table(df: pd.DataFrame, digits: int = 3) -> list[str]:
    """df as Markdown table lines (numbers rounded)."""
    if df.empty:
        return ["(no rows)"]
    d = df.copy()
    for c in d.columns:
        if pd.api.types.is_float_dtype(d[c]):
            d[c] = d[c].round(digits)
    head = "| " + " | ".join(map(str, d.columns)) + " |"
    rule = "|" + "---|" * len(d.columns)
    return [head, rule] + ["| " + " | ".join("" if pd.isna(v) else str(v) for v in r) + " |"
                           for r in d.itertuples(index=False)]


report = ["# Beyond the paper: modern policies, extstore and kernel offloading", ""]
for name, p in runs.items():
    report.append(f"- {name}: `{shown(p)}`" if p is not None else
                  f"- {name}: no run (`acbench run experiments/{name}.toml`)")
    display(Markdown(f"{name} run: `{p}`" if p is not None else f"**No {name} run**"))
report.append("")

# %% [markdown]
# ## The loss against OPT and its three parts (modern.toml)

# %%
loss = pd.DataFrame()
if data["modern"] is not None:
    loss = modern.loss_table(data["modern"])
    loss.to_csv(out / "modern-loss.csv", index=False)
    display(loss.round(3))
    for p in modern.plot_loss(loss, out):
        display(Image(filename=str(p)))
    report += ["## The loss against OPT and its parts (pp; modern.toml)", ""]
    cols = ["workload", "zipf_theta", "mem_ratio", "approach", "hit_rate", "opt_hit_rate", "loss_pp",
            *[c for c in modern.PARTS if c in loss.columns], "lost_items"]
    report += md_table(loss[[c for c in cols if c in loss.columns]], 2) + [""]

# %% [markdown]
# ## The best online policy's loss against lru's (target: at most 0.5 at θ 0.99)

# %%
if data["modern"] is not None:
    best = modern.best_over_lru(data["modern"])
    best.to_csv(out / "modern-best.csv", index=False)
    display(best.round(3))
    at = best[best["zipf_theta"] == 0.99] if not best.empty else best
    met = int(at["meets_target"].fillna(False).astype(bool).sum()) if not at.empty else 0
    report += ["## The best online policy's loss / lru's loss", "",
               f"At θ 0.99 the target (≤ {modern.TARGET:g}) is met in {met} of {len(at)} slices.", ""]
    report += md_table(best, 3) + [""]

# %% [markdown]
# ## The kernel baselines: ospaging over a swap file, over zram, under a PSI-driven limit

# %%
if data["modern"] is not None:
    kern = modern.kernel_table(data["modern"])
    kern.to_csv(out / "modern-kernel.csv", index=False)
    display(kern.round(3))
    report += ["## The kernel baselines (memory_had_mb: ospaging-psi's mean limit; ospaging-zram's limit plus"
               " the zram device's peak RAM)", ""] + md_table(kern, 3) + [""]

# %% [markdown]
# ## memcached's extstore beside stock memcached and lru (modern-extstore.toml, network mode)

# %%
if data["modern-extstore"] is not None:
    ext = modern.extstore_table(data["modern-extstore"])
    ext.to_csv(out / "modern-extstore.csv", index=False)
    display(ext.round(3))
    report += ["## extstore: hit rate and items lost beside lru and stock memcached (same limit)", ""]
    report += md_table(ext, 3) + [""]

# %% [markdown]
# ## A replayed trace (modern-trace.toml)

# %%
if data["modern-trace"] is not None:
    tr = modern.loss_table(data["modern-trace"])
    tr.to_csv(out / "modern-trace.csv", index=False)
    display(tr.round(3))
    report += ["## A replayed trace (modern-trace.toml)", ""] + md_table(tr, 3) + [""]

(out / "modern-report.md").write_text("\n".join(report) + "\n")
display(Markdown("\n".join(report[:8])))
