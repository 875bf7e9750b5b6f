"""What an acbench process has changed on the machine, and the removal of what a dead one left.

A cell's `finally` undoes everything it set up, but a SIGKILLed (or OOM-killed, or powered-off)
acbench runs no `finally`. So every acbench process keeps a marker of what it has made and not yet
undone, `<run dir>/runs/<pid>.json` (run dir: $ACBENCH_RUN_DIR, default /run/acbench, root only):

    owner_pid, owner_start      its PID and start time (/proc/PID/stat field 22), so that a reused
                                PID is never taken for the owner
    processes                   what it started: PID, start time, executable name (memcached-ac,
                                perf, ycsb-mc; checked against /proc/PID/exe or argv[0]); entries
                                of dead processes are dropped as it goes
    dirs                        the directories it created (spill and scratch directories), by path
    sysctls                     what it changed: {path: {old, set}} (vm.page-cluster of paging cells),
                                written *before* the sysctl is set
    devices                     the zram devices it added and where it mounts them (ramdev.py),
                                written right after the device is added

Its cgroups and swap files are in acg's registry (/run/acg, $ACG_RUN_DIR) under the same owner PID
and start time: MemoryGroup markers, and swap_on(owned=True). The marker is deleted when nothing is
left in it.

cleanup() (`acbench cleanup`, and the start of every `acbench run` and `python3 -m acbench.calibrate`)
looks for owners that are dead (PID gone, a zombie, or now another process) and, per dead owner:
kills its processes (only those whose PID, start time and executable match what it recorded, and the
memcached-ac processes inside its cgroups), removes its cgroups (acbench-* groups with an acg
marker), swapoff + deletes its swap files, restores its sysctls (only to the value it recorded, only
if the sysctl still holds the value it set and no live run has changed it too) and deletes its
directories (only acbench-* directories it recorded), and unmounts and removes its zram devices
(only the device number it recorded, only unmounted from the directory it recorded). One line per removal on stderr:
`acbench: removed leftover <what> of dead run pid N`. What a live acbench made is never touched.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from acbench.zram import SYS_BLOCK, RamDeviceError, remove as remove_zram
from acbench.cgroup import acg

RUN_DIR_ENV = "ACBENCH_RUN_DIR"
DEFAULT_RUN_DIR = Path("/run/acbench")
GROUP_PREFIX = "acbench-"       # every cgroup acbench makes (cell.py, calibrate.py)
DIR_PREFIX = "acbench-"         # every directory acbench makes (tempfile prefixes)
SERVER_EXE = "memcached-ac"
KILL_WAIT_S = 10.0
SWAPOFF_TRIES = 10
SWAPOFF_RETRY_S = 1.0

Log = Callable[[str], None]


def run_dir() -> Path:
    return Path(os.environ.get(RUN_DIR_ENV) or DEFAULT_RUN_DIR)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# --- this process's marker ------------------------------------------------------------------------

class _Marker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._data: dict[str, Any] = {}
        self._warned = False

    def _state(self) -> dict[str, Any]:
        pid = os.getpid()
        if self._pid != pid:          # first use, or a forked child: a marker of its own
            self._pid = pid
            self._data = {"owner_pid": pid, "owner_start": acg().start_time(pid), "argv": sys.argv,
                          "created": time.time(), "processes": [], "dirs": [], "sysctls": {}, "devices": []}
        return self._data

    def update(self, change: Callable[[dict[str, Any]], None]) -> None:
        with self._lock:
            data = self._state()
            change(data)
            self._save(data)

    def _save(self, data: dict[str, Any]) -> None:
        path = run_dir() / "runs" / f"{data['owner_pid']}.json"
        try:
            if not (data["processes"] or data["dirs"] or data["sysctls"] or data["devices"]):
                path.unlink(missing_ok=True)
                return
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(data, sort_keys=True) + "\n")
            os.replace(tmp, path)
        except OSError as e:
            if not self._warned:
                self._warned = True
                _stderr(f"acbench: cannot keep the leftover marker {path} ({e.strerror}); if this "
                        "process is killed, `acbench cleanup` will not know what it made")


_MARKER = _Marker()


def track_process(pid: int, exe: str) -> None:
    """A process this acbench started (exe: the executable's file name, checked before a kill)."""
    start = acg().start_time(pid)
    if start is None:
        return                        # already gone (and reaped)

    def change(d: dict[str, Any]) -> None:
        d["processes"] = [p for p in d["processes"] if p["pid"] != pid]
        d["processes"].append({"pid": pid, "start": start, "exe": exe})
    _MARKER.update(change)


def prune_processes() -> None:
    """Drop the entries of processes that are gone (or zombies)."""
    lib = acg()
    _MARKER.update(lambda d: d.__setitem__(
        "processes", [p for p in d["processes"] if lib.is_alive(p["pid"], p["start"])]))


def track_dir(path: Path, kind: str) -> None:
    """A directory this acbench created (kind: "spill directory", "scratch directory", ...)."""
    p = str(Path(path).resolve())

    def change(d: dict[str, Any]) -> None:
        d["dirs"] = [x for x in d["dirs"] if x["path"] != p] + [{"path": p, "kind": kind}]
    _MARKER.update(change)


def untrack_dir(path: Path) -> None:
    p = str(Path(path).resolve())
    _MARKER.update(lambda d: d.__setitem__("dirs", [x for x in d["dirs"] if x["path"] != p]))


def track_sysctl(path: Path, old: str, new: str) -> None:
    """Call before writing `new` to the sysctl file `path` (old: the value to restore)."""
    _MARKER.update(lambda d: d["sysctls"].__setitem__(str(path), {"old": old, "set": new}))


def untrack_sysctl(path: Path) -> None:
    _MARKER.update(lambda d: d["sysctls"].pop(str(path), None))


@contextlib.contextmanager
def sysctl_lock() -> Iterator[None]:
    """Held (flock on <run dir>/sysctl.lock) while a process reads, changes or restores a sysctl
    that other acbench processes may have changed too (share_sysctl, unshare_sysctl)."""
    d = run_dir()
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(d / "sysctl.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _others_tracking(path: Path) -> list[tuple[bool, dict[str, Any]]]:
    """(alive, record) of every other acbench process's marker that has changed `path`."""
    lib = acg()
    out = []
    for _, m in _read_markers():
        rec = m.get("sysctls", {}).get(str(path))
        if m["owner_pid"] != os.getpid() and isinstance(rec, dict):
            out.append((lib.is_alive(m["owner_pid"], m.get("owner_start")), rec))
    return out


def share_sysctl(path: Path, now: str, new: str) -> str:
    """Call under sysctl_lock() before writing `new` to `path`, which holds `now`. Returns the value
    to restore: `now`, or, when another acbench process (live, or dead and not yet cleaned up) has
    set `path` to `now`, the value that process recorded (the machine's own). Two runs at once
    otherwise leave the sysctl as the first one set it: the second reads its setting as the
    machine's value and restores that last."""
    old = next((str(rec["old"]) for _, rec in _others_tracking(path)
                if str(rec.get("set")) == now and "old" in rec), now)
    track_sysctl(path, old, new)
    return old


def unshare_sysctl(path: Path) -> bool:
    """Call under sysctl_lock() when done with `path`: forgets this process's record and says
    whether to restore it now (False while another live acbench process has it set: the last one
    restores it)."""
    untrack_sysctl(path)
    return not any(alive for alive, _ in _others_tracking(path))


_HELD: dict[str, list] = {}        # sysctl path -> [holds in this process, value to restore]


def hold_sysctl(path: Path, value: str) -> str:
    """Writes `value` to the sysctl file `path` for as long as this process holds it, and returns
    the value to give release_sysctl(): the machine's own, also when another process holds it at
    `value` already (share_sysctl). Recorded before it is changed: if this process is killed,
    `acbench cleanup` restores it. Nested holds in one process count: only the outermost release
    can restore it. An OSError (cannot read or write it) leaves nothing recorded."""
    key = str(path)
    if key in _HELD:
        _HELD[key][0] += 1
        return _HELD[key][1]
    with sysctl_lock():
        now = Path(path).read_text().strip()
        old = share_sysctl(path, now, value)
        try:
            Path(path).write_text(value)
        except OSError:
            untrack_sysctl(path)
            raise
    _HELD[key] = [1, old]
    return old


def release_sysctl(path: Path, old: str) -> None:
    """Ends this process's hold of `path`: writes `old` back unless another live process still
    holds it (the last one restores it)."""
    key = str(path)
    if key in _HELD:
        _HELD[key][0] -= 1
        if _HELD[key][0] > 0:
            return
        del _HELD[key]
    with sysctl_lock():
        if unshare_sysctl(path):
            Path(path).write_text(old)


def track_device(zram: int, mount: Path) -> None:
    """A zram device this acbench added (/dev/zram<zram>), to be mounted at `mount`."""
    m = str(Path(mount).resolve())
    _MARKER.update(lambda d: d["devices"].append({"zram": int(zram), "mount": m}))


def untrack_device(zram: int) -> None:
    _MARKER.update(lambda d: d.__setitem__("devices", [x for x in d["devices"] if x["zram"] != zram]))


# --- removal of a dead run's leftovers --------------------------------------------------------------

def _read_markers() -> list[tuple[Path, dict[str, Any]]]:
    d = run_dir() / "runs"
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("owner_pid"), int):
            out.append((p, data))
    return out


def exe_name(pid: int) -> str | None:
    """The file name of /proc/PID/exe (None for a gone process or a kernel thread)."""
    try:
        target = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    return os.path.basename(target.removesuffix(" (deleted)"))


def _runs_as(pid: int, exe: str) -> bool:
    """The process's executable or its argv[0] has the file name `exe` (argv[0] too, because a
    wrapper script, e.g. Debian's /usr/bin/perf, execs a binary of another name)."""
    if exe_name(pid) == exe:
        return True
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return False
    return os.path.basename(argv0) == exe


def sysctl_name(path: str) -> str:
    return path[len("/proc/sys/"):].replace("/", ".") if path.startswith("/proc/sys/") else path


class _Cleaner:
    def __init__(self, log: Log) -> None:
        self.log = log
        self.lib = acg()
        self.removed = 0
        self.failed = 0

    def ok(self, what: str, owner: int, note: str = "") -> None:
        self.removed += 1
        self.log(f"acbench: removed leftover {what} of dead run pid {owner}{note}")

    def fail(self, what: str, owner: int, why: str) -> None:
        self.failed += 1
        self.log(f"acbench: could not remove leftover {what} of dead run pid {owner}: {why}")

    def processes(self, owner: int, marker: dict[str, Any] | None, groups: list[Any]) -> None:
        lib = self.lib
        found: dict[int, tuple[int | None, str]] = {}       # pid -> (start time, exe)
        for p in (marker or {}).get("processes", []):
            pid, start, exe = p.get("pid"), p.get("start"), p.get("exe")
            if isinstance(pid, int) and isinstance(exe, str) and lib.is_alive(pid, start) \
                    and _runs_as(pid, exe):
                found[pid] = (start, exe)
        for info in groups:
            started = dict(info.started)
            for pid in info.tasks:
                name = exe_name(pid)
                ours = name == SERVER_EXE or (pid in started and lib.is_alive(pid, started[pid]))
                if ours and pid not in found:
                    found[pid] = (lib.start_time(pid), name or "?")
        for pid, (start, exe) in found.items():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + KILL_WAIT_S
        while any(lib.is_alive(p, s) for p, (s, _) in found.items()) and time.monotonic() < deadline:
            time.sleep(0.02)
        for pid, (start, exe) in found.items():
            if lib.is_alive(pid, start):
                self.fail(f"process {pid} ({exe})", owner, f"still alive {KILL_WAIT_S:g} s after SIGKILL")
            else:
                self.ok(f"process {pid} ({exe})", owner)

    def groups(self, owner: int, backend: Any, registry: Any, groups: list[Any]) -> None:
        for info in groups:
            rep = self.lib.remove_group(backend, info.path, [], KILL_WAIT_S)
            if rep["removed"]:
                registry.forget_group(info.path)
                self.ok(f"cgroup {info.path}", owner)
            else:
                self.fail(f"cgroup {info.path}", owner, rep.get("error", "not removed"))

    def swaps(self, owner: int, swaps: list[dict[str, Any]]) -> None:
        lib = self.lib
        for m in swaps:
            path = m["path"]
            for attempt in range(SWAPOFF_TRIES):
                try:
                    rep = lib.swap_off(path)
                except lib.AcgError as e:
                    # swapoff can fail with ENOMEM while the kernel still frees the killed
                    # process's swapped pages: retry a failing swapoff, nothing else
                    if attempt < SWAPOFF_TRIES - 1 and path in _active_swaps():
                        time.sleep(SWAPOFF_RETRY_S)
                        continue
                    self.fail(f"swap file {path}", owner, str(e))
                    break
                if rep.get("removed"):
                    self.ok(f"swap file {path}", owner)
                break

    def sysctls(self, owner: int, marker: dict[str, Any], live: dict[int, dict[str, Any]]) -> None:
        for path, rec in marker.get("sysctls", {}).items():
            name, old, new = sysctl_name(path), str(rec.get("old")), str(rec.get("set"))
            users = [pid for pid, m in live.items() if path in m.get("sysctls", {})]
            try:
                now = Path(path).read_text().strip()
            except OSError as e:
                self.fail(f"{name}={new}", owner, f"cannot read {path}: {e.strerror}")
                continue
            if users:
                self.log(f"acbench: kept {name}={now} set by dead run pid {owner}: live run pid "
                         f"{users[0]} has changed it too and restores it")
            elif now != new:
                self.log(f"acbench: kept {name}={now}: dead run pid {owner} set it to {new}, "
                         "someone changed it since")
            else:
                try:
                    Path(path).write_text(old)
                except OSError as e:
                    self.fail(f"{name}={new}", owner, f"cannot write {path}: {e.strerror}")
                    continue
                self.ok(f"{name}={new}", owner, f" (restored {old})")

    def devices(self, owner: int, marker: dict[str, Any], live: dict[int, dict[str, Any]]) -> None:
        in_use = {d.get("zram") for m in live.values() for d in m.get("devices", [])}
        for rec in marker.get("devices", []):
            zram, mount = rec.get("zram"), Path(str(rec.get("mount")))
            if not isinstance(zram, int) or not mount.is_absolute() or not mount.name.startswith(DIR_PREFIX):
                self.log(f"acbench: kept device record {rec}: not a zram device acbench adds")
                continue
            if zram in in_use:       # the number was given out again, to a live run: its device now
                self.log(f"acbench: kept zram{zram}: dead run pid {owner} recorded it, live run pid "
                         f"{next(p for p, m in live.items() if any(d.get('zram') == zram for d in m.get('devices', [])))}"
                         " has it now")
                continue
            if not (SYS_BLOCK / f"zram{zram}").exists() and not mount.exists():
                continue
            try:
                remove_zram(zram, mount)
            except RamDeviceError as e:
                self.fail(f"zram{zram} at {mount}", owner, str(e))
            else:
                self.ok(f"zram{zram} at {mount}", owner)

    def dirs(self, owner: int, marker: dict[str, Any]) -> None:
        active = list(_active_swaps())
        for rec in marker.get("dirs", []):
            p, kind = Path(str(rec.get("path"))), rec.get("kind", "directory")
            if not p.is_absolute() or not p.name.startswith(DIR_PREFIX) or p.is_symlink():
                self.log(f"acbench: kept {p}: not a directory acbench makes ({DIR_PREFIX}*)")
                continue
            if not p.exists():
                continue
            if any(a == str(p) or a.startswith(str(p) + "/") for a in active):
                self.fail(f"{kind} {p}", owner, "it holds an active swap file")
                continue
            shutil.rmtree(p, ignore_errors=True)
            if p.exists():
                self.fail(f"{kind} {p}", owner, "rmtree left files behind")
            else:
                self.ok(f"{kind} {p}", owner)


def _active_swaps() -> dict[str, Any]:
    from acg_lib.swap import active_swaps   # acg() put cgroups/ on sys.path
    try:
        return active_swaps()
    except OSError:
        return {}


def cleanup_before_run(log: Log = _stderr) -> None:
    """cleanup() at the start of a run: a problem is reported, it does not stop the run."""
    try:
        cleanup(log)
    except Exception as e:  # noqa: BLE001 - the run itself does not depend on it
        log(f"acbench: looking for leftovers of dead runs failed: {e}")


def cleanup(log: Log = _stderr) -> tuple[int, int, list[int]]:
    """Remove what dead acbench processes left behind (see the module doc).

    Returns (things removed, things that could not be removed, PIDs of live acbench runs)."""
    lib = acg()
    c = _Cleaner(log)
    live: dict[int, dict[str, Any]] = {}
    dead: dict[int, tuple[Path, dict[str, Any]]] = {}
    for path, m in _read_markers():
        pid = m["owner_pid"]
        if pid == os.getpid() or lib.is_alive(pid, m.get("owner_start")):
            live[pid] = m
        else:
            dead[pid] = (path, m)
    registry = lib.Registry()
    try:
        backend = lib.detect()
    except lib.AcgError:
        backend = None
    groups: dict[int, list[Any]] = {}
    if backend is not None:
        for info in lib.list_groups(backend, registry):
            if info.state == "dead" and info.has_marker and info.path.name.startswith(GROUP_PREFIX):
                groups.setdefault(info.owner_pid, []).append(info)
    swaps: dict[int, list[dict[str, Any]]] = {}
    for m in lib.dead_owner_swaps():
        # acbench's own: the owner has an acbench marker, or the file is in an acbench directory
        if m["owner_pid"] in dead or Path(m["path"]).parent.name.startswith(DIR_PREFIX):
            swaps.setdefault(m["owner_pid"], []).append(m)
    for owner in sorted(set(dead) | set(groups) | set(swaps)):
        failed = c.failed
        path, marker = dead.get(owner, (None, {}))
        c.processes(owner, marker, groups.get(owner, []))
        c.groups(owner, backend, registry, groups.get(owner, []))
        c.swaps(owner, swaps.get(owner, []))
        c.sysctls(owner, marker, live)
        c.devices(owner, marker, live)
        c.dirs(owner, marker)
        if path is not None and c.failed == failed:
            path.unlink(missing_ok=True)    # all done; after a failure a later cleanup tries again
    return c.removed, c.failed, sorted(live)
