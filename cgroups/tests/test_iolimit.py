"""An I/O-operations limit on a MemoryGroup (iolimit.py): set, effective, reported and removed,
also when its owner died; bad input refused with what is accepted."""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from acg_lib import AcgError, IoLimit, MemoryGroup, cleanup, detect, disk_of
from acg_lib.iolimit import V1Companion, blkio_root
from acg_lib.registry import Registry
from conftest import needs_cgroups

# argv: file, reads, bytes per read (default 4096): random direct reads, prints the seconds taken
READER = r"""
import mmap, os, random, sys, time
size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, size)
blocks = os.fstat(fd).st_size // size
t0 = time.monotonic()
for i in range(int(sys.argv[2])):
    os.preadv(fd, [buf], random.randrange(blocks) * size)
print(time.monotonic() - t0)
"""


@pytest.fixture
def data():
    """16 MiB of random bytes in a file on the disk under /var/tmp (written back, so reads go to the
    disk); removed afterwards."""
    spill = Path(tempfile.mkdtemp(prefix="acg-io-", dir="/var/tmp"))
    try:
        with open(spill / "data", "wb") as f:
            f.write(os.urandom(16 << 20))
        os.sync()
        yield spill / "data"
    finally:
        for p in spill.iterdir():
            p.unlink()
        spill.rmdir()


def test_bad_input_is_refused_with_what_is_accepted(tmp_path):
    with pytest.raises(AcgError, match=r"io device 'vda': expected MAJ:MIN, e.g. 253:0"):
        IoLimit("vda", 100, 100)
    with pytest.raises(AcgError, match=r"io limit: read IOPS -1; accepted: an integer ≥ 1 \(0: not limited\)"):
        IoLimit("253:0", -1, 100)
    with pytest.raises(AcgError, match=r"io limit: write bytes/s '1M'; accepted: an integer ≥ 1 \(0: not limited\)"):
        IoLimit("253:0", write_bps="1M")
    with pytest.raises(AcgError, match=r"io limit on 253:0: no limit given; accepted: read/write IOPS or bytes/s, "
                                       r"at least one ≥ 1"):
        IoLimit("253:0", 0, 0)
    assert IoLimit("253:0", read_bps=1 << 20).limits() == {"read_bps": 1 << 20}
    with pytest.raises(AcgError, match=r"which is not a block device .*an I/O limit needs a disk"):
        disk_of("/dev/shm" if Path("/dev/shm").is_dir() else "/proc")


@needs_cgroups
def test_reads_in_the_group_are_throttled_counted_and_the_limit_removed(data):
    dev = disk_of(data)
    with MemoryGroup("t-io", 64 << 20, None, io=IoLimit(dev, 100, 100)) as g:
        marker = Registry().group_info(g.path)
        if g.backend.version == 1:
            comp = blkio_root() / "acg" / g.path.name
            assert comp.is_dir() and marker["io_group"] == str(comp)
            assert (comp / "blkio.throttle.read_iops_device").read_text().split() == [dev, "100"]
        assert g.io_limits == {"read_iops": 100, "write_iops": 100}
        p = g.popen([sys.executable, "-c", READER, str(data), "60"], stdout=subprocess.PIPE, text=True)
        out, _ = p.communicate(timeout=60)
        took = float(out)
        st = g.stats()
        assert st["io_limits"] == {"read_iops": 100, "write_iops": 100, "device": dev}
        assert st["io_read_ios"] >= 60            # every direct read went through the group
    # 60 direct reads at 100 per second: ~0.6 s (unthrottled: a few ms); the slack is the
    # throttle's first slice
    assert took > 0.3
    assert g.removal["removed"] and g.removal["io_group_removed"]
    if g.backend.version == 1:
        assert not comp.exists()
    assert not g.path.exists()


@needs_cgroups
def test_a_bytes_per_second_limit_throttles_reads_and_sets_nothing_else(data):
    """read_bps alone: 8 MiB of 64 KiB direct reads at 8 MiB/s take about a second (unthrottled: a few
    ms); the IOPS limits stay unset."""
    dev = disk_of(data)
    with MemoryGroup("t-iobps", 64 << 20, None, io=IoLimit(dev, read_bps=8 << 20)) as g:
        assert g.io_limits == {"read_bps": 8 << 20}
        if g.backend.version == 1:
            comp = blkio_root() / "acg" / g.path.name
            assert (comp / "blkio.throttle.read_bps_device").read_text().split() == [dev, str(8 << 20)]
            assert (comp / "blkio.throttle.read_iops_device").read_text().split() == []
        p = g.popen([sys.executable, "-c", READER, str(data), "128", str(64 << 10)], stdout=subprocess.PIPE,
                    text=True)
        out, _ = p.communicate(timeout=60)
        assert g.stats()["io_limits"] == {"read_bps": 8 << 20, "device": dev}
    # the first slice's budget lets some through at once: at least half of the second
    assert float(out) > 0.5
    assert g.removal["removed"] and g.removal["io_group_removed"]


@needs_cgroups
def test_a_dead_owners_blkio_companion_is_removed_by_cleanup():
    backend = detect()
    if backend.version != 1:
        pytest.skip("the companion group exists on cgroup v1 only (v2 limits the memory group itself)")
    dead = subprocess.Popen(["true"])
    dead.wait()
    comp = V1Companion(Path(f"t-io-left.{dead.pid}"))
    comp.create(IoLimit(disk_of("/var/tmp"), 50, 50))
    assert comp.path.is_dir()
    reports = cleanup(backend, Registry())
    assert any(r.get("io_group") and r["path"] == str(comp.path) and r["removed"] for r in reports)
    assert not comp.path.exists()
