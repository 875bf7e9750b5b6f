"""A rerun against the rows it replaces: per cell (approach, θ, M/D) the old and new hit rate and
loss against OPT, the new loss's three parts, the request major faults per disk hit, and the cgroup
limit each ran under. The table of experiments/results/faithful-paper/README.md comes from here:

    python3 -m acplot.rerun OLD NEW [--old-as NEW_APPROACH=OLD_APPROACH ...] [--reference lru]

OLD and NEW are run directories or cells files (acplot.runs.load_run). A new approach is compared
with the old rows of the same name; a variant NAME{option=value} with NAME's; `--old-as` names
another (logging-buffer never ran at the paper's scale before, so it is compared with logging).
The reference column is the old rows' exact LRU of the same cell.

Faults per disk hit: new rows count the faults charged to requests (request_major_faults); old rows
from before that column count every major fault of the run window (major_faults). A cell whose
status is not ok (an OOM kill) is listed with its status and no metrics."""
from __future__ import annotations

import argparse
import math
import sys
from typing import Mapping

import pandas as pd

from acplot.loss import ResultsError

MIB = 1 << 20
KEY = ["approach", "zipf_theta", "mem_ratio"]
COLUMNS = ["approach", "θ", "M/D", "status", "hit old", "hit new", "lru old", "loss old", "loss new",
           "lru part", "overhead part", "policy part", "faults/dh old", "faults/dh new",
           "limit old MiB", "limit new MiB", "beside MiB", "unattr faults"]


def base_name(approach: str) -> str:
    """NAME of a variant NAME{option=value,...}; the name itself otherwise."""
    return approach.split("{", 1)[0]


def _faults_per_disk_hit(row: pd.Series) -> float:
    faults = row.get("request_major_faults")
    if faults is None or (isinstance(faults, float) and math.isnan(faults)):
        faults = row.get("major_faults", float("nan"))
    hits = row.get("disk_hits", 0)
    return float(faults) / float(hits) if hits and not math.isnan(float(hits)) and hits > 0 else 0.0


def _num(row: pd.Series | None, col: str, scale: float = 1.0) -> float:
    if row is None or col not in row.index or pd.isna(row[col]):
        return float("nan")
    return float(row[col]) / scale


def _cells(rows: pd.DataFrame, what: str) -> dict[tuple, pd.Series]:
    missing = [c for c in KEY if c not in rows.columns]
    if missing:
        raise ResultsError(f"{what} rows lack {', '.join(missing)}")
    out: dict[tuple, pd.Series] = {}
    for _, row in rows.iterrows():
        key = (row["approach"], round(float(row["zipf_theta"]), 6), round(float(row["mem_ratio"]), 6))
        out[key] = row                       # a repeated cell: its last row
    return out


def rerun_table(old: pd.DataFrame, new: pd.DataFrame, old_as: Mapping[str, str] | None = None,
                reference: str = "lru") -> pd.DataFrame:
    """One row per new cell, sorted by approach, θ (descending) and M/D (descending)."""
    old_as = dict(old_as or {})
    olds, news = _cells(old, "old"), _cells(new, "new")
    rows = []
    for (approach, theta, ratio), row in news.items():
        name = old_as.get(approach) or (approach if (approach, theta, ratio) in olds else base_name(approach))
        was = olds.get((name, theta, ratio))
        ref = olds.get((reference, theta, ratio))
        status = str(row.get("status", "ok") if not pd.isna(row.get("status", "ok")) else "ok")
        ok = status == "ok"
        rows.append({
            "approach": approach, "θ": theta, "M/D": ratio, "status": status,
            "hit old": _num(was, "hit_rate"), "hit new": _num(row, "hit_rate") if ok else float("nan"),
            "lru old": _num(ref, "hit_rate"),
            "loss old": _num(was, "loss_pp"), "loss new": _num(row, "loss_pp") if ok else float("nan"),
            "lru part": _num(row, "loss_lru_pp") if ok else float("nan"),
            "overhead part": _num(row, "loss_overhead_pp") if ok else float("nan"),
            "policy part": _num(row, "loss_policy_pp") if ok else float("nan"),
            "faults/dh old": _faults_per_disk_hit(was) if was is not None else float("nan"),
            "faults/dh new": _faults_per_disk_hit(row) if ok else float("nan"),
            "limit old MiB": _num(was, "cgroup_limit_bytes", MIB),
            "limit new MiB": _num(row, "cgroup_limit_bytes", MIB),
            "beside MiB": _num(row, "offline_bytes", MIB),
            "unattr faults": _num(row, "unattributed_major_faults"),
        })
    if not rows:
        raise ResultsError("the new run has no rows")
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["beside MiB"] = table["beside MiB"].fillna(0.0)
    return table.sort_values(["approach", "θ", "M/D"], ascending=[True, False, False], ignore_index=True)


def _fmt(value: object, col: str) -> str:
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if col == "unattr faults":
        return f"{int(value)}"
    if col in ("θ", "M/D") or col.startswith(("hit", "lru old", "faults/dh")):
        return f"{value:.3f}"
    if col.endswith("MiB"):
        return f"{value:.1f}"
    return f"{value:.2f}"                   # losses and their parts, in pp


def to_markdown(table: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    for _, row in table.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c], c) for c in table.columns) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from acplot.runs import load_run
    p = argparse.ArgumentParser(prog="python3 -m acplot.rerun", description=__doc__.split("\n\n")[0])
    p.add_argument("old", help="the rows replaced (run directory or cells file)")
    p.add_argument("new", help="the rerun (run directory or cells file)")
    p.add_argument("--old-as", action="append", default=[], metavar="NEW=OLD",
                   help="compare approach NEW with the old rows of OLD (repeatable)")
    p.add_argument("--reference", default="lru", help="the old rows' approach shown as 'lru old' (default lru)")
    a = p.parse_args(argv)
    mapping = {}
    for item in a.old_as:
        if "=" not in item or not all(item.split("=", 1)):
            p.error(f"--old-as {item!r}: expected NEW=OLD, e.g. logging-buffer=logging")
        k, v = item.split("=", 1)
        mapping[k] = v
    try:
        new = _with_failed(a.new, load_run(a.new))
        sys.stdout.write(to_markdown(rerun_table(load_run(a.old), new, mapping, a.reference)))
    except ResultsError as e:
        print(f"acplot.rerun: {e}", file=sys.stderr)
        return 1
    return 0


def _with_failed(path: str, ok_rows: pd.DataFrame) -> pd.DataFrame:
    """load_run keeps ok rows only; the table lists killed cells too (status, no metrics)."""
    from pathlib import Path
    p = Path(path)
    csv = p / "cells.csv" if p.is_dir() else p
    if csv.suffix != ".csv" or not csv.is_file():
        return ok_rows
    every = pd.read_csv(csv)
    if "status" not in every.columns:
        return ok_rows
    failed = every[every["status"].fillna("ok") != "ok"]
    return pd.concat([ok_rows, failed], ignore_index=True) if not failed.empty else ok_rows


if __name__ == "__main__":
    sys.exit(main())
