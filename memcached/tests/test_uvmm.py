"""Tier uvmm: our user-space pager (userfaultfd) under the slab memory.

The region is -m; ac_uvmm_memory caps its resident pages, so a server written
several times its cap pages through uvmm.pages while memcached itself evicts
nothing. These tests need no cgroup: the cap is given. Every answer is checked
against an exact model and every value read back byte-exact."""
from __future__ import annotations

import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from mc_helpers import MiB, run_in_process, value_for
from test_mixed_load import load_and_read_back

CAP = 16                     # MiB resident
OVERCOMMIT = 4               # values written: OVERCOMMIT x CAP
REGION = 192                 # -m: the whole data set fits the region (memcached never evicts)


def uvmm(tmp_path, **extra) -> dict[str, str]:
    opts = {"ac_policy": "none", "ac_tier": "uvmm", "ac_uvmm_memory": f"{CAP}M",
            "ac_spill_dir": str(tmp_path / f"spill-{time.monotonic_ns()}")}
    opts.update(extra)
    return opts


def flags() -> tuple[str, ...]:
    # memcached's background walkers would fault pages in for no request (as under ospaging)
    return ("-o", "no_lru_crawler,no_lru_maintainer")


@pytest.mark.parametrize("mode,evict", [("uffd", "clock"), ("check", "clock"), ("uffd", "random"),
                                        pytest.param("uffd", "hints", marks=pytest.mark.full),
                                        pytest.param("uffd", "fifo", marks=pytest.mark.full),
                                        pytest.param("check", "random", marks=pytest.mark.full)])
