"""ac_policy=none (and no -o at all) is stock memcached: filling 4x memory evicts,
so some keys miss; `stats anticache` reports policy none, memcached's own hit and
miss counters, nothing spilled and the dropped items as lost_items; no spill
directory is made."""
from __future__ import annotations

import glob

import pytest

from mc_helpers import MiB

VSIZE = 1024


@pytest.mark.parametrize("ac", [{"ac_policy": "none"}, None])
def test_policy_none_evicts(server, ac):
    before = set(glob.glob("/var/tmp/memcached-ac.*"))
    srv = server(mem=16, ac=ac) if ac else server(mem=16, no_ac_options=True)
    assert ("-o" in srv.argv) == bool(ac)
    assert srv.spill_dir is None
    cli = srv.client()
    n = 4 * 16 * MiB // VSIZE
    val = lambda i: (b"%07d|" % i) * (VSIZE // 8)
    for s in range(0, n, 256):
        assert not cli.set_many({f"n{i}": val(i) for i in range(s, min(n, s + 256))}, noreply=False)
    hits = misses = 0
    for s in range(0, n, 200):
        keys = [f"n{i}" for i in range(s, min(n, s + 200))]
        got = cli.get_many(keys)
        for k in keys:
            if k in got:
                assert got[k] == (val(int(k[1:])), 0)
                hits += 1
            else:
                misses += 1
    assert misses > 0 and hits > 0
    assert got, "the newest keys should still be there"
    st = srv.ac()
    stats = srv.stats(None)
    assert st["policy"] == "none"
    assert st["mem_hits"] == hits and st["misses"] == misses and st["disk_hits"] == 0
    assert st["spilled_items"] == st["stub_items"] == 0
    # the stock cache drops items by design: lost_items counts them (memcached's evictions)
    assert st["lost_items"] == int(stats["evictions"]) > 0
    assert int(stats["get_hits"]) == hits and int(stats["get_misses"]) == misses
    assert "spill_dir" not in st
    assert set(glob.glob("/var/tmp/memcached-ac.*")) == before
