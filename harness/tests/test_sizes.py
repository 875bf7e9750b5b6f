"""acbench's sizes (specs' [memory] sizes, `acbench opt --bytes/--max-memory`) against every
vector of docs/sizes.txt, the one grammar (acg's parse_size underneath, the C ac_parse_size
tested on the same file by policies/tests/test_size.c)."""
from __future__ import annotations

from pathlib import Path

import pytest

from acbench import paths
from acbench.cgroup import acg
from acbench.units import UsageError, parse_capacities, parse_size, size_forms

DETAIL = {"syntax": None, "fraction-of-a-byte": "a fraction of a byte",
          "too-large": "too large: more than 2^64 - 1 bytes"}
FORMS = "a whole number of bytes (4096) or a number with a binary unit K, M, G or T (512M, 1G, 1.5G)"


# the vectors as acg reads them (acg_lib.units.size_vectors: the one reader of the file's format)
VECTORS = acg().units.size_vectors(Path(__file__).resolve().parents[2] / "docs" / "sizes.txt")


def test_same_repository() -> None:
    # the grammar acbench uses is this checkout's (acbench.cgroup.acg() imports cgroups/)
    assert paths.cgroups_dir().resolve() == Path(__file__).resolve().parents[2] / "cgroups"
    assert size_forms() == FORMS
    assert {e for _, e in VECTORS} >= {f"error:{r}" for r in DETAIL}


@pytest.mark.parametrize("text,expect", VECTORS)
def test_size_vectors(text: str, expect: str) -> None:
    if expect.startswith("error:"):
        detail = DETAIL[expect[len("error:"):]]
        with pytest.raises(UsageError) as e:
            parse_size(text, "--max-memory")
        note = f" ({detail})" if detail else ""
        assert str(e.value) == f"invalid --max-memory {text!r}{note}: expected {FORMS}"
        assert e.value.detail == detail
    else:
        assert parse_size(text, "--max-memory") == int(expect)


def test_capacities_use_the_grammar() -> None:
    assert parse_capacities("1K, 1.5M,4096", "--bytes", in_bytes=True) == [1024, 1572864, 4096]
    with pytest.raises(UsageError, match="capacity must be at least 1, got '0K' in --bytes"):
        parse_capacities("0K", "--bytes", in_bytes=True)
    with pytest.raises(UsageError) as e:
        parse_capacities("1M,512MB", "--bytes", in_bytes=True)
    assert str(e.value) == f"invalid capacity in --bytes '512MB': expected {FORMS}"
