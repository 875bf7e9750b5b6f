"""Validation of group names and parsing of sizes such as 512M, 1.5G or 4096.

parse_size is the one Python implementation of the size grammar in docs/sizes.txt
(acbench's parse_size calls it; policies/core/ac_size.c is the C one)."""
from __future__ import annotations

import re

from .errors import AcgError

MIB = 1 << 20
MIN_MEMORY = 4 * MIB
SIZE_MAX = (1 << 64) - 1
_UNITS = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
# ASCII digits only ([0-9], not \d), matched with fullmatch (no trailing newline)
_SIZE_RE = re.compile(r"([0-9]+)(?:\.([0-9]+))?([KMGTkmgt]?)")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SIZE_FORMS = ("a whole number of bytes (4096) or a number with a binary unit "
              "K, M, G or T (512M, 1G, 1.5G)")
NAME_FORMS = "1 to 64 characters from A-Z a-z 0-9 _ . -"
# docs/sizes.txt's reasons for a refusal and what a message says of each
SIZE_REASONS = {"syntax": None, "fraction-of-a-byte": "a fraction of a byte",
                "too-large": "too large: more than 2^64 - 1 bytes"}


class SizeError(AcgError):
    """A refused size: `reason` is one of SIZE_REASONS' keys, `detail` its words (or None)."""

    def __init__(self, option: str, text: object, reason: str) -> None:
        self.option, self.text, self.reason = option, text, reason
        self.detail = SIZE_REASONS[reason]
        note = f" ({self.detail})" if self.detail else ""
        super().__init__(f"{option}: invalid size {text!r}{note}; accepted: {SIZE_FORMS}")


def parse_size(text: str, option: str = "size") -> int:
    """Return the number of bytes `text` stands for (docs/sizes.txt: K/M/G/T are powers
    of 1024, a fraction needs a unit and must come to whole bytes, at most 2^64 - 1);
    raise SizeError (an AcgError) naming `option` otherwise."""
    m = _SIZE_RE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise SizeError(option, text, "syntax")
    whole, frac, unit = m.group(1), (m.group(2) or "").rstrip("0"), m.group(3).upper()
    shift = _UNITS[unit]
    if m.group(2) is not None and unit == "":
        raise SizeError(option, text, "fraction-of-a-byte")
    # frac / 10^f of a unit is frac * 2^shift / 10^f bytes: never whole with more
    # fraction digits than the shift (frac ends in 1-9), so int() sees at most 40 digits
    if len(frac) > shift:
        raise SizeError(option, text, "fraction-of-a-byte")
    frac_bytes, rest = divmod(int(frac or "0") << shift, 10 ** len(frac))
    if rest:
        raise SizeError(option, text, "fraction-of-a-byte")
    whole = whole.lstrip("0")
    if len(whole) > 20:   # more than 2^64 even without a unit (and beyond int()'s digit limit)
        raise SizeError(option, text, "too-large")
    value = (int(whole or "0") << shift) + frac_bytes
    if value > SIZE_MAX:
        raise SizeError(option, text, "too-large")
    return value


def size_vectors(path) -> list[tuple[str, str]]:
    """The test vectors of docs/sizes.txt, for the tests of every implementation of the
    grammar: (text, value or "error:REASON") per line; a line is `"TEXT"<TAB>EXPECT`, the
    text taken literally between its quotes, `#` lines are comments."""
    out = []
    for line in open(path, encoding="utf-8").read().splitlines():
        if line and not line.startswith("#"):
            quoted, expect = line.split("\t")
            if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"':
                raise ValueError(f"{path}: not a vector line: {line!r}")
            out.append((quoted[1:-1], expect))
    return out

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
