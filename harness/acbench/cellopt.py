"""OPT, the LRU reference and the measured skew of a cell, from its request trace.

OPT sees the history the server saw: the load phase (one write of each key
0..recordcount-1), the warm-up, then the measured run; only the run's reads are scored.
Writes (update, insert, the write half of a read-modify-write) place their item in memory
(write-allocate: neither hit nor miss, and OPT must make room for them), so OPT bounds what a
server that must store every write can reach (harness/README.md, "How OPT is counted").
opt_hit_rate = OPT (bypass) hits / scored reads. The LRU reference is exact LRU on the same
history; its stack-distance histogram gives LRU at any capacity (acbench/decompose.py).
Keys inserted during the run are absent until their insert, as in the server.

The trace (ycsb-trace: warm-up then run) is cached under build/acbench/traces by every
property that shapes the request sequence (workload file, θ, seed, counts, mix).

A cell replaying a trace ([fixed] trace) has no load phase: its history is the trace itself
(warm-up then run), converted to ACTRACE records with the ids the driver derives
(traceio.read_replay) renumbered 0..objects-1 in order of first request (OPT and LRU do not
depend on names; the skew columns need a dense key space), cached by the trace file's content.
Where its sizes vary, size_bounds adds the size-aware bounds at the same capacity in bytes.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from acbench import decompose, opt, paths, server, skew, traceio

# driver properties that do not change the request sequence (ycsb-driver/README.md Determinism)
NOT_IN_TRACE = ("threads", "target")


class TraceError(RuntimeError):
    pass


def trace_for(workload_file: str, props: dict[str, Any]) -> Path:
    key_props = {k: v for k, v in sorted(props.items()) if k not in NOT_IN_TRACE}
    key = json.dumps({"workload": Path(workload_file).read_text(), "props": key_props}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = (f"{Path(workload_file).name}-z{props.get('zipfianconstant')}-s{props.get('seed')}"
            f"-r{props.get('recordcount')}-o{props.get('operationcount')}"
            f"-w{props.get('warmupoperations', 0)}-{digest}.actrace")
    d = paths.cache_dir() / "traces"
    d.mkdir(parents=True, exist_ok=True)
    out = d / name
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        r = subprocess.run(server.ycsb_trace_cmd(workload_file, key_props, tmp),
                           capture_output=True, text=True)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise TraceError(f"ycsb-trace failed: {r.stderr.strip()}")
        tmp.rename(out)
    return out


def replay_actrace(trace: str | os.PathLike[str]) -> Path:
    """The replayed trace as an ACTRACE file for opt_for (see the module's docstring)."""
    digest = hashlib.sha256(Path(trace).read_bytes()).hexdigest()[:16]
    d = paths.cache_dir() / "traces"
    d.mkdir(parents=True, exist_ok=True)
    out = d / f"replay-{Path(trace).name}-{digest}.actrace"
    if not out.exists():
        recs = traceio.read_replay(trace)
        _, first, inverse = np.unique(recs["key"], return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.uint64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first), dtype=np.uint64)
        recs["key"] = rank[inverse]
        tmp = out.with_name(f"{out.name}.tmp{os.getpid()}")
        traceio.write_actrace(tmp, recs, workload=Path(trace).name[:63])
        os.replace(tmp, out)
    return out


def size_bounds(trace: Path, skip: int, capacity_objects: int) -> dict[str, Any]:
    """Where the trace's sizes vary: PFOO-L (an upper bound on OPT's hits) and size-aware Belady
    (a feasible policy: a lower bound) at capacity_objects x the mean object size in bytes, as hit
    rates of the scored reads; None where every request has one size (the columns above are then
    exact)."""
    recs = traceio.read_actrace(trace)
    none = {"opt_bytes_capacity": None, "opt_pfoo_l_hit_rate": None, "opt_size_belady_hit_rate": None}
    if len(recs) == 0 or int(recs["size"].min()) == int(recs["size"].max()):
        return none
    _, first = np.unique(recs["key"], return_index=True)
    cap = max(1, int(capacity_objects * float(recs["size"][first].astype(np.float64).mean())))
    rep = opt.analyse(trace, capacities=[], byte_capacities=[cap], score_from=skip)
    b, n = rep["bytes"][0], rep["scored_reads"]
    return {"opt_bytes_capacity": cap, "opt_pfoo_l_hit_rate": b["pfoo_l"]["hits"] / n if n else None,
            "opt_size_belady_hit_rate": b["size_belady"]["hits"] / n if n else None}


def opt_for(trace: Path, recordcount: int, skip: int, capacity: int) -> tuple[dict[str, Any], np.ndarray]:
    """The OPT / LRU / skew columns, and the LRU stack-distance histogram of the scored reads.

    Cached next to the trace by (trace, recordcount, skip, capacity): the cells of one trace and
    memory ratio (every approach of a figure) share one OPT pass, whose result depends on nothing
    else. The cache is a pure function of its key: a hit returns what the pass would compute."""
    base = f"{trace.stem}-opt-r{recordcount}-s{skip}-c{max(1, capacity)}-{_code_id()}"
    cols_file, hist_file = trace.with_name(base + ".json"), trace.with_name(base + ".npy")
    if cols_file.exists() and hist_file.exists():
        return json.loads(cols_file.read_text()), np.load(hist_file)
    cols, hist = _opt_pass(trace, recordcount, skip, capacity)
    tmp = trace.with_name(f"{base}.tmp{os.getpid()}.npy")       # one per process: runs may share the cache
    np.save(tmp, hist)
    os.replace(tmp, hist_file)
    tmp = trace.with_name(f"{base}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(cols, sort_keys=True) + "\n")
    os.replace(tmp, cols_file)
    return cols, hist


@functools.lru_cache(maxsize=1)
def _code_id() -> str:
    """What computes the cached columns: libacopt and the Python modules of the pass (a change to any
    of them makes new cache entries)."""
    from acbench import core, decompose, opt, skew
    h = hashlib.sha256()
    h.update(core.lib_path().read_bytes())
    for mod in (core, decompose, opt, skew, traceio):
        h.update(Path(mod.__file__).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:12]


def _opt_pass(trace: Path, recordcount: int, skip: int, capacity: int) -> tuple[dict[str, Any], np.ndarray]:
    recs = traceio.read_actrace(trace)
    size = int(recs["size"][0]) if len(recs) else 0
    seq = np.concatenate([traceio.preload_inserts(recordcount, size), recs])
    cap = max(1, capacity)
    w = opt.window_opt(seq, recordcount + skip, [cap])
    n = int(w["scored_reads"])
    window = recs[skip:]["key"]
    n_keys = max(recordcount, int(window.max()) + 1 if len(window) else 0)
    cols: dict[str, Any] = {"opt_requests": n, "opt_scored_writes": int(w["scored_writes"]),
                            "opt_hits": int(w["opt_bypass_hits"][0]) if n else None,
                            "opt_hit_rate": w["opt_bypass_hits"][0] / n if n else None,
                            "opt_demand_hit_rate": w["opt_demand_hits"][0] / n if n else None,
                            "lru_ref_hit_rate": decompose.lru_hits(w["lru_hist"], cap) / n if n else None}
    cols.update(skew.measured_skew(window, n_keys) if len(window) else {})
    return cols, np.asarray(w["lru_hist"])
