"""Run one command inside a MemoryGroup: forward signals, sample statistics, wait."""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from typing import Sequence

from .group import MemoryGroup

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
             signal.SIGUSR1, signal.SIGUSR2)
WAITED = set(FORWARDED) | {signal.SIGCHLD}
SI_KERNEL = 0x80  # si_code of a signal the terminal sent to the whole foreground group


@dataclass
class RunResult:
    exit_status: int
    signal: str | None
    wall_seconds: float
    received: list[str] = field(default_factory=list)
    rusage: dict = field(default_factory=dict)


def block_signals() -> set:
    """Block the forwarded signals and SIGCHLD; returns the previous mask for the child."""
    return signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)


def run_in_group(group: MemoryGroup, cmd: Sequence[str], child_mask: set,
                 interval: float = 0.1) -> RunResult:
    """Start cmd in group and wait for it. Signals must already be blocked (block_signals).

    A forwarded signal sent by a process (kill) is passed on to the command; one the
    terminal sent (Ctrl-C) already reached the command and is not sent twice. A second
    SIGINT or SIGTERM makes acg SIGKILL the command.
    """
    received: list[str] = []
    terminations = 0
    t0 = time.monotonic()
    child = group.popen(cmd, sigmask=child_mask)
    while True:
        pid, status, ru = os.wait4(child.pid, os.WNOHANG)
        if pid == child.pid:
            break
        info = signal.sigtimedwait(WAITED, interval)
        if info is None:
            group.sample()
            continue
        if info.si_signo == signal.SIGCHLD:
            continue
        received.append(signal.Signals(info.si_signo).name)
        if info.si_code != SI_KERNEL:
            _kill(child.pid, info.si_signo)
        if info.si_signo in (signal.SIGINT, signal.SIGTERM):
            terminations += 1
            if terminations >= 2:
                _kill(child.pid, signal.SIGKILL)
    wall = time.monotonic() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        exit_status, signame = 128 + sig, signal.Signals(sig).name
    else:
        exit_status, signame = os.WEXITSTATUS(status), None
    rusage = {"maxrss_bytes": ru.ru_maxrss * 1024, "majflt": ru.ru_majflt,
              "minflt": ru.ru_minflt, "utime": round(ru.ru_utime, 6),
              "stime": round(ru.ru_stime, 6)}
    return RunResult(exit_status, signame, wall, received, rusage)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
