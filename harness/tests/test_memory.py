"""Memory arithmetic: -m, cgroup limit = M/D × D + allowance, OPT capacity, hash power."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

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
    assert p.item_budget_bytes == 6 * MIB
    # nothing sized for the evicted table: it grows with the spilled items, charged against -m by the server
    assert "evicted_max" not in p.as_row()


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
    assert anon.limit_bytes == 6 * MIB + 8 * MIB
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


def _holder(sysctl, run_dir):
    """Another acbench process that sets page-cluster 0 (PagingSetup.start) and restores it when
    its stdin is closed."""
    import subprocess
    import sys
    code = ("import sys\nfrom pathlib import Path\nfrom acbench.paging import PagingSetup\n"
            f"p = PagingSetup(None, 0, sysctl=Path({str(sysctl)!r}))\np.start()\nprint('set', flush=True)\n"
            "sys.stdin.read()\np.stop()\n")
    env = {**__import__("os").environ, "ACBENCH_RUN_DIR": str(run_dir)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout.readline() == "set\n"
    return proc


def test_two_runs_at_once_restore_the_machines_page_cluster(tmp_path, monkeypatch) -> None:
    """Two acbench runs with paging cells at once: whichever is done first, the value of the
    machine comes back when both are (before, the second took the first's 0 for the machine's
    value and restored it last)."""
    from acbench.paging import PagingSetup
    monkeypatch.setenv("ACBENCH_RUN_DIR", str(tmp_path / "run"))
    sysctl = tmp_path / "page-cluster"
    for other_first in (True, False):
        sysctl.write_text("3\n")
        other = _holder(sysctl, tmp_path / "run")
        try:
            assert sysctl.read_text() == "0"
            mine = PagingSetup(None, 0, sysctl=sysctl)
            mine.start()
            assert mine.old_cluster == "3"          # the machine's value, not the other run's 0
            if other_first:
                other.stdin.close()
                assert other.wait(timeout=30) == 0
                assert sysctl.read_text() == "0"    # still in use by this run
                mine.stop()
            else:
                mine.stop()
                assert sysctl.read_text() == "0"    # the other run still has it set
                other.stdin.close()
                assert other.wait(timeout=30) == 0
            assert sysctl.read_text().strip() == "3"
        finally:
            if other.poll() is None:
                other.kill()
                other.wait()
    assert not list((tmp_path / "run" / "runs").glob("*.json"))


def test_nested_holds_and_another_process_restore_page_cluster_once(tmp_path, monkeypatch) -> None:
    """The memcached tests' fixture and soak.py hold page-cluster through the same functions as
    acbench runs: a hold nested in one process (a fixture around an in-process run) restores only
    at the outermost release, and another process's hold keeps it at 0 until both are done."""
    from acbench.paging import hold_page_cluster_zero, page_cluster_zero, release_page_cluster
    monkeypatch.setenv("ACBENCH_RUN_DIR", str(tmp_path / "run"))
    sysctl = tmp_path / "page-cluster"
    sysctl.write_text("3\n")
    with page_cluster_zero(sysctl):
        assert hold_page_cluster_zero(sysctl) == "3"
        release_page_cluster("3", sysctl)
        assert sysctl.read_text() == "0"            # the outer hold is still on
        other = _holder(sysctl, tmp_path / "run")     # holds it, then releases it
        other.stdin.close()
        assert other.wait(timeout=30) == 0
        assert sysctl.read_text() == "0"            # it found it held by this process
    assert sysctl.read_text().strip() == "3"
    assert not list((tmp_path / "run" / "runs").glob("*.json"))


# --- item budget, calibrated allowance (acbench/calibrate.py) --------------------------------------

from fractions import Fraction  # noqa: E402

from acbench import calibrate, measure, paths  # noqa: E402
from acbench.calibrate import Calibration, Fit, Point, Request, Sample, fit_line, overhead_of  # noqa: E402


