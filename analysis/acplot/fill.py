"""logging-buffer's hot-set fill against the capacity OPT gets (experiments/logging-fill.toml): per
approach, workload and θ, over the repetitions, the share of OPT's capacity held resident (R / C:
`resident_items_avg` / `opt_capacity`), the hit rate and its ratio to OPT's, the loss against OPT
with its three parts (what exact LRU loses, what memory overhead costs, what the policy's choices
cost), the refusals, the classifier's dropped log entries, its rounds, the items brought back into RAM
(for logging, whose reads of cold items stay cold, what its rounds migrated in) and the throughput. The table of
experiments/results/logging-fill/README.md comes from here:

    python3 -m acplot.fill RUN        (a run directory or cells file: acplot.runs.load_run)

Means with a 95 % Student t interval over the repetitions for R / C and the hit rate."""
from __future__ import annotations

import argparse
import sys

import pandas as pd

from acplot.evidence import t_interval
from acplot.loss import ResultsError
from acplot.runs import load_run

KEY = ["approach", "workload", "zipf_theta", "mem_ratio"]
NEEDED = [*KEY, "resident_items_avg", "opt_capacity", "hit_rate", "opt_hit_rate", "loss_pp"]
PARTS = {"loss_lru_pp": "lru part", "loss_overhead_pp": "overhead part", "loss_policy_pp": "policy part"}


def _iv(values: pd.Series, digits: int) -> str:
    iv = t_interval(values)
    return f"{iv.mean:.{digits}f}" + (f" [{iv.lo:.{digits}f}, {iv.hi:.{digits}f}]" if iv.n > 1 else "")


def _approach_order(name: str) -> tuple:
    """A variant NAME{option=value} after NAME's other variants of smaller value (0.9 before 0.95 before 1)."""
    base, _, rest = name.partition("{")
    value = rest.rstrip("}").partition("=")[2]
    try:
        return (base, 0, float(value), name)
    except ValueError:
        return (base, 1, 0.0, name)


def fill_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (approach, workload, θ, M/D), sorted by workload, θ, M/D, then approach (a swept
    value in numeric order); numbers as text, intervals in brackets."""
    lack = [c for c in NEEDED if c not in df.columns]
    if lack:
        raise ResultsError(f"the rows lack {', '.join(lack)} (not rows of `acbench run`?)")
    rows = []
    groups = sorted(df.groupby(KEY, sort=False), key=lambda kg: (*kg[0][1:], _approach_order(kg[0][0])))
    for key, g in groups:
        r = dict(zip(["approach", "workload", "θ", "M/D"], key))
        r["runs"] = len(g)
        r["R / C"] = _iv(g["resident_items_avg"] / g["opt_capacity"], 3)
        r["hit"] = _iv(g["hit_rate"], 4)
        r["hit / OPT"] = f"{(g['hit_rate'] / g['opt_hit_rate']).mean():.3f}"
        r["loss pp"] = f"{g['loss_pp'].mean():.2f}"
        for col, name in PARTS.items():
            r[name] = f"{g[col].mean():.2f}" if col in g.columns and g[col].notna().any() else ""
        r["refused"] = int(g["ac_refused_items"].fillna(0).sum()) if "ac_refused_items" in g.columns else ""
        for col, name in (("ac_log_drops", "log drops"), ("ac_log_rounds", "rounds"), ("ac_fetched_items", "fetched")):
            r[name] = int(g[col].mean()) if col in g.columns and g[col].notna().any() else ""
        r["ops/s"] = f"{g['throughput_ops_s'].mean():,.0f}" if "throughput_ops_s" in g.columns else ""
        rows.append(r)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m acplot.fill", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run directory of experiments/logging-fill.toml, or its cells file")
    args = ap.parse_args(argv)
    try:
        print(markdown(fill_table(load_run(args.run))))
    except ResultsError as e:
        print(f"acplot.fill: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
