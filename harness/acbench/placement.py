"""Where a cell's files go and how much data it has: the spill parent on the disk, or the RAM
device of `[run] spill_device = "ram"` (ramdev.py) for the approaches whose hit rate does not
depend on the device's speed (approaches.py ram_device); the item footprint and the RAM device's
size. Used by the runner and by the calibration (calibrate.py), which depend on it, not on
each other."""
from __future__ import annotations

from pathlib import Path

from acbench import measure
from acbench.approaches import get_approach, in_windows, on_ram_device
from acbench.memory import plan
from acbench.spec import Cell, Spec

# the disk's parent of every spill directory and swap file
SPILL_PARENT = Path("/var/tmp")


def cell_device(spec: Spec, cell: Cell) -> str:
    """"ram" when the spec asks for the RAM device and the approach's hit rate does not depend on
    the device's speed, else "disk"."""
    return "ram" if spec.run["spill_device"] == "ram" and on_ram_device(get_approach(cell.approach)) else "disk"


def cell_repetition_mode(spec: Spec, cell: Cell) -> str:
    """"windows" when the spec asks for them and the approach's repetitions may be windows of one
    process (approaches.in_windows), or for every approach ("windows-all"); else "separate"."""
    mode = spec.run["repetition_mode"]
    return "windows" if mode == "windows-all" or (mode == "windows" and in_windows(get_approach(cell.approach))) \
        else "separate"


def footprint(spec: Spec, cell: Cell) -> int:
    """Bytes one record takes in memcached's slabs: [memory] item_footprint, or measured ("auto")."""
    fp = spec.memory["item_footprint"]
    return measure.item_footprint(cell.workload_file, cell.properties) if fp == "auto" else int(fp)


def ram_device_bytes(spec: Spec, cells: list[Cell]) -> int:
    """The RAM device's size: room for the largest of its cells' spill files (3 × the data: blocks
    rewritten by merges, files not yet compacted) and swap file, plus 1 GiB. zram takes RAM only for
    what is written and not yet discarded (compressed)."""
    need = 0
    for c in cells:
        if cell_device(spec, c) != "ram":
            continue
        swap = None if spec.memory["swap"] == "auto" else int(spec.memory["swap"])
        p = plan(get_approach(c.approach), int(c.properties["recordcount"]), footprint(spec, c), c.mem_ratio, 0, swap)
        need = max(need, 3 * p.data_bytes + p.swap_bytes)
    return need + 2**30
