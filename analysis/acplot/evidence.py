"""Claims judged as the paper words them, with their evidence: per (workload, θ, M/D) slice the
margin by which the claim holds, its 95 % interval over the repetitions, and whether it holds,
fails or is not decided there; over the slices one verdict:

    reproduced        it holds in every slice (the interval above 0, or, with one run, the point)
    contradicted      it fails (the interval below 0) in at least one slice
    not decided       it fails nowhere, but in some slice the interval contains 0
    regime-dependent  the rows carry several regimes (a `regime` column, e.g. "ssd" and "hdd") and
                      the verdict differs between them: it says which regime gives which
    not testable      the cells it needs are missing (which ones)

A margin is computed per repetition from the cells of that repetition (the same request seed for
every approach, `repetition` column; rows without it are one repetition), then averaged over the
repetitions with a Student t interval: pairing by repetition removes what the seeds share.

    family   the mean over `better` minus the mean over `worse` ("user-space approaches have higher
             hit rates than the kernel approaches": the families' means)
    every    the smallest of `better` minus the largest of `worse` (every pair: the strict view)

Hit rates are compared in percentage points; throughputs relative to the worse side, in %."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import pandas as pd

from acplot.cells import SLICE

# Student t's two-sided 95 % critical values, by degrees of freedom (any statistics table; e.g.
# NIST/SEMATECH e-Handbook of Statistical Methods, table 1.3.6.7.2); beyond 30 the normal's 1.960
# is within 2 % of t.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
       2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
HOLDS, FAILS, UNDECIDED = "holds", "fails", "not decided"


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float            # NaN with one value: no interval
    hi: float
    n: int

    def text(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        if self.n < 2:
            return f"{self.mean:+.2f}{u}"
        return f"{self.mean:+.2f}{u} [{self.lo:+.2f}, {self.hi:+.2f}]"

    def __str__(self) -> str:
        return self.text()


def t_critical(dof: int) -> float:
    if dof < 1:
        raise ValueError(f"degrees of freedom must be ≥ 1, not {dof}")
    return T95[dof - 1] if dof <= len(T95) else 1.960


def t_interval(values: Iterable[float]) -> Interval:
    """The mean and its 95 % Student t interval (mean ± t(n-1) s / √n)."""
    xs = [float(v) for v in values if not (isinstance(v, float) and math.isnan(v))]
    if not xs:
        raise ValueError("no values")
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return Interval(mean, float("nan"), float("nan"), 1)
    s = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_critical(n - 1) * s / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def state(iv: Interval) -> str:
    if iv.n < 2:
        return HOLDS if iv.mean > 0 else FAILS if iv.mean < 0 else UNDECIDED
    return HOLDS if iv.lo > 0 else FAILS if iv.hi < 0 else UNDECIDED


def margins(df: pd.DataFrame, value: str, better: Sequence[str], worse: Sequence[str], how: str = "family",
            relative: bool = False) -> pd.DataFrame:
    """Per slice: n (repetitions with every approach), margin (Interval), state. Hit rates in pp
    (value × 100), relative margins in % of the worse side."""
    if how not in ("family", "every"):
        raise ValueError(f"how: 'family' or 'every', not {how!r}")
    need = [*better, *worse]
    d = df[df["approach"].isin(need)]
    reps = d["repetition"] if "repetition" in d.columns else pd.Series(0, index=d.index)
    d = d.assign(repetition=reps.fillna(0))
    wide = d.pivot_table(index=[*SLICE, "repetition"], columns="approach", values=value, aggfunc="mean")
    if any(a not in wide.columns for a in need):
        return pd.DataFrame(columns=[*SLICE, "n", "margin", "state"])
    wide = wide[need].dropna(how="any")
    out = []
    for key, g in wide.groupby(level=list(SLICE), sort=False):
        b = g[list(better)].mean(axis=1) if how == "family" else g[list(better)].min(axis=1)
        w = g[list(worse)].mean(axis=1) if how == "family" else g[list(worse)].max(axis=1)
        m = 100 * (b / w - 1) if relative else (b - w) * (100 if value == "hit_rate" else 1)
        iv = t_interval(m)
        out.append({**dict(zip(SLICE, key)), "n": iv.n, "margin": iv, "state": state(iv)})
    table = pd.DataFrame(out, columns=[*SLICE, "n", "margin", "state"])
    return table.sort_values(list(SLICE), ascending=[True, False, False], ignore_index=True)


def _slice(r: pd.Series) -> str:
    return f"{r['workload']} θ={r['zipf_theta']:g} M/D={r['mem_ratio']:g}"


def summarize(table: pd.DataFrame, unit: str) -> str:
    """The verdict of one regime's margins."""
    if table.empty:
        raise ValueError("no slices")
    n = len(table)
    held = int((table["state"] == HOLDS).sum())
    failed = table[table["state"] == FAILS]
    open_ = table[table["state"] == UNDECIDED]
    runs = sorted(set(table["n"]))
    how = (f"{runs[0]} run{'s' if runs[0] > 1 else ''} per cell" if len(runs) == 1
           else f"{runs[0]}–{runs[-1]} runs per cell") + (", 95 % t-interval" if runs[-1] > 1 else ", no interval")
    lo = min(iv.mean for iv in table["margin"])
    hi = max(iv.mean for iv in table["margin"])
    u = f" {unit}" if unit else ""
    span = f"margin {lo:+.2f} to {hi:+.2f}{u}" if n > 1 else f"margin {table['margin'].iloc[0].text(unit)}"
    if held == n:
        return f"reproduced (holds in {n} of {n} slices; {span}; {how})"
    if not failed.empty:
        worst = failed.loc[failed["margin"].map(lambda iv: iv.mean).idxmin()]
        return (f"contradicted (holds in {held} of {n} slices, fails in {len(failed)}; "
                f"{_slice(worst)}: {worst['margin'].text(unit)}; {how})")
    first = open_.iloc[0]
    return (f"not decided (holds in {held} of {n} slices; the interval contains 0 in {len(open_)}: "
            f"{_slice(first)}: {first['margin'].text(unit)}; {how})")


