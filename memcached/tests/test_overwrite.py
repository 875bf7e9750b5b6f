"""A plain set of a spilled key replaces it without reading the old record
(H-Store overwrites an evicted tuple without unevicting it); the old record is
dropped by the key's fingerprint (overwritten_unread). A set with a CAS, add,
replace, append and the rest still read it (they need the old value, its CAS
or whether it exists). The new value is what comes back; after a delete the key
is gone (the old record does not come back)."""
from __future__ import annotations

import pytest

VSIZE = 1000


def val(k: str, v: int) -> bytes:
    return (b"%s:%d|" % (k.encode(), v)) * (VSIZE // 16)


def reads(st) -> int:
    """Reads of the spill store of either tier, by what the server counts."""
    return st["record_reads"] + st["block_reads"] + int(st.get("cold_record_reads", 0))


@pytest.mark.parametrize("policy", ["lru", "alru", "sieve", "s3fifo", "wtinylfu", "logging"])
def test_plain_set_of_a_spilled_key_reads_nothing(server, policy):
    srv = server(mem=8, threads=1, ac={"ac_policy": policy})
    cli = srv.client()
    raw = srv.raw()
    keys = [f"o{i:05d}" for i in range(12000)]      # ~12 MB for 8 MB
    for s in range(0, len(keys), 200):
        assert not cli.set_many({k: val(k, 0) for k in keys[s:s + 200]}, noreply=False)
    srv.settled()
    resident = raw.resident_keys()
    spilled = [k for k in keys if k not in resident][:50]
    assert len(spilled) == 50
    st0 = srv.ac()
    for k in spilled:
        assert raw.store("set", k, val(k, 1)) == b"STORED"
    st1 = srv.ac()
    assert reads(st1) == reads(st0), "a plain set read a spilled record"
    assert st1["fetched_items"] == st0["fetched_items"]
    assert st1["overwritten_unread"] - st0["overwritten_unread"] == 50
    # the new values come back; a deleted one stays deleted
    for k in spilled[:49]:
        assert cli.get(k) == (val(k, 1), 0)
    assert raw.call(f"delete {spilled[49]}".encode()) == b"DELETED"
    assert cli.get(spilled[49]) is None
    # a set with a CAS (binary protocol, meta) is a compare: it still reads
    k = next(k for k in keys if k not in resident and k not in spilled)
    st2 = srv.ac()
    assert raw.call(f"ms {k} 4 C1".encode() + b"\r\nnope") == b"EX"
    assert srv.ac()["fetched_items"] + srv.ac()["read_through_items"] > \
        st2["fetched_items"] + st2["read_through_items"]
    st = srv.ac()
    assert st["lost_items"] == 0 and st["refused_items"] == 0 and st["checksum_errors"] == 0
