"""A damaged spill file gives an error, never different data.

blocks.dat holds whole records (4-byte CRC-32C, 4-byte length, header, key,
value); flipping bytes inside written blocks must make every affected lookup
answer `SERVER_ERROR anti-caching: a spilled item failed its checksum` (the
entry is kept), and an unreadable file `SERVER_ERROR anti-caching: reading a
spilled item failed`."""
from __future__ import annotations

import os
import struct
from collections import Counter

import pytest

CRC_ERR = b"SERVER_ERROR anti-caching: a spilled item failed its checksum"
READ_ERR = b"SERVER_ERROR anti-caching: reading a spilled item failed"
N = 20000          # 1 KiB values: ~21 MiB into -m 16, about ten written blocks


def val(i: int) -> bytes:
    return (b"%07d|" % i) * 128


def store_all(srv):
    """k0..k{N-1} stored (value val(i), flags i), pipelined 200 at a time; the raw client."""
    raw = srv.raw()
    for s in range(0, N, 200):
        raw.send(b"".join(b"set k%d %d 0 %d\r\n%s\r\n" % (i, i, len(val(i)), val(i))
                          for i in range(s, min(N, s + 200))))
        for i in range(s, min(N, s + 200)):
            assert raw.line() == b"STORED"
    return raw


def fill_and_find_spilled(srv):
    raw = store_all(srv)
    st = srv.settled()
    assert st["blocks_written"] >= 5, st
    resident = raw.resident_keys()
    spilled = [i for i in range(N) if f"k{i}" not in resident]
    assert len(spilled) == st["stub_items"] > 0
    return raw, spilled


def flip_bytes(path, start: int, end: int, step: int) -> int:
    n = 0
    with open(path, "r+b") as f:
        for off in range(start, end, step):
            f.seek(off)
            b = f.read(1)
            if not b:
                break
            f.seek(off)
            f.write(bytes([b[0] ^ 0x5A]))
            n += 1
    return n


def read_back(raw, spilled: list[int]) -> tuple[Counter, list[int]]:
    """Gets every spilled key: each answer is its exact value and flags or the checksum
    error, never other data, never a miss. Returns the counts and the keys that erred."""
    answers: Counter = Counter()
    bad = []
    for i in spilled:
        vals, err = raw.get(f"k{i}")
        if err is not None:
            assert err == CRC_ERR, (i, err)
            answers["error"] += 1
            bad.append(i)
        else:
            assert f"k{i}" in vals, f"k{i}: a miss for a stored key"
            assert vals[f"k{i}"][:2] == (val(i), i), f"k{i}: DIFFERENT DATA returned from a damaged file"
            answers["ok"] += 1
    return answers, bad


def test_corrupted_blocks_give_errors_not_data(server):
    srv = server(mem=16)
    raw, spilled = fill_and_find_spilled(srv)
    blocks = srv.spill_dir / "blocks.dat"
    size = blocks.stat().st_size
    assert size >= 2 << 20
    # one byte in every 4 KiB of the first MiB (the first written block)
    assert flip_bytes(blocks, 1234, min(size, 1 << 20), 4096) == 256

    answers, bad = read_back(raw, spilled)
    print(f"\ncorruption: {len(spilled)} spilled keys read: {dict(answers)}")
    assert answers["error"] >= 1
    st = srv.ac()
    assert st["checksum_errors"] >= answers["error"]
    assert st["lost_items"] == 0

    # the entry is kept: asking again gives the same error, over every access command
    i = bad[0]
    assert raw.get(f"k{i}")[1] == CRC_ERR
    assert raw.get(f"k{i}", cmd="gets")[1] == CRC_ERR
    assert raw.get(f"k{i}", cmd="gat", exptime=0)[1] == CRC_ERR
    assert raw.mg(f"k{i}", "v")[0] == CRC_ERR
    assert raw.mg(f"k{i}", "")[0] == CRC_ERR

    # a multi-get holding a bad key: correct values or the error line, never other data
    good = [j for j in range(N - 5, N)]
    vals, err = raw.get(f"k{good[0]}", f"k{bad[1]}", f"k{good[1]}")
    assert err == CRC_ERR or vals == {}, (vals, err)
    for k, (v, f, _) in vals.items():
        assert (v, f) == (val(int(k[1:])), int(k[1:]))
    # pipelined requests: each gets its own answer, in order
    raw.send(f"get k{good[2]}\r\nget k{bad[2]}\r\nmg k{bad[2]} v\r\nget k{good[3]}\r\n".encode())
    v1, e1 = raw.read_values()
    assert e1 is None and v1[f"k{good[2]}"][0] == val(good[2])
    assert raw.read_values() == ({}, CRC_ERR)
    assert raw.line() == CRC_ERR
    v4, e4 = raw.read_values()
    assert e4 is None and v4[f"k{good[3]}"][0] == val(good[3])

    # a set replaces the damaged entry for good
    st0 = srv.ac()
    assert raw.store("set", f"k{bad[3]}", b"fresh", flags=7) == b"STORED"
    vals, err = raw.get(f"k{bad[3]}")
    assert err is None and vals[f"k{bad[3]}"][:2] == (b"fresh", 7)
    st = srv.ac()
    # its entry is gone; whatever was spilled meanwhile (the new value's class
    # may borrow a page, repaid by moving a page of spilled items) is counted
    spilled = st["spilled_items"] - st0["spilled_items"]
    assert st["stub_items"] == st0["stub_items"] - 1 + spilled
    assert st["lost_items"] == 0


