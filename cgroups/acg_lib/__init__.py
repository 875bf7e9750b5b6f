"""acg: memory-limited cgroups (v1 and v2) and swap files, always cleaned up.

    from acg_lib import detect, MemoryGroup, swap_on, swap_off, parse_size
"""
from .backend import Backend
from .detect import detect
from .errors import AcgError
from .group import MemoryGroup
from .iolimit import IoLimit, disk_of
from .leftovers import cleanup, list_groups
from .owner import is_alive, start_time
from .registry import Registry
from .remove import remove_group
from .swap import cleanup_swaps, dead_owner_swaps, swap_list, swap_off, swap_on
from .units import SIZE_FORMS, SizeError, format_size, parse_memory, parse_size, validate_name
from .zram import zram_on, zram_stats

__all__ = ["AcgError", "Backend", "IoLimit", "disk_of", "MemoryGroup", "Registry", "SIZE_FORMS", "SizeError", "cleanup",
           "cleanup_swaps", "dead_owner_swaps", "detect", "format_size", "is_alive", "list_groups",
           "parse_memory", "parse_size", "remove_group", "start_time", "swap_list",
           "swap_off", "swap_on", "validate_name", "zram_on", "zram_stats"]
