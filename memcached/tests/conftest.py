"""Fixtures for the memcached-ac integration tests (pytest, over 127.0.0.1).

`server(...)` starts memcached-ac on a free port (see mc_helpers.start_server)
and returns a mc_helpers.Server. Every server a test started is stopped in the
teardown by its own PID (SIGTERM, SIGKILL after 20 s); then the teardown checks
that it exited normally and that its spill directory is gone."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ac_list import ac_list, spill_pairs, spill_policies  # noqa: E402
from mc_helpers import BIN, Server, keeps_files, start_server  # noqa: E402
from paging import page_cluster0, swap, var_tmp  # noqa: E402,F401  (fixtures of the paging tests)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness"))
from acbench import testlock  # noqa: E402


def pytest_configure(config):
    if not BIN.exists():
        raise pytest.UsageError(f"{BIN} is missing: run `make -C memcached all` first")


# The sets come from the binary under test (-o ac_list, memcached/ac_list.py): a policy or tier
# added to core/ac_components.def is tested without a line here.
COMPONENTS = ac_list(str(BIN)) if BIN.exists() else {"policies": [], "tiers": [], "pairs": [], "aliases": []}
# The policies that spill and serve the network (over their default tier): tests of the
# make-room path run once per policy (lru, alru, sieve, s3fifo, wtinylfu, logging).
SPILL_POLICIES = spill_policies(COMPONENTS)
# Every such (policy, tier) pair, "policy" alone for its default tier: the no-loss suite
# (mixed commands, 8 clients) runs once per pair in `make test-full` (lru, alru, sieve, s3fifo,
# wtinylfu, logging, lru+tuples, ..., logging+blocks, lru+nvm, ..., lru+remote, ...), and in `make
# test` each policy over its default tier and one pair over each other tier (spill_pair).
SPILL_PAIRS = spill_pairs(COMPONENTS)


def per_tier(pairs: list[str]) -> list[str]:
    """The first pair over each spilling tier (lru over blocks, lru over tuples): for paths that do
    not depend on the policy (the spill files' I/O and its errors), whose policy-independent logic
    policies/tests/test_core.c checks at every step."""
    default = {p["name"]: p["default_tier"] for p in COMPONENTS["policies"]}
    seen: dict[str, str] = {}
    for name in pairs:
        policy, _, tier = name.partition("+")
        seen.setdefault(tier or default[policy], name)
    return list(seen.values())


SPILL_PAIRS_PER_TIER = per_tier(SPILL_PAIRS)



def pytest_collection_modifyitems(config, items):
    """Tests that change machine-wide state (vm.page-cluster, swap areas, a memory cgroup with
    swap) or read counters it moves (major faults) run one after another under pytest-xdist (`-n 2
    --dist loadgroup`, make test): they use the paging fixtures, or are marked `machine`. They go to
    one worker (xdist_group), and hold a lock shared by the workers while they run
    (machine_state_lock): pytest 9 ignores the group (pytest-xdist 3.8 renames the node id through
    an attribute pytest 9 no longer reads), so the lock is what keeps them apart."""
    for item in items:
        if {"page_cluster0", "swap"} & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("machine"):
            item.add_marker(pytest.mark.machine)
            item.add_marker(pytest.mark.xdist_group("machine"))


@pytest.fixture(autouse=True)
def machine_state_lock(request, tmp_path_factory):
    """A `machine` test runs holding an exclusive lock on a file in the run's temporary root, shared
    by the xdist workers (each worker's base directory is a child of it); set up before the test's
    other fixtures (autouse first), so page_cluster0 and swap change nothing until it is held."""
    if request.node.get_closest_marker("machine") is None:
        yield
        return
    with testlock.machine_state_lock(tmp_path_factory):
        yield


def pair_options(pair: str) -> dict[str, str]:
    """-o settings of "policy" or "policy+tier"."""
    policy, _, tier = pair.partition("+")
    return {"ac_policy": policy, **({"ac_tier": tier} if tier else {})}


# The pairs whose records are in files (blocks, tuples; not nvm, remote): the spill files' I/O
# faults, a full file system, damaged records on disk (test_io_faults, test_enospc, test_corruption)
FILE_PAIRS = [p for p in SPILL_PAIRS if keeps_files(pair_options(p))]


@pytest.fixture(params=SPILL_POLICIES)
def spill_policy(request) -> str:
    return request.param


@pytest.fixture(params=[p if p in SPILL_POLICIES or p in SPILL_PAIRS_PER_TIER
                        else pytest.param(p, marks=pytest.mark.full) for p in SPILL_PAIRS])
def spill_pair(request) -> dict[str, str]:
    """Every spilling pair; `make test` runs each policy over its default tier (logging's is
    tuples) and the first pair over each tier no policy defaults to (lru+nvm, lru+remote), `make
    test-full` every pair (the others marked full)."""
    return pair_options(request.param)


@pytest.fixture(params=[p if p in SPILL_PAIRS_PER_TIER else pytest.param(p, marks=pytest.mark.full)
                        for p in FILE_PAIRS])
def spill_pair_io(request) -> dict[str, str]:
    """Every spilling pair whose tier keeps files; `make test` runs one per tier
    (SPILL_PAIRS_PER_TIER), `make test-full` the others too (marked full)."""
    return pair_options(request.param)


@pytest.fixture
def server(tmp_path):
    started: list[Server] = []

    def start(**kw) -> Server:
        srv = start_server(tmp_path, **kw)
        started.append(srv)
        return srv

    try:
        yield start
    finally:
        problems = []
        for srv in started:
            try:
                rc = srv.stop()          # no-op if the test stopped it already
            except AssertionError as e:
                problems.append(str(e))
                continue
            if rc != 0:
                problems.append(f"memcached-ac exited with {rc} after SIGTERM:\n{srv.stderr()[-2000:]}")
            if srv.spill_dir is not None and srv.spill_dir.exists():
                problems.append(f"spill directory {srv.spill_dir} still exists after SIGTERM: "
                                f"{sorted(p.name for p in srv.spill_dir.iterdir())}")
        assert not problems, "\n".join(problems)
