"""ctypes binding of libacopt (the home's build/lib/libacopt.so, or $ACOPT_LIB: paths.libacopt)."""
from __future__ import annotations

import ctypes as C
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from acbench import paths

FORMATS = {"auto": 0, "actrace": 1, "oraclegeneral": 2}
FORMAT_NAMES = {1: "actrace", 2: "oraclegeneral"}
UNLIMITED = (1 << 64) - 1
_ERRLEN = 1024
_u64p = C.POINTER(C.c_uint64)
_u8p = C.POINTER(C.c_uint8)


class CoreError(RuntimeError):
    """An error reported by libacopt (bad trace, not enough memory, bad capacity)."""


def lib_path() -> Path:
    return paths.libacopt()


_lib: C.CDLL | None = None


def _load() -> C.CDLL:
    global _lib
    if _lib is not None:
        return _lib
    path = lib_path()
    if not path.exists():
        raise CoreError(f"libacopt not found at {path}: build it with `make -C harness all`")
    lib = C.CDLL(str(path))
    vp, u64, sz, cp, i = C.c_void_p, C.c_uint64, C.c_size_t, C.c_char_p, C.c_int
    sigs = {
        "ac_trace_open": (vp, [cp, i, cp, sz]),
        "ac_trace_from_memory": (vp, [vp, u64, i, cp, sz]),
        "ac_trace_close": (None, [vp]),
        "ac_trace_requests": (u64, [vp]),
        "ac_trace_format": (i, [vp]),
        "ac_trace_header": (None, [vp, _u64p, _u64p, cp]),
        "ac_trace_key": (u64, [vp, u64]),
        "ac_trace_size": (C.c_uint32, [vp, u64]),
        "ac_trace_op": (C.c_uint, [vp, u64]),
        "ac_nextuse_build": (vp, [vp, u64, u64, cp, sz]),
        "ac_nextuse_free": (None, [vp]),
        "ac_nextuse_distinct": (u64, [vp]),
        "ac_nextuse_requests": (u64, [vp]),
        "ac_nextuse_score_from": (u64, [vp]),
        "ac_nextuse_scored_reads": (u64, [vp]),
        "ac_nextuse_scored_writes": (u64, [vp]),
        "ac_nextuse_reuses": (u64, [vp]),
        "ac_nextuse_bytes": (u64, [u64]),
        "ac_opt_unit": (i, [vp, _u64p, sz, i, u64, _u64p, cp, sz]),
        "ac_lru_hist": (i, [vp, u64, _u64p, cp, sz]),
        "ac_pfoo_l": (i, [vp, vp, _u64p, sz, u64, _u64p, cp, sz]),
        "ac_size_belady": (i, [vp, vp, _u64p, sz, u64, _u64p, cp, sz]),
        "ac_opt_batch": (i, [_u64p, _u8p, _u64p, _u64p, sz, _u64p, sz, i, _u64p, cp, sz]),
        "ac_mem_available": (u64, []),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def _u64_array(values: Sequence[int] | np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.uint64))


def _ptr(a: np.ndarray) -> C._Pointer:  # type: ignore[name-defined]
    return a.ctypes.data_as(_u64p)


def mem_available() -> int:
    """MemAvailable in bytes (0 if /proc/meminfo has none)."""
    return int(_load().ac_mem_available())