def test_mixed_load_pages_and_loses_nothing(server, tmp_path, mode, evict):
    """8 clients, every command, values 1 B..500 KiB, 4x the resident cap written."""
    srv = server(mem=REGION, threads=4, ac=uvmm(tmp_path, ac_uvmm_evict=evict, ac_uvmm_mode=mode), extra=flags())
    st, _ = load_and_read_back(srv, 8, OVERCOMMIT * CAP * MiB, 11)
    print(f"uvmm {mode} {evict}: fetches {st['uvmm_fetches']} evictions {st['uvmm_evictions']}"
          f" (clean {st['uvmm_evictions_clean']}) wp faults {st['uvmm_wp_faults']}")
    assert st["uvmm_evict"] == evict and st["uvmm_mode"] == mode
    # check mode: the workers read most pages in themselves; the rest came through the fault path
    assert (st["uvmm_checked_fetches"] > st["uvmm_fetches"] // 2) if mode == "check" else st["uvmm_checked_fetches"] == 0
    assert st["uvmm_evictions"] > 2 * CAP * MiB // 4096, st      # it paged: more than twice the cap out
    assert st["uvmm_fetches"] > 1000 and st["disk_hits"] > 0, st
    assert st["uvmm_cap_pages"] == CAP * MiB // 4096
    # the cap holds (the fault thread waits for room), give or take one page in flight
    assert st["uvmm_resident_pages"] <= st["uvmm_cap_pages"] + 1, st
    assert st["uvmm_read_errors"] == st["uvmm_write_errors"] == st["uvmm_checksum_errors"] == 0
    assert st["uvmm_book_bytes_per_page"] == (12 if evict == "fifo" else 8)   # fifo: its ring


@pytest.mark.parametrize("mode", ["uffd", "check"])
def test_inprocess_disk_hits_are_the_pagers_fetches(tmp_path, mode):
    """Each fetch is attributed to the thread that faulted (its id comes with the
    fault): the driver's reads that waited for one are its disk hits, and the
    fetches inside reads and stores are all the pager did but a handful at load."""
    d = run_in_process(tmp_path, f"ac_policy=none,ac_tier=uvmm,ac_uvmm_memory=4M,ac_uvmm_mode={mode},no_lru_crawler,"
                       "no_lru_maintainer", "workloadc", ops=60000, records=20000, mem_mb=64)
    reads, ac = d["run"]["reads"], d["server"]["anticache"]
    assert reads["total"] == 60000 and reads["miss"] == 0
    assert reads["hit"] == ac["mem_hits"] and reads["disk_hit"] == ac["disk_hits"] > 10000
    in_requests = ac["read_major_faults"] + ac["write_major_faults"]
    assert in_requests <= ac["uvmm_fetches"] <= in_requests + 200, ac
    assert ac["read_major_faults"] >= ac["disk_hits"] and ac["uvmm_fetches_unattributed"] == 0
    assert ac["major_faults"] < 200          # the kernel's own (binary, libraries): the region is ours


def load(srv, n: int, size: int, seed: int) -> dict[str, bytes]:
    rng = random.Random(seed)
    values = {f"u{i:06d}": value_for(rng, f"u{i:06d}", 1, size) for i in range(n)}
    with srv.raw() as r:
        for k, v in values.items():
            assert r.store("set", k, v) == b"STORED"
    return values


@pytest.mark.parametrize("mode", ["uffd", "check"])
def test_threads_fault_on_one_page_and_on_many_at_once(server, tmp_path, mode):
    srv = server(mem=64, threads=8, ac=uvmm(tmp_path, ac_uvmm_memory="1M", ac_uvmm_mode=mode), extra=flags())
    values = load(srv, 20000, 1000, 3)           # ~24 MB through a 1 MiB cap
    keys = list(values)
    before = srv.ac()

    def reader(t: int, ks: list[str]) -> int:
        with srv.raw() as r:
            for k in ks:
                r.send(f"get {k}\r\n".encode())
                vals, end = r.read_values()
                assert k in vals and vals[k][0] == values[k], f"thread {t}: {k} wrong or missing: {end!r} {srv.ac()}"
        return len(ks)

    start = threading.Barrier(8)

    def same(t: int) -> int:
        start.wait()
        return reader(t, keys[:50])               # the same 50 keys (a few pages), 8 threads at once

    with ThreadPoolExecutor(8) as ex:
        assert sum(ex.map(same, range(8))) == 400
    mid = srv.ac()
    assert mid["uvmm_fetches"] > before["uvmm_fetches"], mid

    def many(t: int) -> int:
        start.wait()
        return reader(t, keys[t::8][:600])        # different keys, spread over the region

    with ThreadPoolExecutor(8) as ex:
        assert sum(ex.map(many, range(8))) == 4800
    st = srv.ac()
    assert st["uvmm_fetches"] - mid["uvmm_fetches"] > 1000, st
    assert st["lost_items"] == 0 and st["uvmm_unreadable_pages"] == 0
    # every fetch was for a thread that asked (memcached's workers): none unattributed
    assert st["uvmm_fetches_unattributed"] == 0


@pytest.mark.parametrize("mode", ["uffd", "check"])
def test_read_errors_are_retried_and_nothing_wrong_is_served(server, tmp_path, mode):
    """The first 5 page reads fail with EIO: the faulting threads wait while the
    reads are retried (check mode: the worker's read fails, the fault path takes
    over), and every value then comes back byte-exact."""
    srv = server(mem=64, threads=4, ac=uvmm(tmp_path, ac_uvmm_memory="1M", ac_fault="read_eio:5", ac_uvmm_mode=mode),
                 extra=flags())
    values = load(srv, 12000, 1000, 5)
    with srv.raw() as r:
        for k in list(values)[:2000]:
            vals, _ = r.get(k)
            assert vals[k][0] == values[k], k
    st = srv.ac()
    assert st["uvmm_read_errors"] == 5 and st["uvmm_unreadable_pages"] == 0, st
    assert st["io_faults_injected"] == 5
    if mode == "uffd":                            # the fault thread's reads failed: it said so
        assert "cannot be read back" in srv.stderr()


def test_a_corrupt_page_is_never_served_and_heals_when_its_slot_does(server, tmp_path):
    spill = tmp_path / "spill-corrupt"
    srv = server(mem=64, threads=4, ac=uvmm(tmp_path, ac_uvmm_memory="1M", ac_uvmm_compress="none",
                                            ac_spill_dir=str(spill)), extra=flags())
    values = load(srv, 12000, 1000, 9)
    st = srv.ac()
    assert st["uvmm_evicted_pages"] > 1000, st
    # flip one byte in every written slot: a key written in the middle of the
    # load is on an evicted page (the cap is 256 pages of ~3500 written; the
    # oldest keys' pages stay hot, memcached's allocations read the LRU's tail)
    f = spill / "uvmm.pages"
    saved = f.read_bytes()
    data = bytearray(saved)
    for p in range(len(data) // 4096):
        if any(data[p * 4096:(p + 1) * 4096]):
            data[p * 4096 + 100] ^= 0xFF
    fd = os.open(f, os.O_WRONLY)
    try:
        os.pwrite(fd, bytes(data), 0)
    finally:
        os.close(fd)
    key = "u006000"
    got: dict = {}

    def blocked_get() -> None:
        with srv.raw() as r:
            got.update(r.get(key)[0])

    t = threading.Thread(target=blocked_get)
    t.start()
    t.join(1.0)
    assert t.is_alive(), f"{key} was answered from a corrupt page: {got}"
    st = srv.ac()
    assert st["uvmm_checksum_errors"] >= 1 and st["uvmm_unreadable_pages"] >= 1, st
    fd = os.open(f, os.O_WRONLY)
    try:
        os.pwrite(fd, saved, 0)                   # the slots readable again: the retry places the page
    finally:
        os.close(fd)
    t.join(10)
    assert not t.is_alive() and got[key][0] == values[key]
    assert srv.ac()["uvmm_unreadable_pages"] == 0
    assert "its checksum does not match" in srv.stderr()


def test_write_errors_keep_pages_resident_and_lose_nothing(server, tmp_path):
    srv = server(mem=64, threads=4, ac=uvmm(tmp_path, ac_uvmm_memory="1M", ac_fault="write_enospc:20"),
                 extra=flags())
    values = load(srv, 8000, 1000, 13)
    with srv.raw() as r:
        for k, v in values.items():
            vals, _ = r.get(k)
            assert vals[k][0] == v, k
    st = srv.ac()
    assert st["uvmm_write_errors"] == 20 and st["lost_items"] == 0, st
    assert st["uvmm_evictions"] > 1000
    assert "No space left on device" in srv.stderr()


def test_exit_removes_the_page_file_and_a_crash_leaves_nothing_the_next_start_keeps(tmp_path):
    from mc_helpers import start_server
    spill = tmp_path / "spill-crash"
    ac = uvmm(tmp_path, ac_uvmm_memory="1M", ac_spill_dir=str(spill))
    started = []
    try:
        srv = start_server(tmp_path, mem=64, threads=2, ac=ac, extra=flags())
        started.append(srv)
        load(srv, 4000, 1000, 17)
        assert (spill / "uvmm.pages").stat().st_size > 0
        os.kill(srv.proc.pid, signal.SIGKILL)
        assert srv.proc.wait(10) == -signal.SIGKILL
        srv.stopped = True
        assert (spill / "uvmm.pages").exists()    # what a crash leaves
        srv2 = start_server(tmp_path, mem=64, threads=2, ac=ac, extra=flags())
        started.append(srv2)
        assert "left by an earlier run" in srv2.stderr()
        assert (spill / "uvmm.pages").stat().st_size == 0      # the next start made it anew
        with srv2.raw() as r:
            assert r.get("u000001")[0] == {}      # nothing of the crashed run is served
        assert srv2.stop() == 0
        assert not spill.exists()
    finally:
        for s in started:
            if not s.stopped:
                s.stop()


def own_memory_limit() -> int | None:
    """This process's cgroup v1 memory limit (None: unlimited or no v1 controller)."""
    for line in open("/proc/self/cgroup"):
        _, ctrls, path = line.rstrip("\n").split(":", 2)
        if "memory" in ctrls.split(","):
            f = f"/sys/fs/cgroup/memory{'' if path == '/' else path}/memory.limit_in_bytes"
            if os.path.exists(f):
                n = int(open(f).read())
                return n if n < 1 << 62 else None
    return None


def test_no_cap_and_no_cgroup_limit_is_refused(tmp_path):
    from mc_helpers import start_server
    if own_memory_limit() is not None:
        pytest.skip("this test runs in a memory cgroup with a limit")
    ac = uvmm(tmp_path)
    del ac["ac_uvmm_memory"]
    with pytest.raises(RuntimeError) as e:
        start_server(tmp_path, mem=64, ac=ac, extra=flags())
    assert "has no memory limit to page under; give the resident memory with ac_uvmm_memory=SIZE" in str(e.value)
