"""`acbench opt` as a library: reference hit counts of one trace, and `window_opt`.

Unit sizes (capacities in objects): Belady's OPT, `demand` (every miss is
fetched, as libCacheSim's Belady) and `bypass` (MIN may decline to admit),
and exact LRU from stack distances. Variable sizes (capacities in bytes):
exact OPT is NP-hard, so two bounds: PFOO-L's hits are an upper bound on the
optimal hits (its misses a lower bound), size-aware Belady is a feasible policy
whose hits are a lower bound on the optimal hits (its misses an upper bound).

Writes are write-allocate (harness/README.md, "Semantics"): an update, an insert
and the write half of a read-modify-write place their key in the cache, are
never scored, and every policy (OPT too) must make room for them. Only reads
(read, read-modify-write) at index >= score_from are scored; everything before
drives the cache. A scored read of a key never requested before is a cold
miss and counts as a miss; hit rates are hits / scored reads.
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
    """What was asked cannot be computed: a bad trace, argument or combination (exit 2)."""


class OptMemoryError(OptError):
    """The computation does not fit in the memory limit (exit 1: the input was fine)."""



def _counts(hits: int, reads: int) -> dict[str, Any]:
    return {"hits": hits, "misses": reads - hits, "hit_rate": hits / reads if reads else 0.0}


def window_opt(records: np.ndarray, score_from: int, capacities: list[int], reads_only: bool = False,
               limit: int = core.UNLIMITED) -> dict[str, Any]:
    """OPT and the LRU reference of one window of history, write-allocate.

    records: ACTRACE records (traceio.ACTRACE_RECORD), the whole history in order, e.g.
    traceio.preload_inserts(recordcount) + the warm-up and run requests of a trace.
    score_from: index of the first scored request; earlier ones drive the cache only.
    capacities: cache sizes in objects (>= 1).
    reads_only: the pre-write-allocate model, for comparison with old numbers: update and
    insert records are dropped (the preload too), a read-modify-write counts as a plain
    read, and score_from moves to the same request in the shorter sequence.

    Returns {"scored_reads": reads (read, read-modify-write) at index >= score_from,
    "scored_writes": updates and inserts at index >= score_from (0 with reads_only),
    "opt_bypass_hits": [scored hits per capacity], "opt_demand_hits": [...],
    "lru_hist": np.ndarray (uint64): hist[d] = scored reads at LRU stack distance d (0-based;
    every request is an access), so write-allocating LRU(c) hits = hist[:c].sum() for any c,
    "cold_misses": scored reads of keys not requested before (misses at any capacity),
    "requests", "distinct_keys": of the analysed sequence}.
    Raises OptError for bad records, score_from or capacities.
    """
    if not isinstance(records, np.ndarray) or records.dtype != traceio.ACTRACE_RECORD:
        raise OptError("records must be a numpy array of ACTRACE records (acbench.traceio.ACTRACE_RECORD)")
    score_from = int(score_from)
    if not 0 <= score_from <= len(records):
        raise OptError(f"score_from {score_from} is outside the records: accepted 0 .. {len(records)}")
    if reads_only:
        records, score_from = traceio.reads_only_window(records, score_from)
    try:
        with core.Trace.from_records(records, "actrace") as t, core.NextUse(t, limit, score_from) as nu:
            caps = list(capacities)
            return {"scored_reads": nu.scored_reads, "scored_writes": nu.scored_writes,
                    "opt_bypass_hits": nu.opt(caps, bypass=True, limit=limit) if caps else [],
                    "opt_demand_hits": nu.opt(caps, bypass=False, limit=limit) if caps else [],
                    "lru_hist": nu.lru_hist(limit), "cold_misses": nu.cold_misses,
                    "requests": nu.requests, "distinct_keys": nu.distinct}
    except core.CoreError as e:
        raise OptError(str(e)) from e


def memory_limit(max_memory: int | None) -> tuple[int, str]:
    if max_memory is not None:
        return max_memory, "--max-memory"
    avail = core.mem_available()
    if avail == 0:
        return core.UNLIMITED, "none (MemAvailable unknown)"
    return avail, "MemAvailable"


def lru_curve(hist: np.ndarray, reads: int) -> pd.DataFrame:
    """Exact (write-allocating) LRU scored hits for every capacity 1..distinct keys."""
    hits = np.cumsum(hist, dtype=np.uint64).astype(np.int64)
    cap = np.arange(1, len(hist) + 1, dtype=np.int64)
    rate = hits / reads if reads else np.zeros(len(hist))
    return pd.DataFrame({"capacity": cap, "hits": hits, "hit_rate": rate})


def analyse(trace_path: str | os.PathLike[str], capacities: list[int], byte_capacities: list[int],
            fmt: str = "auto", max_memory: int | None = None, lru: bool = True,
            lru_curve_path: str | os.PathLike[str] | None = None, reads_only: bool = False,
            score_from: int = 0, preload_writes: int = 0) -> dict[str, Any]:
    """Runs every requested computation and returns the JSON-ready report.

    score_from: index (in the file) of the first scored request; earlier requests drive the
    cache only. preload_writes: N > 0 puts one insert of each key 0..N-1 (size: the file's
    first record's) before the file's requests, unscored (the load phase).
    reads_only: ACTRACE only: the pre-write-allocate model (window_opt); not with a preload.
    """
    if not capacities and not byte_capacities:
        raise OptError("nothing to compute: give --capacity (objects) and/or --bytes (bytes)")
    if reads_only and preload_writes:
        raise OptError("--preload-writes cannot be combined with --reads-only: the reads-only model "
                       "drops every write, the preload's inserts included")
    limit, source = memory_limit(max_memory)
    try:
        with core.Trace.open(trace_path, fmt) as ftrace:
            report: dict[str, Any] = {"trace": str(trace_path), "format": ftrace.format}
            if ftrace.format == "actrace":
                report["header"] = ftrace.header()
            if score_from > ftrace.requests:
                raise OptError(f"--score-from {score_from} is beyond the trace: it has {ftrace.requests} "
                               f"requests (accepted: 0 .. {ftrace.requests})")
            if reads_only and ftrace.format != "actrace":
                raise OptError("--reads-only needs an ACTRACE trace: oracleGeneral records carry no operation")
            if reads_only:
                report["reads_only"] = True
            if preload_writes:
                report["preload_writes"] = preload_writes
            report["score_from"] = score_from
            if not reads_only and not preload_writes:
                _analyse(ftrace, score_from, capacities, byte_capacities, limit, lru, lru_curve_path, report)
            else:
                recs, sf = _in_memory(trace_path, ftrace, score_from, preload_writes, reads_only, limit)
                with core.Trace.from_records(recs, "actrace") as mtrace:
                    _analyse(mtrace, sf, capacities, byte_capacities, limit, lru, lru_curve_path, report)
    except core.CoreError as e:
        msg = str(e)
        if "memory limit" in msg:
            msg += f" (limit from {source}" + (")" if source == "--max-memory" else "; set one with --max-memory)")
            raise OptMemoryError(msg) from e
        raise OptError(msg) from e
    report["memory_limit"] = {"bytes": limit, "source": source}
    return report


def _analyse(trace: core.Trace, score_from: int, capacities: list[int], byte_capacities: list[int],
             limit: int, lru: bool, lru_curve_path: str | os.PathLike[str] | None,
             report: dict[str, Any]) -> None:
    report["requests"] = trace.requests
    with core.NextUse(trace, limit, score_from) as nu:
        reads = nu.scored_reads
        report.update(scored_reads=reads, scored_writes=nu.scored_writes, distinct_keys=nu.distinct,
                      cold_misses=nu.cold_misses)
        if capacities:
            demand = nu.opt(capacities, bypass=False, limit=limit)
            bypass = nu.opt(capacities, bypass=True, limit=limit)
            rows = [{"capacity": c, "opt_demand": _counts(d, reads), "opt_bypass": _counts(b, reads)}
                    for c, d, b in zip(capacities, demand, bypass)]
            if lru or lru_curve_path:
                hist = nu.lru_hist(limit)
                cum = np.concatenate([[0], np.cumsum(hist, dtype=np.uint64)])
                for row in rows:
                    row["lru"] = _counts(int(cum[min(row["capacity"], nu.distinct)]), reads)
                if lru_curve_path:
                    lru_curve(hist, reads).to_csv(lru_curve_path, index=False)
                    report["lru_curve"] = str(lru_curve_path)
            report["objects"] = rows
        if byte_capacities:
            lower = nu.pfoo_l(byte_capacities, limit)
            upper = nu.size_belady(byte_capacities, limit)
            report["bytes"] = [{"capacity_bytes": c, "pfoo_l": _counts(lo, reads),
                                "size_belady": _counts(up, reads)}
                               for c, lo, up in zip(byte_capacities, lower, upper)]
            report["bounds_note"] = BOUNDS_NOTE


def _in_memory(trace_path: str | os.PathLike[str], ftrace: core.Trace, score_from: int, preload: int,
               reads_only: bool, limit: int) -> tuple[np.ndarray, int]:
    """The file's records as ACTRACE records in memory, with the preload or the reads-only filter."""
    need = 2 * (preload + ftrace.requests) * traceio.ACTRACE_RECORD.itemsize
    if need > limit:   # a CoreError, so that analyse() says where the limit came from
        raise core.CoreError(f"loading the trace into memory ({'preload' if preload else 'reads-only'}) needs "
                       f"{need} bytes ({need / 1048576:.1f} MiB) but the memory limit is {limit} bytes "
                       f"({limit / 1048576:.1f} MiB)")
    if ftrace.format == "actrace":
        recs = np.fromfile(trace_path, dtype=traceio.ACTRACE_RECORD, offset=traceio.ACTRACE_HEADER)
    else:
        og = traceio.read_oracle(trace_path)
        recs = traceio.actrace_records(og["key"], og["size"], traceio.OPS["read"])
    if reads_only:
        return traceio.reads_only_window(recs, score_from)
    size = int(recs["size"][0]) if len(recs) else 0
    return np.concatenate([traceio.preload_inserts(preload, size), recs]), preload + score_from


def default_curve_path(trace_path: str | os.PathLike[str]) -> Path:
    return Path(trace_path).with_suffix(".lru.csv")