class Trace:
    """A validated, read-only trace: an mmapped file or records in memory."""

    def __init__(self, handle: int, keepalive: object = None) -> None:
        self._h = handle
        self._keepalive = keepalive

    @classmethod
    def open(cls, path: str | os.PathLike[str], fmt: str = "auto") -> "Trace":
        if fmt not in FORMATS:
            raise CoreError(f"unknown trace format {fmt!r}: use one of {', '.join(FORMATS)}")
        err = C.create_string_buffer(_ERRLEN)
        h = _load().ac_trace_open(os.fsencode(path), FORMATS[fmt], err, _ERRLEN)
        if not h:
            raise CoreError(err.value.decode(errors="replace"))
        return cls(h)

    @classmethod
    def from_records(cls, records: np.ndarray, fmt: str) -> "Trace":
        """A view of a structured array with the record layout of `fmt` (see traceio)."""
        if fmt not in ("actrace", "oraclegeneral"):
            raise CoreError(f"records need format actrace or oraclegeneral, got {fmt!r}")
        recs = np.ascontiguousarray(records)
        err = C.create_string_buffer(_ERRLEN)
        h = _load().ac_trace_from_memory(recs.ctypes.data, len(recs), FORMATS[fmt], err, _ERRLEN)
        if not h:
            raise CoreError(err.value.decode(errors="replace"))
        return cls(h, keepalive=recs)

    @property
    def handle(self) -> int:
        if not self._h:
            raise CoreError("trace is closed")
        return self._h

    @property
    def requests(self) -> int:
        return int(_load().ac_trace_requests(self.handle))

    @property
    def format(self) -> str:
        return FORMAT_NAMES[_load().ac_trace_format(self.handle)]

    def header(self) -> dict[str, object]:
        seed, count = C.c_uint64(), C.c_uint64()
        name = C.create_string_buffer(65)
        _load().ac_trace_header(self.handle, C.byref(seed), C.byref(count), name)
        return {"seed": seed.value, "recordcount": count.value, "workload": name.value.decode(errors="replace")}

    def record(self, i: int) -> tuple[int, int]:
        """(key, size) of request i, as the core reads it."""
        if not 0 <= i < self.requests:
            raise IndexError(f"request {i} out of range 0..{self.requests - 1}")
        lib = _load()
        return int(lib.ac_trace_key(self.handle, i)), int(lib.ac_trace_size(self.handle, i))

    def op(self, i: int) -> int:
        """The op code of request i (0 read, 1 update, 2 insert, 3 rmw; oracleGeneral: 0)."""
        if not 0 <= i < self.requests:
            raise IndexError(f"request {i} out of range 0..{self.requests - 1}")
        return int(_load().ac_trace_op(self.handle, i))

    def close(self) -> None:
        if self._h:
            _load().ac_trace_close(self._h)
            self._h = 0

    def __enter__(self) -> "Trace":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NextUse:
    """The next-use arrays of a trace (one backward pass); frees itself on close.

    Requests before `score_from` drive the cache but are not scored; writes
    (update, insert, the write half of a read-modify-write) are write-allocate
    (ac_opt.h, harness/README.md). Every hit count below is of scored reads."""

    def __init__(self, trace: Trace, limit: int = UNLIMITED, score_from: int = 0) -> None:
        score_from = int(score_from)
        if score_from < 0:
            raise CoreError(f"score_from must be 0 or more, got {score_from}")
        err = C.create_string_buffer(_ERRLEN)
        lib = _load()
        h = lib.ac_nextuse_build(trace.handle, score_from, limit, err, _ERRLEN)
        if not h:
            raise CoreError(err.value.decode(errors="replace"))
        self._h = h
        self.trace = trace
        self.requests = int(lib.ac_nextuse_requests(h))
        self.distinct = int(lib.ac_nextuse_distinct(h))
        self.score_from = int(lib.ac_nextuse_score_from(h))
        self.scored_reads = int(lib.ac_nextuse_scored_reads(h))
        self.scored_writes = int(lib.ac_nextuse_scored_writes(h))
        self.reuses = int(lib.ac_nextuse_reuses(h))
        self.cold_misses = self.scored_reads - self.reuses

    def _call(self, name: str, caps: Sequence[int], *args: int) -> list[int]:
        c = _u64_array(caps)
        out = np.zeros(len(c), dtype=np.uint64)
        err = C.create_string_buffer(_ERRLEN)
        fn = getattr(_load(), name)
        if name in ("ac_pfoo_l", "ac_size_belady"):
            rc = fn(self.trace.handle, self._h, _ptr(c), len(c), *args, _ptr(out), err, _ERRLEN)
        else:
            rc = fn(self._h, _ptr(c), len(c), *args, _ptr(out), err, _ERRLEN)
        if rc != 0:
            raise CoreError(err.value.decode(errors="replace"))
        return [int(x) for x in out]

    def opt(self, caps: Sequence[int], bypass: bool, limit: int = UNLIMITED) -> list[int]:
        """Belady (write-allocate) scored hits per capacity in objects (demand or bypass variant)."""
        return self._call("ac_opt_unit", caps, int(bypass), limit)

    def pfoo_l(self, caps: Sequence[int], limit: int = UNLIMITED) -> list[int]:
        """PFOO-L: an upper bound on any policy's hits per capacity in bytes."""
        return self._call("ac_pfoo_l", caps, limit)

    def size_belady(self, caps: Sequence[int], limit: int = UNLIMITED) -> list[int]:
        """Size-aware Belady's hits (a feasible policy) per capacity in bytes."""
        return self._call("ac_size_belady", caps, limit)

    def lru_hist(self, limit: int = UNLIMITED) -> np.ndarray:
        """hist[d] = scored reads at stack distance d (every request is an access);
        write-allocating LRU(c) hits = hist[:c].sum()."""
        hist = np.zeros(max(self.distinct, 1), dtype=np.uint64)
        err = C.create_string_buffer(_ERRLEN)
        if _load().ac_lru_hist(self._h, limit, _ptr(hist), err, _ERRLEN) != 0:
            raise CoreError(err.value.decode(errors="replace"))
        return hist[: self.distinct]

    def close(self) -> None:
        if self._h:
            _load().ac_nextuse_free(self._h)
            self._h = 0

    def __enter__(self) -> "NextUse":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def opt_batch(traces: Sequence[Sequence[int]] | np.ndarray, caps: Sequence[int], bypass: bool,
              ops: Sequence[Sequence[int]] | np.ndarray | None = None,
              score_from: Sequence[int] | int | None = None) -> np.ndarray:
    """OPT scored hits for many small traces at once: result[j, k] for trace j, caps[k].
    A 2-D array is taken as equally long traces, one per row. ops: op codes in the
    same shape (None: all reads); score_from: one index for all traces or one per
    trace (None: 0)."""
    if isinstance(traces, np.ndarray) and traces.ndim == 2:
        keys = _u64_array(traces.reshape(-1))
        offsets = _u64_array(np.arange(traces.shape[0] + 1) * traces.shape[1])
    else:
        keys = _u64_array([k for t in traces for k in t])
        offsets = _u64_array(np.concatenate([[0], np.cumsum([len(t) for t in traces])]))
    ntr = len(offsets) - 1
    op_arr = None
    if ops is not None:
        flat = np.asarray(ops).reshape(-1) if isinstance(ops, np.ndarray) else [o for t in ops for o in t]
        op_arr = np.ascontiguousarray(np.asarray(flat, dtype=np.uint8))
        if len(op_arr) != len(keys):
            raise CoreError(f"ops has {len(op_arr)} entries for {len(keys)} requests")
    sf_arr = None
    if score_from is not None:
        sf_arr = _u64_array(np.broadcast_to(np.asarray(score_from, dtype=np.uint64), (ntr,)))
    c = _u64_array(caps)
    out = np.zeros(ntr * len(c), dtype=np.uint64)
    err = C.create_string_buffer(_ERRLEN)
    rc = _load().ac_opt_batch(_ptr(keys), op_arr.ctypes.data_as(_u8p) if op_arr is not None else None,
                              _ptr(offsets), _ptr(sf_arr) if sf_arr is not None else None, ntr,
                              _ptr(c), len(c), int(bypass), _ptr(out), err, _ERRLEN)
    if rc != 0:
        raise CoreError(err.value.decode(errors="replace"))
    return out.reshape(ntr, len(c)).astype(np.int64)
