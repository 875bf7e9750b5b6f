"""Fake cgroup hierarchies in a temporary directory, with the real files' formats."""
from __future__ import annotations

from pathlib import Path

V2_STAT = """anon 104857600
file 20971520
kernel 1048576
kernel_stack 65536
pagetables 262144
shmem 0
file_mapped 4096
swapcached 8192
inactive_anon 52428800
active_anon 52428800
inactive_file 10485760
active_file 10485760
unevictable 0
workingset_refault_anon 31
pswpin 640
pswpout 1280
pgscan 5000
pgsteal 4000
pgfault 250000
pgmajfault 321
"""
V2_EVENTS = "low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\noom_group_kill 0\n"


def make_v2_root(base: Path, controllers: str = "cpuset cpu io memory hugetlb pids rdma misc"
                 ) -> Path:
    root = base / "unified"
    root.mkdir()
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("\n")
    (root / "cgroup.procs").write_text("1\n")
    return root


def fill_v2_group(path: Path) -> None:
    """What the kernel would show in a v2 group that ran a swapping, OOM-killed task."""
    (path / "memory.stat").write_text(V2_STAT)
    (path / "memory.events").write_text(V2_EVENTS)
    (path / "memory.current").write_text("126877696\n")
    (path / "memory.peak").write_text("536870912\n")
    (path / "memory.swap.current").write_text("67108864\n")
    (path / "memory.swap.peak").write_text("100663296\n")
    (path / "cgroup.procs").write_text("")


def make_v1_root(base: Path) -> Path:
    root = base / "memory"
    root.mkdir()
    (root / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (root / "cgroup.procs").write_text("1\n")
    return root


def empty_dir(path: Path) -> None:
    """Delete the files a fake group holds (the kernel's files vanish with rmdir)."""
    for f in path.iterdir():
        f.unlink()
