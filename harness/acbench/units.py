"""Parsing of capacity lists and byte sizes given on the command line or in a spec.

Sizes follow the one grammar of docs/sizes.txt; its Python implementation is acg's
(cgroups/acg_lib/units.py, imported from the repository by acbench.cgroup.acg())."""
import re

from acbench.cgroup import acg


class UsageError(ValueError):
    """Bad command-line input; the message says what was wrong and what is accepted.
    From parse_size: `detail` says why the text is not a size when more than "not of the
    form" ("a fraction of a byte", "too large: ..."), else None."""

    detail: str | None = None


def size_forms() -> str:
    """The accepted size forms in words, as every size message says them."""
    return acg().SIZE_FORMS


def parse_size(text: str, what: str) -> int:
    """A number of bytes: docs/sizes.txt (4096, 512M, 1.5G; K, M, G, T are powers of 1024,
    at most 2^64 - 1). UsageError says why otherwise, e.g. "invalid --max-memory '0.1K' (a
    fraction of a byte): expected a whole number of bytes (4096) or ..."."""
    lib = acg()
    try:
        return lib.parse_size(text, what)
    except lib.SizeError as e:
        note = f" ({e.detail})" if e.detail else ""
        err = UsageError(f"invalid {what} {text!r}{note}: expected {lib.SIZE_FORMS}")
        err.detail = e.detail
        raise err from None


def parse_capacities(text: str, option: str, in_bytes: bool) -> list[int]:
    """A comma-separated list of capacities, each >= 1 (objects, or sizes: docs/sizes.txt)."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if in_bytes:
            value = parse_size(part, f"capacity in {option}")
        else:
            if not re.fullmatch(r"\d+", part):
                raise UsageError(
                    f"invalid capacity {part!r} in {option}: expected whole numbers of objects "
                    "separated by commas, e.g. 1000,10000"
                )
            value = int(part)
        if value < 1:
            raise UsageError(f"capacity must be at least 1, got {part!r} in {option}")
        if value >= 1 << 64:
            raise UsageError(f"capacity {part!r} in {option} is too large (at most 2^64 - 1)")
        out.append(value)
    return out
