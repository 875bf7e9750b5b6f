"""SIGKILL of `acbench run` in the middle of a paging cell: the server, its cgroup, the swap file,
vm.page-cluster = 0 and the spill directory survive it; `acbench cleanup` (first test) or the next
`acbench run` (second test) removes all of it, with one stderr line each (acbench/leftovers.py).
Then, on fake markers: what a live run made, a reused PID, a changed sysctl and a directory
acbench does not name are left alone; the marker follows what is tracked.

The first two need root, a cgroup memory controller and /var/tmp on a filesystem that can hold a
swap file. The
acbench and acg markers go to temporary directories ($ACBENCH_RUN_DIR, $ACG_RUN_DIR), so other
runs on the machine neither show up in nor are touched by these tests. Whatever a failing test
leaves is removed in its fixture's `finally`, by PID, path and recorded value.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acbench.cgroup import acg

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
PAGE_CLUSTER = Path("/proc/sys/vm/page-cluster")
CELL = "ospaging_readonly_z0.99_m0.5_r0"
# 5000 records of 1184 B at M/D 1/2: a 7 MiB limit for ~6 MB of data, so ospaging swaps from its
# load on; 6M reads take ~20 s, far longer than the test needs the server to live after the kill
CRASH_SPEC = """
name = "crash"
[fixed]
recordcount = 5000
operationcount = 6000000
fieldcount = 10
fieldlength = 100
requestdistribution = "truezipf"
[grid]
approach = ["ospaging"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/2"]
[memory]
item_footprint = 1184
allowance = "4M"
"""
NEXT_SPEC = """
name = "next"
[fixed]
recordcount = 2000
operationcount = 2000
fieldcount = 10
fieldlength = 100
[grid]
approach = ["memcached"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/2"]
[run]
perf = false
[memory]
item_footprint = 1184
allowance = "16M"
"""


def _can_run() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    try:
        acg().detect()
    except acg().AcgError as e:
        return f"no cgroup memory controller: {e}"
    from acg_lib.mounts import mount_of
    from acg_lib.swap import NO_SWAP_FS
    if mount_of(Path("/var/tmp")).fstype in NO_SWAP_FS:
        return "/var/tmp cannot hold a swap file"
    return None


needs_paging = pytest.mark.skipif(_can_run() is not None, reason=str(_can_run()))


def _swaps() -> set[str]:
    from acg_lib.swap import active_swaps
    return set(active_swaps())


def _exe(pid: int) -> str | None:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)"))
    except OSError:
        return None


def _alive(pid: int, start: int | None) -> bool:
    return acg().is_alive(pid, start)


def _wait_for(pred: Any, what: str, limit: float = 30.0) -> Any:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _group_swap(group: Path) -> int:
    """Bytes of the group's memory in swap (v1 memory.stat `swap`; v2 memory.swap.current)."""
    try:
        if (group / "memory.swap.current").exists():
            return int((group / "memory.swap.current").read_text())
        for line in (group / "memory.stat").read_text().splitlines():
            k, v = line.split()
            if k == "swap":
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


class Crash:
    """An `acbench run` of CRASH_SPEC, SIGKILLed once its ospaging cell swaps."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        (tmp / "readonly").write_text((WORKLOADS / "readonly").read_text())
        self.env = {**os.environ, "ACBENCH_RUN_DIR": str(tmp / "acbench-run"),
                    "ACG_RUN_DIR": str(tmp / "acg-run")}
        self.proc: subprocess.Popen | None = None
        self.marker: dict[str, Any] = {}
        self.pids: dict[str, Any] = {}
        self.group: Path | None = None
        self.swap: str | None = None
        self.spill: Path | None = None

    def acbench(self, *args: str, **kw: Any) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "acbench", *args], env=self.env,
                              capture_output=True, text=True, timeout=60, **kw)

    def start_and_kill(self) -> None:
        spec = self.tmp / "crash.toml"
        spec.write_text(CRASH_SPEC)
        res = self.tmp / "results"
        # its own session: its PID is the one to kill, and no signal of ours reaches the others;
        # output to files, not pipes (the orphaned server would hold a pipe open)
        with open(self.tmp / "crash.out", "w") as out, open(self.tmp / "crash.err", "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "acbench", "run", str(spec), "--run-id", "c",
                                          "--results", str(res)], env=self.env, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        pid = self.proc.pid
        marker_file = self.tmp / "acbench-run" / "runs" / f"{pid}.json"
        pids_file = res / "crash" / "c" / "cells" / CELL / "pids.json"

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"acbench run exited early ({self.proc.returncode}): "
                                     f"{(self.tmp / 'crash.err').read_text()[-2000:]}")
            self.pids = _read_json(pids_file) or {}
            self.marker = _read_json(marker_file) or {}
            swaps = [m for m in acg().Registry(self.tmp / "acg-run").swap_markers() if m.get("owner_pid") == pid]
            if not (self.pids.get("server") and self.marker.get("sysctls") and self.marker.get("dirs") and swaps):
                return False
            self.group = Path(self.pids["group"])
            self.swap = swaps[0]["path"]
            self.spill = Path(self.marker["dirs"][0]["path"])
            try:
                tasks = [int(x) for x in (self.group / "cgroup.procs").read_text().split()]
            except OSError:
                return False
            # the server runs in its group, swap is on, and the group has pages in it
            return self.pids["server"] in tasks and self.swap in _swaps() and _group_swap(self.group) > 0

        _wait_for(ready, "the ospaging cell to swap (server in its group, swap file on)")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"acbench" in cmdline and str(spec).encode() in cmdline, cmdline
        os.kill(pid, signal.SIGKILL)     # only the acbench process
        assert self.proc.wait(timeout=10) == -signal.SIGKILL
        self.marker = _read_json(marker_file)

    def all_alive(self) -> bool:
        return all(_alive(p["pid"], p["start"]) for p in self.marker["processes"])

    def crash_again_if_a_process_died(self, tries: int = 3) -> None:
        """Right before the clean-up runs, every process of the dead run must still be alive (so
        the test knows the lines to expect). Something outside the test can kill the server
        meanwhile: a swapoff of another swap area on the machine (another program's) pulls the
        server's pages that went there back into its full cgroup, and the cgroup OOM-kills it
        (seen here while a soak test ran). Then restore and crash once more."""
        for _ in range(tries):
            if self.all_alive():
                self.freeze()
                return
            self.restore()
            self.start_and_kill()
            self.assert_left_behind()
        assert self.all_alive(), "the dead run's processes keep dying before the clean-up"
        self.freeze()

    def freeze(self) -> None:
        """Stops the dead run's processes until the clean-up SIGKILLs them: an orphaned server
        goes on with its workload, and under load it reached its cgroup's limit and was
        OOM-killed between the check above and the clean-up (seen once beside a fuzz run)."""
        for p in self.marker["processes"]:
            os.kill(p["pid"], signal.SIGSTOP)

    def leftover_lines(self) -> list[str]:
        """What the clean-up must print, in its order: processes, cgroup, swap file, sysctl, directory."""
        pid = self.proc.pid
        lines = [f"acbench: removed leftover process {p['pid']} ({p['exe']}) of dead run pid {pid}"
                 for p in self.marker["processes"]]
        lines.append(f"acbench: removed leftover cgroup {self.group} of dead run pid {pid}")
        lines.append(f"acbench: removed leftover swap file {self.swap} of dead run pid {pid}")
        old = self.marker["sysctls"][str(PAGE_CLUSTER)]["old"]
        lines.append(f"acbench: removed leftover vm.page-cluster=0 of dead run pid {pid} (restored {old})")
        lines.append(f"acbench: removed leftover spill directory {self.spill} of dead run pid {pid}")
        return lines

    def assert_left_behind(self) -> None:
        """The kill left everything in place (so the clean-up has something to do)."""
        procs = self.marker["processes"]
        assert any(p["exe"] == "memcached-ac" and p["pid"] == self.pids["server"] for p in procs), procs
        for p in procs:
            assert _alive(p["pid"], p["start"]) and _exe(p["pid"]) == p["exe"], p
        assert self.group.is_dir()
        assert self.pids["server"] in [int(x) for x in (self.group / "cgroup.procs").read_text().split()]
        assert self.swap in _swaps() and Path(self.swap).exists()
        assert self.swap.startswith(str(self.spill) + "/")
        assert PAGE_CLUSTER.read_text().strip() == "0"
        assert self.marker["sysctls"] == {str(PAGE_CLUSTER): {"old": self.marker["sysctls"][str(PAGE_CLUSTER)]["old"],
                                                             "set": "0"}}
        assert self.spill.is_dir() and self.spill.name.startswith(f"acbench-{self.proc.pid}-")

    def assert_all_gone(self) -> None:
        for p in self.marker["processes"]:
            assert not _alive(p["pid"], p["start"]), f"{p} still alive"
        assert not self.group.exists()
        assert self.swap not in _swaps() and not Path(self.swap).exists()
        assert PAGE_CLUSTER.read_text().strip() == self.marker["sysctls"][str(PAGE_CLUSTER)]["old"]
        assert not self.spill.exists()
        assert not (self.tmp / "acbench-run" / "runs" / f"{self.proc.pid}.json").exists()
        reg = acg().Registry(self.tmp / "acg-run")
        assert reg.group_markers() == [] and reg.swap_markers() == []

    def restore(self) -> None:
        """A failing test leaves nothing either: kill by PID (verified), rmdir, swapoff, sysctl."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for p in (self.marker or {}).get("processes", []):
            if _alive(p["pid"], p["start"]) and _exe(p["pid"]) == p["exe"]:
                os.kill(p["pid"], signal.SIGKILL)
        spid = self.pids.get("server")
        if spid and self.group is not None and self.group.exists() and _exe(spid) == "memcached-ac":
            if spid in [int(x) for x in (self.group / "cgroup.procs").read_text().split()]:
                os.kill(spid, signal.SIGKILL)
        if self.group is not None and self.group.exists():
            acg().remove_group(acg().detect(), self.group, [], 10.0)
        if self.swap is not None:
            if self.swap in _swaps():
                subprocess.run(["swapoff", self.swap], check=False)
            Path(self.swap).unlink(missing_ok=True)
        sysctls = (self.marker or {}).get("sysctls", {})
        if str(PAGE_CLUSTER) in sysctls and PAGE_CLUSTER.read_text().strip() == "0":
            PAGE_CLUSTER.write_text(sysctls[str(PAGE_CLUSTER)]["old"])
        if self.spill is not None and self.spill.name.startswith("acbench-"):
            shutil.rmtree(self.spill, ignore_errors=True)
        # this test's own marker directories: nothing of this run may show up in the next
        shutil.rmtree(self.tmp / "acbench-run", ignore_errors=True)
        shutil.rmtree(self.tmp / "acg-run", ignore_errors=True)


@pytest.fixture
def crash(tmp_path: Path):
    c = Crash(tmp_path)
    try:
        c.start_and_kill()
        c.assert_left_behind()
        yield c
    finally:
        c.restore()


@needs_paging
def test_acbench_cleanup_removes_a_killed_runs_leftovers(crash: Crash) -> None:
    crash.crash_again_if_a_process_died()
    r = crash.acbench("cleanup")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == crash.leftover_lines()
    crash.assert_all_gone()
    again = crash.acbench("cleanup")
    assert (again.returncode, again.stderr, again.stdout) == (0, "", "nothing left behind by a dead acbench run\n")


@needs_paging
def test_next_run_removes_a_killed_runs_leftovers_first(crash: Crash) -> None:
    spec = crash.tmp / "next.toml"
    spec.write_text(NEXT_SPEC)
    crash.crash_again_if_a_process_died()
    r = crash.acbench("run", str(spec), "--run-id", "n", "--results", str(crash.tmp / "results"))
    assert r.returncode == 0, r.stderr + r.stdout
    assert "1 cells run, 0 skipped, 0 failed" in r.stdout
    lines = [line for line in r.stderr.splitlines() if line.startswith("acbench: ")]
    assert lines == crash.leftover_lines()
    crash.assert_all_gone()
    # and the new run left nothing either: no marker, no group of its own
    assert list((crash.tmp / "acbench-run" / "runs").glob("*.json")) == []
    assert acg().Registry(crash.tmp / "acg-run").group_markers() == []


# --- the marker and the decisions, without a crash (fake markers, files in tmp_path) ---------------

def _markers(monkeypatch: pytest.MonkeyPatch, tmp: Path) -> Path:
    monkeypatch.setenv("ACBENCH_RUN_DIR", str(tmp / "acbench-run"))
    monkeypatch.setenv("ACG_RUN_DIR", str(tmp / "acg-run"))
    return tmp / "acbench-run" / "runs"


def test_marker_follows_what_is_tracked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acbench import leftovers
    runs = _markers(monkeypatch, tmp_path)
    me = runs / f"{os.getpid()}.json"
    d = tmp_path / "acbench-x"
    sysctl = tmp_path / "page-cluster"
    leftovers.track_dir(d, "spill directory")
    leftovers.track_sysctl(sysctl, "3", "0")
    p = subprocess.Popen(["sleep", "30"])
    try:
        leftovers.track_process(p.pid, "sleep")
        m = json.loads(me.read_text())
        assert (m["owner_pid"], m["owner_start"]) == (os.getpid(), acg().start_time(os.getpid()))
        assert m["dirs"] == [{"path": str(d.resolve()), "kind": "spill directory"}]
        assert m["sysctls"] == {str(sysctl): {"old": "3", "set": "0"}}
        assert m["processes"] == [{"pid": p.pid, "start": acg().start_time(p.pid), "exe": "sleep"}]
        leftovers.prune_processes()
        assert len(json.loads(me.read_text())["processes"]) == 1   # alive: kept
    finally:
        p.kill()
        p.wait()
    leftovers.prune_processes()
    leftovers.untrack_dir(d)
    leftovers.untrack_sysctl(sysctl)
    assert not me.exists()          # nothing tracked: no marker


def test_cleanup_only_touches_dead_runs_and_what_they_recorded(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from acbench import leftovers
    runs = _markers(monkeypatch, tmp_path)
    runs.mkdir(parents=True)
    gone = subprocess.Popen(["true"])
    gone.wait()                                   # a dead owner: its PID is free
    live = subprocess.Popen(["sleep", "30"])      # a live owner
    orphan = subprocess.Popen(["sleep", "30"])    # what the dead owner started
    try:
        lstart, ostart = acg().start_time(live.pid), acg().start_time(orphan.pid)
        for name in ("acbench-dead", "acbench-live", "not-ours"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "f").write_text("x")
        shared, own, changed = (tmp_path / n for n in ("shared", "own", "changed"))
        for f, v in ((shared, "0"), (own, "0"), (changed, "2")):
            f.write_text(v + "\n")
        dead = {"owner_pid": gone.pid, "owner_start": 1,
                "processes": [{"pid": orphan.pid, "start": ostart, "exe": "sleep"},
                              {"pid": live.pid, "start": lstart - 1, "exe": "sleep"},      # PID reused
                              {"pid": live.pid, "start": lstart, "exe": "memcached-ac"}],  # other exe
                "dirs": [{"path": str(tmp_path / "acbench-dead"), "kind": "spill directory"},
                         {"path": str(tmp_path / "not-ours"), "kind": "spill directory"}],
                "sysctls": {str(own): {"old": "3", "set": "0"}, str(shared): {"old": "3", "set": "0"},
                            str(changed): {"old": "3", "set": "0"}}}
        alive = {"owner_pid": live.pid, "owner_start": lstart, "processes": [],
                 "dirs": [{"path": str(tmp_path / "acbench-live"), "kind": "spill directory"}],
                 "sysctls": {str(shared): {"old": "0", "set": "0"}}}
        (runs / f"{gone.pid}.json").write_text(json.dumps(dead))
        (runs / f"{live.pid}.json").write_text(json.dumps(alive))
        lines: list[str] = []
        removed, failed, live_pids = leftovers.cleanup(lines.append)
        n = gone.pid
        assert lines == [
            f"acbench: removed leftover process {orphan.pid} (sleep) of dead run pid {n}",
            f"acbench: removed leftover {own}=0 of dead run pid {n} (restored 3)",
            f"acbench: kept {shared}=0 set by dead run pid {n}: live run pid {live.pid} has changed it too "
            "and restores it",
            f"acbench: kept {changed}=2: dead run pid {n} set it to 0, someone changed it since",
            f"acbench: removed leftover spill directory {tmp_path / 'acbench-dead'} of dead run pid {n}",
            f"acbench: kept {tmp_path / 'not-ours'}: not a directory acbench makes (acbench-*)"]
        assert (removed, failed, live_pids) == (3, 0, [live.pid])
        assert orphan.wait(timeout=10) == -signal.SIGKILL and live.poll() is None
        assert own.read_text() == "3" and shared.read_text() == "0\n" and changed.read_text() == "2\n"
        assert not (tmp_path / "acbench-dead").exists()
        assert (tmp_path / "acbench-live" / "f").exists() and (tmp_path / "not-ours" / "f").exists()
        assert sorted(p.name for p in runs.iterdir()) == [f"{live.pid}.json"]
    finally:
        for p in (live, orphan):
            if p.poll() is None:
                p.kill()
                p.wait()


RAM_CHILD = """
import sys, time
from acbench import ramdev
d = ramdev.RamDevice(256 << 20)
m = d.start()
(m / "spill").write_bytes(b"x" * 4096)
print(d.zram, m, flush=True)
time.sleep(60)
"""


def test_a_killed_runs_ram_device_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """[run] spill_device = "ram": the zram device and its mount of a SIGKILLed acbench are unmounted
    and removed by cleanup (and by the device's own stop() otherwise, checked first)."""
    from acbench import leftovers, ramdev
    why = ramdev.available()
    if why is not None:
        pytest.skip(why)
    _markers(monkeypatch, tmp_path)
    dev = ramdev.RamDevice(256 << 20)
    m = dev.start()
    n = dev.zram
    assert ramdev.mounted(m) == f"/dev/zram{n}"
    dev.stop()
    assert not m.exists() and not (ramdev.SYS_BLOCK / f"zram{n}").exists()
    child = subprocess.Popen([sys.executable, "-c", RAM_CHILD], stdout=subprocess.PIPE, text=True,
                             env={**os.environ})
    try:
        zram, mount = child.stdout.readline().split()
        mount_p = Path(mount)
        assert ramdev.mounted(mount_p) == f"/dev/zram{zram}"
        child.kill()
        child.wait()
        lines: list[str] = []
        removed, failed, _ = leftovers.cleanup(lines.append)
        assert f"acbench: removed leftover zram{zram} at {mount} of dead run pid {child.pid}" in lines
        # a number recorded by a dead run that a live run holds now is left alone
        runs = tmp_path / "acbench-run" / "runs"
        dead = {"owner_pid": child.pid, "owner_start": 1, "processes": [], "dirs": [], "sysctls": {},
                "devices": [{"zram": 99, "mount": "/var/tmp/acbench-ram-x"}]}
        (runs / f"{child.pid}.json").write_text(json.dumps(dead))
        leftovers.track_device(99, Path("/var/tmp/acbench-ram-y"))       # this (live) process holds zram99
        try:
            lines2: list[str] = []
            leftovers.cleanup(lines2.append)
            assert lines2 == [f"acbench: kept zram99: dead run pid {child.pid} recorded it, live run pid "
                              f"{os.getpid()} has it now"]
        finally:
            leftovers.untrack_device(99)
        assert failed == 0 and removed >= 1
        assert not mount_p.exists() and not (ramdev.SYS_BLOCK / f"zram{zram}").exists()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
