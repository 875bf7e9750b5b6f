"""Mixed sizes, many clients: the load of the "refuses work" report. `-m 32`,
8 client threads (pymemcache, one connection each plus a raw one for `gat`),
values from 1 B to 500 KiB log-uniform (half under ~700 B, one in five over
~37 KiB), 5x -m written, and every command: set, add, replace, append, prepend,
cas, incr/decr, get, gets, touch, gat, delete. Each thread owns its keys, so its
model is exact (noloss.ModelWorker); at the end every key is read back: stored
ones byte-exact, deleted ones absent.

The server must refuse nothing while its spill store has room: no SERVER_ERROR
of any kind, no NOT_STORED / NOT_FOUND / EXISTS / miss the model does not
predict, and `stats anticache` refused_* 0 besides lost_items and io_errors 0.
AC_TEST_SEED=N changes the clients' seeds (repeated runs)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from mc_helpers import ROOT, MiB, log_uniform_size
from noloss import ModelWorker, check_no_refusals

THREADS = 8
MEM = 32
OVERCOMMIT = 5
SEED = int(os.environ.get("AC_TEST_SEED", "7"))

APPROACHES = {
    "lru": {"ac_policy": "lru"},                       # tuple-merge (the default)
    "lru-block-merge": {"ac_policy": "lru", "ac_merge": "block"},
    # lazy compaction's merges in the compactor thread, concurrent with the clients' fetches
    "lru-compact-thread": {"ac_policy": "lru", "ac_compact_thread": "on", "ac_compact_fill": "0.9"},
    # the same claims copied block to block, never into RAM
    "lru-compact-copy": {"ac_policy": "lru", "ac_compact": "copy", "ac_compact_thread": "on", "ac_compact_fill": "0.9"},
    "alru": {"ac_policy": "alru"},
    "logging": {"ac_policy": "logging"},
    "lru+tuples": {"ac_policy": "lru", "ac_tier": "tuples"},
    "alru+tuples": {"ac_policy": "alru", "ac_tier": "tuples"},
    "logging+blocks": {"ac_policy": "logging", "ac_tier": "blocks"},
}


def run_clients(srv, threads: int, quota: int, seed: int, size_fn) -> list[ModelWorker]:
    workers = [ModelWorker(srv, t, seed * 1000 + t, quota, size_fn) for t in range(threads)]
    start = threading.Barrier(threads)

    def go(w: ModelWorker) -> None:
        start.wait()
        w.run()

    with ThreadPoolExecutor(threads) as ex:
        for f in [ex.submit(go, w) for w in workers]:
            f.result()                    # re-raises a worker's assertion (wrong data)
    return workers


def report(workers: list[ModelWorker], verify: Counter, st: dict) -> tuple[Counter, str]:
    refused = sum((w.refused for w in workers), Counter())
    ops = sum((w.ops for w in workers), Counter())
    samples = [s for w in workers for s in w.samples][:8]
    written = sum(w.written for w in workers)
    text = (f"written {written / MiB:.0f} MiB in {sum(ops.values())} commands, refused during the run: "
            f"{sum(refused.values())} {dict(refused) or ''} e.g. {samples}; refused on read-back: "
            f"{dict(verify) or 0}; server: spilled {st['spilled_items']} fetched {st['fetched_items']} "
            f"read-through {st['read_through_items']} pages borrowed {st.get('pages_borrowed')} "
            f"repaid {st.get('pages_repaid')} room taken {st.get('alloc_room_taken')} waits "
            f"{st.get('alloc_waits')} refused "
            f"{ {k: v for k, v in st.items() if k.startswith('refused_') and v} or 0}")
    return refused, text


def load_and_read_back(srv, threads: int, total: int, seed: int) -> tuple[dict, str]:
    """`threads` clients write `total` bytes between them (every command, values of log-uniform
    size), then every value is read back: nothing refused during the run or on read-back, and no
    refusal in the server's counts. Returns the server's stats and the report's text."""
    workers = run_clients(srv, threads, total // threads, seed, log_uniform_size)
    assert sum(w.written for w in workers) >= total
    cli = srv.client()
    verify = Counter()
    for w in workers:
        verify.update(w.verify(cli))
    st = srv.ac()
    refused, text = report(workers, verify, st)
    print(f"\n{text}")
    assert not refused and not verify, text
    check_no_refusals(st, text)
    return st, text


@pytest.mark.parametrize("name", list(APPROACHES))
def test_mixed_load_refuses_nothing(server, name):
    srv = server(mem=MEM, threads=4, ac=APPROACHES[name])
    st, text = load_and_read_back(srv, THREADS, OVERCOMMIT * MEM * MiB, SEED)
    assert st["spilled_items"] > 0 and st["fetched_items"] + st["read_through_items"] > 0, text
    if APPROACHES[name].get("ac_compact_thread") == "on":
        done = "copied_blocks" if APPROACHES[name].get("ac_compact") == "copy" else "merged_blocks"
        assert st["compact_queued"] > 0 and st[done] > 0, st


@pytest.mark.machine      # soak.py sets vm.page-cluster and swap files for its cells
def test_mixed_load_kernel_paged_refuses_nothing():
    """The same load (8 clients, 1 B..500 KiB, every command, an exact model, 5x the
    item memory) for the kernel-paged approaches, which only page inside a memory
    cgroup with swap and vm.page-cluster=0: memcached/soak/soak.py sets those up
    (and undoes them) and checks no refusal, no loss, every key byte-exact, RSS
    within the limit. A few seconds of load each, three at once."""
    if os.geteuid() != 0:
        pytest.skip("needs root: memory cgroups, swap files")
    soak = ROOT / "memcached" / "soak" / "soak.py"
    names = ["ospaging", "ospaging-file", "effpaging"]
    r = subprocess.run([sys.executable, str(soak), "--approach", *names, "--minutes", "0.05",
                        "--overcommit", "5", "--jobs", "3"],
                       capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    print(out)
    # one summary per approach run; "soak NAME: left out: why" lines name the approaches the
    # soak cannot run (printed by every soak run)
    summaries = {ln.split(":")[0][len("soak "):]: ln for ln in r.stdout.splitlines()
                 if ln.startswith("soak ") and not ln.startswith("soak:") and ": left out: " not in ln}
    assert r.returncode == 0 and sorted(summaries) == sorted(names), out[-4000:]
    for name, line in summaries.items():
        assert line.endswith("-> PASS") and "lost 0 refused 0" in line and "verify OK" in line, line
