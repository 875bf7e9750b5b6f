"""Trace readers (ACTRACE, oracleGeneral) and the CLI's input errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acbench import core, traceio
from acbench.cli import app

KEYS = [0, 2**64 - 1, 42, 0, 42, 7, 2**63]
# docs/sizes.txt's forms in words (acg's SIZE_FORMS), as every size message says them
SIZE_FORMS = "a whole number of bytes (4096) or a number with a binary unit K, M, G or T (512M, 1G, 1.5G)"
SIZES = [1, 2**32 - 1, 100, 3, 100, 0, 65536]


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["opt", *args])
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture
def actrace(tmp_path: Path) -> Path:
    p = tmp_path / "t.actrace"
    traceio.write_actrace(p, traceio.actrace_records(KEYS, SIZES, ops=[0, 1, 2, 3, 0, 0, 1]),
                          seed=99, recordcount=5, workload="workloada")
    return p


@pytest.fixture
def oracle(tmp_path: Path) -> Path:
    p = tmp_path / "t.oracleGeneral.bin"
    traceio.write_oracle(p, traceio.oracle_records(KEYS, SIZES))
    return p


def test_actrace_read_back_exactly(actrace: Path) -> None:
    assert actrace.stat().st_size == 128 + 16 * len(KEYS)
    with core.Trace.open(actrace) as t:
        assert t.format == "actrace" and t.requests == len(KEYS)
        assert t.header() == {"seed": 99, "recordcount": 5, "workload": "workloada"}
        assert [t.record(i) for i in range(t.requests)] == list(zip(KEYS, SIZES))
        assert [t.op(i) for i in range(t.requests)] == [0, 1, 2, 3, 0, 0, 1]
        with pytest.raises(IndexError, match="request 7 out of range 0..6"):
            t.record(7)


def test_oracle_read_back_exactly(oracle: Path) -> None:
    assert oracle.stat().st_size == 24 * len(KEYS)
    with core.Trace.open(oracle) as t:
        assert t.format == "oraclegeneral" and t.requests == len(KEYS)
        assert [t.record(i) for i in range(t.requests)] == list(zip(KEYS, SIZES))
        assert [t.op(i) for i in range(t.requests)] == [0] * 7      # no op field: all reads
    assert traceio.next_access(KEYS).tolist() == [3, -1, 4, -1, -1, -1, -1]


def test_both_formats_give_the_same_report(tmp_path: Path, oracle: Path) -> None:
    # oracleGeneral carries no op: every request is a read; the same requests as ACTRACE reads
    reads = tmp_path / "reads.actrace"
    traceio.write_actrace(reads, traceio.actrace_records(KEYS, SIZES, ops=0))
    reports = []
    for path in (reads, oracle):
        code, out, err = cli(str(path), "-c", "1,2", "-b", "200,5G")
        assert code == 0, err
        r = json.loads(out)
        reports.append({k: r[k] for k in ("requests", "scored_reads", "scored_writes", "distinct_keys",
                                          "objects", "bytes")})
    assert reports[0] == reports[1]
    r = reports[0]
    assert (r["distinct_keys"], r["scored_reads"], r["scored_writes"]) == (5, 7, 0)
    assert [o["opt_bypass"]["hits"] for o in r["objects"]] == [1, 2]
    assert [o["opt_demand"]["hits"] for o in r["objects"]] == [0, 2]   # demand: every key comes in
    assert [o["lru"]["hits"] for o in r["objects"]] == [0, 1]
    # 200 bytes: key 42 (100 bytes) fits, key 0 (1 byte) too
    assert [b["size_belady"]["hits"] for b in r["bytes"]] == [2, 2]
    assert [b["pfoo_l"]["hits"] for b in r["bytes"]] == [2, 2]


def test_actrace_ops_are_honoured(actrace: Path) -> None:
    # read 0, update MAX, insert 42, rmw 0, read 42, read 7, update 2^63: 4 scored reads
    code, out, err = cli(str(actrace), "-c", "1,2", "-b", "200,5G")
    assert code == 0, err
    r = json.loads(out)
    assert (r["requests"], r["scored_reads"], r["scored_writes"], r["cold_misses"]) == (7, 4, 3, 2)
    # capacity 1: the update of MAX must evict 0, the insert of 42 evicts MAX: nothing hits;
    # capacity 2: 0 and 42 stay (MAX is dead after its update): the rmw and the read of 42 hit
    assert [o["opt_bypass"]["hits"] for o in r["objects"]] == [0, 2]
    assert [o["opt_demand"]["hits"] for o in r["objects"]] == [0, 2]
    assert r["objects"][1]["opt_bypass"] == {"hits": 2, "misses": 2, "hit_rate": 0.5}
    # LRU at 2: the insert of 42 evicts 0 (MAX more recent): only the read of 42 hits
    assert [o["lru"]["hits"] for o in r["objects"]] == [0, 1]
    # 200 bytes: MAX (2^32 - 1 bytes) does not fit and is written around; 0 and 42 hit
    assert [b["size_belady"]["hits"] for b in r["bytes"]] == [2, 2]
    assert [b["pfoo_l"]["hits"] for b in r["bytes"]] == [2, 2]


def test_forced_format(actrace: Path, oracle: Path) -> None:
    code, out, _ = cli(str(actrace), "-c", "1", "--format", "actrace")
    assert code == 0 and json.loads(out)["format"] == "actrace"
    # an oracleGeneral file read as ACTRACE has no magic
    code, _, err = cli(str(oracle), "-c", "1", "--format", "actrace")
    assert code == 2
    assert err.strip() == f'acbench opt: error: {oracle}: bad magic: expected "ACTRACE1"'
    # 16*7 + 128 = 240 bytes is a multiple of 24, but its "records" are no oracleGeneral records
    code, out, err = cli(str(actrace), "-c", "1", "--format", "oraclegeneral")
    assert (code, out) == (2, "")
    assert err.startswith(f"acbench opt: error: {actrace}: not an oracleGeneral trace: record 0 has "
                          "next_access_vtime ")


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_bad_files(tmp_path: Path, actrace: Path) -> None:
    good = actrace.read_bytes()
    cases = {
        "bad magic": (b"ACTRACE2" + good[8:] + b"\0" * 8, "auto",
                      "{p}: unknown format: no \"ACTRACE1\" magic and 248 bytes is not a multiple of the 24-byte "
                      "oracleGeneral record (use --format to force one)"),
        "bad magic forced": (b"XXXXXXXX" + good[8:], "actrace", '{p}: bad magic: expected "ACTRACE1"'),
        "truncated records": (good[:-8], "auto",
                              "{p}: truncated: header says 7 requests (240 bytes), file has 232 bytes"),
        "truncated header": (good[:100], "actrace",
                             "{p}: truncated ACTRACE header: file has 100 bytes, the header needs 128"),
        "header size": (good[:12] + (64).to_bytes(4, "little") + good[16:], "auto",
                        "{p}: wrong header_size 64 (expected 128)"),
        "version": (good[:8] + (2).to_bytes(4, "little") + good[12:], "auto",
                    "{p}: unsupported ACTRACE version 2 (expected 1)"),
        "extra bytes": (good + b"\0" * 16, "auto",
                        "{p}: header says 7 requests but the file has 128 bytes of records (16 bytes each)"),
        "oracle truncated": (b"\0" * 50, "oraclegeneral",
                             "{p}: truncated oracleGeneral trace: 50 bytes is not a multiple of the 24-byte record"),
        # 48 bytes of text: a multiple of 24, but no next-request index makes sense
        "text": (b"this is a text file of exactly forty-eight byte\n", "auto",
                 "{p}: not an oracleGeneral trace: record 0 has next_access_vtime 7286936824556383337, accepted: "
                 "-1 (no next request) or the index of a later request (1..1)"),
        "next access backwards": (b"\0" * 16 + (0).to_bytes(8, "little", signed=True) + b"\0" * 16
                                  + (-1).to_bytes(8, "little", signed=True), "auto",
                                  "{p}: not an oracleGeneral trace: record 0 has next_access_vtime 0, accepted: -1 "
                                  "(no next request) or the index of a later request (1..1)"),
    }
    for name, (data, fmt, msg) in cases.items():
        p = write(tmp_path / name.replace(" ", "_"), data)
        code, out, err = cli(p, "-c", "1", "--format", fmt)
        assert (code, out) == (2, ""), name
        assert err.strip() == "acbench opt: error: " + msg.format(p=p), name
    missing = str(tmp_path / "nope")
    code, _, err = cli(missing, "-c", "1")
    assert err.strip() == f"acbench opt: error: {missing}: cannot open: No such file or directory"


def test_empty_oracle_trace(tmp_path: Path) -> None:
    code, out, _ = cli(write(tmp_path / "empty", b""), "-c", "5")
    assert code == 0
    r = json.loads(out)
    assert r["requests"] == 0 and r["objects"][0]["opt_bypass"] == {"hits": 0, "misses": 0, "hit_rate": 0.0}


@pytest.mark.parametrize("args,msg", [
    (["-c", "0"], "capacity must be at least 1, got '0' in --capacity"),
    (["-c", "10,0"], "capacity must be at least 1, got '0' in --capacity"),
    (["-c", "abc"], "invalid capacity 'abc' in --capacity: expected whole numbers of objects separated by "
                    "commas, e.g. 1000,10000"),
    (["-c", "1.5"], "invalid capacity '1.5' in --capacity: expected whole numbers of objects separated by "
                    "commas, e.g. 1000,10000"),
    (["-c", "-3"], "invalid capacity '-3' in --capacity: expected whole numbers of objects separated by "
                   "commas, e.g. 1000,10000"),
    (["-b", "0"], "capacity must be at least 1, got '0' in --bytes"),
    (["-b", "12Q"], f"invalid capacity in --bytes '12Q': expected {SIZE_FORMS}"),
    (["-b", "1M,512MB"], f"invalid capacity in --bytes '512MB': expected {SIZE_FORMS}"),
    (["-b", "0.1K"], f"invalid capacity in --bytes '0.1K' (a fraction of a byte): expected {SIZE_FORMS}"),
    (["-b", "16777216T"], "invalid capacity in --bytes '16777216T' (too large: more than 2^64 - 1 bytes): "
                          f"expected {SIZE_FORMS}"),
    (["-c", "1", "--max-memory", "lots"], f"invalid --max-memory 'lots': expected {SIZE_FORMS}"),
    (["-c", "1", "--max-memory", "1.5"], f"invalid --max-memory '1.5' (a fraction of a byte): expected {SIZE_FORMS}"),
])
def test_bad_capacities(actrace: Path, args: list[str], msg: str) -> None:
    code, out, err = cli(str(actrace), *args)
    assert (code, out) == (2, "")
    assert err.strip() == f"acbench opt: error: {msg}"


def test_nothing_requested(actrace: Path) -> None:
    code, _, err = cli(str(actrace))
    assert code == 2
    assert err.strip() == "acbench opt: error: nothing to compute: give --capacity (objects) and/or --bytes (bytes)"


def test_memory_limit_error(actrace: Path) -> None:
    code, out, err = cli(str(actrace), "-c", "2", "--max-memory", "100")
    assert (code, out) == (1, "")
    # 7 requests: 28 bytes of next-use array + 2 op bitmaps of 8 bytes + 2048 table slots
    # (the minimum) of 12 bytes
    assert err.strip() == ("acbench opt: error: the next-use pass over 7 requests needs 24620 bytes (0.0 MiB) "
                           "but the memory limit is 100 bytes (0.0 MiB) (limit from --max-memory)")
    # the stated size is enough (later phases need less)
    code, out, err = cli(str(actrace), "-c", "2", "--max-memory", "24620")
    assert code == 0, err
    code, out, err = cli(str(actrace), "-c", "2", "--max-memory", "24619")
    assert code == 1 and "needs 24620 bytes" in err
