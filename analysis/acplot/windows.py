"""Repetitions measured as windows of one process against repetitions in separate processes
(harness/README.md "Repetitions in windows"): per cell (approach, θ, M/D) and figure, each mode's
mean over its repetitions with a 95 % Student t interval, the windows' mean less the separate
runs' with Welch's 95 % interval, the ratio of their standard deviations (windows that drift apart
widen the spread before they move the mean), and repetition 0 of each (the same requests and the same process
up to the end of its run: they differ only by the run's own nondeterminism).

    python3 -m acplot.windows SEPARATE WINDOWS [SEPARATE WINDOWS ...]

SEPARATE and WINDOWS are run directories or cells files (acplot.runs.load_run) of one spec run in
each mode."""
from __future__ import annotations

import argparse
import math
import sys
from typing import Iterable

import pandas as pd

from acplot.evidence import Interval, t_critical, t_interval
from acplot.loss import ResultsError

KEY = ["approach", "zipf_theta", "mem_ratio"]
# figure -> (column, scale, unit)
FIGURES = {"hit rate": ("hit_rate", 100.0, "%"), "throughput": ("throughput_ops_s", 1e-3, "k ops/s")}


def welch(a: Iterable[float], b: Iterable[float]) -> Interval:
    """mean(a) − mean(b) with Welch's 95 % interval: t at the Welch–Satterthwaite degrees of
    freedom (rounded down) times √(s_a²/n_a + s_b²/n_b). One value on either side: no interval."""
    xa, xb = [float(x) for x in a], [float(x) for x in b]
    if not xa or not xb:
        raise ValueError("no values")
    ia, ib = t_interval(xa), t_interval(xb)
    diff = ia.mean - ib.mean
    if ia.n < 2 or ib.n < 2:
        return Interval(diff, float("nan"), float("nan"), min(ia.n, ib.n))
    va = sum((x - ia.mean) ** 2 for x in xa) / (ia.n - 1) / ia.n
    vb = sum((x - ib.mean) ** 2 for x in xb) / (ib.n - 1) / ib.n
    if va + vb == 0:
        return Interval(diff, diff, diff, ia.n + ib.n)
    dof = (va + vb) ** 2 / (va ** 2 / (ia.n - 1) + vb ** 2 / (ib.n - 1))
    half = t_critical(max(1, math.floor(dof))) * math.sqrt(va + vb)
    return Interval(diff, diff - half, diff + half, ia.n + ib.n)


def _rows(df: pd.DataFrame, what: str) -> pd.DataFrame:
    need = KEY + ["repetition"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ResultsError(f"{what} rows lack {', '.join(missing)}")
    if "status" in df.columns:
        df = df[df["status"].fillna("ok") == "ok"]
    return df


def windows_table(separate: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, figure) present in both: n, mean and interval of each mode, the
    difference with Welch's interval, whether it excludes 0, and repetition 0's difference."""
    sep, win = _rows(separate, "separate"), _rows(windows, "windows")
    out = []
    for key, s in sep.groupby(KEY, sort=True):
        w = win[(win["approach"] == key[0]) & (win["zipf_theta"].round(6) == round(float(key[1]), 6))
                & (win["mem_ratio"].round(6) == round(float(key[2]), 6))]
        if w.empty:
            continue
        for fig, (col, scale, unit) in FIGURES.items():
            if col not in s.columns or col not in w.columns:
                continue
            xs, xw = (s[col].dropna() * scale).tolist(), (w[col].dropna() * scale).tolist()
            if not xs or not xw:
                continue
            d = welch(xw, xs)
            r0s, r0w = s[s["repetition"] == 0][col], w[w["repetition"] == 0][col]
            sds, sdw = pd.Series(xs).std(), pd.Series(xw).std()
            out.append({"approach": key[0], "θ": float(key[1]), "M/D": float(key[2]), "figure": fig, "unit": unit,
                        "separate": t_interval(xs), "windows": t_interval(xw), "windows − separate": d,
                        "differs": bool(d.n >= 2 and (d.lo > 0 or d.hi < 0)),
                        "sd ratio": float(sdw / sds) if sds > 0 else float("nan"),
                        "r0 windows − separate": (float(r0w.iloc[0] - r0s.iloc[0]) * scale
                                                  if len(r0s) and len(r0w) else float("nan"))})
    return pd.DataFrame(out)


def markdown(table: pd.DataFrame) -> str:
    lines = ["| approach | θ | M/D | figure | separate | windows | windows − separate | sd ratio | r0 difference |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        mark = " **differs**" if r["differs"] else ""
        lines.append(f"| {r['approach']} | {r['θ']:g} | {r['M/D']:g} | {r['figure']} ({r['unit']}) | "
                     f"{r['separate'].text()} | {r['windows'].text()} | {r['windows − separate'].text()}{mark} | "
                     f"{r['sd ratio']:.1f} | {r['r0 windows − separate']:+.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from acplot.runs import load_run
    ap = argparse.ArgumentParser(prog="python3 -m acplot.windows", description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="SEPARATE WINDOWS pairs (run directories or cells files)")
    a = ap.parse_args(argv)
    if len(a.runs) % 2:
        ap.error(f"{len(a.runs)} runs given; accepted: SEPARATE WINDOWS pairs")
    try:
        parts = [windows_table(load_run(a.runs[i]), load_run(a.runs[i + 1])) for i in range(0, len(a.runs), 2)]
    except (ResultsError, OSError) as e:
        print(f"acplot.windows: {e}", file=sys.stderr)
        return 2
    print(markdown(pd.concat(parts, ignore_index=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
