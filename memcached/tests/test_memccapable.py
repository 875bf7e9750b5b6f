"""Protocol conformance: libmemcached's `memccapable` (libmemcached-tools 1.1.4, its 54 text
and binary protocol tests) against memcached-ac under every approach of
harness/acbench/approaches.py (memcached-static runs the same server as memcached:
ac_policy=none, once), plus lru with ac_merge=block (make test: each policy over its default
tier, lru over every other tier, block merge and compression; KEPT). Left out: vma and vma-tuples, which
run only with the in-process driver (policy vma protects the slab memory, and a socket
reading or writing a protected page gets EFAULT: memcached-ac refuses to serve the network
with it).

Spilling approaches (lru, alru-hstore, alru, alru-redis, logging, lru-block-merge; `-m 8`):
4x -m of 1 KiB values are written through pymemcache first, so the item memory is full
and most items are spilled; while memccapable runs, a writer thread stores up to 8192 new
1 KiB keys (paced, about 2000/s), so the server spills throughout (`spilled_items` must
grow during the run). memccapable's own items live in other slab classes, whose pages the
server has to find while the 1 KiB class holds all of memory.

Stock (`memcached`: ac_policy=none) and the kernel-paged approaches (ospaging,
ospaging-file, effpaging) never spill; they get `-m 16`, 6 MiB pre-written and 2 MiB
from the writer, which fits (the stock cache would drop and ospaging refuse the rest).
They run without a memory cgroup and without swap: nothing limits them below -m, so
the kernel keeps every page in RAM. That is enough for a protocol check (the requests
reach the same protocol code; test_ospaging.py / test_effpaging.py check the paging in a
real cgroup). effpaging (and its variants) has no cgroup limit to size its hot region from, so it gets
ac_eff_memory=6M, and rounds every 2000 logged accesses so items move between regions. The uvmm
approaches get a resident cap of their own, ac_uvmm_memory=4M (emt: ac_emt_cache=4M), below the 8 MiB written: they page
to their page file all through the run (test_uvmm.py checks the paging itself).

memccapable flushes the server in four of its tests (ascii flush, ascii flush noreply,
binary flush, binary flushq), so it runs twice. First in its prompt mode (`-P`, the
answers on stdin): the 50 other tests in one process, in its order, the flush tests
answered "skip"; then `stats anticache` must show lost_items 0, every refused_* 0,
io_errors and checksum_errors 0, and every key written before and during the run must
read back byte-exact (flags too). Then the whole unmodified run (all 54 tests, exit code
0, "All tests passed"), after which every one of those keys, spilled ones included, must
miss, and the server must still store and serve new values. (Not `-T name` per test:
its "ascii quit" only knows the server is 1.6 or newer when "ascii version" ran before
it in the same process, so alone it fails against stock memcached 1.6.18 as well.)

A full memccapable pass takes about 5 s whatever the server, stock memcached included
(many requests take ~40 ms: it sends a `set` in three small writes and never sets
TCP_NODELAY, which most likely meets delayed ACKs), so the approaches run PARALLEL at a
time in one test (run_all), each with its own server (stopped by its PID in all cases, exit
code 0 and spill directory gone checked as in conftest.py); each approach's result is
printed and a failure names every approach that failed. Reads go in key order, 100 keys per `get` (under ac_merge=block a `get` of
keys from many different spill blocks currently stalls, ac_alloc_wait per key; not this
test's subject)."""
from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mc_helpers import HOST, ROOT, MiB, start_server, value_for

sys.path.insert(0, str(ROOT / "harness"))
from acbench.approaches import APPROACHES  # noqa: E402

MEMCCAPABLE = shutil.which("memccapable") or "/usr/bin/memccapable"
PARALLEL = 4

# libmemcached 1.1.4 src/bin/memcapable.cc testcases[], in its order
FLUSH_TESTS = ["ascii flush", "ascii flush noreply", "binary flush", "binary flushq"]
TESTS = [
    "ascii version", "ascii quit", "ascii verbosity", "ascii set", "ascii set noreply",
    "ascii get", "ascii gets", "ascii mget", "ascii flush", "ascii flush noreply", "ascii add",
    "ascii add noreply", "ascii replace", "ascii replace noreply", "ascii cas", "ascii cas noreply",
    "ascii delete", "ascii delete noreply", "ascii incr", "ascii incr noreply", "ascii decr",
    "ascii decr noreply", "ascii append", "ascii append noreply", "ascii prepend",
    "ascii prepend noreply", "ascii stat",
    "binary noop", "binary quit", "binary quitq", "binary set", "binary setq", "binary flush",
    "binary flushq", "binary add", "binary addq", "binary replace", "binary replaceq",
    "binary delete", "binary deleteq", "binary get", "binary getq", "binary getk", "binary getkq",
    "binary incr", "binary incrq", "binary decr", "binary decrq", "binary version",
    "binary append", "binary appendq", "binary prepend", "binary prependq", "binary stat",
]

VALUE = 1024
SPILL_MEM, OVERCOMMIT, SPILL_NEW = 8, 4, 8192      # spilling: 4x -m written, then 8192 more keys
FIT_MEM, FIT_DATA, FIT_NEW = 16, 6 * MiB, 2048      # the others: what fits


