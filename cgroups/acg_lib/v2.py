"""cgroup v2 memory controller: memory.max, memory.swap.max, memory.events, memory.peak."""
from __future__ import annotations

import os
from pathlib import Path

from . import cgfiles
from .backend import Backend


def _controllers(path: Path) -> set[str]:
    text = cgfiles.read_text(path) or ""
    return {tok.lstrip("+") for tok in text.split() if not tok.startswith("-")}


class V2Backend(Backend):
    version = 2

    def ensure_parent(self) -> None:
        if "memory" not in _controllers(self.root / "cgroup.subtree_control"):
            cgfiles.write(self.root / "cgroup.subtree_control", "+memory")
        os.makedirs(self.parent, exist_ok=True)
        if "memory" not in _controllers(self.parent / "cgroup.subtree_control"):
            cgfiles.write(self.parent / "cgroup.subtree_control", "+memory")

    def set_limits(self, path: Path, memory_bytes: int, swap_bytes: int | None) -> dict:
        cgfiles.write(path / "memory.max", str(memory_bytes))
        cgfiles.write(path / "memory.swap.max", "max" if swap_bytes is None else str(swap_bytes))
        return {"memory_bytes": cgfiles.read_int(path / "memory.max"),
                "swap_bytes": cgfiles.read_int(path / "memory.swap.max"),
                "memsw_bytes": None}

    def set_high(self, path: Path, high_bytes: int) -> str:
        cgfiles.write(path / "memory.high", str(high_bytes))
        return "memory.high"

    def pressure_file(self, path: Path) -> tuple[Path, str]:
        return path / "memory.pressure", "cgroup"

    def read_stats(self, path: Path) -> dict:
        st = cgfiles.read_keyed(path / "memory.stat")
        ev = cgfiles.read_keyed(path / "memory.events")
        return {
            "usage_bytes": cgfiles.read_int(path / "memory.current"),
            "anon_bytes": st.get("anon"),
            "file_bytes": st.get("file"),
            "swap_bytes": cgfiles.read_int(path / "memory.swap.current"),
            "pgfault": st.get("pgfault"),
            "pgmajfault": st.get("pgmajfault"),
            "pgpgin": st.get("pgpgin"),      # v2 has no pgpgin/pgpgout: None
            "pgpgout": st.get("pgpgout"),
            "pswpin": st.get("pswpin"),
            "pswpout": st.get("pswpout"),
            "limit_hits": ev.get("max"),
            "oom_events": ev.get("oom"),
            "oom_kills": ev.get("oom_kill"),
            "peak_bytes": cgfiles.read_int(path / "memory.peak"),
            "peak_swap_bytes": cgfiles.read_int(path / "memory.swap.peak"),
            "memory_stat": st,
        }

    def evict_target(self) -> Path:
        # The acg parent has the memory controller on for its children, so it may hold no
        # processes of its own (v2's no-internal-process rule); the root may.
        return self.root
