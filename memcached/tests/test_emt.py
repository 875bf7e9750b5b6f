"""Tier emt: an EMT-style page cache (Meyer et al.) on our pager: a fixed cache
(ac_emt_cache), FIFO or sampled-LRU eviction, a low water level and an
eviction size, dynamic read-ahead, direct I/O, no compression, and page
colours from the hot/cold classifier with the hot pages pinned. The read-ahead
rule alone is tested in policies/tests/test_readahead.c; here the server: no
loss under a mixed load of every command and size (colours on and off), scans
that read ahead, pinned pages that survive scans, and the settings it refuses."""
from __future__ import annotations

import subprocess
import time

import pytest

from mc_helpers import BIN, MiB, run_in_process
from test_mixed_load import load_and_read_back

CAP = 16                     # MiB: the page cache
OVERCOMMIT = 4
REGION = 192


def emt(tmp_path, **extra) -> dict[str, str]:
    opts = {"ac_policy": "none", "ac_tier": "emt", "ac_emt_cache": f"{CAP}M",
            "ac_spill_dir": str(tmp_path / f"spill-{time.monotonic_ns()}")}
    opts.update(extra)
    return opts


FLAGS = ("-o", "no_lru_crawler,no_lru_maintainer")


@pytest.mark.parametrize("evict,colours", [("lru", 0), ("fifo", 0), ("lru", 1), ("fifo", 1)])
def test_mixed_load_pages_and_loses_nothing(server, tmp_path, evict, colours):
    """8 clients, every command, values 1 B..500 KiB, 4x the cache written, read-ahead on;
    with colours, the classifier pins half the cache's room while the pages move."""
    ac = emt(tmp_path, ac_emt_evict=evict, ac_emt_colours=colours,
             **({"ac_log_hot_fill": 0.5, "ac_log_round": 5000} if colours else {}))
    srv = server(mem=REGION, threads=4, ac=ac, extra=FLAGS)
    st, _ = load_and_read_back(srv, 8, OVERCOMMIT * CAP * MiB, 13)
    print(f"emt {evict}: fetches {st['uvmm_fetches']} evictions {st['uvmm_evictions']}"
          f" read ahead {st['uvmm_readahead_pages']} (used {st['uvmm_readahead_used']},"
          f" wasted {st['uvmm_readahead_wasted']})")
    assert st["uvmm_evict"] == evict and st["uvmm_compress"] == "none"
    assert st["uvmm_low_water_pages"] == 64 and st["uvmm_evict_pages"] == 64
    assert st["uvmm_readahead_min"] == 1 and st["uvmm_readahead_max"] == 32 and st["uvmm_readahead_streams"] == 1
    assert st["uvmm_cap_pages"] == CAP * MiB // 4096
    assert st["uvmm_resident_pages"] <= st["uvmm_cap_pages"] + 1, st
    assert st["uvmm_evictions"] > 2 * CAP * MiB // 4096 and st["uvmm_fetches"] > 1000, st
    assert st["uvmm_readahead_used"] + st["uvmm_readahead_wasted"] <= st["uvmm_readahead_pages"], st
    assert st["uvmm_read_errors"] == st["uvmm_write_errors"] == st["uvmm_checksum_errors"] == 0
    # 8 bytes a page, a 4-byte access stamp (lru) or ring slot (fifo), a read-ahead mark, a pin mark
    assert st["uvmm_book_bytes_per_page"] == 13 + colours
    if not colours:
        assert st["uvmm_pinned_pages"] == st["uvmm_pin_skips"] == st["uvmm_pin_overrides"] == 0
        assert "log_rounds" not in st
        return
    # the hot set is the pinned pages, within half the room beyond the watermarks (64 + 64 pages)
    budget = (st["uvmm_cap_pages"] - 128) // 2
    assert st["log_rounds"] >= 2 and 0 < st["log_hot_keys"] <= budget, st
    assert st["log_hot_budget"] == budget * 4096
    assert st["uvmm_pinned_pages"] == st["log_hot_keys"] and st["uvmm_pin_skips"] > 0, st