def _cases() -> dict[str, dict[str, str]]:
    cases: dict[str, dict[str, str]] = {}
    for name, a in APPROACHES.items():
        if a.in_process_only:                 # vma: no network server (see the docstring)
            continue
        ac = {"ac_policy": a.policy, **a.options}
        if ac not in cases.values():          # memcached-static: the same server as memcached
            cases[name] = ac
    cases["lru-block-merge"] = {"ac_policy": "lru", "ac_merge": "block"}
    for name in [n for n, a in APPROACHES.items() if a.policy == "effpaging" and n in cases]:
        cases[name].update(ac_eff_memory="6M", ac_log_round="2000", ac_log_slice="500")
    # tier uvmm: no cgroup limit to follow, so a cap of its own, below what is written: it pages
    for name in [n for n, a in APPROACHES.items() if a.options.get("ac_tier") == "uvmm" and n in cases]:
        cases[name].update(ac_uvmm_memory="4M")
    for name in [n for n, a in APPROACHES.items() if a.options.get("ac_tier") == "emt" and n in cases]:
        cases[name].update(ac_emt_cache="4M")          # tier emt is the same pager: the same cap
    return cases


CASES = _cases()


def spills(name: str) -> bool:
    return APPROACHES[name].spills if name in APPROACHES else True


def test_cases_cover_every_approach():
    for name, a in APPROACHES.items():
        if a.in_process_only:
            assert name not in CASES, name
            continue
        assert name in CASES or {"ac_policy": a.policy, **a.options} in CASES.values(), name
    assert len(TESTS) == 54 and len(set(TESTS)) == 54 and set(FLUSH_TESTS) <= set(TESTS)
    # make test's cases are cases (a renamed approach must not drop out of both runs)
    assert KEPT <= set(CASES)


STATUS = re.compile(r"^(?:Press <return> when you are ready\? )?(\S.*?)\s+\[(pass|skip|FAIL)\]$", re.M)


