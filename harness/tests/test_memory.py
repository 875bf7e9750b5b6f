"""Memory arithmetic: -m, cgroup limit = M/D × D + allowance, OPT capacity, hash power."""
from __future__ import annotations

import pytest

from acbench.approaches import APPROACHES, Approach
from acbench.memory import MIB, allowance, hash_bytes, hashpower_for, plan


def test_user_space_plan() -> None:
    p = plan(APPROACHES["lru"], 20000, 1184, 0.25, 10 * MIB)
    assert p.data_bytes == 23_680_000
    assert p.item_mb == 6                       # ceil(5_920_000 / 1 MiB)
    assert p.limit_bytes == 6 * MIB + 10 * MIB  # ratio × D (rounded up to MiB) + allowance
    assert p.swap_bytes == 0
    assert p.opt_capacity == 6 * MIB // 1184 == 5313
    assert p.evicted_max == 20000
    assert plan(APPROACHES["memcached"], 20000, 1184, 0.25, 0).evicted_max == 0
    assert plan(APPROACHES["logging"], 20000, 1184, 0.25, 0).evicted_max == 0   # Bloom filter + cold index


def test_exact_mib_is_not_rounded_up() -> None:
    p = plan(APPROACHES["lru"], 4096, 1024, 0.5, 0)
    assert (p.item_mb, p.limit_bytes, p.opt_capacity) == (2, 2 * MIB, 2048)


def test_too_little_memory_is_refused() -> None:
    with pytest.raises(ValueError) as e:
        plan(APPROACHES["lru"], 3000, 1184, 0.25, 0)
    assert str(e.value) == ("memory ratio 0.25 of 3552000 bytes of data (3000 records x 1184 B) gives -m 1 MiB;"
                            " memcached-ac needs at least 2 MiB: raise recordcount or mem_ratio")


def test_paging_plan_gets_swap() -> None:
    paging = Approach("ospaging-test", "none", pages=True, swap=True, spills=False)
    p = plan(paging, 1_000_000, 1184, 0.5, 8 * MIB)
    assert p.item_mb == 1244                    # ceil(1.1 × D / MiB) + 1: every item stays mapped
    assert p.limit_bytes == 565 * MIB + 8 * MIB
    assert p.swap_bytes == 1_302_400_000


def test_hashpower_and_allowance() -> None:
    assert hashpower_for(1000) == 16
    assert hashpower_for(98304) == 16           # 1.5 × 2^16: no expansion yet
    assert hashpower_for(98305) == 17
    assert hashpower_for(1_000_000) == 20
    assert hash_bytes(1_000_000) == 8 << 20
    assert allowance(3 * MIB, 1_000_000, 4 * MIB) == 15 * MIB


def test_paging_plans() -> None:
    from acbench.approaches import get_approach
    from acbench.memory import MIB, plan
    anon = plan(get_approach("ospaging"), 10000, 1184, 0.5, 8 * MIB)
    data = 10000 * 1184
    assert data == 11_840_000
    assert anon.item_mb == 14                   # ceil(1.1 × D / MiB) + 1
    assert anon.swap_bytes == 13_024_001        # ceil(1.1 × D), 1.1 as a double
    assert anon.limit_bytes == 6 * MIB + 8 * MIB and anon.evicted_max == 0
    f = plan(get_approach("ospaging-file"), 10000, 1184, 0.5, 8 * MIB)
    assert f.item_mb == 14 and f.swap_bytes == 0 and f.limit_bytes == anon.limit_bytes
    assert plan(get_approach("ospaging"), 10000, 1184, 0.5, 8 * MIB, swap=1 << 30).swap_bytes == 1 << 30


def test_paging_setup_restores_page_cluster(tmp_path) -> None:
    import pytest
    from acbench.paging import PagingError, PagingSetup
    sysctl = tmp_path / "page-cluster"
    sysctl.write_text("3\n")
    p = PagingSetup(None, 0, sysctl=sysctl)
    p.start()
    assert sysctl.read_text() == "0" and not p.swap_on
    p.stop()
    assert sysctl.read_text() == "3"
    # a swap file that cannot be made (a directory that does not exist): the error names it,
    # and stop() still restores the sysctl
    bad = PagingSetup(tmp_path / "missing" / "swap", 1 << 20, sysctl=sysctl)
    with pytest.raises(PagingError, match="cannot create the swap file .*missing/swap"):
        bad.start()
    assert sysctl.read_text() == "0"
    bad.stop()
    assert sysctl.read_text() == "3"
    missing = PagingSetup(None, 0, sysctl=tmp_path / "nope" / "page-cluster")
    with pytest.raises(PagingError, match="cannot set vm.page-cluster=0 via .*nope/page-cluster"):
        missing.start()
    missing.stop()
