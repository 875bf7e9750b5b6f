"""EMT's claims (Meyer et al., the seed papers' 001, §3.1) checked against a run of experiments/emt.toml:

  E1  "The loss in performance is less distinctive for EMT, ranging around a 6.5x slowdown for all
      three evicted data ratios (20 %, 33 % and 50 %) compared to unlimited memory", where malloc and
      mmap lose 28-81x (sequential scans). Judged per memory ratio below the largest (which stands for
      unlimited memory): emt's slowdown (run time over its own at the largest ratio) below both
      ospaging's (malloc) and ospaging-file's (mmap).
  E2  random reads: "all three allocators exhibit similar amounts of major page faults" and "EMT
      outperforms mmap and malloc while having the same number of page faults" (direct I/O).
      Judged per ratio: emt's run time below both kernel approaches'; its faults quoted beside
      theirs ("similar" taken as within a factor SIMILAR).

A run of one repetition gives points, not intervals (acplot.seeds.state)."""
from __future__ import annotations

import pandas as pd

from acplot.evidence import Interval
from acplot.seeds import missing as _missing, state as _state, verdict as _verdict

EMT = "emt"
EMT_NO_RA = "emt{ac_emt_readahead_max=1}"
MALLOC = "ospaging"
MMAP = "ospaging-file"
SCANS, RANDOM = "scanonly", "randomreads"
SIMILAR = 1.5
PAPER = {"emt": 6.5, "kernel": (28.0, 81.0)}


def _faults(df: pd.DataFrame) -> pd.Series:
    """The run's faults that read data: in requests and not (request_major_faults +
    unattributed_major_faults: the pager's fetches under emt, the kernel's major faults under the
    kernel approaches), else major_faults."""
    if "request_major_faults" in df.columns and "unattributed_major_faults" in df.columns:
        both = df["request_major_faults"] + df["unattributed_major_faults"]
        return both.fillna(df["major_faults"]) if "major_faults" in df.columns else both
    return df["major_faults"] if "major_faults" in df.columns else pd.Series(float("nan"), index=df.index)


def slowdowns(df: pd.DataFrame) -> pd.DataFrame:
    """Per workload, approach and memory ratio (mean over repetitions): run time, its ratio to the same
    approach's at the largest ratio (unlimited memory), the faults that read data (`faults`) and the
    read-ahead's windows and pages read, used and wasted."""
    df = pd.concat([df, _faults(df).rename("faults")], axis=1)     # (one new column: no fragmentation)
    cols = {"run_duration_s": "mean"}
    for c in ("faults", "disk_hits", "ac_uvmm_readahead_faults", "ac_uvmm_readahead_pages",
              "ac_uvmm_readahead_used", "ac_uvmm_readahead_wasted", "throughput_ops_s", "cpu_us_per_op"):
        if c in df.columns:
            cols[c] = "mean"
    t = df.groupby(["workload", "approach", "mem_ratio"]).agg(cols).reset_index()
    top = t.groupby(["workload", "approach"])["mem_ratio"].transform("max")
    base = t[t["mem_ratio"] == top].set_index(["workload", "approach"])["run_duration_s"]
    t["slowdown"] = [r / base.get((w, a), float("nan")) for w, a, r in
                     zip(t["workload"], t["approach"], t["run_duration_s"])]
    return t.sort_values(["workload", "approach", "mem_ratio"], ascending=[True, True, False], ignore_index=True)


def _pressured(t: pd.DataFrame, workload: str) -> pd.DataFrame:
    d = t[t["workload"] == workload]
    if d.empty:
        return d
    return d[d["mem_ratio"] < d["mem_ratio"].max()]


def claim_scans(df: pd.DataFrame) -> str:
    """E1: emt's scan slowdown below malloc's and mmap's at every ratio under pressure."""
    why = _missing(df, (EMT, MALLOC, MMAP), "emt")
    if why:
        return why
    d = _pressured(slowdowns(df), SCANS)
    w = d.pivot_table(index="mem_ratio", columns="approach", values="slowdown")
    if d.empty or any(a not in w.columns for a in (EMT, MALLOC, MMAP)):
        return f"not testable with these results: no {SCANS} cells of {EMT}, {MALLOC} and {MMAP} under pressure"
    states, parts = [], []
    for m, r in w.sort_index(ascending=False).iterrows():
        margin = min(r[MALLOC], r[MMAP]) - r[EMT]
        states.append(_state(Interval(margin, margin, margin, 1)))
        parts.append(f"M/D {m:.2f}: emt {r[EMT]:.1f}x, malloc {r[MALLOC]:.1f}x, mmap {r[MMAP]:.1f}x")
    return _verdict(states, "scan slowdown against unlimited memory: " + "; ".join(parts)
                    + f"; paper: EMT ~{PAPER['emt']:g}x, malloc and mmap {PAPER['kernel'][0]:g}-{PAPER['kernel'][1]:g}x")


def claim_random(df: pd.DataFrame) -> str:
    """E2: on random reads emt faster than malloc and mmap at every ratio under pressure; faults quoted."""
    why = _missing(df, (EMT, MALLOC, MMAP), "emt")
    if why:
        return why
    d = _pressured(slowdowns(df), RANDOM)
    run = d.pivot_table(index="mem_ratio", columns="approach", values="run_duration_s")
    if d.empty or any(a not in run.columns for a in (EMT, MALLOC, MMAP)):
        return f"not testable with these results: no {RANDOM} cells of {EMT}, {MALLOC} and {MMAP} under pressure"
    faults = d.pivot_table(index="mem_ratio", columns="approach", values="faults")
    states, parts = [], []
    for m, r in run.sort_index(ascending=False).iterrows():
        margin = min(r[MALLOC], r[MMAP]) / r[EMT] - 1
        states.append(_state(Interval(margin, margin, margin, 1)))
        txt = f"M/D {m:.2f}: run time emt {r[EMT]:.1f} s, malloc {r[MALLOC]:.1f} s, mmap {r[MMAP]:.1f} s"
        if not faults.empty and all(a in faults.columns for a in (EMT, MALLOC, MMAP)):
            f = faults.loc[m]
            similar = max(f[[EMT, MALLOC, MMAP]]) <= SIMILAR * min(f[[EMT, MALLOC, MMAP]])
            txt += (f", faults {f[EMT]:,.0f} / {f[MALLOC]:,.0f} / {f[MMAP]:,.0f}"
                    f" ({'similar' if similar else 'not similar'}: within {SIMILAR:g}x)")
        parts.append(txt)
    return _verdict(states, "random reads: " + "; ".join(parts))


def check_claims(df: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: source, text, verdict."""
    src = "Meyer et al. (EMT)"
    return pd.DataFrame([
        (src, "scans: EMT slows down far less than malloc and mmap under memory pressure (6.5x against 28-81x)",
         claim_scans(df)),
        (src, "random reads: EMT faster than malloc and mmap with about as many faults (direct I/O)",
         claim_random(df)),
    ], columns=["source", "claim", "verdict"])