def judge(df: pd.DataFrame, value: str, better: Sequence[str], worse: Sequence[str], how: str = "family",
          relative: bool = False) -> str:
    """The claim's verdict over the run's slices, per regime when the rows carry several."""
    unit = "%" if relative else ("pp" if value == "hit_rate" else "")
    regimes = sorted(map(str, df["regime"].dropna().unique())) if "regime" in df.columns else []
    if len(regimes) < 2:
        table = margins(df, value, better, worse, how, relative)
        if table.empty:
            return missing(df, value, better, worse)
        return summarize(table, unit)
    verdicts = {}
    for r in regimes:
        table = margins(df[df["regime"].astype(str) == r], value, better, worse, how, relative)
        verdicts[r] = summarize(table, unit) if not table.empty else missing(df, value, better, worse)
    kinds = {r: v.split(" (", 1)[0] for r, v in verdicts.items()}
    if len(set(kinds.values())) == 1:
        kind = next(iter(kinds.values()))
        return f"{kind} in every regime (" + "; ".join(f"{r}: {v}" for r, v in verdicts.items()) + ")"
    return "regime-dependent (" + "; ".join(f"{r}: {v}" for r, v in verdicts.items()) + ")"


def missing(df: pd.DataFrame, value: str, better: Sequence[str], worse: Sequence[str]) -> str:
    there = set(map(str, df["approach"].unique()))
    lack = [a for a in (*better, *worse) if a not in there]
    what = (f"no cells of {', '.join(lack)}" if lack
            else f"no slice (workload, θ, M/D) and repetition with all of {', '.join((*better, *worse))}")
    return f"not testable with these results: {what} ({value})"
