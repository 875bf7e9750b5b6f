"""acg's zram swap devices (zram.py): made, used by a group that swaps, removed; refused algorithms;
the device of a dead owner removed by cleanup; no zram at all."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from acg_lib.errors import AcgError
from acg_lib.registry import Registry
from acg_lib.swap import active_swaps, cleanup_swaps, dead_owner_swaps
from acg_lib.zram import zram_on, zram_stats
from conftest import CGROUPS, HOG, last_json, needs_cgroups

BLOCK = Path("/sys/block")
needs_zram = pytest.mark.skipif(not Path("/sys/class/zram-control/hot_add").exists(), reason="no zram here")


def devices() -> set[str]:
    return {p.name for p in BLOCK.glob("zram*")}


@pytest.fixture
def zram_guard():
    """Removes any zram device a failing test left (only those acg registered)."""
    before = devices()
    yield
    for name in sorted(devices() - before):
        dev = Path("/dev") / name
        info = Registry().swap_info(dev)
        if info is None:
            continue
        if str(dev) in active_swaps():
            subprocess.run(["swapoff", str(dev)], check=False)
        (BLOCK / name / "reset").write_text("1")
        Path("/sys/class/zram-control/hot_remove").write_text(name[len("zram"):])
        Registry().forget_swap(dev)


@needs_cgroups
@needs_zram
def test_a_group_swaps_to_zram_and_the_device_goes(acg, zram_guard):
    before = devices()
    r = acg.run("swap", "zram", "--size", "256M", "--priority", "32001")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    dev = info["path"]
    assert (info["kind"], info["algorithm"], info["size_bytes"], info["priority"]) == ("zram", "lz4", 256 << 20, 32001)
    assert devices() - before == {Path(dev).name}
    assert "[lz4]" in (BLOCK / Path(dev).name / "comp_algorithm").read_text()
    assert active_swaps()[dev]["priority"] == 32001
    listed = [json.loads(line) for line in acg.run("swap", "list").stdout.splitlines()]
    assert [(e["kind"], e["active"]) for e in listed if e["path"] == dev] == [("zram", True)]

    r = acg.run("run", "--name", "t-zram", "--memory", "64M", "--swap", "256M", "--",
                sys.executable, str(HOG), "128", "2", name="t-zram")
    assert r.returncode == 0, r.stderr
    st = last_json(r.stdout)
    assert st["exit_status"] == 0 and st["oom_kills"] == 0 and st["swap_bytes_max"] > 0
    mm = zram_stats(dev)
    # the hog's pages went through the device (it keeps its peak), and compressed
    assert mm["mem_used_max"] > 0

    r = acg.run("swap", "off", "--path", dev)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"path": dev, "was_active": True, "removed": True}
    assert dev not in active_swaps() and devices() == before
    assert Registry().swap_info(Path(dev)) is None


@needs_cgroups
@needs_zram
def test_an_algorithm_the_kernel_lacks_is_refused_and_nothing_stays(acg, zram_guard):
    before = devices()
    r = acg.run("swap", "zram", "--size", "64M", "--algorithm", "snappy")
    assert r.returncode == 2
    assert "--algorithm: 'snappy' is not offered by this kernel's zram; accepted: " in r.stderr
    assert "lz4" in r.stderr.split("accepted: ")[1]
    assert devices() == before
    r = acg.run("swap", "zram", "--size", "512K")
    assert r.returncode == 2 and "it must be at least 1M" in r.stderr
    assert devices() == before


@needs_cgroups
@needs_zram
def test_the_device_of_a_dead_owner_is_removed_by_cleanup(zram_guard):
    before = devices()
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); from acg_lib.zram import zram_on; "
            "print(json.dumps(zram_on(8 << 20, 'lz4', 7, owned=True)))")
    out = subprocess.run([sys.executable, "-c", code, str(CGROUPS)], capture_output=True, text=True, check=True)
    dev = json.loads(out.stdout)["path"]
    assert dev in active_swaps()
    assert [m["path"] for m in dead_owner_swaps()].count(dev) == 1
    reports = [r for r in cleanup_swaps() if r["path"] == dev]
    assert [(r["removed"], r["was_active"]) for r in reports] == [(True, True)]
    assert dev not in active_swaps() and devices() == before


def test_no_zram_is_a_clear_error(tmp_path):
    with pytest.raises(AcgError, match=r"zram is not available: .*/class/zram-control/hot_add does not exist"):
        zram_on(64 << 20, sys_root=tmp_path, run_dir=tmp_path / "run")
