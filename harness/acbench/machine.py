"""The machine's turns: a long grid (`acbench run`, hours to days) gives the machine up to measured
work that asks for it (CI, make test, a benchmark) and takes it back when that work is done, so
neither runs beside the other and nothing of the grid (its cgroup, swap file, RAM device) is on the
machine while the other runs.

One lock file (default /run/lock/acbench-machine.lock, $ACBENCH_MACHINE_LOCK), an exclusive flock:
- the grid holds it from its first cell to its last;
- work that wants the machine runs under `harness/hold-machine CMD...`, which first puts a request
  file LOCK.want.PID in place, flocked by itself as long as it waits (created under another name,
  locked, then renamed: a request is never seen unlocked), then waits for the lock, removes the
  request once it holds the lock and runs CMD with $ACBENCH_MACHINE_HELD set to the lock's path;
- the grid looks for a request of a live process between cells and every SAMPLE_S during one;
  seeing one, it stops the running cell (its processes killed, its cgroup, swap file and spill
  directory removed: cell.py's usual clean-up; the cell is not recorded and runs again whole
  later), stops its RAM device, lets the lock go and waits for it (Turn.give_way).
A process started under a holder ($ACBENCH_MACHINE_HELD is this lock: the acbench runs of the
test suites) takes no lock of its own: its holder has the machine.
Both are flocks: a holder that dies lets them go with its file descriptors, so a request file
nobody holds locked is stale (its holder was killed before it could remove it): it is ignored and
removed. Paths are compared resolved (realpath), in hold-machine as here. A holder may wait for
what the grid does outside a cell's wait loops (a calibration probe, OPT's count): seconds to
minutes at the paper's scale."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any, Callable, Optional

LOCK_ENV = "ACBENCH_MACHINE_LOCK"
HELD_ENV = "ACBENCH_MACHINE_HELD"
DEFAULT_LOCK = Path("/run/lock/acbench-machine.lock")
WANT = ".want."
POLL_S = 0.2


class Yielded(Exception):
    """A cell stopped because other work asked for the machine: not a result, it runs again."""


def lock_path() -> Path:
    return Path(os.path.realpath(os.environ.get(LOCK_ENV) or DEFAULT_LOCK))


def _held(f: Path) -> bool:
    """Some process holds a flock on f (a waiting holder's request); False when f is gone."""
    try:
        fd = os.open(f, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)          # closing lets go of the lock taken, if one was
    return False


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def requests(path: Path) -> list[int]:
    """The PIDs of the holders waiting for the machine (stale request files removed)."""
    pids = []
    for f in path.parent.glob(path.name + WANT + "*"):
        try:
            pid = int(f.name[len(path.name + WANT):])
        except ValueError:
            continue
        if _held(f):
            pids.append(pid)
        else:
            try:
                f.unlink(missing_ok=True)
            except PermissionError:   # another user's, in a sticky directory: ignored all the same
                pass
    return sorted(pids)


class Turn:
    """A grid's hold on the machine (see the module doc). take() before the first cell, wanted()
    between cells and during one, give_way() when wanted, release() at the end."""

    def __init__(self, say: Callable[[str], None] = print, path: Optional[Path] = None) -> None:
        self.path = Path(os.path.realpath(path)) if path is not None else lock_path()
        self.say = say
        held = os.environ.get(HELD_ENV)
        self.under_holder = held is not None and os.path.realpath(held) == str(self.path)
        self.f: Any = None
        self.given_up_s = 0.0      # seconds the grid waited for others (take() blocked, give_way())

    def take(self) -> None:
        """Blocks until the machine is this grid's (at once when nobody holds it)."""
        if self.under_holder or self.f is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # read-only: a lock file another user created (mode 0644) locks all the same
            f = os.fdopen(os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o666), "rb")
        except OSError as e:
            raise OSError(f"the machine lock {self.path} cannot be opened ({e}): set ${LOCK_ENV} to a "
                          "writable path") from None
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.say(f"waiting for the machine: another process holds {self.path}")
            t0 = time.monotonic()
            fcntl.flock(f, fcntl.LOCK_EX)
            self.given_up_s += time.monotonic() - t0
        self.f = f

    def release(self) -> None:
        if self.f is not None:
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()
            self.f = None

    def wanted(self) -> Optional[str]:
        """Who asks for the machine ("PID (command)"), or None."""
        if self.under_holder or self.f is None:
            return None
        pids = [p for p in requests(self.path) if p != os.getpid()]
        return ", ".join(f"{p} ({_command(p)})" for p in pids) or None

    def give_way(self, who: str, before: Callable[[], None] = lambda: None,
                 after: Callable[[], None] = lambda: None) -> None:
        """Runs before() (what the grid holds besides the cell: its RAM device), lets the lock go,
        waits until it is this grid's again, runs after()."""
        self.say(f"giving the machine up to {who}; the grid goes on when it is done")
        before()
        t0 = time.monotonic()
        self.release()
        # the holder removes its request once it holds the lock: until then the lock is left to it
        while [p for p in requests(self.path) if p != os.getpid()]:
            time.sleep(POLL_S)
        self.given_up_s += time.monotonic() - t0
        self.take()         # adds its own wait
        self.say("the machine is the grid's again")
        after()
