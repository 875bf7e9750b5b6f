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

Margins are per repetition (the same request seed for every approach) with their 95 % Student t
interval; one repetition gives points (acplot.seeds.state)."""
from __future__ import annotations

import pandas as pd

from acplot.evidence import Interval, t_interval
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


def per_repetition(df: pd.DataFrame) -> pd.DataFrame:
    """One row per workload, approach, memory ratio and repetition: run time, its ratio to the same
    approach's and repetition's at the largest ratio (unlimited memory: `slowdown`), the faults that
    read data (`faults`), disk hits, the read-ahead's windows and pages read, used and wasted."""
    df = pd.concat([df, _faults(df).rename("faults")], axis=1)     # (one new column: no fragmentation)
    if "repetition" not in df.columns:
        df = df.assign(repetition=0)
    keep = ["run_duration_s"] + [c for c in ("faults", "disk_hits", "ac_uvmm_readahead_faults",
                                             "ac_uvmm_readahead_pages", "ac_uvmm_readahead_used",
                                             "ac_uvmm_readahead_wasted", "throughput_ops_s", "cpu_us_per_op")
                                 if c in df.columns]
    t = df.groupby(["workload", "approach", "mem_ratio", "repetition"])[keep].mean().reset_index()
    top = t.groupby(["workload", "approach"])["mem_ratio"].transform("max")
    base = t[t["mem_ratio"] == top].set_index(["workload", "approach", "repetition"])["run_duration_s"]
    t["slowdown"] = [r / base.get((w, a, k), float("nan")) for w, a, k, r in
                     zip(t["workload"], t["approach"], t["repetition"], t["run_duration_s"])]
    return t


def slowdowns(df: pd.DataFrame) -> pd.DataFrame:
    """per_repetition's rows averaged over the repetitions, the slowdown with its 95 % interval
    (`slowdown_lo`, `slowdown_hi`) and the repetitions (`runs`)."""
    t = per_repetition(df)
    cols = [c for c in t.columns if c not in ("workload", "approach", "mem_ratio", "repetition")]
    out = t.groupby(["workload", "approach", "mem_ratio"])[cols].mean().reset_index()
    ivs = {k: t_interval(g["slowdown"]) for k, g in t.groupby(["workload", "approach", "mem_ratio"])}
    keys = list(zip(out["workload"], out["approach"], out["mem_ratio"]))
    out["slowdown_lo"] = [ivs[k].lo for k in keys]
    out["slowdown_hi"] = [ivs[k].hi for k in keys]
    out["runs"] = [ivs[k].n for k in keys]
    return out.sort_values(["workload", "approach", "mem_ratio"], ascending=[True, True, False], ignore_index=True)


def _pressured(t: pd.DataFrame, workload: str) -> pd.DataFrame:
    d = t[t["workload"] == workload]
    if d.empty:
        return d
    return d[d["mem_ratio"] < d["mem_ratio"].max()]


def _margins(df: pd.DataFrame, workload: str, value: str, margin) -> list[tuple[float, Interval, pd.Series]] | str:
    """Per memory ratio under pressure: (ratio, the margin's interval over the repetitions, the mean
    values), or why it cannot be told."""
    why = _missing(df, (EMT, MALLOC, MMAP), "emt")
    if why:
        return why
    d = _pressured(per_repetition(df), workload)
    w = d.pivot_table(index=["mem_ratio", "repetition"], columns="approach", values=value)
    if d.empty or any(a not in w.columns for a in (EMT, MALLOC, MMAP)):
        return f"not testable with these results: no {workload} cells of {EMT}, {MALLOC} and {MMAP} under pressure"
    w = w[[EMT, MALLOC, MMAP]].dropna()
    out = []
    for m, g in sorted(w.groupby(level="mem_ratio"), key=lambda x: -x[0]):
        out.append((m, t_interval(margin(g)), g.mean()))
    return out


def _iv(iv: Interval, unit: str = "") -> str:
    return f"{iv.mean:+.2f}{unit}" + (f" [{iv.lo:+.2f}, {iv.hi:+.2f}]" if iv.n > 1 else "")


