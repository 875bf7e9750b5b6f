"""The Python API the harness imports: MemoryGroup as a context manager on real cgroups."""
import subprocess

from acg_lib import MemoryGroup, detect
from acg_lib.registry import Registry
from conftest import kill_pid, needs_cgroups

pytestmark = needs_cgroups


def test_context_manager_kills_what_it_started_and_removes_the_group():
    with MemoryGroup("t-api", 64 << 20, 16 << 20) as g:
        path = g.path
        p = g.popen(["sleep", "300"])
        assert g.backend.procs(path) == [p.pid]
        st = g.stats()
        assert st["group"] == str(path)
        assert st["limits"]["memory_bytes"] == 64 << 20
        assert st["limits"]["swap_bytes"] == 16 << 20
        assert Registry().group_info(path)["started"][0][0] == p.pid
    assert g.removal["killed_pids"] == [p.pid]
    assert g.removal["moved_pids"] == []
    assert p.returncode == -9
    assert not path.exists()
    assert Registry().group_info(path) is None


def test_added_process_is_moved_out_not_killed():
    outsider = subprocess.Popen(["sleep", "300"])
    try:
        with MemoryGroup("t-api2", 64 << 20, None, backend=detect()) as g:
            g.add_pid(outsider.pid)
            assert g.backend.procs(g.path) == [outsider.pid]
            assert g.limits["swap_bytes"] is None
        assert g.removal["moved_pids"] == [outsider.pid]
        assert g.removal["killed_pids"] == []
        assert outsider.poll() is None
        assert not g.path.exists()
    finally:
        # our own child, not reaped yet: its pid is still ours (kill_pid's cmdline check can read an
        # empty cmdline while the child is still in its exec, and then kill nothing)
        outsider.kill()
        outsider.wait()