# the file each spilling tier keeps its records in
DATA_FILE = {"blocks": "blocks.dat", "tuples": "cold.dat"}


def test_every_pair_answers_damaged_records_with_errors(server, spill_pair_io):
    """Every (policy, tier) pair (make test: one per tier, conftest.spill_pair_io): with one
    byte in every 4 KiB of the first MiB of its data file flipped, each spilled key reads back byte-exact or answers the
    checksum error (never other data, never a miss), the damaged record stays
    (the same error again), a set replaces it, and nothing is lost."""
    srv = server(mem=16, ac=spill_pair_io)
    raw = store_all(srv)
    st = srv.settled()
    resident = raw.resident_keys()
    spilled = [i for i in range(N) if f"k{i}" not in resident]
    assert len(spilled) == st["stub_items"] > 5000, st
    data = srv.spill_dir / DATA_FILE[st["tier"]]
    assert data.stat().st_size >= 2 << 20
    assert flip_bytes(data, 1234, 1 << 20, 4096) == 256

    answers, bad = read_back(raw, spilled)
    assert answers["error"] >= 1, dict(answers)
    assert raw.get(f"k{bad[0]}")[1] == CRC_ERR           # kept: the same error again
    assert raw.store("set", f"k{bad[1]}", b"fresh", flags=7) == b"STORED"
    assert raw.get(f"k{bad[1]}")[0][f"k{bad[1]}"][:2] == (b"fresh", 7)
    st = srv.ac()
    assert st["checksum_errors"] >= answers["error"] and st["lost_items"] == 0, st


