"""Signals to acg: forwarded, group removed; SIGKILLed acg leaves a group the next call finds."""
import os
import pty
import select
import signal
import sys
from pathlib import Path

import pytest

from acg_lib.owner import is_alive
from acg_lib.registry import Registry
from conftest import ACG, kill_pid, last_json, needs_cgroups, wait_for

pytestmark = needs_cgroups
SLEEPER = [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(300)"]


def started(acg, p, name):
    """Wait until the command runs inside the group and acg has recorded it in the group's
    marker (acg records it right after the start); return (group path, its pids)."""
    path = acg.path_of(p, name)
    pids = wait_for(lambda: path.exists() and acg.backend.procs(path), f"a task in {path}")
    wait_for(lambda: (Registry().group_info(path) or {}).get("started"), "the marker")
    return path, pids


def pending(pid: int, sig: int) -> bool:
    """Is sig pending for the process (not yet taken by acg's sigtimedwait)?"""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(status.split("ShdPnd:")[1].split()[0], 16)
    return bool(mask & (1 << (sig - 1)))


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_is_forwarded_and_group_removed(acg, sig, status):
    name = f"t-{sig.name.lower()}"
    p = acg.start("run", "--name", name, "--memory", "64M", "--", *SLEEPER, name=name)
    path, _ = started(acg, p, name)
    assert p.stdout.readline() == "ready\n"
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == status, err
    st = last_json(out)
    assert (st["exit_status"], st["signal"], st["received_signals"]) == (
        status, sig.name, [sig.name])
    assert not path.exists()


def test_second_term_kills_a_command_that_ignores_it(acg):
    stubborn = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                "signal.SIG_IGN); print('ready', flush=True); time.sleep(300)"]
    p = acg.start("run", "--name", "t-stubborn", "--memory", "64M", "--", *stubborn,
                  name="t-stubborn")
    path, _ = started(acg, p, "t-stubborn")
    assert p.stdout.readline() == "ready\n"
    p.send_signal(signal.SIGTERM)
    # two identical signals pending at once merge into one: let acg take the first
    wait_for(lambda: not pending(p.pid, signal.SIGTERM), "acg to take the first SIGTERM")
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 137, err
    st = last_json(out)
    assert st["received_signals"] == ["SIGTERM", "SIGTERM"]
    assert st["signal"] == "SIGKILL"
    assert not path.exists()


def kill_acg(acg, name):
    p = acg.start("run", "--name", name, "--memory", "64M", "--", "sleep", "300", name=name)
    path, pids = started(acg, p, name)
    p.kill()
    # not communicate(): the orphaned sleep keeps acg's stdout pipe open
    assert p.wait(timeout=60) == -signal.SIGKILL
    assert path.exists()
    return p, path, pids


def test_sigkilled_acg_is_reported_by_list_and_removed_by_cleanup(acg):
    p, path, pids = kill_acg(acg, "t-crash")
    try:
        r = acg.run("list")
        assert r.returncode == 0
        row = [line.split() for line in r.stdout.splitlines() if line.endswith(str(path))]
        assert row == [["dead", str(p.pid), ",".join(map(str, pids)), str(path)]]
        assert (f"acg: leftover group {path} (dead, owner pid {p.pid}); `acg cleanup` "
                "removes it") in r.stderr
        assert path.exists()  # list only reports
        r = acg.run("cleanup")
        assert r.returncode == 0, r.stderr
        assert (f"acg: removed leftover group {path} (owner pid {p.pid} is dead; moved "
                f"tasks {pids}, killed [])") in r.stderr
        assert not path.exists()
        assert all(is_alive(pid) for pid in pids)  # moved out, not killed
    finally:
        for pid in pids:
            kill_pid(pid, "sleep 300")


def test_sigkilled_acg_is_removed_by_next_run(acg):
    p, path, pids = kill_acg(acg, "t-crash2")
    try:
        r = acg.run("run", "--name", "t-next", "--memory", "64M", "--", "true", name="t-next")
        assert r.returncode == 0, r.stderr
        assert (f"acg: removed leftover group {path} (owner pid {p.pid} is dead; moved "
                f"tasks {pids}, killed [])") in r.stderr
        assert not path.exists()
    finally:
        for pid in pids:
            kill_pid(pid, "sleep 300")


def test_cleanup_kill_stops_the_dead_owners_command(acg):
    p, path, pids = kill_acg(acg, "t-crash3")
    try:
        r = acg.run("cleanup", "--kill")
        assert r.returncode == 0, r.stderr
        assert (f"acg: removed leftover group {path} (owner pid {p.pid} is dead; moved "
                f"tasks [], killed {pids})") in r.stderr
        assert not path.exists()
        wait_for(lambda: not any(is_alive(pid) for pid in pids), "the killed command")
    finally:
        for pid in pids:
            kill_pid(pid, "sleep 300")


def test_terminal_ctrl_c_reaches_the_command_once(acg):
    """Ctrl-C on a terminal signals acg and the command; acg must not send a second one."""
    counter = ("import signal, time\nn = [0]\nsignal.signal(signal.SIGINT, lambda s, f: "
               "n.__setitem__(0, n[0] + 1))\nprint('ready', flush=True)\ntime.sleep(1.5)\n"
               "print('count', n[0], flush=True)")
    cmd = [str(ACG), "run", "--name", "t-pty", "--memory", "64M", "--",
           sys.executable, "-c", counter]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    acg.paths.append(acg.backend.group_path(f"t-pty.{pid}"))
    buf = b""
    try:
        while b"ready" not in buf:
            assert select.select([fd], [], [], 60)[0], f"no 'ready' from the command: {buf!r}"
            buf += os.read(fd, 4096)
        os.write(fd, b"\x03")
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the terminal's other side closed
                break
            if not data:
                break
            buf += data
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = buf.decode().replace("\r", "")
    assert "count 1\n" in text
    assert os.waitstatus_to_exitcode(status) == 0
    st = last_json(text)
    assert st["received_signals"] == ["SIGINT"]
    assert not acg.paths[-1].exists()
