"""A real allowance calibration at small scale (root, cgroup v1/v2 memory controller, memcached-ac; a few
seconds): two probe runs, the fit, the cache, and nothing left behind (group, /var/tmp directory)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from acbench import calibrate, measure, paths
from acbench.cgroup import acg
from acbench.memory import MIB, hash_bytes

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def _leftovers() -> tuple[set[str], bool]:
    dirs = {p.name for p in Path("/var/tmp").glob(f"acbench-cal-{os.getpid()}-*")}
    group = acg().detect().group_path(f"{calibrate.GROUP_NAME}.{os.getpid()}")
    return dirs, group.exists()


def test_small_calibration(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(calibrate, "CAL_SIZES", (6000, 12000))
    props = {"recordcount": 20000, "operationcount": 20000, "warmupoperations": 4000, "fieldcount": 10,
             "fieldlength": 100, "zipfianconstant": 0.99, "seed": 1}
    fp = measure.item_footprint(str(WORKLOADS / "readonly"), props)
    req = calibrate.Request("lru", str(WORKLOADS / "readonly"), props, 0.5, 1, fp)
    assert req.sizes == (6000, 12000)
    cal = calibrate.calibrate(req, log=lambda _: None)
    assert [p.recordcount for p in cal.points] == [6000, 12000]
    for p in cal.points:
        # at least the hash table beyond the budget; far less than the probe's room
        assert hash_bytes(p.recordcount) < p.overhead_bytes < 24 * MIB, p
        assert p.kmem_bytes > 0 and p.pte_bytes > 0 and p.samples > 0 and p.tries == 1, p
        assert p.operationcount == p.recordcount and p.warmupoperations == min(4000, p.recordcount // 2), p
        assert p.limit_bytes > p.budget_bytes + p.overhead_bytes, p
    assert cal.fit.b >= 0
    assert cal.allowance(20000, 8 * MIB) > cal.points[-1].overhead_bytes + 8 * MIB
    assert _leftovers() == (set(), False)
    # cached: a second call runs nothing
    monkeypatch.setattr(calibrate, "probe", lambda *a, **k: pytest.fail("ran a probe although cached"))
    assert calibrate.calibrate(req) == cal
    assert len(list(tmp_path.glob("allowance-lru-*.json"))) == 1


def test_a_probe_that_saw_nothing_runs_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe whose process ended before a usable sample is run again (same budget), up to
    PROBE_TRIES times; then the error says how often."""
    seen: list[int] = []
    point = object()

    def probe(approach: object, req: object, n: int, extra: int, tries: int) -> object:
        seen.append(extra)
        if tries < 2:
            raise calibrate._ProbeUnseen(f"calibrating lru at {n} records: the run ended before a sample")
        return point
    monkeypatch.setattr(calibrate, "probe", probe)
    assert calibrate.probe_until_fits(None, None, 20000) is point          # type: ignore[arg-type]
    assert seen == [calibrate.PROBE_EXTRA] * 2

    def never(approach: object, req: object, n: int, extra: int, tries: int) -> object:
        raise calibrate._ProbeUnseen(f"calibrating lru at {n} records: the run ended before a sample")
    monkeypatch.setattr(calibrate, "probe", never)
    with pytest.raises(calibrate.CalibrationError) as e:
        calibrate.probe_until_fits(None, None, 20000)                        # type: ignore[arg-type]
    assert str(e.value) == (f"calibrating lru at 20000 records: the run ended before a sample "
                            f"({calibrate.PROBE_TRIES} times)")
