"""A pressure-driven memory limit for a cell (approach ospaging-psi): TMO's Senpai in the harness.

Weiner et al., "TMO: Transparent Memory Offloading in Datacenters" (ASPLOS 2022), §3.3: Senpai
lowers a container's memory.high step by step while the memory pressure it measures (PSI "some":
the share of wall time in which at least one of its tasks stalled on memory) stays below a target,
so the kernel offloads cold pages to swap, and backs off as soon as the pressure exceeds it. The
rule here, once per `interval_s`:

    stall = Δ(some total) / Δ(wall time)
    stall < target:  high ← high × (1 − probe × (1 − stall / target))       (probe: at most 1 % a step)
    stall ≥ target:  high ← high × (1 + backoff × min(1, stall / target − 1))  (backoff: up to 10 %)

bounded to [floor × limit, limit], `limit` being the cell's own cgroup limit (the one every other
approach of the grid gets: the controller only ever takes memory away from it). The parameters are
ours (Senpai's defaults are for hosts and minutes, our cells last seconds to minutes): target 0.1 %
of wall time, probe 1 %, backoff 10 %, interval 0.5 s, floor 0.25.

The levers are acg's (MemoryGroup.set_high, memory_pressure): on cgroup v2 memory.high and the
group's own memory.pressure; on v1, which has neither, the hard limit and the machine's
/proc/pressure/memory (so whatever else runs on the machine counts as the cell's pressure: the rows
say which, `psi_scope`). The rows give the limit's time-weighted mean over the cell
(`psi_limit_avg_bytes`): compare ospaging-psi against the other approaches at that memory.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from acbench.cgroup import acg


@dataclass(frozen=True)
class PressureRule:
    target: float = 0.001
    probe: float = 0.01
    backoff: float = 0.10
    interval_s: float = 0.5
    floor: float = 0.25

    def next_high(self, high: int, stall: float, limit: int) -> int:
        if stall < self.target:
            new = high * (1 - self.probe * (1 - stall / self.target))
        else:
            new = high * (1 + self.backoff * min(1.0, stall / self.target - 1))
        return int(min(limit, max(self.floor * limit, new)))


class PressureController:
    """Polled from the cell's sampling loop (cell.py); adjusts the group every rule.interval_s."""

    def __init__(self, group: Any, limit: int, rule: PressureRule = PressureRule(),
                 clock: Any = time.monotonic) -> None:
        self.group, self.limit, self.rule, self.clock = group, limit, rule, clock
        self.high = limit
        self.last_t: float | None = None
        self.last_some = 0
        self.start_t = 0.0
        self.area = 0.0                 # ∫ high dt
        self.min_high = limit
        self.steps = self.refused = 0
        self.stall_sum = 0.0
        self.scope = ""

    def poll(self) -> None:
        now = self.clock()
        psi = self.group.memory_pressure()
        if self.last_t is None:
            self.start_t, self.last_t, self.last_some, self.scope = now, now, psi["some_total_us"], psi["scope"]
            return
        if now - self.last_t < self.rule.interval_s:
            return
        stall = self._account(now, psi["some_total_us"])
        new = self.rule.next_high(self.high, stall, self.limit)
        if new != self.high:
            try:
                self.group.set_high(new)
                self.high = new
                self.min_high = min(self.min_high, new)
                self.steps += 1
            except acg().AcgError:     # v1: the kernel could not reclaim that far (EBUSY)
                self.refused += 1

    def _account(self, now: float, some_us: int) -> float:
        """Adds the interval since the last reading to the means; returns its stall share."""
        dt = now - self.last_t
        stall = (some_us - self.last_some) / 1e6 / dt
        self.area += self.high * dt
        self.stall_sum += stall * dt
        self.last_t, self.last_some = now, some_us
        return stall

    def columns(self) -> dict[str, Any]:
        """The rows' psi_* columns, the time since the last step counted in the means."""
        now = self.clock()
        if self.last_t is not None and now > self.last_t:
            self._account(now, self.group.memory_pressure()["some_total_us"])
        span = (self.last_t or 0.0) - self.start_t
        return {"psi_scope": self.scope or None, "psi_target": self.rule.target,
                # (between the least high and the limit: the float sum of high x dt can come out a byte
                # beside either, e.g. 16012083.99 for a limit of 16012084 never lowered)
                "psi_limit_avg_bytes": max(self.min_high, min(self.limit, round(self.area / span)))
                if span > 0 else self.limit,
                "psi_limit_min_bytes": self.min_high, "psi_limit_end_bytes": self.high,
                "psi_steps": self.steps, "psi_refused": self.refused,
                "psi_stall_avg": self.stall_sum / span if span > 0 else None}