def test_plan_has_item_budget_and_allowance_source() -> None:
    p = plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 24 * MIB, allowance_source="calibrated:x")
    assert p.item_budget_bytes == 565 * MIB == p.item_mb * MIB
    assert p.limit_bytes == p.item_budget_bytes + p.allowance_bytes == 589 * MIB
    row = p.as_row()
    assert row["item_budget_bytes"] == 565 * MIB and row["allowance_bytes"] == 24 * MIB
    assert row["allowance_source"] == "calibrated:x"
    assert plan(APPROACHES["lru"], 1000, 4096, 1, 0).allowance_source == "spec"
    paging = plan(APPROACHES["ospaging"], 1_000_000, 1184, 0.5, 24 * MIB)
    assert paging.item_mb == 1244 and paging.item_budget_bytes == 565 * MIB   # budget = what OPT gets
    assert paging.limit_bytes == 589 * MIB


def test_fit_is_exact_on_a_line() -> None:
    f = fit_line([(25_000, 1_000_000 + 20 * 25_000), (100_000, 1_000_000 + 20 * 100_000),
                  (250_000, 1_000_000 + 20 * 250_000)])
    assert (f.a, f.b, f.lsq_a, f.lsq_b, f.max_residual) == (1_000_000, 20, 1_000_000, 20, 0)


def test_fit_least_squares_then_envelope() -> None:
    f = fit_line([(25_000, 2_000_000), (100_000, 4_000_000), (250_000, 5_000_000)])
    b = Fraction(260, 21)                     # Sxy / Sxx = 3.25e11 / 2.625e10
    assert f.lsq_b == float(b) and f.b == float(b)
    assert f.lsq_a == float(Fraction(11_000_000, 3) - b * 125_000)
    assert f.a == float(4_000_000 - b * 100_000)   # raised to the highest point above the line
    assert f.max_residual == float(4_000_000 - (Fraction(11_000_000, 3) - b * 125_000) - b * 100_000)
    # a falling line is not extrapolated: b = 0, a = the highest point
    g = fit_line([(25_000, 3_000_000), (100_000, 2_000_000)])
    assert g.lsq_b < 0 and (g.b, g.a) == (0, 3_000_000)
    # one point (a cell calibrated at its own size)
    assert fit_line([(8000, 1_500_000)]) == Fit(1_500_000, 0, 1_500_000, 0, 0)


