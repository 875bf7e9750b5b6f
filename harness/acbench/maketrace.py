"""Synthetic request traces for replaying through the server (`acbench make-trace`).

A trace of `requests` gets: a share `one_hit` of them each asks for an object never asked
for before nor after (a one-hit wonder, as the long tails of production cache traces have:
Yang et al., OSDI 2020, report most objects of many Twitter clusters requested once), the
rest draw one of `objects` popular objects from exact Zipf(theta) (rank r has probability
r^-theta / H(objects, theta); rank 1 is id 0). Each object has one size for the whole trace:
`size` bytes, or with `size_max` a log-uniform draw from [size, size_max] fixed per id, so
variable sizes never change an object's size between requests. Deterministic in `seed`.

Written as oracleGeneral (traceio.ORACLE_RECORD: the time is the request index, the next
access computed) or as the driver's CSV `time,key,size,op` (the key is the id in decimal,
so both formats name the same keys: ycsb-driver/ycsb_replay.h).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acbench import traceio

FORMATS = ("oracleGeneral", "csv")


class TraceSpecError(ValueError):
    """A parameter outside what make-trace accepts (the message says what is)."""


@dataclass(frozen=True)
class TraceParams:
    requests: int
    objects: int
    theta: float = 0.99
    one_hit: float = 0.0
    size: int = 100
    size_max: int | None = None
    seed: int = 1

    def check(self) -> None:
        if self.requests < 1 or self.objects < 1:
            raise TraceSpecError(f"requests {self.requests} and objects {self.objects}: accepted whole numbers >= 1")
        if not 0 < self.theta <= 10:
            raise TraceSpecError(f"theta {self.theta}: accepted 0 < theta <= 10")
        if not 0 <= self.one_hit < 1:
            raise TraceSpecError(f"one_hit {self.one_hit}: accepted a fraction in [0, 1)")
        if not 1 <= self.size < 2 ** 32:
            raise TraceSpecError(f"size {self.size}: accepted 1 .. 2^32-1 bytes")
        if self.size_max is not None and not self.size <= self.size_max < 2 ** 32:
            raise TraceSpecError(f"size_max {self.size_max}: accepted size ({self.size}) .. 2^32-1 bytes")


def object_sizes(ids: np.ndarray, p: TraceParams) -> np.ndarray:
    """Each id's size: fixed, or log-uniform in [size, size_max] from a hash of (seed, id)."""
    if p.size_max is None or p.size_max == p.size:
        return np.full(len(ids), p.size, dtype=np.uint32)
    x = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(p.seed * 0xD1B54A32D192ED03 % 2 ** 64)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    u = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    lo, hi = np.log(p.size), np.log(p.size_max + 1)
    return np.minimum(np.exp(lo + u * (hi - lo)).astype(np.uint64), p.size_max).astype(np.uint32)


def generate(p: TraceParams) -> tuple[np.ndarray, np.ndarray]:
    """(ids, sizes) of the trace's requests, in order."""
    p.check()
    rng = np.random.default_rng(p.seed)
    pmf = np.arange(1, p.objects + 1, dtype=np.float64) ** -p.theta
    pmf /= pmf.sum()
    ids = rng.choice(p.objects, size=p.requests, p=pmf).astype(np.uint64)
    wonder = rng.random(p.requests) < p.one_hit
    ids[wonder] = p.objects + np.arange(int(wonder.sum()), dtype=np.uint64)
    return ids, object_sizes(ids, p)


def write(path: str | os.PathLike[str], p: TraceParams, fmt: str | None = None) -> dict[str, int]:
    """Writes the trace (format from fmt, else from the name: .csv or oracleGeneral) and returns
    its summary: requests, objects, one-hit objects, footprint bytes."""
    fmt = fmt or ("csv" if str(path).lower().endswith(".csv") else "oracleGeneral")
    if fmt not in FORMATS:
        raise TraceSpecError(f"format {fmt!r}: accepted {', '.join(FORMATS)}")
    ids, sizes = generate(p)
    if fmt == "csv":
        with open(path, "w") as f:
            f.write("time,key,size,op\n")
            f.writelines(f"{i},{k},{s},get\n" for i, (k, s) in enumerate(zip(ids.tolist(), sizes.tolist())))
    else:
        traceio.write_oracle(path, traceio.oracle_records(ids, sizes))
    uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
    return {"requests": len(ids), "objects": len(uniq), "one_hit_objects": int((counts == 1).sum()),
            "footprint_bytes": int(sizes[first].astype(np.int64).sum()), "format": fmt, "path": str(Path(path))}
