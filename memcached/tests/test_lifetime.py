"""An item's lifetime survives spilling: its TTL is kept, it expires while on
disk like in RAM, and flush_all reaches spilled items too."""
from __future__ import annotations

import time

from mc_helpers import MiB


def val(i: int) -> bytes:
    return (b"%07d|" % i) * 128


def fill(raw, prefix: str, n: int, exptime: int = 0) -> None:
    for s in range(0, n, 200):
        raw.send(b"".join(b"set %s%d 0 %d 1024\r\n%s\r\n" % (prefix.encode(), i, exptime, val(i))
                          for i in range(s, min(n, s + 200))))
        for _ in range(s, min(n, s + 200)):
            assert raw.line() == b"STORED"


def test_ttl_expiry_and_flush_of_spilled_items(server):
    srv = server(mem=16, ac={"ac_compact_fill": "0"})
    raw = srv.raw()
    t0 = time.monotonic()
    fill(raw, "short", 3000, exptime=2)
    fill(raw, "long", 3000, exptime=1000)
    fill(raw, "keep", 3000)
    fill(raw, "filler", 24 * MiB // 1024)          # pushes all of the above out
    resident = raw.resident_keys()
    spilled = {p: [i for i in range(3000) if f"{p}{i}" not in resident] for p in ("short", "long", "keep")}
    assert all(len(v) > 2500 for v in spilled.values()), {p: len(v) for p, v in spilled.items()}

    # the TTL came along: mg t shows what is left of 1000 s
    for i in spilled["long"][:50]:
        line, data = raw.mg(f"long{i}", "v t")
        assert data == val(i)
        ttl = int(line.split()[2][1:])
        assert 990 <= ttl <= 1000, line

    # expired while spilled: a miss, never the old value
    time.sleep(max(0.0, t0 + 3.5 - time.monotonic()))
    before = srv.ac()
    for i in spilled["short"][:500]:
        assert raw.get(f"short{i}") == ({}, None), f"short{i} outlived its exptime on disk"
    st = srv.ac()
    assert st["misses"] - before["misses"] == 500
    assert st["mem_hits"] == before["mem_hits"] and st["disk_hits"] == before["disk_hits"]
    for i in spilled["keep"][:200]:
        assert raw.get(f"keep{i}")[0][f"keep{i}"][0] == val(i)

    # flush_all invalidates spilled items as well (their CAS is kept, so they are older)
    assert raw.call(b"flush_all") == b"OK"
    time.sleep(1.1)            # memcached's clock has one-second steps
    fill(raw, "after", 10)
    for p in ("long", "keep"):
        for i in spilled[p][200:400]:
            assert raw.get(f"{p}{i}") == ({}, None), f"{p}{i} survived flush_all on disk"
    for i in range(10):
        assert raw.get(f"after{i}")[0][f"after{i}"][0] == val(i)
    assert srv.ac()["lost_items"] == 0
