"""What a paging cell needs from the machine: a swap area (a file, or a zram device: compressed swap
in RAM) and vm.page-cluster = 0.

With the default page-cluster 3 the kernel reads 8 pages per swap-in, so neighbouring
items come back without a fault of their own and a read's major-fault count no longer
says whether it waited for the disk. Both are undone by stop(), which the cell calls in
its `finally` (also on failure and Ctrl-C); each step runs even if an earlier one failed.
Both are recorded with this process as their owner (the old page-cluster in acbench's
leftover marker before it is changed, the swap file in acg's registry), so that after a
SIGKILL `acbench cleanup` (or the next `acbench run`) undoes them (leftovers.py). Several
acbench runs at once share the setting: each records the machine's value (not another run's 0)
and the last one done restores it.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acbench import leftovers
from acbench.cgroup import acg

PAGE_CLUSTER = Path("/proc/sys/vm/page-cluster")
SWAP_PRIORITY = 32000
SWAPOFF_TRIES = 10
SWAPOFF_RETRY_S = 1.0


class PagingError(RuntimeError):
    pass


def hold_page_cluster_zero(sysctl: Path = PAGE_CLUSTER) -> str:
    """Sets vm.page-cluster to 0 and returns the value to give release_page_cluster(): the
    machine's own, also when another process holds it at 0 already (acbench runs, the memcached
    tests' fixtures and soak.py all hold it through here; leftovers.hold_sysctl)."""
    try:
        return leftovers.hold_sysctl(sysctl, "0")
    except OSError as e:
        raise PagingError(f"cannot set vm.page-cluster=0 via {sysctl}: {e}") from None


def release_page_cluster(old: str, sysctl: Path = PAGE_CLUSTER) -> None:
    """Ends this process's hold (the last holder restores `old`)."""
    leftovers.release_sysctl(sysctl, old)


@contextmanager
def page_cluster_zero(sysctl: Path = PAGE_CLUSTER) -> Iterator[None]:
    """vm.page-cluster = 0 for the block, shared as hold_page_cluster_zero() says."""
    old = hold_page_cluster_zero(sysctl)
    try:
        yield
    finally:
        release_page_cluster(old, sysctl)


# zram's compressor for swap_device "zram": lz4 (Collet), the fast one this kernel's zram offers
# (lzo-rle, lzo, lz4); zswap here accepts only lzo and deflate, so compressed swap is zram's
ZRAM_ALGORITHM = "lz4"


class PagingSetup:
    """swap_device: "file" (a swap file at swap_file) or "zram" (a zram device of swap_bytes of
    uncompressed capacity, acg's zram.py; swap_file then names it once made)."""

    def __init__(self, swap_file: Path | None, swap_bytes: int, sysctl: Path = PAGE_CLUSTER,
                 swap_device: str = "file") -> None:
        self.swap_file = swap_file
        self.swap_bytes = swap_bytes
        self.sysctl = sysctl
        self.swap_device = swap_device
        self.old_cluster: str | None = None
        self.swap_on = False

    def start(self) -> None:
        old = hold_page_cluster_zero(self.sysctl)
        self.old_cluster = old
        if self.swap_file is not None and self.swap_bytes > 0:
            lib = acg()
            try:
                # owned: the swap area is registered with this process as its owner, so that
                # `acbench cleanup` can remove it once this process is dead
                # a high priority: the cell's pages go to its own area first, not to another
                # active swap area (whose swapoff would then pull them back into this group)
                if self.swap_device == "zram":
                    info = lib.zram_on(self.swap_bytes, ZRAM_ALGORITHM, SWAP_PRIORITY, owned=True)
                    self.swap_file = Path(info["path"])
                else:
                    lib.swap_on(self.swap_file, self.swap_bytes, SWAP_PRIORITY, owned=True)
            except lib.AcgError as e:
                raise PagingError(f"cannot create the swap {self.swap_device} {self.swap_file}: {e}") from None
            self.swap_on = True

    def zram_columns(self) -> dict[str, int]:
        """The zram device's peak RAM (mm_stat's mem_used_max; the pages it held are freed with the
        server), which no memory cgroup is charged for; {} for a swap file."""
        if self.swap_device != "zram" or not self.swap_on:
            return {}
        return {"zram_mem_used_max_bytes": acg().zram_stats(self.swap_file)["mem_used_max"]}

    def stop(self) -> None:
        first: BaseException | None = None
        if self.swap_on:
            # swapoff may fail with ENOMEM right after a large cell while the kernel still frees the
            # dead process's swapped pages (seen once at 1M records): retry for a few seconds
            for attempt in range(SWAPOFF_TRIES):
                try:
                    acg().swap_off(self.swap_file)
                    self.swap_on = False
                    first = None
                    break
                except BaseException as e:  # noqa: BLE001 - retry, then restore the sysctl anyway
                    first = e
                    if isinstance(e, KeyboardInterrupt) or attempt == SWAPOFF_TRIES - 1:
                        break
                    time.sleep(SWAPOFF_RETRY_S)
        if self.old_cluster is not None:
            try:
                release_page_cluster(self.old_cluster, self.sysctl)
                self.old_cluster = None
            except BaseException as e:  # noqa: BLE001
                first = first or e
        if first is not None:
            raise first
