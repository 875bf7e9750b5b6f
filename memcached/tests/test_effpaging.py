"""ac_policy=effpaging: hot items in an mlocked region, cold items in a region the kernel
pages, moved between them after each classification round.

The paging tests run in a real memory cgroup with a real swap file and vm.page-cluster=0
(fixtures in paging.py, undone also when a test fails)."""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from mc_helpers import BIN, MiB, value_for
from paging import MemoryGroup, inproc, mappings, page_states

# 30000 records of 900 bytes in 1 KiB chunks: D = 30 MiB; the group's limit is about half of it
RECORDS, LIMIT, SWAP = 30000, 24 * MiB, 96 * MiB
# the hash-chain test locks half of what the group allows (ac_eff_lock=0.5): at lock 1 (all of
# it, less the 8 MiB margin), hashpower 13 and hot-first moves, the kernel OOM-killed the server near
# the end of the load in 1 of 8 runs at 24 MiB, 2 of 4 at 28 MiB (its hot region grows with the limit),
# 2 of 8 at a lock share of 0.8; 0 of 8 at 0.5 (measured 2026-11-28). At the kill the group was at
# its limit with the hot region locked and 11-12 MB of anonymous pages, all on the active list and
# none reclaimed in time: effpaging's default sizing leaves the kernel too little to page with at
# this size (policies/README.md, effpaging, "OOM kills at small limits")
CHAINS_LOCK = 0.5
CHAINS_OPS = 150000          # warm-up reads, then as many measured


class RegionSampler:
    """While the server runs: the locked mapping (the hot region) page by page, and the
    swap of the mapping right after it (the cold region)."""

    def __init__(self) -> None:
        self.hot: list[tuple[int, int, tuple[int, int, int]]] = []
        self.cold_swap_kb = 0

    def __call__(self, pid: int) -> None:
        maps = mappings(pid)
        locked = [m for m in maps if m[2].get("Locked", 0) > 0]
        if not locked:
            return
        lo, hi, _ = locked[0]
        self.hot.append((lo, hi - lo, page_states(pid, lo, hi - lo)))
        after = [m for m in maps if m[0] == hi]
        if after:
            self.cold_swap_kb = max(self.cold_swap_kb, after[0][2].get("Swap", 0))


def _run(var_tmp: Path, ac: str, sampler=None, ops: int = 300000) -> tuple[dict, dict]:
    """One in-process run in a fresh group. Without a sampler, a run the kernel OOM-kills (the known
    defect at small limits: policies/README.md, effpaging, "OOM kills at small limits") is run once
    more, and says so; a second kill, or any other failure, fails the test."""
    for attempt in (0, 1):
        with MemoryGroup("effpaging", LIMIT, SWAP) as g:
            try:
                d = inproc(var_tmp, g, ac + f",ac_driver_set=warmupoperations={ops}", ops, records=RECORDS,
                           mem=40, sampler=sampler)
            except AssertionError:
                if attempt == 0 and sampler is None and g.stats().get("oom_kills"):
                    print("\neffpaging OOM-killed at this small limit (known defect): run once more")
                    continue
                raise
            st = g.stats()
        return d, st
    raise AssertionError("unreachable")


def test_hot_region_stays_resident_while_cold_pages_swap(var_tmp, swap, page_cluster0):
    s = RegionSampler()
    d, st = _run(var_tmp, "ac_policy=effpaging", s)
    ac, reads = d["server"]["anticache"], d["run"]["reads"]
    assert reads["total"] == 300000 and reads["miss"] == 0
    assert reads["hit"] + reads["disk_hit"] == 300000 and reads["disk_hit"] > 0
    assert ac["lost_items"] == 0 and ac["resident_items"] == RECORDS
    assert ac["eff_cgroup_limit"] == LIMIT and ac["eff_hot_bytes"] >= 4 * MiB
    assert ac["eff_promoted"] > 1000 and ac["eff_demoted"] > 1000 and ac["log_rounds"] >= 3
    assert st["swap_bytes_max"] > 0
    # the hot region is the one locked mapping, at the address the server reports
    base = int(ac["eff_hot_base"], 16)
    pages = ac["eff_hot_bytes"] // 4096
    assert all((lo, length) == (base, ac["eff_hot_bytes"]) for lo, length, _ in s.hot)
    # none of its pages ever swapped; once mlock has populated it (start-up), all resident
    assert all(swapped == 0 for _, _, (_, swapped, _) in s.hot)
    full = [i for i, (_, _, (present, _, _)) in enumerate(s.hot) if present == pages]
    assert full and len(s.hot) - full[0] >= 10, "too few samples of the running server"
    assert all(states == (pages, 0, 0) for _, _, states in s.hot[full[0]:])
    assert s.cold_swap_kb > 1024, s.cold_swap_kb


