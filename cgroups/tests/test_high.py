"""A group squeezed below its limit and its memory pressure read (MemoryGroup.set_high,
memory_pressure): for real on this machine's controller, and v2's files on a fake tree."""
import sys
import time

import pytest

from acg_lib.detect import detect
from acg_lib.errors import AcgError
from acg_lib.group import MemoryGroup
from conftest import HOG, needs_cgroups, real_backend
from fake_tree import empty_dir, make_v2_root

MIB = 1 << 20


@needs_cgroups
def test_squeezing_a_real_group_swaps_its_pages_out(tmp_path):
    from acg_lib.swap import swap_off, swap_on
    b = real_backend()
    swap = swap_on(f"/var/tmp/acg-high-{id(tmp_path)}.swap", 256 * MIB, 32002, owned=True)
    g = MemoryGroup("t-high", 128 * MIB, 256 * MIB).create()
    hog = None
    try:
        hog = g.popen([sys.executable, str(HOG), "96", "1", "30"])
        deadline = time.monotonic() + 20
        while g.sample()["usage_bytes"] < 90 * MIB and time.monotonic() < deadline:
            time.sleep(0.05)
        # v1 lowers the hard limit, which the kernel refuses (EBUSY) when its reclaim falls short of it
        # (swap-out is written in the background): a refusal is an AcgError, and a retry gets there
        deadline = time.monotonic() + 20
        while True:
            try:
                written = g.set_high(48 * MIB)
                break
            except AcgError as e:
                assert b.version == 1 and "Device or resource busy" in str(e), e
                assert time.monotonic() < deadline, e
                time.sleep(0.2)
        assert written == {1: "memory.limit_in_bytes", 2: "memory.high"}[b.version]
        deadline = time.monotonic() + 20
        while g.sample()["usage_bytes"] > 52 * MIB and time.monotonic() < deadline:
            time.sleep(0.05)
        st = g.sample()
        assert st["usage_bytes"] <= 52 * MIB and st["swap_bytes"] >= 40 * MIB, st
        psi = g.memory_pressure()
        assert psi["scope"] == {1: "system", 2: "cgroup"}[b.version]
        assert psi["some_total_us"] >= psi["full_total_us"] >= 0
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
        g.remove()
        swap_off(swap["path"])


def test_v2_high_and_pressure_files_on_a_fake_tree(tmp_path):
    v2 = detect(make_v2_root(tmp_path))
    g = MemoryGroup("cell-psi", 512 * MIB, 0, backend=v2, run_dir=tmp_path / "run").create()
    try:
        assert g.set_high(256 * MIB) == "memory.high"
        assert (g.path / "memory.high").read_text() == str(256 * MIB)
        (g.path / "memory.pressure").write_text("some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n"
                                                "full avg10=0.00 avg60=0.00 avg300=0.00 total=789\n")
        assert g.memory_pressure() == {"scope": "cgroup", "file": str(g.path / "memory.pressure"),
                                       "some_total_us": 123456, "full_total_us": 789}
        with pytest.raises(AcgError, match="accepted: 1 to the group's memory limit 536870912"):
            g.set_high(0)
        (g.path / "memory.pressure").unlink()
        with pytest.raises(AcgError, match=r"memory.pressure does not exist: this kernel has no PSI"):
            g.memory_pressure()
    finally:
        empty_dir(g.path)
        g.remove()