def _point(n: int, overhead: int) -> Point:
    return Point(n, n, n // 2, 1, MIB, 2 * MIB, overhead, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0.0)


def test_allowance_from_a_calibration() -> None:
    cal = Calibration("lru", (_point(25_000, 1),), Fit(2_000_000, 10, 2_000_000, 10, 0))
    # hash table of 2^20 buckets + a + b·N, × SAFETY 1.15, + floor
    assert cal.overhead(1_000_000) == (8 << 20) + 12_000_000
    assert cal.allowance(1_000_000, 8 * MIB) == 31_835_508
    assert Calibration("x", (), Fit(-5e6, 0, 0, 0, 0)).overhead(1000) == 512 * 1024   # never below the hash table
    assert cal.summary() == "calibrated:n=25k a=1.91MiB b=10.00B/rec res=0.00MiB x1.15+floor"
    # kernel-paged: the overhead alone (the item pages take the rest of the limit)
    assert cal.allowance(1_000_000, 8 * MIB, pages=True) == (8 << 20) + 12_000_000
    assert cal.summary(pages=True).endswith("res=0.00MiB x1 (fills the limit)")
    assert Calibration.from_json(json.loads(json.dumps(cal.to_json()))) == cal


def test_overhead_of_samples() -> None:
    lru, osp, eff = APPROACHES["lru"], APPROACHES["ospaging"], APPROACHES["effpaging"]
    s = Sample(0.0, rss=70 * MIB, shmem=MIB, cache=30 * MIB, kmem=2 * MIB, status={}, vmas=None)
    assert overhead_of(s, lru, 64 * MIB, {}) == (9 * MIB, 6 * MIB)     # rss + shmem + kmem − budget
    vmas = [(0x1000, 0x1000 + 40 * MIB, 40 * MIB), (0x9000_0000, 0x9000_0000 + 100 * MIB, 30 * MIB),
            (0xa000_0000, 0xa000_0000 + 2 * MIB, MIB)]
    s = Sample(0.0, 0, 0, 0, kmem=3 * MIB, status={}, vmas=vmas)
    # ospaging: the item mapping is the one of os_mapping_bytes
    assert overhead_of(s, osp, 0, {"os_mapping_bytes": 100 * MIB}) == (44 * MIB, 41 * MIB)
    # effpaging: hot + cold mapping from eff_hot_base, and the classifier book counted as budget
    stats = {"eff_hot_base": "0x90000000", "eff_hot_bytes": 60 * MIB, "eff_cold_bytes": 40 * MIB,
             "eff_memory": 65 * MIB}
    assert overhead_of(s, eff, 0, stats) == (39 * MIB, 36 * MIB)
    assert overhead_of(Sample(0.0, 0, 0, 0, 0, {}, None), osp, 0, {"os_mapping_bytes": 1}) is None


def test_overhead_when_the_data_fits_the_budget() -> None:
    """M/D > 1: a user-space server holds all the data, not its budget; the overhead is what it holds
    beyond the data (it was RSS less the budget: −109 MiB for memcached at M/D 2, 100k records)."""
    lru = APPROACHES["lru"]
    s = Sample(0.0, rss=130 * MIB, shmem=0, cache=0, kmem=2 * MIB, status={}, vmas=None)
    assert overhead_of(s, lru, min(226 * MIB, 113 * MIB), {}) == (19 * MIB, 17 * MIB)


def test_probe_counts_come_from_the_workload_file_when_the_spec_has_none(tmp_path) -> None:
    """scanonly sets operationcount = 200 (scans of 1000 gets) in its file: a probe runs those 200,
    not one operation per record; a spec's own value wins."""
    from acbench.spec import parse_spec
    (tmp_path / "scans").write_text("operationcount=200\nwarmupoperations=20\nscanproportion=1\n"
                                    "readproportion=0\nupdateproportion=0\n")
    grid = {"approach": ["memcached"], "workload": ["scans"], "zipf_theta": [0.99], "mem_ratio": [2]}
    spec = parse_spec({"fixed": {"recordcount": 100_000}, "grid": grid}, tmp_path / "s.toml")
    req = calibrate.request_for(spec, spec.cells()[0], 1184)
    assert calibrate.probe_counts(100_000, req.props) == (200, 20)
    assert req.key()["method"] == {"extra": calibrate.PROBE_EXTRA, "held": "min(budget, data)"}
    spec = parse_spec({"fixed": {"recordcount": 100_000, "operationcount": 5000}, "grid": grid}, tmp_path / "s.toml")
    req = calibrate.request_for(spec, spec.cells()[0], 1184)
    assert calibrate.probe_counts(100_000, req.props) == (5000, 20)


def _req(tmp_path, **kw) -> Request:
    wl = tmp_path / "readonly"
    if not wl.exists():
        wl.write_text("readproportion=1\nrequestdistribution=zipfian\n")
    props = {"recordcount": 1_000_000, "operationcount": 1_000_000, "warmupoperations": 500_000,
             "fieldcount": 10, "fieldlength": 100, "zipfianconstant": 0.99, "seed": 1}
    props.update(kw.pop("props", {}))
    args = {"approach": "lru", "workload_file": str(wl), "props": props, "ratio": 0.5, "threads": 1,
            "footprint": 1184}
    args.update(kw)
    return Request(**args)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    d.mkdir()
    monkeypatch.setattr(paths, "cache_dir", lambda: d)
    monkeypatch.setattr(measure, "_binary_id", lambda: "bin-1")
    return d


def test_calibration_cache_key(tmp_path, cache, monkeypatch) -> None:
    base = _req(tmp_path)
    assert base.sizes == (25_000, 100_000, 250_000)
    assert base.key()["runs"] == [[25_000, 25_000, 12_500], [100_000, 100_000, 50_000], [250_000, 250_000, 125_000]]
    same = [_req(tmp_path, props={"recordcount": 2_000_000}), _req(tmp_path, props={"seed": 7}),
            _req(tmp_path, props={"operationcount": 10_000_000})]
    for r in same:
        assert r.cache_file() == base.cache_file()
    other = [_req(tmp_path, approach="logging"), _req(tmp_path, ratio=0.25), _req(tmp_path, threads=2),
             _req(tmp_path, footprint=1000), _req(tmp_path, props={"fieldlength": 200}),
             _req(tmp_path, props={"recordcount": 100_000}), _req(tmp_path, props={"operationcount": 100_000}),
             _req(tmp_path, props={"zipfianconstant": 0.5})]
    files = {r.cache_file() for r in other}
    assert len(files) == len(other) and base.cache_file() not in files
    assert _req(tmp_path, props={"recordcount": 100_000}).sizes == (100_000,)    # small: its own size
    first = base.cache_file()
    monkeypatch.setattr(measure, "_binary_id", lambda: "bin-2")
    assert _req(tmp_path).cache_file() != first
    assert base.cache_file().name.startswith("allowance-lru-")


def test_cached_calibration_and_pending(tmp_path, cache) -> None:
    req = _req(tmp_path)
    assert calibrate.allowance_for(req, 8 * MIB, run=False) == (None, "to calibrate: n=25k/100k/250k")
    assert req.describe() == "lru readonly θ 0.99 M/D 0.5"
    cal = Calibration("lru", (_point(25_000, 1), _point(100_000, 2), _point(250_000, 3)),
                      Fit(2_000_000, 10, 2_000_000, 10, 0))
    req.cache_file().write_text(json.dumps({"key": req.key(), "value": cal.to_json()}))
    assert calibrate.cached(req) == cal
    assert calibrate.allowance_for(req, 8 * MIB, run=False) == (31_835_508, cal.summary())
    assert calibrate.calibrate(req) == cal          # cached: nothing runs
    # a kernel-paged approach gets the modelled overhead alone
    osp = _req(tmp_path, approach="ospaging")
    osp.cache_file().write_text(json.dumps({"key": osp.key(), "value": cal.to_json()}))
    assert calibrate.allowance_for(osp, 8 * MIB, run=False) == ((8 << 20) + 12_000_000, cal.summary(pages=True))


def test_dry_run_table_shows_budget_and_allowance(tmp_path, cache) -> None:
    from rich.console import Console

    from acbench.runner import ResumeStatus, dry_run_table
    from acbench.spec import parse_spec
    (tmp_path / "readonly").write_text("readproportion=1\nrequestdistribution=zipfian\n")
    spec = parse_spec({"fixed": {"recordcount": 1_000_000, "operationcount": 1_000_000, "fieldcount": 10,
                                 "fieldlength": 100},
                       "grid": {"approach": ["lru", "logging"], "workload": ["readonly"], "zipf_theta": [0.99],
                                "mem_ratio": ["1/2"]},
                       "memory": {"item_footprint": 1184, "provisioning": "own"}}, tmp_path / "s.toml")
    lru = next(c for c in spec.cells() if c.approach == "lru")
    req = calibrate.request_for(spec, lru, 1184)
    cal = Calibration("lru", (_point(25_000, 1),), Fit(2_000_000, 10, 2_000_000, 10, 0))
    req.cache_file().write_text(json.dumps({"key": req.key(), "value": cal.to_json()}))
    con = Console(record=True, width=400)
    con.print(dry_run_table(spec, spec.cells(), ResumeStatus(todo=spec.cells())))
    text = con.export_text()
    for col in ("item budget", "allowance", "cgroup limit", "allowance source"):
        assert col in text
    lru_line = next(line for line in text.splitlines() if "lru_readonly" in line)
    # 565 MiB budget + 31,835,508 B allowance (30.4 MiB) = 595.4 MiB
    assert "565.0 MiB" in lru_line and "30.4 MiB" in lru_line and "595.4 MiB" in lru_line
    assert "calibrated:n=25k" in lru_line
    log_line = next(line for line in text.splitlines() if "logging_readonly" in line)
    assert "565.0 MiB" in log_line and "to calibrate" in log_line
    assert "1 allowance calibrations (3 runs) are not cached" in text and "logging readonly θ 0.99 M/D 0.5" in text


def test_spec_allowance_is_used_as_given(tmp_path, cache) -> None:
    from acbench.runner import plan_for
    from acbench.spec import parse_spec
    (tmp_path / "readonly").write_text("readproportion=1\n")
    spec = parse_spec({"fixed": {"recordcount": 1_000_000},
                       "grid": {"approach": ["lru"], "workload": ["readonly"], "zipf_theta": [0.99],
                                "mem_ratio": ["1/2"]},
                       "memory": {"item_footprint": 1184, "allowance": "48M"}}, tmp_path / "s.toml")
    p = plan_for(spec, spec.cells()[0], calibrate_missing=False)
    assert (p.allowance_bytes, p.allowance_source, p.limit_bytes) == (48 * MIB, "spec", 613 * MIB)


# --- equal provisioning: one limit per cell (memory.py) ---------------------------------------------

def test_equal_plan_takes_needs_out_of_the_limit() -> None:
    # limit = 565 MiB budget + 20 MiB (stock memcached’s ×1.15 need); lru needs 23.75 MiB: -m 561.25 → 561
    p = plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=23 * MIB + 3 * MIB // 4)
    assert (p.limit_bytes, p.item_mb, p.item_budget_bytes) == (585 * MIB, 561, 565 * MIB)
    assert p.as_row()["approach_needs_bytes"] == 23 * MIB + 3 * MIB // 4 and p.as_row()["provisioning"] == "equal"
    # rounded down: -m 561.5 -> 561 (to the nearest, 562 left 0.5 MiB less than the needs: logging's
    # OOM kills at 200k records); a need of exactly the room gets it, one byte more does not
    assert plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=23 * MIB + MIB // 2).item_mb == 561
    assert plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=23 * MIB).item_mb == 562
    assert plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=23 * MIB + 1).item_mb == 561
    # needs within 64 KiB above stock memcached's allowance (calibration noise) get the whole budget;
    # more, and -m is what the limit leaves, rounded down
    assert plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=20 * MIB + 64 * 1024).item_mb == 565
    assert plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=20 * MIB + 64 * 1024 + 1).item_mb == 564
    # needing less than stock memcached never gives more than the budget (R <= C)
    assert plan(APPROACHES["lru"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=MIB).item_mb == 565
    # a paging approach: same limit, -m covers the data, nothing subtracted
    osp = plan(APPROACHES["ospaging"], 1_000_000, 1184, 0.5, 20 * MIB, needs_bytes=99 * MIB)
    assert (osp.limit_bytes, osp.item_mb, osp.needs_bytes) == (585 * MIB, 1244, None)
    with pytest.raises(ValueError) as e:
        plan(APPROACHES["logging"], 20_000, 1184, 0.25, 2 * MIB, needs_bytes=7 * MIB)
    assert str(e.value) == ("logging needs 7.0 MiB beside its items, which leaves 1.0 MiB of the cell's 8.0 MiB limit"
                            " for -m; memcached-ac needs at least 2 MiB: raise recordcount or mem_ratio")


def _cal(approach: str, a: float) -> Calibration:
    return Calibration(approach, (_point(25_000, 1),), Fit(a, 10, a, 10, 0))


def test_equal_limit_from_stock_memcached(tmp_path, cache) -> None:
    from acbench.runner import plan_for
    from acbench.spec import parse_spec
    (tmp_path / "readonly").write_text("readproportion=1\nrequestdistribution=zipfian\n")
    spec = parse_spec({"fixed": {"recordcount": 1_000_000, "operationcount": 1_000_000},
                       "grid": {"approach": ["lru", "logging", "ospaging", "logging-buffer"], "workload": ["readonly"],
                                "zipf_theta": [0.99], "mem_ratio": ["1/2"]},
                       "memory": {"item_footprint": 1184}}, tmp_path / "s.toml")
    cells = {c.approach: c for c in spec.cells()}
    reqs = {a: calibrate.request_for(spec, c, 1184) for a, c in cells.items()}
    # nothing cached: each plan says which calibrations it waits for; ospaging needs stock memcached's only
    assert plan_for(spec, cells["lru"], calibrate_missing=False).allowance_source == \
        "to calibrate: memcached n=25k/100k/250k, lru n=25k/100k/250k"
    assert plan_for(spec, cells["ospaging"], calibrate_missing=False).allowance_source == \
        "to calibrate: memcached n=25k/100k/250k"
    assert sorted(r.approach for r in calibrate.spec_requests(spec)) == ["logging", "logging-buffer", "lru", "memcached"]
    for r, cal in ((calibrate.reference_of(reqs["lru"]), _cal("memcached", 2_000_000)),
                   (reqs["lru"], _cal("lru", 4_000_000)), (reqs["logging"], _cal("logging", 40_000_000)),
                   (reqs["logging-buffer"], _cal("logging-buffer", 40_000_000))):
        r.cache_file().write_text(json.dumps({"key": r.key(), "value": cal.to_json()}))
    plans = {a: plan_for(spec, c, calibrate_missing=False) for a, c in cells.items()}
    ref = (8 << 20) + 2_000_000 + 10_000_000                  # hash + a + b·N of stock memcached
    assert {p.limit_bytes - p.offline_bytes for p in plans.values()} == {565 * MIB + math.ceil(1.15 * ref)}
    # the paper's accounting of Siberia: what logging-buffer needs beyond stock memcached beside the limit,
    # its -m stock memcached's less the spill room
    buf = plans["logging-buffer"]
    assert buf.offline_bytes == math.ceil(1.15 * (ref + 38_000_000)) - math.ceil(1.15 * ref) > 0
    assert buf.item_mb == 564 and buf.needs_bytes == math.ceil(1.15 * ref) + MIB
    assert all(p.offline_bytes == 0 for a, p in plans.items() if a != "logging-buffer")
    assert buf.allowance_source.endswith("; classifier offline")
    limit = plans["lru"].limit_bytes
    # each spilling approach also needs one block (1 MiB) of page cache for its spill file
    assert plans["lru"].needs_bytes == math.ceil(1.15 * (ref + 2_000_000)) + MIB
    assert plans["lru"].item_mb == math.floor((limit - plans["lru"].needs_bytes) / MIB) == 561
    assert plans["logging"].item_mb == math.floor((limit - math.ceil(1.15 * (ref + 38_000_000)) - MIB) / MIB) == 522
    assert plans["ospaging"].item_mb == 1244 and plans["ospaging"].needs_bytes is None
    assert plans["lru"].allowance_source.startswith("equal: memcached calibrated:n=25k")
    assert plans["logging"].allowance_source.endswith("res=0.00MiB x1.15 + spill room 1MiB")
    assert "; needs calibrated:n=25k" in plans["logging"].allowance_source
    assert plans["ospaging"].allowance_source.endswith("; fills the limit")


def test_fig3_cells_share_one_limit(cache, monkeypatch) -> None:
    """Every approach of a fig3-paper cell gets the same cgroup limit (the dry run's plans), but
    logging-buffer's offline classifier beside it, and what an approach needs beyond stock
    memcached shows as a smaller -m."""
    from acbench.runner import plan_for
    from acbench.spec import load_spec
    spec = load_spec(Path(__file__).resolve().parents[2] / "experiments" / "fig3-paper.toml")
    overheads = {"memcached-static": 1_500_000, "memcached": 1_500_000, "logging": 30_000_000, "lru": 1_500_000}
    monkeypatch.setattr(calibrate, "cached", lambda r: _cal(r.approach, overheads.get(r.approach, 2_500_000)))
    groups: dict[tuple, dict[str, Any]] = {}
    for c in spec.cells():
        groups.setdefault((c.workload, c.zipf_theta, c.mem_ratio, c.repetition), {})[c.approach] = \
            plan_for(spec, c, calibrate_missing=False)
    assert len(groups) >= 12
    for key, plans in groups.items():
        limits = {p.limit_bytes - p.offline_bytes for p in plans.values()}
        assert len(limits) == 1, (key, {a: p.limit_bytes for a, p in plans.items()})
        # one named exception: the paper's accounting of Siberia (its classifier beside the limit)
        assert {a for a, p in plans.items() if p.offline_bytes} == {"logging-buffer"}
        budget = next(iter(plans.values())).item_budget_bytes // MIB
        assert plans["memcached"].item_mb == budget
        assert plans["lru"].item_mb <= budget and plans["logging"].item_mb < plans["lru"].item_mb


def test_unsampled_store_takes_the_groups_peak() -> None:
    """A probe over before a sample saw its store loaded (RSS below the items it holds): its anonymous
    overhead is the group's peak charge less kernel memory and the items, never negative (a
    2-thread memcached probe of 20k records once measured -2.6 MiB: 0.1 s, 4 samples)."""
    assert calibrate.unsampled_anon(28_045_312, 450_560, 23_680_000) == 3_914_752
    assert calibrate.unsampled_anon(20_000_000, 450_560, 23_680_000) == 0
