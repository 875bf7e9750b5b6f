"""Test helper: map MIB anonymous memory, write every page PASSES times, hold, exit 0.

Usage: hog.py MIB [PASSES] [HOLD_SECONDS]. With a limit below MIB and swap allowed, the
second pass faults swapped-out pages back in (major faults)."""
import mmap
import sys
import time

mib = int(sys.argv[1])
passes = int(sys.argv[2]) if len(sys.argv) > 2 else 2
hold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
size = mib << 20
buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for p in range(passes):
    for off in range(0, size, mmap.PAGESIZE):
        buf[off] = (off // mmap.PAGESIZE + p) & 0xFF
bad = sum(1 for off in range(0, size, mmap.PAGESIZE)
          if buf[off] != (off // mmap.PAGESIZE + passes - 1) & 0xFF)
time.sleep(hold)
sys.exit(1 if bad else 0)