def test_unreadable_spill_file_gives_read_errors(server):
    """blocks.dat cut short (written blocks gone): reads fail with the I/O error
    line, io_errors counts them, and the entries are kept."""
    srv = server(mem=16, ac={"ac_compact_fill": "0"})
    raw, spilled = fill_and_find_spilled(srv)
    os.truncate(srv.spill_dir / "blocks.dat", 0)
    answers = Counter()
    for i in spilled[:: max(1, len(spilled) // 400)]:
        vals, err = raw.get(f"k{i}")
        if err is not None:
            assert err == READ_ERR, (i, err)
            answers["error"] += 1
        else:
            assert vals[f"k{i}"][:2] == (val(i), i), f"k{i}: different data"
            answers["ok"] += 1
    assert answers["error"] >= 1, answers
    st = srv.ac()
    assert st["io_errors"] >= answers["error"]
    assert raw.get(f"k{spilled[0]}")[1] == READ_ERR
    assert raw.mg(f"k{spilled[0]}", "v")[0] == READ_ERR
    assert st["lost_items"] == 0


def test_commands_on_unreadable_spilled_item(server):
    """Commands other than get on a spilled item whose record fails its checksum.
    The key exists, so none may answer as if it were absent (NOT_FOUND, a stored
    `add`, a binary 'Not found'), and a `delete` must not leave it behind:
    either DELETED and gone, or an error and still there."""
    srv = server(mem=16, ac={"ac_compact_fill": "0"})
    raw, spilled = fill_and_find_spilled(srv)
    blocks = srv.spill_dir / "blocks.dat"
    # damage every record of the first 2 MiB (one flip per 512 bytes)
    flip_bytes(blocks, 300, 2 << 20, 512)
    bad = [i for i in spilled[:3000] if raw.get(f"k{i}")[1] == CRC_ERR]
    assert len(bad) >= 8, len(bad)
    braw = srv.raw()
    problems = []

    r = raw.call(f"delete k{bad[0]}".encode())
    after = raw.get(f"k{bad[0]}")
    if not ((r == b"DELETED" and after == ({}, None)) or (r.startswith(b"SERVER_ERROR") and after[1] == CRC_ERR)):
        problems.append(f"delete of a damaged spilled key answered {r!r}, then get gave {after!r}")
    r = raw.call(f"touch k{bad[1]} 0".encode())
    if r != b"TOUCHED" and not r.startswith(b"SERVER_ERROR"):
        problems.append(f"touch answered {r!r}")
    r = raw.call(f"incr k{bad[2]} 1".encode())
    if not r.startswith(b"SERVER_ERROR") and not r.startswith(b"CLIENT_ERROR"):
        problems.append(f"incr answered {r!r}")
    r = raw.store("add", f"k{bad[3]}", b"added")
    if r not in (b"NOT_STORED",) and not r.startswith(b"SERVER_ERROR"):
        problems.append(f"add of an existing (damaged) key answered {r!r}")
    r = raw.store("append", f"k{bad[4]}", b"x")
    if r != b"NOT_STORED" and not r.startswith(b"SERVER_ERROR"):
        problems.append(f"append answered {r!r}")
    # the binary protocol: every command on the damaged key answers status
    # 0x82 with the error's text, the quiet ones too (a quiet miss is silent,
    # an error is not); each leaves the record in place for the next
    key = f"k{bad[5]}"
    incr = struct.pack(">QQI", 1, 0, 0)
    touch = struct.pack(">I", 0)
    for name, opcode, extras, value in [
            ("GET", 0x00, b"", b""), ("GETK", 0x0C, b"", b""), ("GAT", 0x1D, touch, b""),
            ("GATK", 0x23, touch, b""), ("TOUCH", 0x1C, touch, b""),
            ("INCREMENT", 0x05, incr, b""), ("APPEND", 0x0E, b"", b"x"),
            ("DELETE", 0x04, b"", b"")]:
        status, _, body = braw.binary(opcode, key, extras, value)
        if (status, body) != (0x82, CRC_ERR):
            problems.append(f"binary {name} answered status {status:#x} {body[:70]!r}")
    for name, opcode, extras in [("GETQ", 0x09, b""), ("GETKQ", 0x0D, b""), ("GATQ", 0x1E, touch),
                                 ("DELETEQ", 0x14, b"")]:
        got = braw.binary_quiet(opcode, key, extras)
        if [(s, b) for _op, s, b in got] != [(0x82, CRC_ERR)]:
            problems.append(f"binary {name} answered {got!r}")
    assert raw.get(key)[1] == CRC_ERR
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_damaged_compressed_records_give_errors_not_data(server, codec):
    """Compressed records (ac_compress; these values shrink ~20x): with one byte in every 4 KiB
    of the data file flipped, each spilled key reads back byte-exact (through the codec) or
    answers the checksum error, never other data, never a miss; nothing is lost."""
    # small blocks: the compressed records of ~5000 spilled keys fill several written ones
    srv = server(mem=16, ac={"ac_compress": codec, "ac_block_size": "64K"})
    raw = store_all(srv)
    st = srv.settled()
    assert st["compression"] == codec and st["compress_out_bytes"] * 5 < st["compress_in_bytes"]
    resident = raw.resident_keys()
    spilled = [i for i in range(N) if f"k{i}" not in resident]
    assert len(spilled) == st["stub_items"] > 0
    data = srv.spill_dir / "blocks.dat"
    size = data.stat().st_size
    assert flip_bytes(data, 1234, size, 4096) >= 1
    answers, bad = read_back(raw, spilled)
    print(f"\n{codec} corruption: {len(spilled)} spilled keys read: {dict(answers)}")
    assert answers["error"] >= 1 and answers["ok"] >= 1
    st = srv.ac()
    assert st["checksum_errors"] >= answers["error"] and st["lost_items"] == 0
    assert raw.get(f"k{bad[0]}")[1] == CRC_ERR          # the damaged record stays
