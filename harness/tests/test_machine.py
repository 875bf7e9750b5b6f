"""The machine's turns (acbench/machine.py, harness/hold-machine): a grid gives the machine up to work
that asks for it, and takes it back after. Each test uses a lock of its own ($ACBENCH_MACHINE_LOCK
in a temporary directory), so none touches the machine's real lock that make test holds."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from acbench import machine
from acbench.cgroup import acg

# the last test runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

HOLD = Path(__file__).resolve().parents[1] / "hold-machine"
WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def _env(lock: Path) -> dict[str, str]:
    env = dict(os.environ, **{machine.LOCK_ENV: str(lock)})
    env.pop(machine.HELD_ENV, None)
    return env


@pytest.fixture
def lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    p = tmp_path / "machine.lock"
    monkeypatch.setenv(machine.LOCK_ENV, str(p))
    monkeypatch.delenv(machine.HELD_ENV, raising=False)
    return p


def _wait_for(cond, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_holder_waits_for_the_grid_which_gives_way_and_takes_it_back(lock: Path, tmp_path: Path) -> None:
    log = tmp_path / "log"
    said: list[str] = []
    turn = machine.Turn(said.append)
    turn.take()
    assert turn.wanted() is None
    holder = subprocess.Popen([str(HOLD), "sh", "-c", f'sleep 0.4; echo "held $ACBENCH_MACHINE_HELD" >> {log}'],
                              env=_env(lock), stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: turn.wanted() is not None, "the holder's request")
        who = turn.wanted()
        assert who.startswith(f"{holder.pid} (") and "hold-machine" in who
        assert not log.exists()                     # it waits while the grid holds the machine
        time.sleep(0.3)
        assert not log.exists()
        turn.give_way(who, lambda: log.open("a").write("grid stopped\n"),
                      lambda: log.open("a").write("grid again\n"))
        assert holder.wait(timeout=20) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        turn.release()
    assert log.read_text() == f"grid stopped\nheld {lock}\ngrid again\n"
    assert "hold-machine: waiting for the machine" in holder.stderr.read()
    assert said[0].startswith(f"giving the machine up to {holder.pid} (") and said[-1] == "the machine is the grid's again"
    assert said.count("the machine is the grid's again") == 1 and list(tmp_path.glob("machine.lock.want.*")) == []
    # the time given up is counted (the holder's 0.4 s at least), not the 0.3 s the grid held it waiting
    assert 0.4 <= turn.given_up_s < 20


def test_holder_runs_at_once_on_a_free_machine_and_passes_the_exit_status(lock: Path) -> None:
    cp = subprocess.run([str(HOLD), "sh", "-c", 'echo "$ACBENCH_MACHINE_HELD"; exit 3'], env=_env(lock),
                        capture_output=True, text=True, timeout=20)
    assert cp.returncode == 3 and cp.stdout == f"{lock}\n" and cp.stderr == ""
    assert list(lock.parent.glob("machine.lock.want.*")) == []


def test_holder_without_a_command_says_how(lock: Path) -> None:
    cp = subprocess.run([str(HOLD)], env=_env(lock), capture_output=True, text=True, timeout=20)
    assert cp.returncode == 2
    assert cp.stderr == "usage: hold-machine CMD [ARG...]: runs CMD once no grid or other holder has the machine\n"


def test_nested_holder_and_grid_under_a_holder_take_no_lock(lock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = machine.Turn(lambda text: None)
    turn.take()
    try:
        env = dict(_env(lock), **{machine.HELD_ENV: str(lock)})
        cp = subprocess.run([str(HOLD), "echo", "nested"], env=env, capture_output=True, text=True, timeout=5)
        assert cp.returncode == 0 and cp.stdout == "nested\n"       # did not wait for the grid's lock
        monkeypatch.setenv(machine.HELD_ENV, str(lock))
        inner = machine.Turn(lambda text: None)
        inner.take()                                                # would block: the outer turn holds it
        assert inner.under_holder and inner.f is None and inner.wanted() is None
    finally:
        turn.release()


def test_request_nobody_holds_is_stale_and_removed(lock: Path) -> None:
    """A request counts while its holder keeps it flocked: one left by a killed holder does not, even
    when its PID now names a live process (ours here)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [lock.parent / f"machine.lock.want.{pid}" for pid in (dead.pid, os.getpid())]
    for f in stale:
        f.write_text("x\n")
    (lock.parent / "machine.lock.want.notapid").write_text("x\n")
    turn = machine.Turn(lambda text: None)
    turn.take()
    try:
        assert turn.wanted() is None
        assert not any(f.exists() for f in stale)
        # a holder SIGKILLed while it waits leaves its request file: stale at once
        holder = subprocess.Popen([str(HOLD), "true"], env=_env(lock), stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        _wait_for(lambda: turn.wanted() is not None, "the holder's request")
        os.killpg(holder.pid, 9)
        holder.wait()
        _wait_for(lambda: turn.wanted() is None, "the killed holder's request to turn stale")
        assert [f.name for f in lock.parent.glob("machine.lock.want*")] == ["machine.lock.want.notapid"]
    finally:
        turn.release()


def test_lock_paths_compared_resolved(lock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$ACBENCH_MACHINE_LOCK and $ACBENCH_MACHINE_HELD spelled differently for the same file: a nested
    holder and a grid under the holder still see that they run under it (else they would wait for
    their own holder's lock)."""
    odd = f"{lock.parent}/./{lock.name}"
    monkeypatch.setenv(machine.LOCK_ENV, odd)
    turn = machine.Turn(lambda text: None)
    turn.take()
    try:
        env = dict(os.environ, **{machine.HELD_ENV: f"{lock.parent}//{lock.name}"})
        cp = subprocess.run([str(HOLD), "echo", "nested"], env=env, capture_output=True, text=True, timeout=5)
        assert cp.returncode == 0 and cp.stdout == "nested\n"
        monkeypatch.setenv(machine.HELD_ENV, f"{lock.parent}//{lock.name}")
        assert machine.Turn(lambda text: None).under_holder
    finally:
        turn.release()


def test_unwritable_lock_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("")
    monkeypatch.setenv(machine.LOCK_ENV, str(f / "machine.lock"))
    monkeypatch.delenv(machine.HELD_ENV, raising=False)
    with pytest.raises(OSError, match=r"the machine lock .*machine.lock cannot be opened .*set \$ACBENCH_MACHINE_LOCK"):
        machine.Turn(lambda text: None).take()


SPEC = """
name = "turns"
[fixed]
recordcount = 20000
operationcount = 100000
[grid]
approach = ["lru"]
workload = ["readonly"]
zipf_theta = [0.99]
mem_ratio = ["1/4"]
"""


def test_grid_stops_its_cell_for_a_holder_and_runs_it_again(lock: Path, tmp_path: Path) -> None:
    """A real cell, stopped midway by a holder: while the holder runs, nothing of the grid is on the
    machine (no memcached-ac, cgroup or spill directory of it); the cell then runs again whole and the
    grid records it once."""
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "turns.toml"
    spec.write_text(SPEC)
    res = tmp_path / "res"
    rd = res / "turns" / "t1"
    pids_file = rd / "cells" / "lru_readonly_z0.99_m0.25_r0" / "pids.json"
    grid = subprocess.Popen([sys.executable, "-m", "acbench", "run", str(spec), "--run-id", "t1",
                             "--results", str(res)], env=_env(lock), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen = tmp_path / "seen.json"
    check = ("import json, os, sys, glob; from pathlib import Path; from acbench.cgroup import acg; "
             "p = json.load(open(sys.argv[1])); parent = acg().detect().parent; "
             "exe = Path(f\"/proc/{p['server']}/exe\"); "
             "json.dump({'server': exe.exists() and exe.resolve().name == 'memcached-ac', 'group': Path(p['group']).exists(), "
             "'groups': [g.name for g in parent.iterdir() if g.is_dir() and g.name.endswith('.' + sys.argv[3])] "
             "if parent.exists() else [], 'spill': glob.glob(f'/var/tmp/acbench-{sys.argv[3]}-*')}, "
             "open(sys.argv[2], 'w')); import time; time.sleep(0.3)")
    try:
        _wait_for(lambda: pids_file.exists() and json.loads(pids_file.read_text()).get("server"),
                  "the cell's server", timeout=120)
        first = json.loads(pids_file.read_text())
        time.sleep(0.5)
        assert grid.poll() is None, "the cell ended before the holder came"
        held = subprocess.run([str(HOLD), sys.executable, "-c", check, str(pids_file), str(seen), str(grid.pid)],
                              env=_env(lock), capture_output=True, text=True, timeout=120)
        assert held.returncode == 0, held.stderr
        out, err = grid.communicate(timeout=300)
    finally:
        if grid.poll() is None:
            grid.kill()
            grid.wait()
    assert grid.returncode == 0, err + out
    assert json.loads(seen.read_text()) == {"server": False, "group": False, "groups": [], "spill": []}
    assert "giving the machine up to" in out and "the machine is the grid's again" in out
    assert "cell lru_readonly_z0.99_m0.25_r0 stopped: the machine is wanted by" in out
    assert "1 cells run, 0 skipped, 0 failed" in out
    # the session's wall time holds the time given up to the holder, and says how much it was
    meta = json.loads((rd / "run.json").read_text())
    assert 0.3 <= meta["sessions"][0]["given_up_s"] <= meta["sessions"][0]["wall_s"]     # the holder's 0.3 s at least
    assert meta["given_up_s"] == meta["sessions"][0]["given_up_s"] and meta["wall_s"] == meta["sessions"][0]["wall_s"]
    df = pd.read_csv(rd / "cells.csv")
    assert list(df["cell_id"]) == ["lru_readonly_z0.99_m0.25_r0"] and df["reads_total"].iloc[0] == 100000
    assert json.loads(pids_file.read_text())["server"] != first["server"]      # it ran again
    parent = acg().detect().parent
    assert not parent.exists() or [g.name for g in parent.iterdir() if g.name.endswith(f".{grid.pid}")] == []
