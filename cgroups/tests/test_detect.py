"""Which hierarchy has the memory controller, read from a (fake) mountinfo."""
import pytest

from acg_lib.detect import detect
from acg_lib.errors import AcgError
from acg_lib.mounts import mount_of
from acg_lib.v1 import V1Backend
from acg_lib.v2 import V2Backend
from fake_tree import make_v2_root

LINE_V1 = "35 31 0:32 / {mp} rw,relatime - cgroup cgroup rw,{opts}\n"
LINE_V2 = "41 31 0:38 / {mp} rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
LINE_FS = "25 1 254:0 / {mp} rw,relatime - {fs} /dev/vda rw\n"


@pytest.fixture(autouse=True)
def no_env_root(monkeypatch):
    monkeypatch.delenv("ACG_CGROUP_ROOT", raising=False)


def test_v1_memory_mount_wins(tmp_path):
    mi = tmp_path / "mountinfo"
    mi.write_text(LINE_V1.format(mp="/sys/fs/cgroup/cpu", opts="cpu") +
                  LINE_V1.format(mp="/sys/fs/cgroup/mem\\040ory", opts="memory") +
                  LINE_V2.format(mp="/sys/fs/cgroup/unified"))
    b = detect(mountinfo=mi)
    assert (type(b), str(b.root)) == (V1Backend, "/sys/fs/cgroup/mem ory")


def test_v2_with_memory(tmp_path):
    root = make_v2_root(tmp_path)
    mi = tmp_path / "mountinfo"
    mi.write_text(LINE_V1.format(mp="/sys/fs/cgroup/cpu", opts="cpu") +
                  LINE_V2.format(mp=root))
    b = detect(mountinfo=mi)
    assert (type(b), b.root) == (V2Backend, root)


def test_neither_controller(tmp_path):
    root = make_v2_root(tmp_path, controllers="cpu io pids")
    mi = tmp_path / "mountinfo"
    mi.write_text(LINE_V1.format(mp="/sys/fs/cgroup/cpu", opts="cpu") +
                  LINE_V2.format(mp=root))
    with pytest.raises(AcgError) as e:
        detect(mountinfo=mi)
    assert str(e.value) == (
        "no cgroup memory controller found: no cgroup v1 mount with the memory controller in "
        f"{mi} and no cgroup v2 mount listing memory in cgroup.controllers ({root} has "
        "controllers [cpu io pids])")


def test_no_cgroup_mounts_at_all(tmp_path):
    mi = tmp_path / "mountinfo"
    mi.write_text(LINE_FS.format(mp="/", fs="ext4"))
    with pytest.raises(AcgError) as e:
        detect(mountinfo=mi)
    assert str(e.value) == (
        "no cgroup memory controller found: no cgroup v1 mount with the memory controller in "
        f"{mi} and no cgroup v2 mount listing memory in cgroup.controllers (no cgroup2 mount)")


def test_injected_root_that_is_no_hierarchy(tmp_path, monkeypatch):
    monkeypatch.setenv("ACG_CGROUP_ROOT", str(tmp_path))
    with pytest.raises(AcgError) as e:
        detect()
    assert str(e.value) == (
        f"{tmp_path} is not a cgroup hierarchy with a memory controller: expected "
        "memory.limit_in_bytes (v1) or a cgroup.controllers listing memory (v2)")


def test_mount_of_picks_longest_prefix(tmp_path):
    mi = tmp_path / "mountinfo"
    mi.write_text(LINE_FS.format(mp="/", fs="ext4") + LINE_FS.format(mp="/var", fs="xfs") +
                  LINE_FS.format(mp="/var/t\\040mp", fs="tmpfs") +
                  LINE_FS.format(mp="/variable", fs="btrfs"))
    assert mount_of("/var/lib", mi).fstype == "xfs"
    assert mount_of("/var/t mp/x", mi).fstype == "tmpfs"
    assert mount_of("/usr", mi).fstype == "ext4"
