"""acg run on the real memory controller: OOM, failing commands, leftover tasks."""
import json
import sys

from acg_lib.registry import Registry
from conftest import HOG, kill_pid, last_json, needs_cgroups

pytestmark = needs_cgroups
PY = sys.executable


def test_oom_kill_without_swap(acg):
    r = acg.run("run", "--name", "t-oom", "--memory", "32M", "--no-swap", "--",
                PY, str(HOG), "96", name="t-oom")
    assert r.returncode == 137, r.stderr
    st = last_json(r.stdout)
    assert st["exit_status"] == 137 and st["signal"] == "SIGKILL"
    assert st["oom_kills"] >= 1
    assert st["limits"]["memory_bytes"] == 32 << 20
    assert st["peak_bytes"] == 32 << 20
    if st["cgroup_version"] == 1:
        assert st["limits"]["memsw_bytes"] == 32 << 20
        assert st["limits"]["swap_bytes"] == 0
    assert st["removal"]["removed"] is True
    path = acg.paths[-1]
    assert st["group"] == str(path)
    assert not path.exists()
    assert Registry().group_info(path) is None


def test_failing_command_status_and_removal(acg, tmp_path):
    out = tmp_path / "stats.json"
    r = acg.run("run", "--name", "t-fail", "--memory", "64M", "--json-out", str(out), "--",
                PY, "-c", "import sys; sys.exit(3)", name="t-fail")
    assert r.returncode == 3, r.stderr
    st = last_json(r.stdout)
    assert (st["exit_status"], st["signal"], st["oom_kills"]) == (3, None, 0)
    assert st["command"] == [PY, "-c", "import sys; sys.exit(3)"]
    assert json.loads(out.read_text()) == st
    assert not acg.paths[-1].exists()


def test_resident_memory_is_measured(acg):
    r = acg.run("run", "--name", "t-rss", "--memory", "128M", "--interval", "0.05", "--",
                PY, str(HOG), "48", "1", "1.0", name="t-rss")
    assert r.returncode == 0, r.stderr
    st = last_json(r.stdout)
    assert st["anon_bytes_max"] >= 48 << 20
    assert st["peak_bytes"] >= 48 << 20
    assert st["usage_bytes_max"] >= 48 << 20
    assert st["samples"] >= 2
    assert st["swap_bytes_max"] == 0
    assert st["child_rusage"]["maxrss_bytes"] >= 48 << 20


def test_tasks_left_after_exit_are_moved_out(acg):
    # sh exits at once; its background sleep stays in the group and must be moved out.
    r = acg.run("run", "--name", "t-left", "--memory", "64M", "--",
                "sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!", name="t-left")
    sleeper = int(r.stdout.splitlines()[0])
    try:
        assert r.returncode == 0, r.stderr
        st = last_json(r.stdout)
        assert st["removal"]["moved_pids"] == [sleeper]
        assert st["removal"]["killed_pids"] == []
        assert st["removal"]["removed"] is True
        assert not acg.paths[-1].exists()
        assert sleeper in acg.backend.procs(acg.backend.evict_target())
    finally:
        kill_pid(sleeper, "sleep 300")
