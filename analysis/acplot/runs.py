"""Where a notebook's input and output are: the run directory in ACBENCH_RESULTS (cells.parquet or
cells.csv of `acbench run`, or a committed experiments/results/<name>/cells.csv) and the figure
directory in ACBENCH_FIGURES. Every problem is a ResultsError that says what is wrong."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from acplot.loss import ResultsError

RESULTS_ENV = "ACBENCH_RESULTS"
FIGURES_ENV = "ACBENCH_FIGURES"
CELL_FILES = ("cells.parquet", "cells.csv")


def results_path(path: str | os.PathLike[str] | None = None) -> Path:
    """`path`, or the directory / file named by ACBENCH_RESULTS."""
    if path is None:
        value = os.environ.get(RESULTS_ENV, "")
        if not value:
            raise ResultsError(f"{RESULTS_ENV} is not set: point it to a run directory with cells.parquet "
                               "or cells.csv (e.g. build/results/ci/regress)")
        path = value
    return Path(path)


def load_run(path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The rows of a run: DIR/cells.parquet, else DIR/cells.csv, or a .parquet/.csv file itself;
    several runs separated by ':' (os.pathsep) are read one after the other and concatenated (e.g.
    the hit-rate grid on the RAM device and the throughput grid on the disk).
    Only rows with status ok are kept (an oom_killed cell has no metrics)."""
    text = os.fspath(results_path(path))
    if os.pathsep in text:
        parts = [load_run(part) for part in text.split(os.pathsep) if part]
        return pd.concat(parts, ignore_index=True)
    p = Path(text)
    if p.is_dir():
        found = [p / f for f in CELL_FILES if (p / f).is_file()]
        if not found:
            raise ResultsError(f"{p}: no {' or '.join(CELL_FILES)} (is this a run directory of `acbench run`?)")
        p = found[0]
    elif not p.exists():
        raise ResultsError(f"{p}: no such file or directory")
    # the harness reads them: the column dictionary's types, older names and units as today's
    from acbench import results
    try:
        if p.suffix == ".parquet":
            df = results.typed_rows(pd.read_parquet(p))
        elif p.suffix == ".csv":
            df = results.read_csv(p)
        else:
            raise ResultsError(f"{p}: accepted: a run directory, a .parquet or a .csv file")
    except results.ResultsError as e:
        raise ResultsError(str(e)) from None
    if "status" in df.columns:
        df = df[df["status"].fillna("ok") == "ok"]
    if df.empty:
        raise ResultsError(f"{p}: no rows with status ok")
    return df.reset_index(drop=True)


# The runs of specs whose notebooks read them beside the run in ACBENCH_RESULTS: spec name ->
# (environment variable naming a run directory, the committed run under the repository root)
SPEC_RUNS = {"nvm": ("ACBENCH_NVM", "experiments/results/nvm"),
             "remote": ("ACBENCH_REMOTE", "experiments/results/remote"),
             "emt": ("ACBENCH_EMT", "experiments/results/emt"),
             "emt-colours": ("ACBENCH_EMT_COLOURS", "experiments/results/emt-colours"),
             "modern": ("ACBENCH_MODERN", "experiments/results/modern"),
             "modern-extstore": ("ACBENCH_MODERN_EXTSTORE", "experiments/results/modern-extstore"),
             "modern-trace": ("ACBENCH_MODERN_TRACE", "experiments/results/modern-trace")}


def spec_run(name: str, default_root: Path | None = None) -> Path | None:
    """The run of experiments/<name>.toml (SPEC_RUNS): its environment variable, else the committed
    run under the repository root, else None."""
    env, committed = SPEC_RUNS[name]
    if os.environ.get(env):
        return Path(os.environ[env])
    if default_root is None:
        from acbench import paths   # the checkout acbench works on (its home)
        default_root = paths.top()
    p = Path(default_root) / committed
    return p if p.exists() else None


def figures_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """`path`, or ACBENCH_FIGURES; created if missing."""
    if path is None:
        value = os.environ.get(FIGURES_ENV, "")
        if not value:
            raise ResultsError(f"{FIGURES_ENV} is not set: name the directory for figures and tables")
        path = value
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    return out


# A machine's facts (rows of `acbench run`): throughput from machines that differ in any of them is
# not compared (disk_rows), nor when their disks' measured IOPS differ by more than IOPS_SPREAD. A
# machine is its host name and these facts: a VM keeps its name when it starts on another host (this
# project's rows name "vm" on an AMD EPYC and on an Intel Xeon).
HOST_FACTS = ("kernel", "cpu_model", "cpus")
IOPS_SPREAD = 0.25
MIXED_HOSTS_ENV = "ACBENCH_MIXED_HOSTS"


