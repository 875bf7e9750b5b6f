"""Policy `logging` (Siberia) end to end: a read of a cold item is served from
the tuple store without moving it into RAM (the resident set, the cold store
and the hot set stay as they were; read_through_items and disk_hits count it);
a key read often becomes hot at the next classification and migrates in; the
Bloom filter answers absent keys without touching the index; deletes and
updates of cold keys; bad option values are refused with what is accepted;
offline classification (ac_log_offline=1, in-process driver): a lossless
warm-up without rounds, one offline round before the run, nothing lost."""
from __future__ import annotations

import random
import subprocess
import time

import pytest

from mc_helpers import BIN, run_in_process, value_for

N_KEYS = 30000


def fill(raw, rng):
    vals = {}
    for i in range(N_KEYS):
        k = f"user{i:06d}"
        vals[k] = value_for(rng, k, 0, 1000)
        assert raw.store("set", k, vals[k], flags=i) == b"STORED"
    return vals


def wait_for(pred, what, limit=60.0):
    """Polls a server counter; the limit only bounds a hang, it asserts no speed."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def test_cold_reads_stay_cold(server):
    # no classification round at all: the hot set cannot change
    srv = server(mem=16, threads=2, ac={"ac_policy": "logging", "ac_log_round": "1000000000"})
    raw = srv.raw()
    vals = fill(raw, random.Random(11))
    st0 = srv.ac()
    assert st0["policy"] == "logging" and st0["lost_items"] == 0
    assert st0["stub_items"] == st0["cold_records"] > 0
    assert st0["evicted_max"] == 0 and st0["log_rounds"] == 0
    resident0 = raw.resident_keys()
    assert len(resident0) + st0["cold_records"] == N_KEYS
    cold = sorted(set(vals) - resident0)[:200]
    assert len(cold) == 200
    for rep in range(3):
        for k in cold:
            got, err = raw.get(k)
            assert err is None and got[k][:2] == (vals[k], int(k[4:])), k
    st1 = srv.ac()
    assert raw.resident_keys() == resident0
    assert st1["cold_records"] == st0["cold_records"]
    assert st1["read_through_items"] - st0["read_through_items"] == 600
    assert st1["disk_hits"] - st0["disk_hits"] == 600
    assert st1["fetched_items"] == st0["fetched_items"]
    assert st1["spilled_items"] == st0["spilled_items"]
    assert st1["log_hot_keys"] == st0["log_hot_keys"] == 0
    # absent keys: the Bloom filter rules nearly all out without reading the index
    before = srv.ac()
    for i in range(2000):
        assert raw.get(f"absent{i}") == ({}, None)
    after = srv.ac()
    negatives = after["bloom_negatives"] - before["bloom_negatives"]
    fps = after["bloom_false_positives"] - before["bloom_false_positives"]
    assert negatives + fps == 2000 and fps <= 60, (negatives, fps)
    # a delete of a cold key removes its record; an update brings it into RAM
    assert raw.call(f"delete {cold[0]}".encode()) == b"DELETED"
    assert raw.get(cold[0]) == ({}, None)
    assert raw.store("set", cold[1], b"new value", flags=7) == b"STORED"
    assert cold[1] in raw.resident_keys()
    assert raw.get(cold[1])[0][cold[1]][:2] == (b"new value", 7)
    # both records are gone; whatever was spilled meanwhile (the new value's
    # class may borrow a page, repaid by moving a page of items out, in the
    # background: the counts are read once that is over) is counted
    wait_for(lambda: srv.ac()["budget_settled"] == 1, "the borrowed page repaid")
    st2 = srv.ac()
    assert st2["cold_records"] == st1["cold_records"] - 2 + (st2["spilled_items"] - after["spilled_items"])
    assert st2["lost_items"] == 0 and st2["checksum_errors"] == 0 and st2["io_errors"] == 0


@pytest.mark.parametrize("engine", ["sync", "uring"])
def test_hot_key_migrates_in(server, engine):
    # gets read in the worker (no parked fetchers): every read ahead is the migration's
    srv = server(mem=16, threads=2, ac={"ac_policy": "logging", "ac_log_round": "100ms",
                                         "ac_log_slice": "100", "ac_io": engine, "ac_park_threads": "0"})
    raw = srv.raw()
    vals = fill(raw, random.Random(12))
    rounds = srv.ac()["log_rounds"]
    wait_for(lambda: srv.ac()["log_rounds"] >= rounds + 2, "two classification rounds")
    resident = raw.resident_keys()
    k = sorted(set(vals) - resident)[0]
    st0 = srv.ac()
    for _ in range(300):
        got, err = raw.get(k)
        assert err is None and got[k][0] == vals[k]
    # reading it did not bring it in; the next rounds classify it hot and migrate it
    mid = srv.ac()
    r0 = mid["log_rounds"]
    wait_for(lambda: srv.ac()["log_rounds"] >= r0 + 2, "two more rounds")
    assert k in raw.resident_keys()
    st1 = srv.ac()
    assert st1["log_migrated_in"] > st0["log_migrated_in"]
    # a migration reads the record once: the bytes read to learn its key are the record's under the
    # key's lock when the tier says the place was not taken again since (nothing moves it here)
    assert st1["migrate_reads_saved"] - st0["migrate_reads_saved"] >= st1["log_migrated_in"] - st0["log_migrated_in"]
    # and those reads went out together ahead of the migration (ac_migrate_in's batch), each used
    # once it checked out under the key's lock
    d = {k: st1[k] - st0[k] for k in ("migrate_prefetch_reads", "migrate_prefetch_used", "log_migrated_in")}
    assert d["migrate_prefetch_used"] >= d["log_migrated_in"] and d["migrate_prefetch_reads"] >= d["migrate_prefetch_used"], d
    assert st1["prefetch_reads"] == 0        # the requests' own (parked gets are off here)
    # no request read meanwhile: every record the migration brought in was counted as read
    late = st1["fetched_bytes"] - mid["fetched_bytes"]
    assert st1["record_read_bytes"] - mid["record_read_bytes"] >= late, (late, mid, st1)
    assert 0 < st1["log_hot_keys"] and st1["log_hot_bytes"] <= st1["log_hot_budget"]
    assert st1["metadata_bytes"] >= st1["log_estimate_bytes"] + st1["bloom_bytes"] + st1["log_ring_bytes"]
    got, err = raw.get(k)
    assert err is None and got[k][:2] == (vals[k], int(k[4:]))
    # every key still readable byte-exact
    bad = [key for key in vals if raw.get(key)[0].get(key, (None,))[0] != vals[key]]
    assert bad == []
    assert srv.ac()["lost_items"] == 0


def test_bad_options_refused(tmp_path):
    cases = {
        "ac_log_alpha=0": "ac_log_alpha must be a number in (0, 1]",
        "ac_log_alpha=1.5": "ac_log_alpha must be a number in (0, 1]",
        "ac_log_sample=0": "ac_log_sample must be a fraction in (0, 1]",
        "ac_log_round=5ms": "ac_log_round must be a count of logged accesses from 1 to 1000000000",
        "ac_log_round=abc": "ac_log_round must be a count of logged accesses from 1 to 1000000000",
        "ac_log_slice=0": "ac_log_slice must be a count of logged accesses per time slice",
        "ac_log_keys=10": "ac_log_keys must be a count of keys from 1024 to 1G",
        "ac_log_hot_fill=2": "ac_log_hot_fill must be a fraction in (0, 1]",
        "ac_log_offline=2": 'ac_log_offline must be 0 or 1, got "2"',
        "ac_log_offline=on": 'ac_log_offline must be 0 or 1, got "on"',
        # over the network no phase is signalled: refused at start
        "ac_log_offline=1": "ac_log_offline=1 needs the in-process driver (-o ac_driver=FILE)",
    }
    for opt, msg in cases.items():
        r = subprocess.run([str(BIN), "-u", "root", "-p", "0", "-U", "0", "-m", "16", "-o",
                            f"ac_policy=logging,ac_spill_dir={tmp_path / 'x'},{opt}"],
                           capture_output=True, text=True, timeout=20)
        assert r.returncode != 0 and msg in r.stderr, (opt, r.returncode, r.stderr)
        assert not (tmp_path / "x").exists()


def test_damaged_cold_record_is_an_error(server):
    """A cold record failing its checksum answers the error, never data, and stays."""
    srv = server(mem=16, threads=2, ac={"ac_policy": "logging", "ac_log_round": "1000000000", "ac_io": "sync"})
    raw = srv.raw()
    vals = fill(raw, random.Random(13))
    cold = sorted(set(vals) - raw.resident_keys())
    k, other = cold[0], cold[1]
    path = srv.spill_dir / "cold.dat"
    data = path.read_bytes()
    at = data.index(k.encode() + vals[k][:16])     # the record: key, then the value
    with open(path, "r+b") as f:
        f.seek(at + len(k) + 100)
        b = f.read(1)
        f.seek(at + len(k) + 100)
        f.write(bytes([b[0] ^ 0x40]))
    err = b"SERVER_ERROR anti-caching: a spilled item failed its checksum"
    assert raw.get(k) == ({}, err)
    assert raw.call(f"delete {k}".encode()) == err
    assert raw.call(f"touch {k} 10".encode()) == err
    st = srv.ac()
    assert st["checksum_errors"] == 3
    got, e = raw.get(other)
    assert e is None and got[other][0] == vals[other]
    # set replaces it: the damaged record is dropped. The set may first spill others to make room
    # (whether its slab class has a free chunk depends on memcached's page mover): each adds a record
    assert raw.store("set", k, b"fresh") == b"STORED"
    assert raw.get(k)[0][k][0] == b"fresh"
    after = srv.ac()
    moved = (after["spilled_items"] - st["spilled_items"]) - (after["fetched_items"] - st["fetched_items"])
    assert after["cold_records"] == st["cold_records"] - 1 + moved



def test_cold_log_is_cleaned_under_churn(server):
    """Overwrites and fetches of cold keys leave dead records in the tuple store's
    log; its cleaning thread keeps the log within twice the live bytes plus two
    segments (plus one segment of lag for the thread) instead of letting it grow
    with every byte spilled, and moves the live records it finds without losing
    or changing one: every key reads back byte-exact afterwards."""
    srv = server(mem=16, threads=2, ac={"ac_policy": "logging"})
    cli = srv.client()
    rng = random.Random(5)
    keys = [f"churn{i:04d}" for i in range(600)]            # 600 x 40 KB: 1.5x -m
    stable = [f"stable{i:04d}" for i in range(150)]          # written once, cold from then on:
    current = {}                                            # cleaning has live records to move
    for rnd in range(10):                                  # 240 MB written in all
        for i, k in enumerate(keys):
            current[k] = value_for(rng, k, rnd, 40_000)
            cli.set(k, current[k])
            if rnd == 0 and i % 4 == 0:
                s = stable[i // 4]
                current[s] = value_for(rng, s, 0, 40_000)
                cli.set(s, current[s])
        for k in rng.sample(keys, 100):                    # fetches of cold keys
            assert cli.get(k) == (current[k], 0), k
    seg = srv.ac()["cold_segment_bytes"]
    wait_for(lambda: (lambda st: st["cold_file_bytes"] <= 2 * st["cold_bytes"] + 3 * seg)(srv.ac()),
             "the cold log to be cleaned")
    st = srv.ac()
    assert st["cold_gc_segments"] > 0 and st["cold_gc_moved_records"] > 0, st
    assert st["spilled_bytes"] > 3 * (2 * st["cold_bytes"] + 3 * seg), st   # cleaning mattered
    wrong = [k for k in current if cli.get(k) != (current[k], 0)]
    assert not wrong, f"{len(wrong)} keys wrong after cleaning, e.g. {wrong[:3]}"
    st = srv.ac()
    assert st["lost_items"] == 0 and st["io_errors"] == 0, st


def test_bloom_filter_rebuilt_after_removals(server):
    """The tuples tier's thread rebuilds its Bloom filter from the index once a
    quarter of its design size (ac_bloom_keys) has been removed since the last
    rebuild: removed keys lose their bits, and no key in the store is ruled
    out (every key reads back)."""
    srv = server(mem=16, threads=2, ac={"ac_policy": "logging", "ac_bloom_keys": "2000"})
    cli = srv.client()
    keys = [f"bl{i:05d}" for i in range(24000)]             # 1 KB values: ~1.7x -m
    for s in range(0, len(keys), 500):
        assert not cli.set_many({k: b"%s:0|" % k.encode() * 100 for k in keys[s:s + 500]}, noreply=False)
    st0 = srv.ac()
    assert st0["bloom_keys"] == 2000 and st0["stub_items"] > 2000
    raw = srv.raw()
    resident = raw.resident_keys()
    cold = [k for k in keys if k not in resident][:1500]
    for k in cold:                                          # a plain set drops the cold record
        assert raw.store("set", k, b"%s:1|" % k.encode() * 100) == b"STORED"
    wait_for(lambda: srv.ac()["bloom_rebuilds"] > st0["bloom_rebuilds"], "a rebuild of the filter")
    changed = set(cold)
    bad = [k for k in keys
           if cli.get(k) != (b"%s:%d|" % (k.encode(), 1 if k in changed else 0) * 100, 0)]
    assert bad == []
    st = srv.ac()
    assert st["lost_items"] == 0 and st["io_errors"] == 0 and st["checksum_errors"] == 0


def offline_phases(d: dict) -> tuple[dict, dict, dict]:
    """The server's counters as the warm-up began, as the run began, at the end; the driver's run
    and warm-up each without an error or a miss, nothing lost or damaged."""
    w0, r0, end = (d["warmup"]["server_start"]["anticache"], d["run"]["server_start"]["anticache"],
                   d["server"]["anticache"])
    for ph in ("warmup", "run"):
        assert d[ph]["errors"]["total"] == 0 and d[ph]["reads"]["miss"] == 0, d[ph]
    assert end["lost_items"] == 0 and end["checksum_errors"] == 0 and end["refused_items"] == 0, end
    assert end["log_offline"] == 1
    # the warm-up: no round, no drop; the run began after exactly one offline round
    assert w0["log_offline_rounds"] == 0
    assert r0["log_offline_rounds"] == end["log_offline_rounds"] == 1
    assert r0["log_rounds"] - w0["log_rounds"] == 1
    assert r0["log_drops"] == w0["log_drops"]
    assert r0["log_offline_ns"] > 0 and r0["log_offline_ns"] == end["log_offline_ns"]
    return w0, r0, end


def test_offline_round_before_the_run(tmp_path):
    """Read-only, true Zipf, 20k records at -m 12 (about half of the data): every warm-up read is
    in the history (logged lossless), the offline round classifies it and migrates the hot keys
    the warm-up read from the cold store, and the run reads more from RAM than the warm-up did."""
    d = run_in_process(tmp_path, "ac_policy=logging,ac_log_offline=1", "readonly", ops=60000, warmup=60000)
    w0, r0, end = offline_phases(d)
    assert r0["log_logged"] - w0["log_logged"] == 60000
    assert r0["log_migrated_in"] > w0["log_migrated_in"]
    hit = {ph: d[ph]["reads"]["hit"] / d[ph]["reads"]["total"] for ph in ("warmup", "run")}
    assert hit["run"] > hit["warmup"], hit


def test_offline_keeps_every_item(tmp_path):
    """Updates during the lossless warm-up (RAM fills and spills without a round: the oldest inserts
    go) lose nothing: no error, no miss. And after a sequential warm-up and the offline round's
    migrations, a sequential run reads every key back (keys 0..19999, each once, no miss)."""
    d = run_in_process(tmp_path, "ac_policy=logging,ac_log_offline=1", "writeheavy", ops=60000, warmup=60000)
    w0, r0, end = offline_phases(d)
    assert r0["spilled_items"] > w0["spilled_items"] and d["warmup"]["ops"]["update"] > 20000
    d = run_in_process(tmp_path, "ac_policy=logging,ac_log_offline=1", "readonly", ops=20000, warmup=20000,
                       dist="sequential")
    w0, r0, end = offline_phases(d)
    assert d["run"]["reads"]["total"] == 20000     # keys 0..19999, each once
    assert r0["log_logged"] - w0["log_logged"] == 20000
