"""A run that must stop by a given time (`acbench run --stop-by`, `acbench rerun`).

A grid of many hours runs in pieces on a machine that is not ours for longer (a session of a few
hours): each piece starts no process whose expected wall time would take it past the deadline, so it
ends at a cell boundary with every finished cell recorded, and the next piece resumes it.

Expected wall time of a process (runner.units: one cell, or a cell's repetitions as windows): the
median wall time per cell of the run directory's finished processes of the same approach, times the
process's cells (a windows process's first cell carries the set-up, load and warm-up, so this is on
the long side), brought up to date after each process. An approach with no finished process there
takes the times the caller knows from elsewhere (acbench rerun: the grid's committed rows, else its
check runs' processes scaled to the grid's run lengths, scaled_walls); with
none, it is expected to take as long as the slowest approach known (not 0 s, which would let its
first process start just before the deadline and run far past it); with no approach known at all,
the first process starts whenever the deadline has not passed. Not counted: a memory calibration
the process runs first (seconds to a few minutes, once per approach, θ and M/D; acbench rerun
restores the staged ones).

Slices differ by far more than approaches' medians say: where fewer reads hit memory (lower θ, smaller
M/D) a cell moves more to and from the disk (fig4-paper-hdd's lru-block-merge: 5.5 min at θ 0.99 M/D
3/4, 30 min at θ 0.75 M/D 1/2). So where the run directory's own processes name their slice
(workload, θ, M/D), a process is timed by the model log wall = approach + slice (SliceModel: medians
fitted alternately, as Tukey's median polish), the slice's term from whatever approaches already
finished there: the next approach of a slice begun is timed by what that slice costs the others. A
process of an approach in a slice it already ran (another repetition) takes that slice's median;
a slice no approach has run yet takes its term from the grid's committed rows, or a sibling grid's
over the same data (acbench rerun: rerun.prior_slices), mapped onto this run's scale over the slices
both ran (SliceModel.borrow_slices), and with none, the approach's median (its cost is not known;
acbench rerun --status counts the cells so timed)."""
from __future__ import annotations

import datetime as dt
import math
import re
import statistics
from typing import Any

STOP_BY_FORMS = ("+DURATION (+2h, +90m, +1h30m, +600s), HH:MM or HH:MM UTC (UTC, the next such time), or an ISO "
                 "8601 time (2026-11-30T05:10, UTC unless it names its zone)")

