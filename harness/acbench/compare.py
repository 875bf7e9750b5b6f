"""Regression check of a run against a baseline CSV (long format, one check per line):

    cell_id,metric,value,kind,tolerance      kind: exact | abs | rel

exact: run value == baseline value; abs: |run − base| <= tolerance; rel: |run − base| <=
tolerance × |base|. TOLERANCES are the defaults `acbench baseline` writes, chosen from the
run-to-run variation measured on the CI spec (harness/README.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

BASELINE_COLUMNS = ["cell_id", "metric", "value", "kind", "tolerance"]
KINDS = ("exact", "abs", "rel")
TOLERANCES: dict[str, tuple[str, float]] = {
    "reads_total": ("exact", 0), "opt_requests": ("exact", 0), "opt_hits": ("exact", 0),
    "opt_capacity": ("exact", 0), "item_memory_mb": ("exact", 0), "ac_lost_items": ("exact", 0),
    "errors": ("exact", 0), "hit_rate": ("abs", 0.005), "loss_pp": ("abs", 0.5),
    "hits": ("rel", 0.01), "disk_hits": ("rel", 0.01), "misses": ("rel", 0.02),
    "throughput_ops_s": ("rel", 0.5),
}


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
                               "checks, absolute for abs checks), e.g. throughput_ops_s=0.5") from None
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
