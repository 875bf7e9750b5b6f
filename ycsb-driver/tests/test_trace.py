"""ycsb-trace: ACTRACE header and records, oracleGeneral next-access values,
determinism, and error messages."""
from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

from conftest import WORKLOADS, fnvhash64

HEADER = struct.Struct("<8sIIQQQ24s64s")
RECORD = struct.Struct("<QIB3s")
OG = struct.Struct("<IQIq")


def run_trace(exe: Path, out: Path, *args: str, og: Path | None = None) -> dict:
    cmd = [str(exe), *args, "-o", str(out)]
    if og is not None:
        cmd += ["--oracle-general", str(og)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def read_actrace(path: Path) -> tuple[tuple, list[tuple[int, int, int, bytes]]]:
    data = path.read_bytes()
    header = HEADER.unpack_from(data, 0)
    recs = [RECORD.unpack_from(data, 128 + 16 * i) for i in range(header[5])]
    assert len(data) == 128 + 16 * header[5]
    return header, recs


def test_header_and_records(ycsb_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.actrace"
    summary = run_trace(ycsb_trace, out, "-P", str(WORKLOADS / "workloada"), "-p", "seed=77",
                        "-p", "recordcount=500", "-p", "operationcount=3000",
                        "-p", "warmupoperations=100", "-p", "fieldlength=40")
    header, recs = read_actrace(out)
    magic, version, hsize, seed, recordcount, count, zero, name = header
    assert magic == b"ACTRACE1"
    assert (version, hsize, seed, recordcount, count) == (1, 128, 77, 500, 3100)
    assert zero == bytes(24)
    assert name == b"workloada" + bytes(64 - 9)
    assert len(recs) == 3100
    assert summary["requests"] == 3100 and summary["warmup_requests"] == 100
    ops = [r[2] for r in recs]
    assert ops.count(0) == summary["ops"]["read"]
    assert ops.count(1) == summary["ops"]["update"]
    assert ops.count(0) + ops.count(1) == 3100
    assert all(r[1] == 400 for r in recs)           # fieldcount 10 x fieldlength 40
    assert all(0 <= r[0] < 500 for r in recs)
    assert all(r[3] == bytes(3) for r in recs)


def test_inserts_follow_counter(ycsb_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "d.actrace"
    run_trace(ycsb_trace, out, "-P", str(WORKLOADS / "workloadd"), "-p", "recordcount=1000",
              "-p", "operationcount=5000")
    _, recs = read_actrace(out)
    inserted = [r[0] for r in recs if r[2] == 2]
    assert inserted == list(range(1000, 1000 + len(inserted)))
    assert 150 < len(inserted) < 350               # 5 % of 5000
    last = 999
    for key, _, op, _ in recs:
        if op == 2:
            last = key
        else:
            assert key <= last                     # reads only acknowledged keys


def naive_next(ids: list[int]) -> list[int]:
    nxt = []
    for i, k in enumerate(ids):
        j = next((j for j in range(i + 1, len(ids)) if ids[j] == k), -1)
        nxt.append(j)
    return nxt


def test_oracle_general(ycsb_trace: Path, tmp_path: Path) -> None:
    out, og = tmp_path / "b.actrace", tmp_path / "b.og"
    run_trace(ycsb_trace, out, "-P", str(WORKLOADS / "workloadd"), "-p", "recordcount=300",
              "-p", "operationcount=1500", og=og)
    _, recs = read_actrace(out)
    data = og.read_bytes()
    assert len(data) == 24 * 1500
    rows = [OG.unpack_from(data, 24 * i) for i in range(1500)]
    ids = [r[0] for r in recs]
    assert [r[0] for r in rows] == list(range(1500))
    assert [r[1] for r in rows] == ids
    assert [r[2] for r in rows] == [r[1] for r in recs]
    expected = naive_next(ids)
    assert [r[3] for r in rows] == expected
    assert expected.count(-1) == len(set(ids))
    # the standalone conversion gives the same bytes
    og2 = tmp_path / "b2.og"
    subprocess.run([str(ycsb_trace), "--from-actrace", str(out), "--oracle-general", str(og2)],
                   check=True)
    assert og2.read_bytes() == data


def test_determinism(ycsb_trace: Path, tmp_path: Path) -> None:
    args = ["-P", str(WORKLOADS / "workloadd"), "-p", "recordcount=2000",
            "-p", "operationcount=20000"]
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    run_trace(ycsb_trace, a, *args)
    run_trace(ycsb_trace, b, *args)
    run_trace(ycsb_trace, c, *args, "-p", "seed=2")
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes()[128:] != c.read_bytes()[128:]
    # threads does not change the trace (it is generated chunk by chunk in order)
    d = tmp_path / "d"
    run_trace(ycsb_trace, d, *args, "-p", "threads=4")
    assert a.read_bytes() == d.read_bytes()


def fails(exe: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True)
    return proc.returncode, proc.stderr


def test_errors(ycsb_trace: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "x")
    assert fails(ycsb_trace, "-P", str(WORKLOADS / "workloade"), "-p", "fieldlengthdistribution=histogram",
                 "-o", out) == (
        1, "ycsb-trace: property 'fieldlengthdistribution': 'histogram' is not accepted; accepted: constant "
           "(every value is fieldcount x fieldlength bytes; uniform, zipfian and histogram lengths are not "
           "implemented)\n")
    assert fails(ycsb_trace, "-p", "readproportion=2", "-o", out) == (
        1, "ycsb-trace: property 'readproportion': '2' is out of range; accepted: a number "
           "from 0 to 1\n")
    rc, err = fails(ycsb_trace, "-p", "colour=red", "-o", out)
    assert rc == 1 and err.startswith("ycsb-trace: unknown property 'colour'; accepted: "
                                      "recordcount, operationcount,")
    rc, err = fails(ycsb_trace, "-P", str(WORKLOADS / "workloada"))
    assert rc == 2 and err.startswith("ycsb-trace: -o OUT.actrace is required\n")
    bad = tmp_path / "bad.actrace"
    bad.write_bytes(b"NOTATRACE" + bytes(200))
    assert fails(ycsb_trace, "--from-actrace", str(bad), "--oracle-general", out) == (
        1, f"ycsb-trace: '{bad}': not an ACTRACE file (magic is not \"ACTRACE1\")\n")
    good = tmp_path / "good.actrace"
    run_trace(ycsb_trace, good, "-p", "recordcount=10", "-p", "operationcount=10")
    short = tmp_path / "short.actrace"
    short.write_bytes(good.read_bytes()[:-5])
    assert fails(ycsb_trace, "--from-actrace", str(short), "--oracle-general", out) == (
        1, f"ycsb-trace: '{short}': header says 10 requests (288 bytes) but the file has 283 "
           "bytes\n")


def test_theta_above_one(ycsb_trace: Path, tmp_path: Path) -> None:
    # theta 1.2: the most popular key is fnvhash64(0) % 1001 (YCSB's chooser
    # spans insertstart .. insertstart + insertcount inclusive; key 1000 is
    # redrawn) with probability 1/zeta(1e10 + 1, 1.2) = 1/5.5415824411792508
    # (mpmath) plus its hashed share of the far tail (< 0.001)
    out = tmp_path / "z.actrace"
    run_trace(ycsb_trace, out, "-P", str(WORKLOADS / "readonly"), "-p", "recordcount=1000",
              "-p", "operationcount=200000", "-p", "zipfianconstant=1.2")
    _, recs = read_actrace(out)
    keys = [r[0] for r in recs]
    top = fnvhash64(0) % 1001
    assert max(set(keys), key=keys.count) == top
    assert abs(keys.count(top) / 200000 - 1 / 5.5415824411792508) < 0.004
    assert all(0 <= k < 1000 for k in keys)


def test_theta_one_and_partial_load_rejected(ycsb_trace: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "x")
    assert fails(ycsb_trace, "-p", "zipfianconstant=1", "-p", "requestdistribution=zipfian",
                 "-o", out) == (
        1, "ycsb-trace: zipfianconstant=1 with requestdistribution=zipfian: 1 or within 1e-9 of "
           "it, and Gray's Zipfian method (YCSB's ZipfianGenerator) divides by 1 - theta (alpha = "
           "1/(1 - theta)); accepted: zipfianconstant at least 1e-9 away from 1, or "
           "requestdistribution=truezipf, which accepts 1\n")
    assert fails(ycsb_trace, "-p", "recordcount=100", "-p", "loadcount=50", "-o", out) == (
        1, "ycsb-trace: loadcount (50) differs from insertcount (100): an ACTRACE file implies "
           "the load of every key; accepted: loadcount unset or equal to insertcount\n")


def test_truezipf(ycsb_trace: Path, tmp_path: Path) -> None:
    # exact Zipf(0.9) over 5000 keys: the 100 most requested keys get
    # H(100, 0.9) / H(5000, 0.9) of the requests; theta = 1 is accepted;
    # threads does not change the file
    args = ["-P", str(WORKLOADS / "readonly"), "-p", "recordcount=5000", "-p",
            "operationcount=200000", "-p", "requestdistribution=truezipf"]
    a, b = tmp_path / "a", tmp_path / "b"
    summary = run_trace(ycsb_trace, a, *args, "-p", "zipfianconstant=0.9")
    assert summary["config"]["requestdistribution"] == "truezipf"
    run_trace(ycsb_trace, b, *args, "-p", "zipfianconstant=0.9", "-p", "threads=4")
    assert a.read_bytes() == b.read_bytes()
    _, recs = read_actrace(a)
    keys = [r[0] for r in recs]
    assert all(0 <= k < 5000 for k in keys)
    freq: dict[int, int] = {}
    for k in keys:
        freq[k] = freq.get(k, 0) + 1
    counts = sorted(freq.values(), reverse=True)
    h = [i ** -0.9 for i in range(1, 5001)]
    assert abs(sum(counts[:100]) / 200000 - sum(h[:100]) / sum(h)) < 0.01
    assert abs(counts[0] / 200000 - 1 / sum(h)) < 0.005
    # the hottest keys are spread over the key range, not 0, 1, 2, ...
    top = sorted(freq, key=freq.__getitem__, reverse=True)[:10]
    assert sorted(top) != list(range(10)) and max(top) - min(top) > 1000
    one = run_trace(ycsb_trace, tmp_path / "c", *args, "-p", "zipfianconstant=1")
    assert one["config"]["zipfianconstant"] == 1
