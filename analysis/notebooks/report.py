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
# # Reproduction report — Zhang et al. (ICDE 2015) (and three claims of DeBrabant et al. (VLDB 2013))
#
# Every claim of the paper that the platform can test, with a verdict computed from the run in `ACBENCH_RESULTS`:
# **reproduced**, **contradicted** (with our numbers), **not decided** (the 95 % intervals over the
# repetitions contain 0 somewhere), **regime-dependent** (rows of several regimes disagree) or **not
# testable with these results** (with what is missing). A claim the paper words about families or
# pairs of approaches is judged as worded, per workload × θ × M/D slice, with the fraction of slices
# where it holds and its margin (`analysis/acplot/evidence.py`); the strict per-pair check (every
# approach of one side beyond every approach of the other in every slice) is the second column.
# The checks and their definitions are in `analysis/acplot/claims.py`; Fig 2's claims are
# checked against the table of `acbench fig2` (`ACBENCH_FIG2`, else the committed
# experiments/results/fig2/fig2.csv). Writes report.md and report.csv to `ACBENCH_FIGURES`; the
# figures named there come from the fig2, fig3 and fig4 notebooks of the same execution.

# %%
import pandas as pd
from IPython.display import Image, Markdown, display

from acplot.claims import PAPER, check_claims, verdict_kind
from acplot.devices import check_path, device_pairs, summary
from acplot.fig2 import fig2_path, load_fig2
from acplot.runs import describe_run, figures_dir, load_run

df = load_run()
out = figures_dir()
run = describe_run(df)
f2 = fig2_path()
verdicts = check_claims(df, load_fig2(f2) if f2 is not None else None)
verdicts.to_csv(out / "report.csv", index=False)


def figures_of(stem: str) -> list:
    """The PNGs a figure stem names: STEM.png (fig2) or STEM-<workload>.png (fig3, fig4)."""
    return sorted([*out.glob(f"{stem}.png"), *out.glob(f"{stem}-*.png")])


pd.Series(run, name="run")

# %%
counts = verdicts["verdict"].map(verdict_kind).value_counts()
counts

# %%
lines = ["# Reproduction report", "",
         "Run: " + "; ".join(f"{k} {v}" for k, v in run.items()), "",
         "Approaches of the paper: " + ", ".join(f"{v} = `{k}`" for k, v in PAPER.items()), "",
         "| source | claim | verdict | strict per-pair view | figure |", "|---|---|---|---|---|"]
for r in verdicts.itertuples():
    files = sorted(p.name for stem in r.figure.split(", ") if stem for p in figures_of(stem))
    shown = ", ".join(f"[{f}]({f})" for f in files) or "–"
    strict = "same" if r.strict == r.verdict else r.strict
    lines.append(f"| {r.source} | {r.claim} | {r.verdict} | {strict} | {shown} |")
lines += ["", ", ".join(f"{n} {k}" for k, n in counts.items())]
report = "\n".join(lines) + "\n"
(out / "report.md").write_text(report)
display(Markdown(report))

# %% [markdown]
# ## Deviations from the paper's set-up
# The paper's machine and settings (§IV-A) against what the rows say of ours, each with the effect
# we expect on the verdicts (`acplot/deviations.py`).

# %%
from acplot.deviations import deviations, to_markdown as deviations_markdown

dev = deviations(df)
dev.to_csv(out / "deviations.csv", index=False)
with open(out / "report.md", "a") as f:
    f.write("\n## Deviations from the paper's set-up\n\n" + deviations_markdown(dev))
display(Markdown(deviations_markdown(dev)))

# %% [markdown]
# ## Provenance
# How many binaries and harness revisions made the rows, and which cells ran beside other work
# (`other_cpu_share` above 5 %: a throughput there is suspect; `acplot/provenance.py`).

# %%
from acplot.provenance import beside_other_work, summary as provenance_summary

prov = provenance_summary(df)
beside = beside_other_work(df)
beside.to_csv(out / "beside.csv", index=False)
with open(out / "report.md", "a") as f:
    f.write("\nProvenance: " + "; ".join(prov) + " (beside.csv).\n")
display(Markdown("\n".join(f"- {line}" for line in prov)))
beside.head(20)

# %% [markdown]
# ## The RAM device against the disk
# Hit-rate grids run on a RAM device (`spill_device` = ram, harness/README.md); a cell that also
# ran on the disk (in these results, or in the committed check `experiments/results/fig3-paper-disk`,
# `ACBENCH_DEVICE_CHECK`) shows how much the device moved its hit rate (`acplot/devices.py`).

# %%
check = check_path()
both = pd.concat([df, load_run(check)], ignore_index=True) if check is not None else df
pairs = device_pairs(both)
pairs.to_csv(out / "devices.csv", index=False)
with open(out / "report.md", "a") as f:
    f.write(f"\nRAM device against the disk: {summary(pairs)} (devices.csv).\n")
display(Markdown(summary(pairs)))
pairs.round(4)

# %% [markdown]
# ## The figures the claims are read from

# %%
for stem in sorted({s for f in verdicts["figure"] for s in f.split(", ") if s}):
    for p in figures_of(stem):
        display(Markdown(f"**{p.name}**"))
        display(Image(filename=str(p)))
