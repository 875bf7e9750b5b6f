"""A cell's identity: every setting that defines what it measures, and the key made from them.

A finished cell is kept on resume only if the settings it ran with are the settings it would
run with now. They are, flat (`name -> value`):

    approach, approach.policy, approach.option.<k>, approach.driver.<k>, approach.<flag>
                                  what approaches.py runs for it (policy, -o options, flags)
    property.<k>                  every YCSB property the driver gets ([fixed], extra [grid] keys,
                                  zipfianconstant from zipf_theta, seed from the repetition)
    workload, workload.sha256     the workload file's name and its contents
    trace, trace.sha256           [fixed] trace: the replayed file and its contents (trace cells only)
    mem_ratio, repetition
    run.<k>                       every [run] setting but timeout_s and order, as the cell gets it (mode
                                  after --mode, spill_device and repetition_mode after the approach's own rule,
                                  perf as used)
    memory.<k>                    every [memory] setting
    binary.<tool>                 SHA-256 of memcached-ac, ycsb-mc (network mode), ycsb-trace and
                                  libacopt.so (OPT's trace and pass)
    harness_version               the row format of the harness

cell_key = the first 16 hex digits of the SHA-256 of their canonical JSON. Rows carry it; the
run directory's run.json keeps each finished cell's settings, so that a refusal names what
changed.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from acbench import paths, sysinfo
from acbench.approaches import get_approach
from acbench.spec import server_threads_of

# [run] settings that do not change what a cell measures
NOT_IDENTITY_RUN = ("timeout_s", "order")
BINARY_PREFIX = "binary."


def binaries(mode: str) -> dict[str, str]:
    """The programs a cell of this mode runs, by name: their checksums."""
    from acbench import core
    tools = {"memcached-ac": paths.binary("memcached-ac"), "ycsb-trace": paths.binary("ycsb-trace"),
             "libacopt.so": core.lib_path()}
    if mode == "network":
        tools["ycsb-mc"] = paths.binary("ycsb-mc")
    return {name: sysinfo.file_sha256(p) for name, p in sorted(tools.items())}


def settings(cell: Any, run: dict[str, Any], memory: dict[str, Any], *, mode: str, spill_device: str,
             perf: bool, bins: dict[str, str], harness_version: str) -> dict[str, Any]:
    """The cell's identity as flat settings (module docstring)."""
    a = get_approach(cell.approach)
    out: dict[str, Any] = {"approach": a.name, "approach.policy": a.policy}
    out.update({f"approach.option.{k}": v for k, v in sorted(a.options.items())})
    out.update({f"approach.driver.{k}": v for k, v in sorted(a.driver.items())})
    out.update({f"approach.flag.{f}": True for f in a.flags})
    for flag in ("pages", "swap", "spills", "resident", "fills_limit"):
        out[f"approach.{flag}"] = getattr(a, flag)
    out.update({f"property.{k}": v for k, v in sorted(cell.properties.items())})
    out["workload"] = cell.workload
    out["workload.sha256"] = sysinfo.file_sha256(Path(cell.workload_file))
    if cell.trace:      # [fixed] trace: the requests are the file's (absent for YCSB cells: their keys stay)
        out["trace"], out["trace.sha256"] = cell.trace, sysinfo.file_sha256(Path(cell.trace))
    out["mem_ratio"] = cell.mem_ratio
    out["repetition"] = cell.repetition
    eff = {**run, "mode": mode, "spill_device": spill_device, "perf": perf,
           "server_threads": server_threads_of(run, cell.properties)}
    out.update({f"run.{k}": v for k, v in sorted(eff.items()) if k not in NOT_IDENTITY_RUN})
    out.update({f"memory.{k}": v for k, v in sorted(memory.items())})
    out.update({f"{BINARY_PREFIX}{k}": v for k, v in sorted(bins.items())})
    out["harness_version"] = harness_version
    return out


def key(s: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(s, sort_keys=True, default=str).encode()).hexdigest()[:16]


def changes(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """What differs, one phrase per setting ("property.operationcount: 10000 then, 20000 now")."""
    if old is None:
        return ["its settings were not recorded (a run of an older acbench)"]
    out = []
    for k in sorted(set(old) | set(new)):
        if old.get(k) != new.get(k):
            out.append(f"{k}: {_show(old, k)} then, {_show(new, k)} now")
    return out


def only_binaries(diff: Iterable[str]) -> bool:
    return all(d.startswith(BINARY_PREFIX) for d in diff)


def _show(s: dict[str, Any], k: str) -> str:
    return repr(s[k]) if k in s else "unset"
