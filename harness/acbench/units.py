"""Parsing of capacity lists and byte sizes given on the command line."""
import re

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


class UsageError(ValueError):
    """Bad command-line input; the message says what was wrong and what is accepted."""


def parse_size(text: str, what: str) -> int:
    """An integer number of bytes, optionally with a binary suffix K, M, G, T."""
    m = _SIZE_RE.match(text)
    if not m:
        raise UsageError(
            f"invalid {what} {text!r}: expected a whole number of bytes, optionally with a "
            "suffix K, M, G or T (powers of 1024), e.g. 512M"
        )
    return int(m.group(1)) * _SUFFIX[m.group(2).upper()]


def parse_capacities(text: str, option: str, in_bytes: bool) -> list[int]:
    """A comma-separated list of capacities, each >= 1 (objects, or bytes with suffixes)."""
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