def test_scans_read_ahead(tmp_path):
    """Scans of 1000 consecutive records over 4x the cache: with read-ahead the
    pager reads pages before they are touched, most of them are used, and it
    fetches fewer pages on faults than without; with four windows (streams) a
    scan's window survives the hash chains' faults between its own and reads
    more ahead; every get is a hit either way."""
    out = {}
    for ra, streams in ((32, 1), (1, 1), (32, 4)):
        d = run_in_process(tmp_path, f"ac_policy=none,ac_tier=emt,ac_emt_cache=4M,ac_emt_readahead_max={ra},"
                           f"ac_emt_readahead_streams={streams},no_lru_crawler,no_lru_maintainer", "scanonly",
                           ops=60, records=16000, mem_mb=64, dist="uniform")
        r, ac = d["run"], d["server"]["anticache"]
        assert r["ops"]["scan"] == 60 and r["errors"]["total"] == 0
        assert r["reads"]["miss"] == 0 and r["reads"]["total"] == r["reads"]["scan_keys"] > 40000
        assert r["reads"]["hit"] == ac["mem_hits"] and r["reads"]["disk_hit"] == ac["disk_hits"]
        assert ac["uvmm_readahead_streams"] == (streams if ra > 1 else 0)
        out[ra if streams == 1 else "streams"] = ac
    on, off, streams4 = out[32], out[1], out["streams"]
    print(f"\nscans: read-ahead on: fetches {on['uvmm_fetches']} ahead {on['uvmm_readahead_pages']}"
          f" used {on['uvmm_readahead_used']} wasted {on['uvmm_readahead_wasted']};"
          f" off: fetches {off['uvmm_fetches']}")
    assert off["uvmm_readahead_pages"] == off["uvmm_readahead_faults"] == 0
    assert on["uvmm_readahead_pages"] > 1000 and on["uvmm_readahead_used"] > on["uvmm_readahead_pages"] // 2, on
    assert on["uvmm_fetches"] < off["uvmm_fetches"] * 3 // 4, (on, off)
    # longer windows: more pages per read-ahead, fewer fetches on faults
    assert (streams4["uvmm_readahead_pages"] / streams4["uvmm_readahead_faults"]
            > on["uvmm_readahead_pages"] / on["uvmm_readahead_faults"]), (streams4, on)
    assert streams4["uvmm_fetches"] < on["uvmm_fetches"], (streams4, on)


def test_colours_keep_hot_pages_through_scans(tmp_path):
    """Skewed reads with a scan of 1000 records every 500 operations, 20,000 records over an
    8 MiB cache (LRU): with colours the classifier pins the hot pages, which the scans cannot
    push out, so fewer reads wait for a page (disk hits) than without (measured here: 11-12 %
    fewer; FIFO 16 %, experiments/emt-colours.toml); every read is a hit either way."""
    out = {}
    for colours in (0, 1):
        d = run_in_process(tmp_path, f"ac_policy=none,ac_tier=emt,ac_emt_cache=8M,ac_emt_colours={colours},"
                           "ac_log_hot_fill=0.9,no_lru_crawler,no_lru_maintainer",
                           "hotscans", ops=100000, records=20000, mem_mb=64, warmup=50000)
        r, ac = d["run"], d["server"]["anticache"]
        assert r["errors"]["total"] == 0 and r["reads"]["miss"] == 0 and r["reads"]["scan_keys"] > 150000
        out[colours] = r["reads"]["disk_hit"], ac
    (plain, _), (pinned, ac) = out[0], out[1]
    print(f"\nhotscans: disk hits {plain} without colours, {pinned} with"
          f" ({ac['uvmm_pinned_pages']} pages pinned, {ac['log_rounds']} rounds)")
    assert ac["uvmm_pinned_pages"] == (2048 - 128) * 9 // 10 and ac["uvmm_pin_overrides"] == 0, ac
    assert pinned < plain * 0.95, (plain, pinned)


@pytest.mark.parametrize("opts,message", [
    ("ac_emt_readahead_min=64,ac_emt_readahead_max=8",
     "ac_emt_readahead_min (64) exceeds ac_emt_readahead_max (8); accepted: 1 <= ac_emt_readahead_min <= "
     "ac_emt_readahead_max <= 1024 pages"),
    ("ac_emt_evict=clock", 'ac_emt_evict must be'),
    ("ac_emt_readahead_max=2000", 'ac_emt_readahead_max must be'),
    ("ac_emt_readahead_streams=17", 'ac_emt_readahead_streams must be'),
    ("ac_uvmm_evict=lru", "ac_uvmm_evict is an option of tier uvmm; it has no effect with ac_policy=none,ac_tier=emt"),
    ("ac_emt_colours=2", 'ac_emt_colours must be'),
    ("ac_emt_colours=1,ac_log_offline=1",
     "ac_emt_colours=1 classifies pages online, round by round; ac_log_offline=1 (logging's offline"
     " classification) is not accepted with it: leave ac_log_offline=0"),
])
def test_bad_settings_are_refused(tmp_path, opts, message):
    r = subprocess.run([str(BIN), "-u", "root", "-m", "64", "-o",
                        f"ac_policy=none,ac_tier=emt,ac_emt_cache=4M,ac_spill_dir={tmp_path}/spill,{opts}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and message in r.stderr, r.stderr


def test_no_cache_size_and_no_cgroup_limit_is_refused(tmp_path):
    from mc_helpers import start_server
    from test_uvmm import own_memory_limit
    if own_memory_limit() is not None:
        pytest.skip("this test runs in a memory cgroup with a limit")
    ac = emt(tmp_path)
    del ac["ac_emt_cache"]
    with pytest.raises(RuntimeError) as e:
        start_server(tmp_path, mem=64, ac=ac, extra=FLAGS)
    assert "has no memory limit to page under; give the resident memory with ac_uvmm_memory=SIZE" \
           " (tier emt: ac_emt_cache=SIZE)" in str(e.value)
