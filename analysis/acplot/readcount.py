"""How many measured reads a cell needs: the first window of a process against all its windows
pooled (experiments/hdd-reads-check.toml: 4 windows of 25,000 reads in one process on the emulated
hard disk; experiments/fig3-reads-check-{flat,skewed}.toml, fig3-rw-reads-check.toml: 2 windows of 1M
reads where fig3's grids measure 2M;
harness/README.md "Repetitions in windows").

Per process (the rows of one `window_of`) and figure: window 0's value (what a cell of one window's
reads measures), the windows' mean with its 95 % Student t interval (their spread: each window is a
fresh request stream of the store as the previous one left it), the pool (throughput: all windows'
operations over their summed run time, what one run of all the reads would measure; hit rate: hits
over reads), window 0 less the pool and the windows' variation. Throughput: both as a share of the
pool and the mean (coefficient of variation), `agrees` when both are at most TOLERANCE. Hit rate:
both in percentage points (the variation is the windows' standard deviation), `agrees` when both are
at most HIT_TOLERANCE_PP: a hit rate's verdict margins are points, and a share of 3 % of a 0.8 hit
rate would be 2.4 of them. Then a run of one window's reads measures what the run of all of them does
(and three repetitions of it give an interval of about ±2.5 × the variation).

--first N sets the first N windows pooled (N × reads: what a cell of that many reads measures)
against the pool of all, in place of window 0 alone: with 4 windows of 25,000, --first 2 asks
whether 50,000 reads stand for 100,000.

    python3 -m acplot.readcount RUN [--first 1] [--tolerance 0.03] [--hit-tolerance 0.2]"""
from __future__ import annotations

import argparse
import sys

import pandas as pd

from acplot.evidence import t_interval
from acplot.loss import ResultsError

TOLERANCE = 0.03
HIT_TOLERANCE_PP = 0.2
NEED = ["approach", "zipf_theta", "mem_ratio", "run_window", "window_of", "operations", "run_duration_s",
        "throughput_ops_s", "hit_rate"]


def _pooled(g: pd.DataFrame) -> tuple[float, float]:
    """(throughput, hit rate in %) of windows run as one: operations over summed time, hits over reads."""
    ops = g["operations"].astype(float)
    return float(ops.sum() / g["run_duration_s"].sum()), float((100.0 * g["hit_rate"] * ops).sum() / ops.sum())


def pool_table(df: pd.DataFrame, tolerance: float = TOLERANCE,
               hit_tolerance_pp: float = HIT_TOLERANCE_PP, first: int = 1) -> pd.DataFrame:
    """One row per (process, figure); ResultsError if the rows are not windows of processes. Throughput's
    "window 0 − pool" and "variation" are % of the pool and the mean, hit rate's percentage points.
    first > 1: "window 0" is the first `first` windows pooled (processes with no window beyond them
    are left out)."""
    missing = [c for c in NEED if c not in df.columns]
    if missing:
        raise ResultsError(f"rows lack {', '.join(missing)} (a run of repetition_mode = \"windows\" has them)")
    if "status" in df.columns:
        df = df[df["status"].fillna("ok") == "ok"]
    df = df[df["window_of"].notna()]
    if df.empty:
        raise ResultsError("no rows of a windows process (run_window / window_of empty)")
    out = []
    for proc, g in df.sort_values("run_window").groupby("window_of", sort=True):
        if len(g) <= first or int(g["run_window"].iloc[0]) != 0:
            continue
        row0 = g.iloc[0]
        head, whole = _pooled(g.iloc[:first]), _pooled(g)
        pools = {"throughput_ops_s": (g["throughput_ops_s"].astype(float), whole[0], head[0]),
                 "hit_rate": (100.0 * g["hit_rate"].astype(float), whole[1], head[1])}
        for col, (xs, pool, w0) in pools.items():
            iv = t_interval(xs)
            if col == "hit_rate":       # points
                off, var, bound = w0 - pool, float(xs.std()), hit_tolerance_pp
            else:                       # shares, in %
                off = 100.0 * (w0 - pool) / pool if pool else float("nan")
                var = 100.0 * float(xs.std() / iv.mean) if iv.mean else float("nan")
                bound = 100.0 * tolerance
            out.append({"process": proc, "approach": row0["approach"], "θ": float(row0["zipf_theta"]),
                        "M/D": float(row0["mem_ratio"]), "figure": col, "windows": len(g), "first": first,
                        "reads per window": int(row0["operations"]), "window 0": w0, "windows mean": iv,
                        "pool": pool, "window 0 − pool": off, "variation": var,
                        "unit": "pp" if col == "hit_rate" else "%",
                        "agrees": bool(abs(off) <= bound and var <= bound)})
    if not out:
        raise ResultsError("no process with a window 0 and a later window" if first == 1 else
                           f"no process with windows 0 to {first - 1} and a later window")
    return pd.DataFrame(out)


def markdown(t: pd.DataFrame) -> str:
    """Hit rates in %, their differences and variation in points; throughput in ops/s, its in %."""
    n = int(t["first"].iloc[0]) if len(t) and "first" in t else 1
    head = "window 0" if n == 1 else f"windows 0–{n - 1} pooled"
    lines = [f"| approach | θ | M/D | figure | windows × reads | {head} | windows' mean [95 %] | pool | {head} − pool | "
             "variation | agrees |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in t.iterrows():
        fig = "hit rate (%)" if r["figure"] == "hit_rate" else "throughput (ops/s)"
        lines.append(f"| {r['approach']} | {r['θ']:g} | {r['M/D']:g} | {fig} | {r['windows']} × "
                     f"{r['reads per window']:,} | {r['window 0']:.4g} | {r['windows mean'].text()} | {r['pool']:.4g} | "
                     f"{r['window 0 − pool']:+.2f} {r['unit']} | {r['variation']:.2f} {r['unit']} | "
                     f"{'yes' if r['agrees'] else '**no**'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from acplot.runs import load_run
    ap = argparse.ArgumentParser(prog="python3 -m acplot.readcount", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run directory or cells file of a repetition_mode = \"windows\" grid")
    ap.add_argument("--tolerance", type=float, default=TOLERANCE,
                    help=f"throughput's largest accepted window 0 − pool and variation, a share (default {TOLERANCE})")
    ap.add_argument("--hit-tolerance", type=float, default=HIT_TOLERANCE_PP,
                    help=f"hit rate's largest accepted window 0 − pool and variation, in percentage points "
                         f"(default {HIT_TOLERANCE_PP})")
    ap.add_argument("--first", type=int, default=1,
                    help="pool the first N windows (N × reads per window) against all of them (default 1: window 0)")
    a = ap.parse_args(argv)
    if a.first < 1:
        ap.error(f"--first {a.first}: accepted: a whole number >= 1 (fewer than a process's windows)")
    if not 0 <= a.tolerance < 1:
        ap.error(f"--tolerance {a.tolerance}: accepted: 0 <= share < 1")
    if not 0 <= a.hit_tolerance < 100:
        ap.error(f"--hit-tolerance {a.hit_tolerance}: accepted: 0 <= points < 100")
    try:
        print(markdown(pool_table(load_run(a.run), a.tolerance, a.hit_tolerance, a.first)))
    except (ResultsError, OSError) as e:
        print(f"acplot.readcount: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
