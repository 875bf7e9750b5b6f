"""Where a run's rows come from: how many binaries and harness revisions made them, which rows do
not say, and which cells ran beside other work (`other_cpu_share`: the machine's busy CPU over the
cell that was not the cell's, as a share of its capacity; harness/acbench/collect.py load_beside).
A throughput measured beside other work is suspect; a hit rate mostly is not (a classifier
thread's rounds are the exception), so the report lists both and says which cells they are."""
from __future__ import annotations

import pandas as pd

from acplot.cells import SLICE

BESIDE_SHARE = 0.05      # more than 5 % of the machine busy with other work during the cell


def beside_other_work(df: pd.DataFrame, share: float = BESIDE_SHARE) -> pd.DataFrame:
    """The cells whose other_cpu_share exceeds `share`: approach, slice, repetition, the share."""
    if "other_cpu_share" not in df.columns:
        return pd.DataFrame(columns=["approach", *SLICE, "repetition", "other_cpu_share"])
    cols = [c for c in ("approach", *SLICE, "repetition", "spill_device", "other_cpu_share") if c in df.columns]
    out = df[df["other_cpu_share"].fillna(0) > share][cols]
    return out.sort_values("other_cpu_share", ascending=False, ignore_index=True)


def summary(df: pd.DataFrame, share: float = BESIDE_SHARE) -> list[str]:
    """Lines for the report: binaries, revisions, unmeasured load, cells beside other work."""
    n = len(df)
    lines = []
    if "binary_sha256" in df.columns:
        shas = df["binary_sha256"].dropna().astype(str)
        lacking = n - len(shas)
        text = f"{shas.nunique()} binar{'y' if shas.nunique() == 1 else 'ies'} (binary_sha256) over {n} rows"
        lines.append(text + (f"; {lacking} rows do not say which" if lacking else ""))
    else:
        lines.append(f"the rows do not say which binary made them (no binary_sha256 column; {n} rows)")
    if "git_revision" in df.columns:
        revs = df["git_revision"].dropna().astype(str)
        dirty = int(revs.str.endswith("-dirty").sum())
        lines.append(f"{revs.nunique()} harness revision(s)" + (f", {dirty} rows from a tree with uncommitted changes"
                                                               if dirty else ""))
    if "other_cpu_share" not in df.columns:
        lines.append("the machine's load during the cells was not recorded (no other_cpu_share column)")
        return lines
    unknown = int(df["other_cpu_share"].isna().sum())
    flagged = beside_other_work(df, share)
    text = (f"{len(flagged)} of {n} cells ran beside other work (more than {100 * share:g} % of the machine busy "
            f"with something else)")
    if len(flagged):
        top = flagged.iloc[0]
        text += f"; the most: {top['approach']} θ={top['zipf_theta']:g} M/D={top['mem_ratio']:g} at " \
                f"{100 * top['other_cpu_share']:.0f} %"
    lines.append(text + (f"; {unknown} rows did not record it" if unknown else ""))
    return lines
