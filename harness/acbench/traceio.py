"""ACTRACE and libCacheSim oracleGeneral files as numpy structured arrays."""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

ACTRACE_MAGIC = b"ACTRACE1"
ACTRACE_HEADER = 128
ACTRACE_RECORD = np.dtype([("key", "<u8"), ("size", "<u4"), ("op", "u1"), ("pad", "u1", (3,))])
ORACLE_RECORD = np.dtype([("time", "<u4"), ("key", "<u8"), ("size", "<u4"), ("next", "<i8")])
OPS = {"read": 0, "update": 1, "insert": 2, "rmw": 3}
assert ACTRACE_RECORD.itemsize == 16 and ORACLE_RECORD.itemsize == 24


def actrace_records(keys: Sequence[int] | np.ndarray, sizes: Sequence[int] | np.ndarray | int = 1,
                    ops: Sequence[int] | np.ndarray | int = 0) -> np.ndarray:
    recs = np.zeros(len(keys), dtype=ACTRACE_RECORD)
    recs["key"] = np.asarray(keys, dtype=np.uint64)
    recs["size"] = sizes
    recs["op"] = ops
    return recs


def next_access(keys: Sequence[int] | np.ndarray) -> np.ndarray:
    """Index of the next request to the same key, -1 if none (oracleGeneral's field)."""
    out = np.full(len(keys), -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i in range(len(keys) - 1, -1, -1):
        k = int(keys[i])
        out[i] = last.get(k, -1)
        last[k] = i
    return out


def oracle_records(keys: Sequence[int] | np.ndarray, sizes: Sequence[int] | np.ndarray | int = 1) -> np.ndarray:
    recs = np.zeros(len(keys), dtype=ORACLE_RECORD)
    recs["time"] = np.arange(len(keys), dtype=np.uint32)
    recs["key"] = np.asarray(keys, dtype=np.uint64)
    recs["size"] = sizes
    recs["next"] = next_access(keys)
    return recs


def actrace_header(request_count: int, seed: int = 0, recordcount: int = 0, workload: str = "") -> bytes:
    name = workload.encode()
    if len(name) > 63:
        raise ValueError(f"workload name is {len(name)} bytes; at most 63 fit the header")
    head = np.zeros(1, dtype=[("magic", "S8"), ("version", "<u4"), ("hsize", "<u4"), ("seed", "<u8"),
                              ("recordcount", "<u8"), ("count", "<u8"), ("zero", "u1", (24,)),
                              ("workload", "S64")])
    head[0] = (ACTRACE_MAGIC, 1, ACTRACE_HEADER, seed, recordcount, request_count, np.zeros(24), name)
    return head.tobytes()


def write_actrace(path: str | os.PathLike[str], records: np.ndarray, seed: int = 0, recordcount: int = 0,
                  workload: str = "") -> None:
    with open(path, "wb") as f:
        f.write(actrace_header(len(records), seed, recordcount, workload))
        f.write(np.ascontiguousarray(records, dtype=ACTRACE_RECORD).tobytes())


def write_oracle(path: str | os.PathLike[str], records: np.ndarray) -> None:
    with open(path, "wb") as f:
        f.write(np.ascontiguousarray(records, dtype=ORACLE_RECORD).tobytes())


# Requests the server counts as reads (its hit counters see only these): read and
# read-modify-write. Updates and inserts are left out by reads_only().
READ_OPS = (OPS["read"], OPS["rmw"])
# Requests that write their key (write-allocate: it is in the cache afterwards).
WRITE_OPS = (OPS["update"], OPS["insert"], OPS["rmw"])


def read_actrace(path: str | os.PathLike[str]) -> np.ndarray:
    """The records of an ACTRACE file (header checked for magic and size)."""
    with open(path, "rb") as f:
        head = f.read(ACTRACE_HEADER)
    if len(head) < ACTRACE_HEADER or head[:8] != ACTRACE_MAGIC:
        raise ValueError(f"{path}: not an ACTRACE file (no ACTRACE1 magic in a 128-byte header)")
    return np.fromfile(path, dtype=ACTRACE_RECORD, offset=ACTRACE_HEADER)


def read_oracle(path: str | os.PathLike[str]) -> np.ndarray:
    """The records of an oracleGeneral file (whole records only; the core validates the size)."""
    return np.fromfile(path, dtype=ORACLE_RECORD)


def reads_only(records: np.ndarray) -> np.ndarray:
    """The read requests (op read or read-modify-write) of ACTRACE records, in order."""
    return records[np.isin(records["op"], READ_OPS)]


def reads_only_window(records: np.ndarray, score_from: int) -> tuple[np.ndarray, int]:
    """The reads-only view of a window (the pre-write-allocate model): update and insert
    requests are dropped everywhere, a read-modify-write becomes a plain read (its write
    half dropped too), and score_from moves to the same request in the shorter sequence."""
    keep = np.isin(records["op"], READ_OPS)
    out = records[keep]
    out["op"] = OPS["read"]
    return out, int(np.count_nonzero(keep[:score_from]))


def preload_inserts(recordcount: int, size: int = 0) -> np.ndarray:
    """The load phase as requests: one insert of each key 0..recordcount-1, in order."""
    return actrace_records(np.arange(recordcount, dtype=np.uint64), size, OPS["insert"])


# Traces the in-process driver replays (-o ac_driver_trace, ycsb-driver/ycsb_replay.h): oracleGeneral
# or CSV `time,key,size[,op]`. The same rules as the driver's reader, so OPT sees the server's requests.
REPLAY_SUFFIXES = {".csv": "csv", ".og": "oracleGeneral", ".oraclegeneral": "oracleGeneral", ".bin": "oracleGeneral"}
REPLAY_OPS = {"get": OPS["read"], "gets": OPS["read"], "set": OPS["update"], "add": OPS["update"],
              "replace": OPS["update"], "cas": OPS["update"], "append": OPS["update"], "prepend": OPS["update"]}
FNV64_OFFSET, FNV64_PRIME = 0xCBF29CE484222325, 0x100000001B3


def replay_format(path: str | os.PathLike[str]) -> str | None:
    """The driver's format of a trace from its name (csv, oracleGeneral), or None."""
    return REPLAY_SUFFIXES.get(os.path.splitext(str(path))[1].lower())


def replay_key_id(key: str) -> int:
    """A CSV key's id as the driver derives it: the number if decimal (< 2^64), else FNV-1a 64 of its bytes."""
    if key.isascii() and key.isdigit() and len(key) <= 20 and int(key) < 1 << 64:
        return int(key)
    h = FNV64_OFFSET
    for b in key.encode():
        h = ((h ^ b) * FNV64_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def read_replay(path: str | os.PathLike[str], fmt: str | None = None) -> np.ndarray:
    """A replayable trace's requests as ACTRACE records (key = the driver's id; op read or update).
    Raises ValueError naming the file (and line) for what the driver would refuse, and for deletes
    (the OPT library has no delete)."""
    fmt = fmt or replay_format(path)
    if fmt == "oracleGeneral":
        if os.path.getsize(path) % ORACLE_RECORD.itemsize:
            raise ValueError(f"{path}: not an oracleGeneral trace: {os.path.getsize(path)} bytes is not a multiple "
                             "of the 24-byte record")
        og = read_oracle(path)
        return actrace_records(og["key"], og["size"], OPS["read"])
    if fmt != "csv":
        raise ValueError(f"{path}: cannot tell the trace's format from its name; accepted: a name ending .csv "
                         "(time,key,size[,op]) or .og, .oracleGeneral, .bin (oracleGeneral)")
    keys, sizes, ops = [], [], []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.rstrip("\r\n").split(",")
            if n == 1 and len(fields) >= 3 and fields[0] == "time":
                continue
            if not 3 <= len(fields) <= 4 or not fields[0].isdigit() or not fields[1] or not fields[2].isdigit() \
                    or int(fields[2]) >= 1 << 32:
                raise ValueError(f"{path}:{n}: not time,key,size[,op] with time and size unsigned integers")
            op = fields[3].lower() if len(fields) == 4 else "get"
            if op not in REPLAY_OPS:
                raise ValueError(f"{path}:{n}: op {fields[3]!r}: OPT and the LRU reference accept "
                                 f"{'|'.join(REPLAY_OPS)} (no delete)")
            keys.append(replay_key_id(fields[1]))
            sizes.append(int(fields[2]))
            ops.append(REPLAY_OPS[op])
    if not keys:
        raise ValueError(f"{path}: the trace has no requests")
    return actrace_records(np.array(keys, dtype=np.uint64), np.array(sizes, dtype=np.uint32),
                           np.array(ops, dtype=np.uint8))