def check_hosts(df: pd.DataFrame, mixed_hosts: bool | None = None) -> None:
    """ResultsError when rows that are compared (comparison_groups: a grid's rows, and rows of grids
    that share a slice) come from machines whose facts differ (HOST_FACTS, or disk_iops by more than
    IOPS_SPREAD), unless mixed_hosts (default: ACBENCH_MIXED_HOSTS=1) says to compare them anyway.
    Grids that share no slice may come from different machines. Rows without a host column (older
    runs) are one host; rows without a fact's column say nothing of it."""
    if mixed_hosts is None:
        mixed_hosts = os.environ.get(MIXED_HOSTS_ENV, "") == "1"
    facts = [c for c in HOST_FACTS if c in df.columns]
    if mixed_hosts or df.empty or ("host" not in df.columns and not facts):
        return
    host = df["host"].fillna("?").astype(str) if "host" in df.columns else pd.Series("?", index=df.index)
    keyed = df.assign(_host=host, **{f"_{c}": df[c].map(fact_text) for c in facts})
    key = ["_host"] + [f"_{c}" for c in facts]
    for _, rows in keyed.groupby(comparison_groups(df), sort=True):
        per = rows.groupby(key, sort=True)[["disk_iops"] if "disk_iops" in df.columns else []].first().reset_index()
        if len(per) < 2:
            continue
        differ = [c for c in facts if per.loc[per[f"_{c}"] != "?", f"_{c}"].nunique() > 1]   # a gap is no fact
        if "disk_iops" in per.columns:
            iops = per["disk_iops"].dropna().astype(float)
            if len(iops) > 1 and iops.max() > (1 + IOPS_SPREAD) * iops.min():
                differ.append("disk_iops")
        if not differ:
            continue
        machines = "; ".join(f"{r['_host']}: " + ", ".join(f"{c} {r[c] if c == 'disk_iops' else r[f'_{c}']}"
                                                           for c in differ) for _, r in per.iterrows())
        grids = sorted(map(str, rows["spec"].dropna().unique())) if "spec" in rows.columns else []
        raise ResultsError(f"the throughput rows {'of ' + ', '.join(grids) + ' ' if grids else ''}come from "
                           f"{len(per)} machines whose facts differ in {', '.join(differ)} ({machines}): one "
                           f"machine's throughput is not another's. Rerun on machines alike, or set "
                           f"{MIXED_HOSTS_ENV}=1 to compare them anyway")


# The rows a figure or claim compares: those of one grid (`spec`: a figure draws its cells side by
# side) and those of grids that share a (regime, workload, θ, M/D) slice (the claims' margins per
# slice; Fig 4 draws fig4-paper's and fig3-paper's disk cells together). Without those columns all
# rows are one group.
GROUP_SLICE = ("workload", "zipf_theta", "mem_ratio")


def comparison_groups(df: pd.DataFrame) -> pd.Series:
    """A label per row: rows with one label are compared with one another (the grids joined through
    the slices they share)."""
    if "spec" not in df.columns or any(c not in df.columns for c in GROUP_SLICE):
        return pd.Series("all", index=df.index)
    spec = df["spec"].fillna("?").astype(str)
    regime = df["regime"].fillna("native").astype(str) if "regime" in df.columns else pd.Series("native", index=df.index)
    parent = {g: g for g in spec.unique()}

    def root(g: str) -> str:
        while parent[g] != g:
            g = parent[g]
        return g
    slices = pd.DataFrame({"spec": spec, "regime": regime, **{c: df[c].astype(str) for c in GROUP_SLICE}})
    for _, specs in slices.groupby(["regime", *GROUP_SLICE])["spec"]:
        first, *rest = specs.unique()
        for g in rest:
            parent[root(g)] = root(first)
    return spec.map(root)


def fact_text(v: object) -> str:
    """A machine fact as text (also acbench run's resume check): a count read back as 2.0 (a column with gaps) is 2; a gap is '?'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "?"
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def disk_rows(df: pd.DataFrame, mixed_hosts: bool | None = None) -> pd.DataFrame:
    """The rows whose spill directory and swap file were on the disk: throughput, latency and I/O
    figures mean something only there. A run on the RAM device (`spill_device` = ram, a zram
    device for hit-rate-only grids) measures hit rates; rows without the column are the disk's.
    Rows from hosts whose machines differ are refused (check_hosts)."""
    out = df if "spill_device" not in df.columns else \
        df[df["spill_device"].fillna("disk") != "ram"].reset_index(drop=True)
    check_hosts(out, mixed_hosts)
    return out


def hit_rate_rows(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and repetition for hit rates and memory: where a cell ran on the RAM device
    and on the disk (fig3-paper and fig4-paper read together), the RAM device's row, whose grid is
    the hit-rate grid; every other row as it is (experiments/README.md "Fast device" compares them).
    Rows of another regime than the native disk (fig4-paper-hdd: 50,000 reads on an emulated hard
    disk, for its times) are left out: the hit-rate grids measure 2M reads on the native one."""
    if "regime" in df.columns:
        df = df[df["regime"].fillna("native").astype(str) == "native"].reset_index(drop=True)
    if "spill_device" not in df.columns or "cell_id" not in df.columns:
        return df
    ram = df["spill_device"].fillna("disk") == "ram"
    return df[ram | ~df["cell_id"].isin(set(df.loc[ram, "cell_id"]))].reset_index(drop=True)