def test_side_by_side_with_ospaging(var_tmp, swap, page_cluster0):
    """Zipf 0.99, M/D about 1/2: both serve every read; reported side by side. Measured here
    (2 cores, virtio disk): ospaging 0.81 hit rate, ~50k reads/s; effpaging 0.76, ~35k/s
    (its rounds' moves fault on the cold region). The paper finds effpaging ahead; this
    test asserts only what holds with margin: no loss, every read served, effpaging's
    disk hits within a factor 2 of ospaging's."""
    rows = {}
    for policy in ("ospaging", "effpaging"):
        d, st = _run(var_tmp, f"ac_policy={policy}")
        run, ac = d["run"], d["server"]["anticache"]
        assert run["reads"]["miss"] == 0 and ac["lost_items"] == 0
        rows[policy] = (run["reads"]["hit"] / run["reads"]["total"], run["throughput_ops_per_s"],
                        run["reads"]["disk_hit"], st["pgmajfault"])
    print("\npolicy     hit rate  reads/s  disk hits  cgroup pgmajfault")
    for p, (h, t, dh, mf) in rows.items():
        print(f"{p:10} {h:8.4f} {t:8.0f} {dh:10d} {mf:18d}")
    assert rows["ospaging"][2] > 0 and rows["effpaging"][2] > 0
    assert rows["effpaging"][2] < 2 * rows["ospaging"][2]


def _refused(tmp_path: Path, opts: str, *extra: str, group: MemoryGroup | None = None) -> str:
    argv = [str(BIN), "-u", "root", "-p", "0", "-U", "0", "-m", "32", *extra, "-o", opts]
    if group is None:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=tmp_path)
        assert cp.returncode != 0
        return cp.stderr
    with open(tmp_path / "err.txt", "wb") as err:
        proc = group.popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err, cwd=tmp_path)
        assert proc.wait(20) != 0
    return (tmp_path / "err.txt").read_text()


def test_more_than_the_cgroup_allows_is_refused(tmp_path):
    with MemoryGroup("effpaging-small", 16 * MiB, 0) as g:
        err = _refused(tmp_path, "ac_policy=effpaging,ac_eff_memory=64M", group=g)
    assert "memcached-ac: effpaging: locking a hot region of" in err
    assert "would end in an OOM kill; lower ac_eff_memory or raise the limit" in err
    assert "(limit 16777216, in use" in err


def test_default_takes_what_the_cgroup_allows(tmp_path):
    with MemoryGroup("effpaging-tiny", 9 * MiB, 0) as g:
        err = _refused(tmp_path, "ac_policy=effpaging", group=g)
    assert "leave no hot region" in err and "the cgroup allows too little" in err


@pytest.mark.parametrize("opts,message", [
    ("ac_policy=effpaging,ac_eff_memory=1M",
     'ac_eff_memory must be a size of at least 2M (e.g. 512M), the memory effpaging may lock for its hot region'
     ' and its classifier, got "1M"'),
    ("ac_policy=effpaging,ac_eff_madv_cold=yes", 'ac_eff_madv_cold must be 0 or 1, got "yes"'),
    ("ac_policy=effpaging,ac_eff_memory=8M,ac_os_backing=file",
     "memcached-ac: ac_policy=effpaging cannot work over ac_tier=mmapfile; valid tiers for policy effpaging: swap"),
    ("ac_policy=effpaging,ac_eff_memory=8M,slab_chunk_max=1048576",
     "effpaging walks its hot region page by page and needs slab pages of slab_page_size bytes"),
    ("ac_policy=effpaging,ac_eff_memory=2M", "leave no hot region"),
])
def test_bad_settings_are_refused(tmp_path, opts, message):
    assert message in _refused(tmp_path, opts)


