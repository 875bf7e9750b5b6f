"""Regression check of a run against a baseline CSV (long format, one check per line):

    cell_id,metric,value,kind,tolerance      kind: exact | abs | rel

exact: run value == baseline value; abs: |run − base| <= tolerance; rel: |run − base| <=
tolerance × |base|. TOLERANCES are the defaults `acbench baseline RUN` writes for one run;
`acbench baseline RUN RUN ...` derives each tolerance from the spread of several runs
(baseline_from_runs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

BASELINE_COLUMNS = ["cell_id", "metric", "value", "kind", "tolerance"]
KINDS = ("exact", "abs", "rel")
TOLERANCES: dict[str, tuple[str, float]] = {
    "reads_total": ("exact", 0), "opt_requests": ("exact", 0), "opt_hits": ("exact", 0),
    "opt_capacity": ("exact", 0), "item_memory_bytes": ("exact", 0), "ac_lost_items": ("exact", 0),
    "errors": ("exact", 0), "hit_rate": ("abs", 0.005), "loss_pp": ("abs", 0.5),
    "hits": ("rel", 0.01), "disk_hits": ("rel", 0.01), "misses": ("rel", 0.02),
    "refills": ("rel", 0.02), "loss_lru_pp": ("exact", 0), "loss_overhead_pp": ("abs", 0.5),
    "loss_policy_pp": ("abs", 0.5),
}
# A baseline from several runs (`acbench baseline RUN RUN ...`): value = the median; a metric
# equal in every run is checked exactly where that is guaranteed (a deterministic approach, see
# approaches.py, or a STRUCTURAL metric); otherwise |run − median| <= the larger of
# SPREAD_FACTOR × the largest deviation from the median over the runs and a floor (FLOOR: a
# timing-dependent cell that happened to agree in every run must not be checked exactly).
# Throughput is never checked.
SPREAD_FACTOR = 3.0   # 1.5 x the 10-run spread failed 1 of 3 later regress runs (logging, measured)
STRUCTURAL = {"reads_total", "opt_requests", "opt_hits", "opt_capacity", "item_memory_bytes", "errors", "loss_lru_pp"}
FLOOR_REL = 0.002            # counts: 0.2 % of the median
# hits that are shares of the reads: 0.2 % of the reads, the hit rate's floor in counts (0.2 % of
# the count itself let disk hits, 1,853 of 9,992 reads, move by 3.7 where the hit rate may move by 20).
# Misses and refills keep 0.2 % of themselves: none seen, none allowed (anti-caching loses nothing)
READ_SHARES = ("hits", "disk_hits")
# the loss parts split a loss by the resident items averaged over the run's samples: a timing-dependent
# cell's split moves more than its loss (alru-redis writeheavy: policy part 0.38 pp from the 10-run
# median in a later regress run, its 10-run maximum 0.08); 0.5 pp, what a single-run check allows
FLOOR_ABS = {"hit_rate": 0.002, "loss_pp": 0.2, "loss_overhead_pp": 0.5, "loss_policy_pp": 0.5}


def floor_of(metric: str, median: float, reads: float | None) -> float:
    """The least tolerance of a timing-dependent check (see FLOOR_ABS, READ_SHARES, FLOOR_REL)."""
    if metric in READ_SHARES and reads is not None and reads == reads:
        return FLOOR_ABS["hit_rate"] * abs(reads)
    return FLOOR_ABS.get(metric, FLOOR_REL * abs(median))


def refloor(baseline: pd.DataFrame) -> pd.DataFrame:
    """An existing baseline's `abs` checks with today's floors (tolerance = the larger of its own and
    the floor): what baseline_from_runs would give from the same runs, floors only having grown."""
    reads = {r["cell_id"]: float(r["value"]) for _, r in baseline.iterrows() if r["metric"] == "reads_total"}
    out = baseline.copy()
    for i, r in out.iterrows():
        if r["kind"] == "abs":
            f = floor_of(r["metric"], float(r["value"]), reads.get(r["cell_id"]))
            out.at[i, "tolerance"] = max(float(r["tolerance"]), f)
    return out


class CompareError(ValueError):
    pass


@dataclass
class Check:
    cell_id: str
    metric: str
    baseline: float
    value: float | None
    kind: str
    tolerance: float

    @property
    def ok(self) -> bool:
        if self.value is None or (isinstance(self.value, float) and math.isnan(self.value)):
            return False
        d = abs(self.value - self.baseline)
        if self.kind == "exact":
            return d == 0
        if self.kind == "abs":
            return d <= self.tolerance + 1e-12
        return d <= self.tolerance * abs(self.baseline) + 1e-12

    @property
    def allowed(self) -> str:
        return {"exact": "exact", "abs": f"± {self.tolerance:g}", "rel": f"± {100 * self.tolerance:g} %"}[self.kind]


def make_baseline(run: pd.DataFrame, metrics: dict[str, tuple[str, float]] | None = None) -> pd.DataFrame:
    metrics = metrics or TOLERANCES
    rows = []
    for _, r in run.sort_values("cell_id").iterrows():
        for m, (kind, tol) in metrics.items():
            if m in run.columns and pd.notna(r[m]):
                rows.append({"cell_id": r["cell_id"], "metric": m, "value": float(r[m]), "kind": kind,
                             "tolerance": tol})
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def baseline_from_runs(runs: list[pd.DataFrame], metrics: dict[str, tuple[str, float]] | None = None,
                       deterministic: Callable[[str], bool] = lambda cell: False) -> pd.DataFrame:
    """Values and tolerances from the run-to-run spread of the same spec run several times;
    `deterministic(cell_id)` says whether a cell's counts are guaranteed to repeat exactly."""
    if len(runs) < 2:
        raise CompareError(f"a spread needs at least 2 runs, got {len(runs)}")
    metrics = metrics or TOLERANCES
    ok = [r[r["status"].fillna("ok") == "ok"] if "status" in r.columns else r for r in runs]
    cells = sorted(set.intersection(*(set(r["cell_id"]) for r in ok)))
    missing = sorted(set.union(*(set(r["cell_id"]) for r in ok)) - set(cells))
    if missing:
        raise CompareError(f"cell {missing[0]} is missing from some runs: every run must have every cell")
    rows = []
    for cell in cells:
        for m in metrics:
            vals = [r.loc[r["cell_id"] == cell, m].iloc[0] for r in ok if m in r.columns]
            vals = [float(v) for v in vals if pd.notna(v)]
            if len(vals) != len(ok):
                continue
            med = float(pd.Series(vals).median())
            spread = max(abs(v - med) for v in vals)
            if spread == 0 and (m in STRUCTURAL or deterministic(cell)):
                kind, tol = "exact", 0.0
            else:
                reads = [float(r.loc[r["cell_id"] == cell, "reads_total"].iloc[0]) for r in ok
                         if "reads_total" in r.columns]
                floor = floor_of(m, med, float(pd.Series(reads).median()) if reads else None)
                kind, tol = "abs", max(SPREAD_FACTOR * spread, floor)
            rows.append({"cell_id": cell, "metric": m, "value": med, "kind": kind, "tolerance": tol})
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def widen(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    """new's checks with no tolerance narrower than old's for the same (cell, metric): a baseline
    regenerated from more runs moves its values to their medians but keeps the spread seen before
    (10 runs see less of a timing-dependent cell's spread than 20). An exact check of new stays exact
    only where old's was exact too."""
    o = old.set_index(["cell_id", "metric"])
    out = new.copy()
    for i, r in out.iterrows():
        key = (r["cell_id"], r["metric"])
        if key not in o.index:
            continue
        prev = o.loc[key]
        if prev["kind"] == "abs" and (r["kind"] == "exact" or float(prev["tolerance"]) > float(r["tolerance"])):
            out.at[i, "kind"], out.at[i, "tolerance"] = "abs", float(prev["tolerance"])
    return out


def read_baseline(path: str) -> pd.DataFrame:
    try:
        b = pd.read_csv(path)
    except FileNotFoundError:
        raise CompareError(f"{path}: no such baseline file") from None
    missing = [c for c in BASELINE_COLUMNS if c not in b.columns]
    if missing:
        raise CompareError(f"{path}: baseline lacks column(s) {', '.join(missing)}; "
                           f"required: {','.join(BASELINE_COLUMNS)}")
    bad = sorted(set(b["kind"]) - set(KINDS))
    if bad:
        raise CompareError(f"{path}: kind {bad[0]!r}; accepted: {', '.join(KINDS)}")
    return b


def parse_overrides(items: list[str]) -> dict[str, float]:
    out = {}
    for it in items:
        name, sep, val = it.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = float(val)
            if out[name] < 0:
                raise ValueError
        except ValueError:
            raise CompareError(f"--tolerance {it!r}: accepted: METRIC=NUMBER >= 0 (relative for rel "
                               "checks, absolute for abs checks), e.g. hit_rate=0.01") from None
    return out


def compare(run: pd.DataFrame, baseline: pd.DataFrame, overrides: dict[str, float] | None = None) -> list[Check]:
    overrides = overrides or {}
    unknown = sorted(set(overrides) - set(baseline["metric"]))
    if unknown:
        raise CompareError(f"--tolerance {unknown[0]}: not a metric of the baseline; accepted: "
                           f"{', '.join(sorted(set(baseline['metric'])))}")
    byid = run.set_index("cell_id") if "cell_id" in run.columns else pd.DataFrame()
    checks = []
    for _, b in baseline.iterrows():
        value = None
        if b["cell_id"] in byid.index and b["metric"] in byid.columns:
            v = byid.loc[b["cell_id"], b["metric"]]
            value = None if pd.isna(v) else float(v)
        kind, tol = str(b["kind"]), float(b["tolerance"])
        if b["metric"] in overrides:
            tol = overrides[b["metric"]]
            kind = "rel" if kind == "exact" else kind
        checks.append(Check(str(b["cell_id"]), str(b["metric"]), float(b["value"]), value, kind, tol))
    return checks
