"""Sizes and names: accepted forms and the exact error texts; every size vector of
docs/sizes.txt (the one grammar, shared with acbench and the C ac_parse_size)."""
from pathlib import Path

import pytest

from acg_lib.errors import AcgError
from acg_lib.units import (SIZE_REASONS, SizeError, format_size, parse_memory, parse_size, size_vectors,
                           validate_name)

FORMS = ("a whole number of bytes (4096) or a number with a binary unit K, M, G or T "
         "(512M, 1G, 1.5G)")


VECTORS = size_vectors(Path(__file__).resolve().parents[2] / "docs" / "sizes.txt")


def test_vectors_cover_the_grammar():
    expects = {e for _, e in VECTORS}
    assert {"error:syntax", "error:fraction-of-a-byte", "error:too-large"} <= expects
    assert len(VECTORS) > 80


@pytest.mark.parametrize("text,expect", VECTORS)
def test_size_vectors(text, expect):
    if expect.startswith("error:"):
        with pytest.raises(SizeError) as e:
            parse_size(text, "--swap")
        reason = expect[len("error:"):]
        assert e.value.reason == reason
        note = f" ({SIZE_REASONS[reason]})" if SIZE_REASONS[reason] else ""
        assert str(e.value) == f"--swap: invalid size {text!r}{note}; accepted: {FORMS}"
    else:
        assert parse_size(text) == int(expect)


@pytest.mark.parametrize("text", ["", "12X", "-1", "1e3", "M", "1 G", " 8M ", "1.G", ".5K", "1GB",
                                  "1MiB", "0x10", "1..5K", "8M\n", "\t8M"])
def test_parse_size_rejects(text):
    with pytest.raises(AcgError) as e:
        parse_size(text, "--swap")
    assert str(e.value) == f"--swap: invalid size {text!r}; accepted: {FORMS}"


def test_parse_size_rejects_non_text():
    with pytest.raises(AcgError) as e:
        parse_size(None, "--swap")
    assert str(e.value) == f"--swap: invalid size None; accepted: {FORMS}"


@pytest.mark.parametrize("text", ["1.5", "0.1K"])
def test_parse_size_rejects_fractional_bytes(text):
    with pytest.raises(AcgError) as e:
        parse_size(text, "--memory")
    assert str(e.value) == f"--memory: invalid size {text!r} (a fraction of a byte); accepted: {FORMS}"


def test_parse_size_rejects_too_large():
    with pytest.raises(AcgError) as e:
        parse_size("16777216T", "--memory")
    assert str(e.value) == ("--memory: invalid size '16777216T' (too large: more than 2^64 - 1 bytes); "
                            f"accepted: {FORMS}")


def test_parse_size_long_texts():
    # beyond int()'s 4300-digit limit: still a size or a refusal with a reason, never ValueError
    assert parse_size("0" * 10000 + "1K") == 1024
    assert parse_size("1." + "0" * 10000 + "K") == 1024
    with pytest.raises(SizeError) as e:
        parse_size("9" * 10000)
    assert e.value.reason == "too-large"
    with pytest.raises(SizeError) as e:
        parse_size("0." + "0" * 10000 + "1T")
    assert e.value.reason == "fraction-of-a-byte"


def test_memory_minimum():
    assert parse_memory("4M") == 4194304
    with pytest.raises(AcgError) as e:
        parse_memory("4194303")
    assert str(e.value) == ("--memory: '4194303' is 4194303 bytes; the memory limit must be "
                            "at least 4M (4194304 bytes)")


@pytest.mark.parametrize("name", ["a", "A_b.c-9", "x" * 64])
def test_names_accepted(name):
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", "x" * 65, "a/b", "a b", "ü", "a:b"])
def test_names_rejected(name):
    with pytest.raises(AcgError) as e:
        validate_name(name)
    assert str(e.value) == (f"--name: invalid name {name!r}; accepted: 1 to 64 characters "
                            "from A-Z a-z 0-9 _ . -")


@pytest.mark.parametrize("n,text", [(4096, "4K"), (1 << 30, "1G"), (1610612736, "1536M"),
                                    (1000, "1000"), (0, "0")])
def test_format_size(n, text):
    assert format_size(n) == text
