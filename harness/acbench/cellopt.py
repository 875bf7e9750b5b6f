"""OPT for a cell: the measured requests of its trace, counted the way the server counts.

The server counts hits only for reads (read and read-modify-write), so OPT sees only those:
updates and inserts are dropped (an offline optimum may write them around the cache, so the
optimum of the read subsequence bounds every policy's read hit rate). The load phase wrote
every record, so the cache may start with any `capacity` of them: the reads are preceded by
one read of each loaded key 0..recordcount-1. Those first reads are all cold misses (no hits
counted) and OPT with bypass keeps the keys whose next use is soonest = the best warm start.
opt_hit_rate = OPT hits / measured reads. Keys inserted during the run start cold.

The trace (ycsb-trace: warm-up then run) is cached under build/acbench/traces by every
property that shapes the request sequence (workload file, θ, seed, counts, mix).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from acbench import core, paths, server, traceio

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


def measured_reads(trace: Path, skip: int) -> np.ndarray:
    """Read requests after the first `skip` requests (the warm-up)."""
    recs = traceio.read_actrace(trace)
    return traceio.reads_only(recs[skip:])


def opt_for(trace: Path, recordcount: int, skip: int, capacity: int) -> dict[str, Any]:
    reads = measured_reads(trace, skip)
    n = len(reads)
    if n == 0:
        return {"opt_requests": 0, "opt_hit_rate": None, "opt_demand_hit_rate": None,
                "lru_ref_hit_rate": None}
    preload = traceio.actrace_records(np.arange(recordcount, dtype=np.uint64), 0, traceio.OPS["read"])
    seq = np.concatenate([preload, reads])
    with core.Trace.from_records(seq, "actrace") as t, core.NextUse(t) as nu:
        cap = max(1, capacity)
        bypass = nu.opt([cap], bypass=True)[0]
        demand = nu.opt([cap], bypass=False)[0]
        hist = nu.lru_hist()
        lru_hits = int(np.sum(hist[:min(cap, len(hist))], dtype=np.uint64))
    return {"opt_requests": n, "opt_hits": int(bypass), "opt_hit_rate": bypass / n,
            "opt_demand_hit_rate": demand / n, "lru_ref_hit_rate": lru_hits / n}