_DURATION = re.compile(r"^\+(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


class StopByError(ValueError):
    pass


def parse_stop_by(text: str, now: dt.datetime | None = None) -> float:
    """The deadline as a Unix time. now: the current time (UTC; tests give it)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    t = text.strip()
    m = _DURATION.match(t)
    if m and any(m.groups()):
        h, mi, s = (int(x or 0) for x in m.groups())
        return (now + dt.timedelta(hours=h, minutes=mi, seconds=s)).timestamp()
    m = re.match(r"^(\d{1,2}):(\d{2})(?:\s*UTC)?$", t, re.IGNORECASE)
    if m and int(m[1]) < 24 and int(m[2]) < 60:
        at = now.replace(hour=int(m[1]), minute=int(m[2]), second=0, microsecond=0)
        return (at if at > now else at + dt.timedelta(days=1)).timestamp()
    try:
        at = dt.datetime.fromisoformat(t)
    except ValueError:
        raise StopByError(f"--stop-by {text!r}: not a time; accepted: {STOP_BY_FORMS}") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.timezone.utc)
    if at <= now:
        raise StopByError(f"--stop-by {text!r}: {at.isoformat()} has passed (now {now.isoformat(timespec='seconds')})")
    return at.timestamp()


def _processes(rows: Any) -> Any:
    """The finished (status ok) rows grouped by (approach, process): a windows process is one group."""
    ok = rows[rows["status"].fillna("ok") == "ok"] if "status" in rows.columns else rows
    proc = ok["window_of"].fillna(ok["cell_id"]) if "window_of" in ok.columns else ok["cell_id"]
    return ok.groupby([ok["approach"], proc])


def _process_walls(rows: Any) -> list[tuple[str, Any, float]]:
    """Each finished process in rows (a run directory's): (approach, its first row, wall seconds per cell)."""
    if rows is None or rows.empty or "cell_wall_s" not in rows.columns:
        return []
    out = []
    for (approach, _), g in _processes(rows):
        wall = g["cell_wall_s"].dropna()
        if len(wall):
            out.append((str(approach), g.iloc[0], float(wall.sum()) / len(g)))
    return out


def per_cell_walls(rows: Any) -> dict[str, list[float]]:
    """Each approach's finished processes in rows (a run directory's): wall seconds per cell."""
    out: dict[str, list[float]] = {}
    for approach, _, wall in _process_walls(rows):
        out.setdefault(approach, []).append(wall)
    return out


Slice = tuple[str, float, float]


def slice_of(workload: Any, zipf_theta: Any, mem_ratio: Any) -> Slice:
    """A cell's or row's slice: (workload, θ, M/D), the numbers rounded as cell ids write them."""
    return (str(workload), round(float(zipf_theta), 6), round(float(mem_ratio), 6))


def slice_walls(rows: Any) -> list[tuple[str, Slice, float]]:
    """Each finished process in rows (a run directory's) as (approach, slice, wall per cell): what
    per_cell_walls gives, with the slice it ran. Rows without workload, zipf_theta or mem_ratio: none."""
    if rows is None or rows.empty or not {"workload", "zipf_theta", "mem_ratio"} <= set(rows.columns):
        return []
    return [(approach, slice_of(first["workload"], first["zipf_theta"], first["mem_ratio"]), wall)
            for approach, first, wall in _process_walls(rows)]


class SliceModel:
    """log(wall per cell) = a[approach] + s[slice], fitted to finished processes by alternating medians
    (Tukey's median polish: robust to one slow cell; 30 rounds, where walls that fit the model exactly
    are fitted to a small fraction of 1 %). predict gives None where the
    approach or the slice has no finished process, or a wall is not positive."""

    def __init__(self, obs: list[tuple[str, Slice, float]], rounds: int = 30) -> None:
        self.obs = [(a, s, w) for a, s, w in obs if w > 0]
        self.a: dict[str, float] = {}
        self.s: dict[Slice, float] = {}
        for a, _, w in self.obs:
            self.a.setdefault(a, 0.0)
        for _ in range(rounds):
            self.s = self._medians(1, lambda a, s, w: math.log(w) - self.a[a])
            self.a = self._medians(0, lambda a, s, w: math.log(w) - self.s[s])

    def _medians(self, i: int, f: Any) -> dict[Any, float]:
        by: dict[Any, list[float]] = {}
        for o in self.obs:
            by.setdefault(o[i], []).append(f(*o))
        return {k: statistics.median(v) for k, v in by.items()}

    def borrow_slices(self, prior: SliceModel) -> list[Slice]:
        """Terms for the slices no process here ran, from another run's model (prior: the grid's or a
        sibling grid's committed rows) put on this run's scale, s = c + b·s' fitted by least squares
        over the slices both ran (b = 1 and c their median difference with fewer than 3 shared). The
        slices added; none when no slice is shared."""
        shared = [k for k in self.s if k in prior.s]
        if not shared:
            return []
        x, y = [prior.s[k] for k in shared], [self.s[k] for k in shared]
        b, c = 1.0, statistics.median(yi - xi for xi, yi in zip(x, y))
        if len(shared) >= 3 and len(set(x)) > 1:
            mx, my = statistics.fmean(x), statistics.fmean(y)
            b = sum((xi - mx) * (yi - my) for xi, yi in zip(x, y)) / sum((xi - mx) ** 2 for xi in x)
            c = my - b * mx
        added = [k for k in prior.s if k not in self.s]
        for k in added:
            self.s[k] = c + b * prior.s[k]
        return added

    def predict(self, approach: str, where: Slice) -> float | None:
        same = [w for a, s, w in self.obs if a == approach and s == where]
        if same:
            return statistics.median(same)
        if approach in self.a and where in self.s:
            return math.exp(self.a[approach] + self.s[where])
        return None


def scaled_walls(rows: Any, ops: dict[str, int]) -> dict[str, list[float]]:
    """What a cell of ops[approach] measured operations is expected to take, from the finished
    processes in rows of another run at other run lengths (a check run): each process's set-up (its
    wall less its measured runs: start, load, warm-up) plus ops[approach] operations at the rate its
    measured runs went. Approaches not in ops, or without run_duration_s and operations, are left out."""
    out: dict[str, list[float]] = {}
    need = ["cell_wall_s", "operations", "run_duration_s"]
    if rows is None or rows.empty or not set(need) <= set(rows.columns):
        return out
    for (approach, _), g in _processes(rows.dropna(subset=need)):
        n, run_s = float(g["operations"].sum()), float(g["run_duration_s"].sum())
        if str(approach) in ops and n > 0:
            setup = max(float(g["cell_wall_s"].sum()) - run_s, 0.0)
            out.setdefault(str(approach), []).append(setup + ops[str(approach)] * run_s / n)
    return out


def expected_wall(walls: dict[str, list[float]], approach: str, cells: int, unknown_as_slowest: bool = False,
                  where: Slice | None = None, model: SliceModel | None = None) -> float:
    """Seconds a process of `cells` cells of this approach is expected to take. With the process's
    slice (where) and the run's SliceModel: what the model predicts, where it can. Otherwise the
    approach's median per cell; an approach none of whose processes finished yet: 0, or with
    unknown_as_slowest the slowest known approach's median per cell (what a deadline must assume
    rather than 0 s: its first process could start just before the deadline and run far past it; 0
    still when no approach is known)."""
    fitted = model.predict(approach, where) if model is not None and where is not None else None
    if fitted is not None:
        return fitted * cells
    seen = walls.get(approach)
    if seen:
        return statistics.median(seen) * cells
    known = [statistics.median(w) for w in walls.values() if w]
    return max(known) * cells if unknown_as_slowest and known else 0.0
