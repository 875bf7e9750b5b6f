"""acbench/pressure.py: Senpai's rule step by step on a fake group, and a real ospaging-psi cell."""
from __future__ import annotations

import pytest

from acbench.cgroup import acg
from acbench.pressure import PressureController, PressureRule

MIB = 1 << 20


class FakeGroup:
    """Stall totals fed by the test; set_high records, or refuses below `refuse_below`."""

    def __init__(self, refuse_below: int = 0) -> None:
        self.some_us = 0
        self.highs: list[int] = []
        self.refuse_below = refuse_below

    def memory_pressure(self) -> dict:
        return {"scope": "cgroup", "some_total_us": self.some_us, "full_total_us": 0}

    def set_high(self, n: int) -> str:
        if n < self.refuse_below:
            raise acg().AcgError(f"cannot write {n!r} to memory.limit_in_bytes: Device or resource busy")
        self.highs.append(n)
        return "memory.high"


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_no_pressure_probes_down_one_percent_a_step_to_the_floor() -> None:
    g, clock = FakeGroup(), Clock()
    c = PressureController(g, 100 * MIB, PressureRule(interval_s=0.5, floor=0.9), clock)
    c.poll()                      # the first reading only starts the count
    assert g.highs == []
    clock.t += 0.2
    c.poll()                      # before the interval: nothing
    assert g.highs == []
    for _ in range(12):
        clock.t += 0.5
        c.poll()
    # 1 % of the current limit per step with no stall at all, down to the floor (90 MiB), then no change
    expect, h = [], 100 * MIB
    for _ in range(12):
        n = int(max(90 * MIB, h * 0.99))
        if n != h:
            expect.append(n)
        h = n
    assert g.highs == expect and g.highs[-1] == 90 * MIB and len(g.highs) == 11
    cols = c.columns()
    assert cols["psi_limit_min_bytes"] == cols["psi_limit_end_bytes"] == 90 * MIB
    assert cols["psi_steps"] == 11 and cols["psi_refused"] == 0 and cols["psi_stall_avg"] == 0
    # the time-weighted mean of the limits held: the full limit for the first 0.7 s, then each new one 0.5 s
    mean = (0.7 * 100 * MIB + 0.5 * sum(expect)) / (0.7 + 0.5 * len(expect))
    assert abs(cols["psi_limit_avg_bytes"] - mean) <= 1


def test_pressure_above_target_backs_off_at_most_ten_percent_and_never_above_the_limit() -> None:
    g, clock = FakeGroup(), Clock()
    rule = PressureRule()
    c = PressureController(g, 100 * MIB, rule, clock)
    c.poll()
    c.high = 50 * MIB                                  # as if squeezed before
    clock.t += 1.0
    g.some_us += 1500                                  # 1.5 ms stalled in 1 s: 1.5 x the 0.1 % target
    c.poll()
    assert g.highs == [int(50 * MIB * 1.05)]           # + 10 % x (1.5 - 1)
    clock.t += 1.0
    g.some_us += 100_000                               # 10 % stalled: the full 10 % back
    c.poll()
    assert g.highs[-1] == int(int(50 * MIB * 1.05) * 1.10)
    c.high = 99 * MIB
    clock.t += 1.0
    g.some_us += 100_000
    c.poll()
    assert g.highs[-1] == 100 * MIB                    # capped at the cell's own limit
    clock.t += 1.0
    g.some_us += 500                                   # half the target: half a probe down
    c.poll()
    assert g.highs[-1] == int(100 * MIB * (1 - 0.01 * 0.5))


def test_a_refused_squeeze_is_counted_and_the_limit_kept() -> None:
    g, clock = FakeGroup(refuse_below=99 * MIB), Clock()
    c = PressureController(g, 100 * MIB, PressureRule(interval_s=1.0), clock)
    c.poll()
    for _ in range(3):
        clock.t += 1.0
        c.poll()
    assert g.highs == [99 * MIB] and c.high == 99 * MIB
    cols = c.columns()
    assert cols["psi_refused"] == 2 and cols["psi_steps"] == 1 and cols["psi_scope"] == "cgroup"


def test_group_set_high_checks_its_bounds(tmp_path) -> None:
    lib = acg()
    g = lib.MemoryGroup("psi-bounds", 64 * MIB, 0, run_dir=tmp_path)
    with pytest.raises(lib.AcgError, match="is not created yet"):
        g.set_high(32 * MIB)
    g.created = True
    with pytest.raises(lib.AcgError, match=r"high: 134217728 bytes; accepted: 1 to the group's memory limit 67108864"):
        g.set_high(128 * MIB)


def test_average_of_a_limit_never_lowered_is_the_limit() -> None:
    """The time-weighted mean limit is a float sum: for a limit the controller never lowered it must
    still read the limit itself, not a byte below it (16012083 for 16012084 failed min <= avg)."""
    clock = Clock()
    c = PressureController(FakeGroup(), 16012084, PressureRule(), clock)
    clock.t = c.last_t = sum([0.1] * 3)                 # three 0.1 s steps, summed as floats
    c.area = sum([16012084 * 0.1] * 3)
    assert int(c.area / c.last_t) == 16012083           # what the mean read before
    cols = c.columns()
    assert cols["psi_limit_min_bytes"] == cols["psi_limit_avg_bytes"] == cols["psi_limit_end_bytes"] == 16012084