def memccapable(port: int, skip: list[str] = ()) -> float:
    """Runs memccapable, all its tests, or with `skip` in its prompt mode (-P, one answer
    per test on stdin: "skip" or run); every test not skipped must pass. Returns seconds."""
    argv = [MEMCCAPABLE, "-h", HOST, "-p", str(port), "-t", "20", "-v"]
    answers = "".join("skip\n" if t in skip else "\n" for t in TESTS) if skip else ""
    t0 = time.monotonic()
    cp = subprocess.run(argv + (["-P"] if skip else []), input=answers,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    out = cp.stdout
    assert cp.returncode == 0, f"memccapable exited {cp.returncode}:\n{out}"
    assert "[FAIL]" not in out and "tests failed" not in out and "All tests passed" in out, out
    got = dict(STATUS.findall(out))
    want = {t: "skip" if t in skip else "pass" for t in TESTS}
    assert got == want, f"memccapable ran other tests than expected: {set(got.items()) ^ set(want.items())}\n{out}"
    return time.monotonic() - t0


class Writer(threading.Thread):
    """Stores up to `limit` new keys, 32 every 16 ms, until stopped; `model` gets each
    acknowledged value (flags 2)."""

    def __init__(self, srv, limit: int, model: dict[str, bytes], seed: int):
        super().__init__(daemon=True)
        self.client, self.limit, self.model = srv.client(), limit, model
        self.rng = random.Random(seed)
        self.stop_flag = threading.Event()
        self.error: BaseException | None = None
        self.stored = 0

    def run(self) -> None:
        try:
            while self.stored < self.limit and not self.stop_flag.wait(0.016):
                batch = {f"new:{i:06d}": value_for(self.rng, f"new:{i:06d}", 2, VALUE)
                         for i in range(self.stored, min(self.limit, self.stored + 32))}
                failed = self.client.set_many({k: (v, 2) for k, v in batch.items()}, noreply=False)
                assert not failed, f"set refused for {failed[:5]}"
                self.model.update(batch)
                self.stored += len(batch)
        except BaseException as e:   # noqa: BLE001 - reported by the test
            self.error = e


def read_back(client, model: dict[str, bytes]) -> list[str]:
    """Keys whose value or flags differ from the model (flags = the version in the value)."""
    bad = []
    keys = sorted(model)
    for i in range(0, len(keys), 100):
        got = client.get_many(keys[i:i + 100])
        for k in keys[i:i + 100]:
            want = model[k]
            if got.get(k) != (want, int(want[want.index(b"#") + 1:want.index(b">")])):
                bad.append(k)
    return bad


def check_stats(st: dict) -> None:
    refused = {k: v for k, v in st.items() if k.startswith("refused_") and v != 0}
    assert st["lost_items"] == 0 and not refused, st
    assert st.get("io_errors", 0) == 0 and st.get("checksum_errors", 0) == 0, st


def run_case(name: str, tmp: Path) -> str:
    """One approach, start to stop; returns a summary line, raises on any failure."""
    sp = spills(name)
    mem, data, new = (SPILL_MEM, OVERCOMMIT * SPILL_MEM * MiB, SPILL_NEW) if sp else (FIT_MEM, FIT_DATA, FIT_NEW)
    t_start = time.monotonic()
    srv = start_server(tmp, mem=mem, threads=4, ac=dict(CASES[name]), check_dir_modes=sp)
    try:
        rng = random.Random(f"memccapable-{name}")
        model = {f"pre:{i:06d}": value_for(rng, f"pre:{i:06d}", 1, VALUE) for i in range(data // VALUE)}
        keys = list(model)
        c = srv.client()
        for i in range(0, len(keys), 200):
            assert not c.set_many({k: (model[k], 1) for k in keys[i:i + 200]}, noreply=False)
        before = srv.ac()
        if sp:
            assert before["spilled_items"] > len(keys) // 2, before

        writer = Writer(srv, new, model, rng.randrange(1 << 30))
        writer.start()
        try:
            t1 = memccapable(srv.port, skip=FLUSH_TESTS)      # the 50 others, while the writer writes
        finally:
            writer.stop_flag.set()
            writer.join(60)
        assert not writer.is_alive() and writer.error is None, writer.error
        during = srv.ac()
        if sp:
            assert during["spilled_items"] > before["spilled_items"], (before, during)
        check_stats(during)
        bad = read_back(c, model)
        assert not bad, f"{len(bad)} of {len(model)} keys differ or miss, e.g. {bad[:5]}"

        # the whole run, flush tests included: then nothing written before is served, spilled or not
        t2 = memccapable(srv.port)
        keys = sorted(model)
        for i in range(0, len(keys), 100):
            got = c.get_many(keys[i:i + 100])
            assert not got, f"{len(got)} keys served after flush_all, e.g. {sorted(got)[:3]}"
        check_stats(srv.ac())
        fresh = {f"post:{i:04d}": value_for(rng, f"post:{i:04d}", 3, VALUE) for i in range(2000)}
        assert not c.set_many({k: (v, 3) for k, v in fresh.items()}, noreply=False)
        assert not read_back(c, fresh)
        after = srv.ac()
        check_stats(after)
        return (f"{name}: -m {mem}, {len(model)} keys of 1 KiB ({writer.stored} during the run), spilled "
                f"{before.get('spilled_items', 0)} -> {during.get('spilled_items', 0)}, fetched "
                f"{after.get('fetched_items', 0)}; memccapable {t1:.1f} s + {t2:.1f} s; "
                f"{time.monotonic() - t_start:.1f} s in all")
    finally:                          # also when the run failed: stop by PID, then check the exit
        problems = []
        rc = srv.stop()
        if rc != 0:
            problems.append(f"memcached-ac exited with {rc} after SIGTERM:\n{srv.stderr()[-2000:]}")
        if srv.spill_dir is not None and srv.spill_dir.exists():
            problems.append(f"spill directory {srv.spill_dir} still exists after SIGTERM")
        if problems:
            raise AssertionError("\n".join(problems))   # chained to a failure in flight, if any


# make test runs each policy over its default tier, lru over every other tier, and lru's block merge
# and compression (their own read paths); make test-full adds the rest, the same protocol code: a kept
# case's policy and tier with other settings (sampling, block size, compaction, codec, I/O engine,
# clock, classifier charge, chain order, page compression), a policy over another tier (its hooks are
# the same whatever the tier; the tier's paths the same whatever the policy), and emt, uvmm's pager
# with read-ahead (test_emt.py runs it under every command). memcached/tests/README.md
KEPT = {"memcached", "lru", "lru-block-merge", "lru-lz4", "alru", "logging", "sieve", "s3fifo", "wtinylfu",
        "lru-nvm", "lru-remote", "lru-tuples", "ospaging", "ospaging-file", "effpaging", "uvmm"}
FULL_ONLY = set(CASES) - KEPT


def run_all(names: list[str], tmp_path_factory) -> None:
    """Every case of names, PARALLEL at a time, each with its own server; each result printed, and one
    failure naming every case that failed (the first one's exception chained). One test item runs
    them all: as one item per case behind a shared fixture, the cases ran twice under make test's two
    workers (98 s each; pytest 9 ignores pytest-xdist's groups, which would have kept them on one)."""
    failed: dict[str, BaseException] = {}
    with ThreadPoolExecutor(PARALLEL) as ex:
        futures = {name: ex.submit(run_case, name, tmp_path_factory.mktemp(name)) for name in names}
        for name, f in futures.items():
            e = f.exception()
            if e is None:
                print(f"\n{name}: {f.result()}")
            else:
                failed[name] = e
    if failed:
        text = "\n".join(f"{name}: {type(e).__name__}: {e}" for name, e in failed.items())
        raise AssertionError(f"memccapable failed for {', '.join(failed)}:\n{text}") from next(iter(failed.values()))


def test_memccapable(tmp_path_factory):
    run_all([n for n in CASES if n not in FULL_ONLY], tmp_path_factory)


@pytest.mark.full
def test_memccapable_full_only(tmp_path_factory):
    run_all([n for n in CASES if n in FULL_ONLY], tmp_path_factory)
