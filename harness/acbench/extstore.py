"""memcached's own extstore for the approaches that use it (approaches.py `extstore`): its file and settings.

The file lies in the cell's (or calibration probe's) spill directory, so it is on the cell's spill device
and goes with the directory. Its size is the disk the cell gives the cold data: twice the data, which
is also the room lru's block store may take (live records plus the dead ones lazy compaction has not
reclaimed yet). Everything else is extstore's documented default (memcached 1.6.18 `-h`: items above
512 B are flushed, 4 MiB write buffers, one IO thread, compaction under a quarter of free pages) but the
page size: extstore fills, compacts and reclaims whole pages, and with its default of 64 MiB the 110 MB
of a 100k-record cell would be 4 pages; pages of file / MIN_PAGES give it at least 16, each a multiple
of its 4 MiB write buffer (extstore refuses a page its buffer does not divide), 4-64 MiB.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

MIB = 1 << 20
DISK_PER_DATA = 2          # the file: twice the data
MIN_PAGES = 16
MAX_PAGE_MB = 64           # extstore's default page
WBUF_MB = 4                # extstore's default write buffer: a page must be a multiple of it
FILE_NAME = "extstore"


def sizes(data_bytes: int) -> tuple[int, int]:
    """(file MiB, page MiB) for data_bytes of items: whole pages, at least MIN_PAGES of them."""
    want = -(-DISK_PER_DATA * data_bytes // MIB)
    page = max(WBUF_MB, min(MAX_PAGE_MB, want // MIN_PAGES // WBUF_MB * WBUF_MB))
    pages = max(MIN_PAGES, -(-want // page))
    return pages * page, page


def options(approach: Any, spill_parent: Path, data_bytes: int) -> dict[str, str]:
    """The -o settings of extstore for an approach that uses it (none otherwise)."""
    if not getattr(approach, "extstore", False):
        return {}
    file_mb, page_mb = sizes(data_bytes)
    # memcached takes ext_page_size only before ext_path
    return {"ext_page_size": str(page_mb), "ext_path": f"{spill_parent / FILE_NAME}:{file_mb}m"}


def file_bytes(opts: dict[str, str]) -> int | None:
    """The extstore file's size from its -o settings (None: no extstore)."""
    path = opts.get("ext_path")
    if path is None:
        return None
    return int(path.rsplit(":", 1)[1].rstrip("m")) * MIB