# What makes two rows the same configuration (a cell that two grids both ran): these columns and
# every YCSB property (p_*), valuekind read as YCSB's default where a grid left it unset.
CONFIGURATION = ("approach", "workload", "zipf_theta", "mem_ratio", "repetition", "spill_device")


def ycsb_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows over YCSB's values (`valuekind` unset or "ycsb": the paper's), one per configuration:
    where two grids ran the same configuration (e.g. compression-paper's lru and fig4-paper's), the
    row read first. Rows over other values (valuekind "text") serve the claims that name them."""
    if df.empty:
        return df
    kind = df["p_valuekind"].fillna("ycsb") if "p_valuekind" in df.columns else pd.Series("ycsb", index=df.index)
    keep = df[kind == "ycsb"]
    key = [c for c in df.columns if c in CONFIGURATION or (c.startswith("p_") and c != "p_valuekind")]
    if not key:
        return keep.reset_index(drop=True)
    same = keep[key].astype(str).duplicated(keep="first")
    return keep[~same].reset_index(drop=True)


def figure_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows the paper's figures and tables draw: YCSB's values, one per configuration
    (ycsb_rows), the approaches the harness marks as the paper's (`figures`: the component pairs
    and variants such as lru-4m or lru-lz4 serve the claims that name them; names the harness does
    not know are kept), and the data not fitting in the item memory (shortage_rows)."""
    rows = shortage_rows(ycsb_rows(df))
    if rows.empty or "approach" not in rows.columns:
        return rows
    try:
        from acbench.approaches import APPROACHES
    except ImportError:
        return rows
    variants = {name for name, a in APPROACHES.items() if not a.figures}
    return rows[~rows["approach"].astype(str).isin(variants)].reset_index(drop=True)


def shortage_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The cells of the paper's figures: the data does not fit in the item memory (M/D < 1). Cells
    with every record in memory (experiments/inmemory-paper.toml, M/D 5/4) serve the report's
    claim about the cost of tracking alone."""
    if "mem_ratio" not in df.columns:
        return df
    return df[df["mem_ratio"] < 1].reset_index(drop=True)


def require(df: pd.DataFrame, columns: Iterable[str], purpose: str) -> None:
    """Raises ResultsError naming every column of `columns` that df lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ResultsError(f"results lack column(s) {', '.join(missing)} needed for {purpose}")


def describe_run(df: pd.DataFrame) -> dict[str, str]:
    """What the run holds, for a notebook's header: approaches, workloads, θ, M/D, records, revision, dates, machines."""
    def values(col: str, fmt: str = "{}") -> str:
        if col not in df.columns:
            return "–"
        vals = sorted(df[col].dropna().unique(), key=lambda v: (isinstance(v, str), v))
        return ", ".join(fmt.format(v) for v in vals) or "–"

    return {"cells": str(len(df)), "approaches": values("approach"), "workloads": values("workload"),
            "θ": values("zipf_theta", "{:g}"), "M/D": values("mem_ratio", "{:g}"),
            "records": values("p_recordcount", "{:.0f}"), "git revision": values("git_revision"),
            "date": _span(df, "date"), "machines": machines_text(df)}


def machines_text(df: pd.DataFrame) -> str:
    """Each machine the rows ran on (CPU model, cores, kernel) and, with several, the grids of each:
    "AMD EPYC, 2 cpus, kernel 6.18.44-fc-v595 (fig4-paper); AMD EPYC, 2 cpus, kernel 6.18.44-fc-v857 (fig4-paper-hdd)"."""
    facts = [c for c in HOST_FACTS if c in df.columns]
    if df.empty or not facts:
        return "–"
    unit = {"kernel": "kernel {}", "cpu_model": "{}", "cpus": "{} cpus"}
    order = ("cpu_model", "cpus", "kernel")
    label = df.apply(lambda r: ", ".join(unit[c].format(fact_text(r[c])) for c in order if c in facts), axis=1)
    if label.nunique() == 1 or "spec" not in df.columns:
        return "; ".join(sorted(label.unique()))
    specs = df["spec"].fillna("?").astype(str)
    return "; ".join(f"{m} ({', '.join(sorted(specs[label == m].unique()))})" for m in sorted(label.unique()))


def _span(df: pd.DataFrame, col: str) -> str:
    if col not in df.columns or df[col].dropna().empty:
        return "–"
    vals = sorted(map(str, df[col].dropna()))
    return vals[0] if vals[0] == vals[-1] else f"{vals[0]} .. {vals[-1]}"
