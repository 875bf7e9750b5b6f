"""Leftover detection and cleanup decisions, on a fake tree with recorded owners."""
import os
import subprocess

import pytest

from acg_lib.detect import detect
from acg_lib.leftovers import cleanup, list_groups
from acg_lib.owner import start_time
from acg_lib.registry import Registry
from fake_tree import make_v1_root


@pytest.fixture
def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_dead_alive_stale_and_unmarked(tmp_path, dead_pid):
    b = detect(make_v1_root(tmp_path))
    reg = Registry(tmp_path / "run")
    me = os.getpid()
    dead = b.group_path(f"crashed.{dead_pid}")
    live = b.group_path(f"running.{me}")
    reused = b.group_path(f"reused.{me}")      # our PID, but a different start time
    unmarked = b.group_path(f"nomarker.{dead_pid}")
    stale = b.group_path("gone.12345")
    for p in (dead, live, reused, unmarked):
        os.makedirs(p)
    info = {"root": str(b.root), "cgroup_version": 1, "started": []}
    reg.record_group(dead, {**info, "owner_pid": dead_pid, "owner_start": None})
    reg.record_group(live, {**info, "owner_pid": me, "owner_start": start_time(me)})
    reg.record_group(reused, {**info, "owner_pid": me, "owner_start": start_time(me) - 1})
    reg.record_group(stale, {**info, "owner_pid": 12345, "owner_start": None})
    reg.record_group(b.group_path("elsewhere.1"), {**info, "root": "/other", "owner_pid": 1})

    states = {g.path.name: g.state for g in list_groups(b, reg)}
    assert states == {f"crashed.{dead_pid}": "dead", f"running.{me}": "alive",
                      f"reused.{me}": "dead", f"nomarker.{dead_pid}": "dead",
                      "gone.12345": "stale-marker"}

    reports = cleanup(b, reg, timeout=1.0)
    assert sorted((r["path"], r["removed"]) for r in reports) == sorted(
        [(str(dead), True), (str(reused), True), (str(unmarked), True), (str(stale), True)])
    assert [p.name for p in b.groups()] == [f"running.{me}"]
    assert reg.group_info(dead) is None and reg.group_info(stale) is None
    assert reg.group_info(live)["owner_pid"] == me
    assert reg.group_info(b.group_path("elsewhere.1"))["root"] == "/other"
