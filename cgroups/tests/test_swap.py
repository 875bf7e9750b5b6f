"""acg swap on/off/list with real swap files under /var/tmp, and a cgroup that swaps."""
import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from acg_lib.mounts import mount_of
from acg_lib.owner import start_time
from acg_lib.registry import Registry
from acg_lib.swap import NO_SWAP_FS, active_swaps, has_acg_label
from conftest import HOG, last_json, needs_cgroups

pytestmark = [needs_cgroups, pytest.mark.skipif(
    mount_of(Path("/var/tmp")).fstype in NO_SWAP_FS, reason="/var/tmp cannot hold swap")]


def swapon_show() -> str:
    return subprocess.run(["swapon", "--show=NAME", "--noheadings", "--raw"],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def swapdir():
    d = Path(tempfile.mkdtemp(prefix="acg-test-", dir="/var/tmp"))
    try:
        yield d
    finally:
        for f in sorted(d.iterdir()):
            if str(f) in active_swaps():
                subprocess.run(["swapoff", str(f)], check=False)
            Registry().forget_swap(f)
            f.unlink()
        d.rmdir()


def test_swap_file_lets_twice_the_limit_run(acg, swapdir):
    path = swapdir / "swapfile"
    r = acg.run("swap", "on", "--size", "256M", "--path", str(path), "--priority", "5")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert (info["path"], info["size_bytes"], info["priority"]) == (str(path), 256 << 20, 5)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert has_acg_label(path)
    assert str(path) in swapon_show().split()
    listed = [json.loads(line) for line in acg.run("swap", "list").stdout.splitlines()]
    assert [(e["active"], e["priority"]) for e in listed if e["path"] == str(path)] == [(True, 5)]

    r = acg.run("run", "--name", "t-swap", "--memory", "64M", "--swap", "256M", "--",
                sys.executable, str(HOG), "128", "2", name="t-swap")
    assert r.returncode == 0, r.stderr
    st = last_json(r.stdout)
    assert st["exit_status"] == 0 and st["oom_kills"] == 0
    assert st["swap_bytes_max"] > 0
    assert st["pgmajfault"] > 0
    assert st["limits"]["swap_bytes"] == 256 << 20
    if st["cgroup_version"] == 1:
        assert st["limits"]["memsw_bytes"] == 320 << 20
    assert not acg.paths[-1].exists()

    r = acg.run("swap", "off", "--path", str(path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"path": str(path), "was_active": True, "removed": True}
    assert str(path) not in swapon_show().split()
    assert not path.exists()
    assert Registry().swap_info(path) is None


def test_refuses_a_file_it_did_not_create(acg, swapdir):
    path = swapdir / "precious"
    path.write_text("keep me\n")
    r = acg.run("swap", "on", "--size", "8M", "--path", str(path))
    assert (r.returncode, r.stderr) == (2, f"acg: --path: {path} exists and is not an acg swap "
                                           "file; acg only enables and removes swap files it "
                                           "created itself\n")
    r = acg.run("swap", "off", "--path", str(path))
    assert (r.returncode, r.stderr) == (2, f"acg: --path: {path} is not an acg swap file; acg "
                                           "only disables and removes swap files it created "
                                           "itself\n")
    assert path.read_text() == "keep me\n"


def test_refuses_a_relative_path(acg, swapdir):
    """A relative --path would put (and activate) swap wherever acg is started: refused, nothing made."""
    r = subprocess.run([sys.executable, "-c", "import sys; from acg_lib.cli import main; sys.exit(main(sys.argv[1:]))",
                        "swap", "on", "--size", "8M", "--path", "relative.swap"], cwd=swapdir, capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert (r.returncode, r.stderr) == (2, "acg: --path: 'relative.swap' is relative; accepted: an absolute "
                                           "path, e.g. /var/tmp/relative.swap\n")
    assert not (swapdir / "relative.swap").exists()
    assert not any(p.endswith("relative.swap") for p in active_swaps())
    r = acg.run("swap", "off", "--path", "relative.swap")
    assert r.returncode == 2 and "'relative.swap' is relative" in r.stderr


def test_refuses_a_second_swapon(acg, swapdir):
    path = swapdir / "swapfile"
    assert acg.run("swap", "on", "--size", "8M", "--path", str(path)).returncode == 0
    r = acg.run("swap", "on", "--size", "8M", "--path", str(path))
    assert (r.returncode, r.stderr) == (2, f"acg: --path: {path} is already an active swap "
                                           "area\n")
    assert acg.run("swap", "off", "--path", str(path)).returncode == 0
    assert not path.exists()


@pytest.mark.skipif(mount_of(Path("/dev/shm")).fstype != "tmpfs", reason="no tmpfs /dev/shm")
def test_refuses_tmpfs(acg):
    path = Path(f"/dev/shm/acg-test-swap-{os.getpid()}")
    r = acg.run("swap", "on", "--size", "8M", "--path", str(path))
    assert (r.returncode, r.stderr) == (
        2, f"acg: --path: /dev/shm is on a tmpfs filesystem (mounted at "
           f"{mount_of(Path('/dev/shm')).mount_point}), which cannot hold a swap file; use a "
           "directory on ext2, ext3, ext4, xfs, btrfs, f2fs (e.g. /var/tmp on a disk)\n")
    assert not path.exists()


OWNER = """
import sys, time
sys.path.insert(0, {cgroups!r})
from acg_lib import swap_on
swap_on({path!r}, 8 << 20, owned=True)
print("on", flush=True)
time.sleep(300)
"""


def test_owned_swap_file_is_removed_by_cleanup_once_its_owner_is_dead(acg, swapdir, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("ACG_RUN_DIR", str(tmp_path))   # this test's markers only
    owned, kept = swapdir / "owned", swapdir / "kept"
    assert acg.run("swap", "on", "--size", "8M", "--path", str(kept)).returncode == 0
    code = OWNER.format(cgroups=str(Path(__file__).resolve().parents[1]), path=str(owned))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "on\n"
        info = Registry(tmp_path).swap_info(owned)
        assert (info["owner_pid"], info["owner_start"]) == (p.pid, start_time(p.pid))
        assert "owner_pid" not in Registry(tmp_path).swap_info(kept)   # the CLI's: no owner
        r = acg.run("cleanup")                            # owner alive: untouched
        assert r.returncode == 0 and "swap file" not in r.stderr, r.stderr
        assert str(owned) in active_swaps()
        p.kill()
        p.wait()
        r = acg.run("cleanup")
        assert r.returncode == 0, r.stderr
        assert (f"acg: removed leftover swap file {owned} (owner pid {p.pid} is dead; was "
                "active: True)\n") in r.stderr
        assert str(owned) not in active_swaps() and not owned.exists()
        assert Registry(tmp_path).swap_info(owned) is None
        assert str(kept) in active_swaps()                # not owned: stays until `swap off`
        assert acg.run("swap", "off", "--path", str(kept)).returncode == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
