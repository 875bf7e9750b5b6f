"""What a paging cell needs from the machine: a swap file and vm.page-cluster = 0.

With the default page-cluster 3 the kernel reads 8 pages per swap-in, so neighbouring
items come back without a fault of their own and a read's major-fault count no longer
says whether it waited for the disk. Both are undone by stop(), which the cell calls in
its `finally` (also on failure and Ctrl-C); each step runs even if an earlier one failed.
"""
from __future__ import annotations

import time
from pathlib import Path

from acbench.cgroup import acg

PAGE_CLUSTER = Path("/proc/sys/vm/page-cluster")
SWAPOFF_TRIES = 10
SWAPOFF_RETRY_S = 1.0


class PagingError(RuntimeError):
    pass


class PagingSetup:
    def __init__(self, swap_file: Path | None, swap_bytes: int, sysctl: Path = PAGE_CLUSTER) -> None:
        self.swap_file = swap_file
        self.swap_bytes = swap_bytes
        self.sysctl = sysctl
        self.old_cluster: str | None = None
        self.swap_on = False

    def start(self) -> None:
        try:
            self.old_cluster = self.sysctl.read_text().strip()
            self.sysctl.write_text("0")
        except OSError as e:
            self.old_cluster = None
            raise PagingError(f"cannot set vm.page-cluster=0 via {self.sysctl}: {e}") from None
        if self.swap_file is not None and self.swap_bytes > 0:
            lib = acg()
            try:
                lib.swap_on(self.swap_file, self.swap_bytes)
            except lib.AcgError as e:
                raise PagingError(f"cannot create the swap file {self.swap_file}: {e}") from None
            self.swap_on = True

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
                self.sysctl.write_text(self.old_cluster)
                self.old_cluster = None
            except BaseException as e:  # noqa: BLE001
                first = first or e
        if first is not None:
            raise first
