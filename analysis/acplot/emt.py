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
  E3  (§3.2, a run of experiments/emt-colours.toml) "When EMT is used with explicit coloring,
      performance improves, resulting in a 2.9x speedup for higher memory limits" (80 % of the
      queries on 10 % hot data), and "coloring can improve performance further, given that data
      accesses are skewed". Judged per eviction (LRU, FIFO) and memory ratio: the run time without
      colours over the run time with them, less 1 (tier emt with ac_emt_colours=1: the classifier's
      hot pages pinned); the disk hits per read quoted beside.

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
PAPER = {"emt": 6.5, "kernel": (28.0, 81.0), "colours": 2.9}
# eviction -> (without colours, with them); the first two are E3's, the third (half the room pinned)
# is quoted when the run has it
COLOURS = {"lru": (EMT, "emt{ac_emt_colours=1}"),
           "fifo": ("emt{ac_emt_evict=fifo}", "emt{ac_emt_evict=fifo,ac_emt_colours=1}"),
           "lru, hot fill 0.5": (EMT, "emt{ac_emt_colours=1,ac_log_hot_fill=0.5}")}
JUDGED = ("lru", "fifo")
HOTSCANS = "hotscans"


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


def colour_effect(df: pd.DataFrame) -> pd.DataFrame:
    """E3's table (a run of experiments/emt-colours.toml): per eviction and memory ratio, without and
    with colours, the mean run time, disk hits per read and pinned pages, and per repetition the
    speedup (run time without over with) with its 95 % interval (`speedup_lo`, `speedup_hi`) and the
    disk hits the colours saved (`saved_hits`, a fraction of those without)."""
    rows = []
    d = df[df["workload"] == HOTSCANS] if "workload" in df.columns else df.iloc[0:0]
    if "repetition" not in d.columns:
        d = d.assign(repetition=0)
    for evict, (plain, coloured) in COLOURS.items():
        for m, g in d[d["approach"].isin((plain, coloured))].groupby("mem_ratio"):
            w = g.pivot_table(index="repetition", columns="approach",
                              values=["run_duration_s", "disk_hits", "reads_total"], aggfunc="mean").dropna()
            if w.empty or plain not in w["run_duration_s"].columns or coloured not in w["run_duration_s"].columns:
                continue
            t, hits, reads = w["run_duration_s"], w["disk_hits"], w["reads_total"]
            iv = t_interval(t[plain] / t[coloured])
            pinned = g[g["approach"] == coloured].get("ac_uvmm_pinned_pages", pd.Series(dtype=float)).mean()
            rows.append({"evict": evict, "mem_ratio": m, "run_s": t[plain].mean(), "run_s_colours": t[coloured].mean(),
                         "disk_hits_per_read": (hits[plain] / reads[plain]).mean(),
                         "disk_hits_per_read_colours": (hits[coloured] / reads[coloured]).mean(),
                         "saved_hits": (1 - hits[coloured] / hits[plain]).mean(), "pinned_pages": pinned,
                         "speedup": iv.mean, "speedup_lo": iv.lo, "speedup_hi": iv.hi, "runs": iv.n})
    return pd.DataFrame(rows)


def claim_colours(df: pd.DataFrame | None) -> str:
    """E3: colours make the run faster under skew, at every eviction and memory ratio (the margin:
    the speedup less 1, per repetition)."""
    need = tuple(a for e in JUDGED for a in COLOURS[e])
    if df is None:
        return "not testable with these results: no run of experiments/emt-colours.toml"
    why = _missing(df, need, "emt-colours")
    if why:
        return why
    t = colour_effect(df)
    if t.empty:
        return f"not testable with these results: no {HOTSCANS} cells with and without colours"
    states, parts = [], []
    order = {e: i for i, e in enumerate(COLOURS)}
    t = t.assign(o=t["evict"].map(order)).sort_values(["o", "mem_ratio"], ascending=[True, False])
    for r in t.itertuples():
        iv = Interval(r.speedup - 1, r.speedup_lo - 1, r.speedup_hi - 1, r.runs)
        if r.evict in JUDGED:
            states.append(_state(iv))
        parts.append(f"{r.evict} M/D {r.mem_ratio:.2f}: speedup {r.speedup:.2f}x (margin {_iv(iv, 'x')}),"
                     f" disk hits per read {r.disk_hits_per_read:.3f} -> {r.disk_hits_per_read_colours:.3f}"
                     f" ({-100 * r.saved_hits:+.0f} %), {r.pinned_pages:,.0f} pages pinned"
                     + ("" if r.evict in JUDGED else " (quoted, not judged)"))
    return _verdict(states, "skewed reads with scans, colours against none: " + "; ".join(parts)
                    + f"; paper: {PAPER['colours']:g}x at the higher memory limits")


def check_colour_claim(df: pd.DataFrame | None) -> pd.DataFrame:
    """E3 as a row of check_claims' table."""
    return pd.DataFrame([("Meyer et al. (EMT)", "colouring (the classifier's hot pages pinned) speeds up skewed"
                          " accesses (2.9x at higher memory limits)", claim_colours(df))],
                        columns=["source", "claim", "verdict"])


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
