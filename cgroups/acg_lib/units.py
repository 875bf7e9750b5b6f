"""Validation of group names and parsing of sizes such as 512M, 1.5G or 4096."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .errors import AcgError

MIB = 1 << 20
MIN_MEMORY = 4 * MIB
_UNITS = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
_SIZE_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([KMGTkmgt]?)$")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SIZE_FORMS = ("a whole number of bytes (4096) or a number with a binary unit "
              "K, M, G or T (512M, 1G, 1.5G)")
NAME_FORMS = "1 to 64 characters from A-Z a-z 0-9 _ . -"


def parse_size(text: str, option: str = "size") -> int:
    """Return the number of bytes `text` stands for (K/M/G/T are powers of 1024)."""
    m = _SIZE_RE.match(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise AcgError(f"{option}: invalid size {text!r}; accepted: {SIZE_FORMS}")
    number, unit = m.group(1), m.group(2).upper()
    if unit == "" and "." in number:
        raise AcgError(f"{option}: invalid size {text!r} (a fraction of a byte); "
                       f"accepted: {SIZE_FORMS}")
    try:
        value = Decimal(number) * (1 << _UNITS[unit])
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise AcgError(f"{option}: invalid size {text!r}; accepted: {SIZE_FORMS}") from exc
    return int(value)


def parse_memory(text: str, option: str = "--memory") -> int:
    """Parse a memory limit and insist on the 4 MiB minimum."""
    value = parse_size(text, option)
    if value < MIN_MEMORY:
        raise AcgError(f"{option}: {text!r} is {value} bytes; the memory limit must be at "
                       f"least 4M (4194304 bytes)")
    return value


def validate_name(name: str, option: str = "--name") -> str:
    """Return `name` if it is an acceptable group name, else raise AcgError."""
    if not isinstance(name, str) or _NAME_RE.match(name) is None:
        raise AcgError(f"{option}: invalid name {name!r}; accepted: {NAME_FORMS}")
    return name


def format_size(n: int) -> str:
    """Render a byte count with the largest binary unit that divides it exactly."""
    for unit in ("T", "G", "M", "K"):
        shift = _UNITS[unit]
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)
