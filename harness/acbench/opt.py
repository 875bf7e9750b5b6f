"""`acbench opt` as a library: reference hit counts of one trace.

Unit sizes (capacities in objects): Belady's OPT, `demand` (every miss is
fetched, as libCacheSim's Belady) and `bypass` (MIN may decline to admit),
and exact LRU from stack distances. Variable sizes (capacities in bytes):
exact OPT is NP-hard, so two bounds: PFOO-L's hits are an upper bound on the
optimal hits (its misses a lower bound), size-aware Belady is a feasible policy
whose hits are a lower bound on the optimal hits (its misses an upper bound).
Every first request of a key is a cold miss and counts as a miss; hit rates are
hits / requests.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from acbench import core, traceio

BOUNDS_NOTE = (
    "Exact OPT with variable object sizes is NP-hard. pfoo_l.misses is a lower bound on the misses of "
    "every policy (PFOO-L, Berger et al. SIGMETRICS 2018); size_belady.misses are the misses of a feasible "
    "policy (farthest next use first, with bypass), an upper bound on the optimal misses."
)


class OptError(RuntimeError):
    """A trace or resource problem, with a message for the user."""


def _counts(hits: int, requests: int) -> dict[str, Any]:
    return {"hits": hits, "misses": requests - hits, "hit_rate": hits / requests if requests else 0.0}


def memory_limit(max_memory: int | None) -> tuple[int, str]:
    if max_memory is not None:
        return max_memory, "--max-memory"
    avail = core.mem_available()
    if avail == 0:
        return core.UNLIMITED, "none (MemAvailable unknown)"
    return avail, "MemAvailable"


def lru_curve(hist: np.ndarray, requests: int) -> pd.DataFrame:
    """Exact LRU hits for every capacity 1..distinct keys."""
    hits = np.cumsum(hist, dtype=np.uint64).astype(np.int64)
    cap = np.arange(1, len(hist) + 1, dtype=np.int64)
    rate = hits / requests if requests else np.zeros(len(hist))
    return pd.DataFrame({"capacity": cap, "hits": hits, "hit_rate": rate})


def analyse(trace_path: str | os.PathLike[str], capacities: list[int], byte_capacities: list[int],
            fmt: str = "auto", max_memory: int | None = None, lru: bool = True,
            lru_curve_path: str | os.PathLike[str] | None = None, reads_only: bool = False) -> dict[str, Any]:
    """Runs every requested computation and returns the JSON-ready report.

    reads_only: keep only read and read-modify-write requests of an ACTRACE file (the
    requests the server counts hits for); updates and inserts are dropped before analysis.
    """
    if not capacities and not byte_capacities:
        raise OptError("nothing to compute: give --capacity (objects) and/or --bytes (bytes)")
    limit, source = memory_limit(max_memory)
    try:
        with _open(trace_path, fmt, reads_only) as trace:
            n = trace.requests
            report: dict[str, Any] = {"trace": str(trace_path), "format": trace.format, "requests": n}
            if reads_only:
                report["reads_only"] = True
            if trace.format == "actrace" and not reads_only:
                report["header"] = trace.header()
            with core.NextUse(trace, limit) as nu:
                report["distinct_keys"] = nu.distinct
                report["cold_misses"] = nu.distinct
                if capacities:
                    demand = nu.opt(capacities, bypass=False, limit=limit)
                    bypass = nu.opt(capacities, bypass=True, limit=limit)
                    rows = [{"capacity": c, "opt_demand": _counts(d, n), "opt_bypass": _counts(b, n)}
                            for c, d, b in zip(capacities, demand, bypass)]
                    if lru or lru_curve_path:
                        hist = nu.lru_hist(limit)
                        cum = np.concatenate([[0], np.cumsum(hist, dtype=np.uint64)])
                        for row in rows:
                            row["lru"] = _counts(int(cum[min(row["capacity"], nu.distinct)]), n)
                        if lru_curve_path:
                            lru_curve(hist, n).to_csv(lru_curve_path, index=False)
                            report["lru_curve"] = str(lru_curve_path)
                    report["objects"] = rows
                if byte_capacities:
                    lower = nu.pfoo_l(byte_capacities, limit)
                    upper = nu.size_belady(byte_capacities, limit)
                    report["bytes"] = [{"capacity_bytes": c, "pfoo_l": _counts(lo, n),
                                        "size_belady": _counts(up, n)}
                                       for c, lo, up in zip(byte_capacities, lower, upper)]
                    report["bounds_note"] = BOUNDS_NOTE
    except core.CoreError as e:
        msg = str(e)
        if "memory limit" in msg:
            msg += f" (limit from {source}" + (")" if source == "--max-memory" else "; set one with --max-memory)")
        raise OptError(msg) from e
    report["memory_limit"] = {"bytes": limit, "source": source}
    return report


def _open(trace_path: str | os.PathLike[str], fmt: str, reads_only: bool) -> core.Trace:
    if not reads_only:
        return core.Trace.open(trace_path, fmt)
    if fmt == "oraclegeneral":
        raise OptError("--reads-only needs an ACTRACE trace: oracleGeneral records carry no operation")
    try:
        recs = traceio.read_actrace(trace_path)
    except FileNotFoundError:
        raise OptError(f"cannot open {trace_path}: no such file") from None
    except ValueError as e:
        raise OptError(f"{e}; --reads-only needs an ACTRACE trace (oracleGeneral records carry no operation)") from None
    return core.Trace.from_records(traceio.reads_only(recs), "actrace")


def default_curve_path(trace_path: str | os.PathLike[str]) -> Path:
    return Path(trace_path).with_suffix(".lru.csv")