def claim_scans(df: pd.DataFrame) -> str:
    """E1: emt's scan slowdown below malloc's and mmap's at every ratio under pressure (the margin:
    the smaller of theirs less emt's, per repetition)."""
    rows = _margins(df, SCANS, "slowdown", lambda g: g[[MALLOC, MMAP]].min(axis=1) - g[EMT])
    if isinstance(rows, str):
        return rows
    parts = [f"M/D {m:.2f}: emt {v[EMT]:.1f}x, malloc {v[MALLOC]:.1f}x, mmap {v[MMAP]:.1f}x (margin {_iv(iv, 'x')})"
             for m, iv, v in rows]
    return _verdict([_state(iv) for _, iv, _ in rows], "scan slowdown against unlimited memory: " + "; ".join(parts)
                    + f"; paper: EMT ~{PAPER['emt']:g}x, malloc and mmap {PAPER['kernel'][0]:g}-{PAPER['kernel'][1]:g}x")


def claim_random(df: pd.DataFrame) -> str:
    """E2: on random reads emt faster than malloc and mmap at every ratio under pressure (the margin:
    the faster kernel approach's run time over emt's, less 1); the faults quoted beside."""
    rows = _margins(df, RANDOM, "run_duration_s", lambda g: g[[MALLOC, MMAP]].min(axis=1) / g[EMT] - 1)
    if isinstance(rows, str):
        return rows
    faults = _pressured(per_repetition(df), RANDOM).groupby(["mem_ratio", "approach"])["faults"].mean()
    parts = []
    for m, iv, v in rows:
        txt = (f"M/D {m:.2f}: run time emt {v[EMT]:.1f} s, malloc {v[MALLOC]:.1f} s, mmap {v[MMAP]:.1f} s"
               f" (margin {_iv(iv)})")
        f = [faults.get((m, a), float("nan")) for a in (EMT, MALLOC, MMAP)]
        if all(x == x for x in f):
            similar = max(f) <= SIMILAR * min(f)
            txt += (f", faults {f[0]:,.0f} / {f[1]:,.0f} / {f[2]:,.0f}"
                    f" ({'similar' if similar else 'not similar'}: within {SIMILAR:g}x)")
        parts.append(txt)
    return _verdict([_state(iv) for _, iv, _ in rows], "random reads: " + "; ".join(parts))


def check_claims(df: pd.DataFrame) -> pd.DataFrame:
    """One row per claim: source, text, verdict."""
    src = "Meyer et al. (EMT)"
    return pd.DataFrame([
        (src, "scans: EMT slows down far less than malloc and mmap under memory pressure (6.5x against 28-81x)",
         claim_scans(df)),
        (src, "random reads: EMT faster than malloc and mmap with about as many faults (direct I/O)",
         claim_random(df)),
    ], columns=["source", "claim", "verdict"])


def plot_slowdown(table: pd.DataFrame, out, stem: str = "emt-slowdown") -> list:
    """One panel per workload: the slowdown against unlimited memory (log scale) over the share of the
    data in memory, per approach, the 95 % interval as error bars; the paper's EMT figure (6.5x) as a
    line on the scans' panel. Writes STEM.png and returns its path."""
    import matplotlib.pyplot as plt

    from acplot.style import approach_styles, plot_line, save_panels
    wls = [w for w in (SCANS, RANDOM) if w in set(table["workload"])]
    if not wls:
        return []
    styles = approach_styles(list(table["approach"].unique()))
    fig, axes = plt.subplots(1, len(wls), figsize=(5.6 * len(wls), 4), squeeze=False, sharey=True)
    for ax, wl in zip(axes[0], wls):
        d = table[(table["workload"] == wl) & (table["mem_ratio"] < table["mem_ratio"].max())]
        for a, g in d.groupby("approach"):
            g = g.sort_values("mem_ratio")
            x = 100 * g["mem_ratio"]
            plot_line(ax, x, g["slowdown"], a, styles[a])
            if "slowdown_lo" in g.columns and g["runs"].min() > 1:
                err = [g["slowdown"] - g["slowdown_lo"], g["slowdown_hi"] - g["slowdown"]]
                ax.errorbar(x, g["slowdown"], yerr=err, fmt="none", ecolor=styles[a]["color"], capsize=3)
        if wl == SCANS:
            ax.axhline(PAPER["emt"], color="grey", linestyle=":", linewidth=1)
            ax.text(ax.get_xlim()[0], PAPER["emt"] * 1.08, "EMT in the paper (6.5x)", fontsize=8, color="grey")
        ax.set_yscale("log")
        ax.set_xlabel("data in memory (%)")
        ax.set_title({SCANS: "sequential scans", RANDOM: "random reads"}[wl])
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("run time / run time with unlimited memory")
    return save_panels(fig, axes, out / f"{stem}.png")