def test_moves_keep_values_flags_and_cas(server):
    """Without a memory limit (ac_eff_memory given): items of several classes move
    between the regions round after round; every value, flag and CAS survives."""
    srv = server(mem=24, threads=2, check_dir_modes=False,
                 ac={"ac_policy": "effpaging", "ac_eff_memory": "6M", "ac_log_round": "2000",
                     "ac_log_slice": "500"})
    rng = random.Random(3)
    keys = [f"m{i:05d}" for i in range(6000)]
    values = {k: value_for(rng, k, 1, rng.choice((200, 700, 1500, 3000))) for k in keys}
    big = value_for(rng, "big", 1, 700 * 1024)            # a chunked item: never moved
    with srv.raw() as r:
        for i, k in enumerate(keys):
            assert r.call(b"set %s %d 0 %d\r\n%s" % (k.encode(), i, len(values[k]), values[k])) == b"STORED"
        assert r.call(b"set big 7 0 %d\r\n%s" % (len(big), big)) == b"STORED"
        cas = {}
        for k in keys:
            r.send(b"gets %s\r\n" % k.encode())
            head = r.line().split()
            cas[k] = head[4]
            r.read(int(head[3]) + 2)
            assert r.line() == b"END"
        hot = keys[-800:]
        for _ in range(20):                                # drives rounds: hot keys move in
            for k in hot:
                r.send(b"get %s\r\n" % k.encode())
                head = r.line()
                assert head.startswith(b"VALUE"), head
                r.read(len(values[k]) + 2)
                assert r.line() == b"END"
    ac = srv.ac()
    assert ac["eff_promoted"] > 100 and ac["eff_demoted"] > 100, ac
    with srv.raw() as r:
        for i, k in enumerate(keys):
            r.send(b"gets %s\r\n" % k.encode())
            head = r.line().split()
            assert head == [b"VALUE", k.encode(), str(i).encode(), str(len(values[k])).encode(), cas[k]], (k, head)
            assert r.read(len(values[k]) + 2) == values[k] + b"\r\n"
            assert r.line() == b"END"
        r.send(b"get big\r\n")
        assert r.line() == b"VALUE big 7 %d" % len(big)
        assert r.read(len(big) + 2) == big + b"\r\n"
        assert r.line() == b"END"
        assert r.call(b"append %s 0 0 3\r\nxyz" % keys[-1].encode()) == b"STORED"
        r.send(b"get %s\r\n" % keys[-1].encode())
        r.line()
        assert r.read(len(values[keys[-1]]) + 5) == values[keys[-1]] + b"xyz\r\n"
    ac = srv.ac()
    assert ac["lost_items"] == 0 and ac["resident_items"] == len(keys) + 1


def test_hot_items_lead_their_hash_chains(var_tmp, swap, page_cluster0):
    """memcached's chained hash compares keys inside the items, so a hot read walks through every
    item ahead of it in its bucket. With long chains (30000 items in 2^13 buckets, 3.7 per bucket)
    a cold item ahead of a hot one is faulted in by the hot item's reads; effpaging keeps hot items
    first in every chain (regions.c ac_hot_first, ac_eff_hot_first=1, the default), so its reads
    take fewer faults than with the chains as memcached links them (ac_eff_hot_first=0)."""
    rows = {}
    for on in (0, 1):
        d, _ = _run(var_tmp, f"ac_policy=effpaging,hashpower=13,ac_eff_hot_first={on},ac_eff_lock={CHAINS_LOCK}",
                    ops=CHAINS_OPS)
        reads, ac = d["run"]["reads"], d["server"]["anticache"]
        assert reads["miss"] == 0 and ac["lost_items"] == 0 and reads["disk_hit"] > 0
        rows[on] = (reads["hit"] / reads["total"], reads["disk_hit"], ac["read_major_faults"], ac["eff_hot_first_moves"])
    print(f"\nhot first off: hit rate {rows[0][0]:.4f}, disk hits {rows[0][1]}, read faults {rows[0][2]};"
          f" on: {rows[1][0]:.4f}, {rows[1][1]}, {rows[1][2]} ({rows[1][3]} moves)")
    assert rows[0][3] == 0 and rows[1][3] > 1000
    # measured at CHAINS_LOCK and CHAINS_OPS warm-up + run reads (2 runs, 2026-11-29): disk hits -11.0 /
    # -10.8 %, read faults -17.4 / -17.3 % (at 300k + 300k: -10.3 / -11.3 % and -13.4 / -14.4 %, 98 s
    # against 29 s)
    assert rows[1][1] < 0.95 * rows[0][1] and rows[1][2] < 0.95 * rows[0][2]
