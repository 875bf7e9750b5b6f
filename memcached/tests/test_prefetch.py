"""Reads kept in flight by the in-process driver (-o ac_driver_depth, core/ac_prefetch.c): a batch's
reads of spilled records go out first, then the requests are served in order, each after its own
read. The policy sees the same calls in the same order as at depth 1, so with one driver thread
the hit counts are exactly those of depth 1 -- for every I/O engine; every read sent is either
used by the fetch it was for or counted unused (the key was in RAM again, the record moved);
nothing is lost, refused or wrong. Both tiers read ahead (blocks and tuples), through the page
cache or with direct I/O."""
from __future__ import annotations

import subprocess

import pytest

from mc_helpers import BIN, run_in_process


def checked(d: dict, depth: int) -> dict:
    a, runp = d["server"]["anticache"], d["run"]
    assert d["batch"] == depth and a["driver_depth"] == depth
    assert runp["errors"]["total"] == 0 and runp["reads"]["miss"] == 0
    assert a["lost_items"] == 0 and a["refused_items"] == 0 and a["checksum_errors"] == 0
    assert a["io_failed_transfers"] == 0
    assert a["prefetch_reads"] == a["prefetch_used"] + a["prefetch_unused"], a
    return a


@pytest.mark.parametrize("workload", ["readonly", "writeheavy"])
def test_depth_keeps_the_hit_counts_of_depth_1(tmp_path, workload):
    """lru with one driver thread is deterministic: the exact counts of depth 1 at depths 16 to 256."""
    one = checked(run_in_process(tmp_path, "ac_policy=lru", workload, 1), 1)
    assert one["prefetch_reads"] == 0
    # depths above 64 take more completions than one reap call returns
    # and with direct reads (O_DIRECT, widened to the file system's unit: aio is asynchronous then)
    for engine, depth, direct in [("uring", 16, "off"), ("threads", 16, "off"), ("aio", 16, "off"),
                                  ("sync", 16, "off"), ("aio", 200, "off"), ("uring", 256, "off"),
                                  ("uring", 16, "on"), ("aio", 32, "on"), ("sync", 16, "on")]:
        a = checked(run_in_process(tmp_path, f"ac_policy=lru,ac_io={engine},ac_io_direct={direct}", workload, depth), depth)
        assert a["io_engine"] == engine and a["io_direct"] == direct
        assert a["io_direct_files"] == (1 if direct == "on" else 0), a
        assert (a["mem_hits"], a["disk_hits"]) == (one["mem_hits"], one["disk_hits"]), (engine, a, one)
        # nearly every disk hit was served by a read sent ahead (the rest: records in the open
        # block are copied, no read; a block merge may bring a later key of the batch in)
        assert a["prefetch_used"] >= 0.95 * a["disk_hits"] > 500, a
        assert a["prefetch_unused"] <= 0.02 * a["prefetch_reads"], a


@pytest.mark.parametrize("ac", ["ac_policy=alru", "ac_policy=logging,ac_tier=blocks"])
def test_depth_with_other_policies(tmp_path, ac):
    """alru samples and logging migrates on threads of their own, so their counts vary from run
    to run even at depth 1: the same checks without the exact counts, at depth 64."""
    a = checked(run_in_process(tmp_path, f"{ac},ac_io=uring", "writeheavy", 64), 64)
    assert a["disk_hits"] > 500 and a["prefetch_used"] >= 0.9 * a["disk_hits"], a


@pytest.mark.parametrize("direct", ["off", "on"])
def test_tuples_reads_in_flight(tmp_path, direct):
    """The tuples tier reads ahead too (its index looked up under the key's lock, the record read
    with nothing held; a segment the cleaner punched out meanwhile makes the read unused): the
    exact counts of depth 1, nearly every disk hit served by a read sent ahead."""
    ac = f"ac_policy=lru,ac_tier=tuples,ac_io_direct={direct}"
    one = checked(run_in_process(tmp_path, ac, "writeheavy", 1), 1)
    a = checked(run_in_process(tmp_path, f"{ac},ac_io=uring", "writeheavy", 32), 32)
    assert (a["mem_hits"], a["disk_hits"]) == (one["mem_hits"], one["disk_hits"]) and a["disk_hits"] > 500
    assert a["prefetch_used"] >= 0.9 * a["disk_hits"], a
    assert a["prefetch_unused"] <= 0.05 * a["prefetch_reads"], a


def test_depth_refused_out_of_range():
    r = subprocess.run([str(BIN), "-u", "root", "-o", "ac_driver_depth=0"], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode != 0
    assert 'ac_driver_depth must be a count of requests from 1 to 256 (1: one at a time), got "0"' in r.stderr, \
        r.stderr


@pytest.mark.parametrize("tier", ["blocks", "tuples"])
def test_direct_reads_keep_the_hits_and_read_whole_units(tmp_path, tier):
    """-o ac_io_direct=on reads the records with O_DIRECT (no page cache, no readahead): the same
    hits as through the page cache, and a read of a record costs the units it touches at most
    (512 B on ext4 over this disk), never a page or a readahead window around it."""
    base = f"ac_policy=lru,ac_tier={tier}"
    off = checked(run_in_process(tmp_path, f"{base},ac_io_direct=off", "readonly", 1), 1)
    on = checked(run_in_process(tmp_path, f"{base},ac_io_direct=on", "readonly", 1), 1)
    assert (on["mem_hits"], on["disk_hits"]) == (off["mem_hits"], off["disk_hits"]) and on["disk_hits"] > 500, on
    assert (off["io_direct"], off["io_direct_files"], on["io_direct"], on["io_direct_files"]) == \
        ("off", 0, "on", 1), (off, on)
    asked = on["record_read_bytes"] + on["block_read_bytes"]
    if tier == "blocks":
        # every read the engine made was of records or blocks: widened by less than a unit at
        # each end
        assert asked <= on["io_read_bytes"] < asked + 2 * 512 * on["io_reads"], on
        assert on["io_read_bytes"] > off["io_read_bytes"], (on, off)   # whole units, not bytes
