"""cgroup v1 memory controller: memory.limit_in_bytes, memory.memsw.*, failcnt, oom_control."""
from __future__ import annotations

import os
from pathlib import Path

from . import cgfiles
from .backend import Backend
from .errors import AcgError


class V1Backend(Backend):
    version = 1

    def ensure_parent(self) -> None:
        os.makedirs(self.parent, exist_ok=True)

    def set_limits(self, path: Path, memory_bytes: int, swap_bytes: int | None) -> dict:
        cgfiles.write(path / "memory.limit_in_bytes", str(memory_bytes))
        memsw_file = path / "memory.memsw.limit_in_bytes"
        memsw: int | None = None
        if swap_bytes is not None:
            if not memsw_file.exists():
                raise AcgError(f"{memsw_file} is missing: this kernel does not account swap "
                               "per cgroup (boot with swapaccount=1), so a swap limit cannot "
                               "be set; pass no swap limit to leave swap unlimited")
            # v1 limits memory+swap together: memsw = memory + the swap allowance.
            cgfiles.write(memsw_file, str(memory_bytes + swap_bytes))
            memsw = cgfiles.read_int(memsw_file)
        mem = cgfiles.read_int(path / "memory.limit_in_bytes")
        return {"memory_bytes": mem, "swap_bytes": None if memsw is None or mem is None
                else memsw - mem, "memsw_bytes": memsw}

    def set_high(self, path: Path, high_bytes: int) -> str:
        # v1 has no memory.high: the hard limit is lowered instead (memsw stays: it only caps
        # memory + swap). The kernel reclaims down to it and refuses (EBUSY) what it cannot
        # reclaim, which AcgError reports; it never OOM-kills for a lowered limit.
        cgfiles.write(path / "memory.limit_in_bytes", str(high_bytes))
        return "memory.limit_in_bytes"

    def pressure_file(self, path: Path) -> tuple[Path, str]:
        # v1 memory groups have no PSI file of their own: the machine's (the group's processes
        # are then measured with everything else running)
        return Path("/proc/pressure/memory"), "system"

    def read_stats(self, path: Path) -> dict:
        st = cgfiles.read_keyed(path / "memory.stat")
        oom = cgfiles.read_keyed(path / "memory.oom_control")
        return {
            "usage_bytes": cgfiles.read_int(path / "memory.usage_in_bytes"),
            "anon_bytes": st.get("rss"),
            "file_bytes": st.get("cache"),
            "swap_bytes": st.get("swap"),
            "pgfault": st.get("pgfault"),
            "pgmajfault": st.get("pgmajfault"),
            "pgpgin": st.get("pgpgin"),
            "pgpgout": st.get("pgpgout"),
            "limit_hits": cgfiles.read_int(path / "memory.failcnt"),
            "memsw_limit_hits": cgfiles.read_int(path / "memory.memsw.failcnt"),
            "oom_kills": oom.get("oom_kill"),
            "under_oom": oom.get("under_oom"),
            "peak_bytes": cgfiles.read_int(path / "memory.max_usage_in_bytes"),
            "peak_memsw_bytes": cgfiles.read_int(path / "memory.memsw.max_usage_in_bytes"),
            "memory_stat": st,
        }

    def evict_target(self) -> Path:
        return self.parent

    def before_rmdir(self, path: Path) -> None:
        # Reclaims what is still charged; refused (EBUSY) while tasks remain, which is fine.
        try:
            cgfiles.write(path / "memory.force_empty", "0")
        except AcgError:
            pass
