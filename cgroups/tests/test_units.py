"""Sizes and names: accepted forms and the exact error texts."""
import pytest

from acg_lib.errors import AcgError
from acg_lib.units import format_size, parse_memory, parse_size, validate_name

FORMS = ("a whole number of bytes (4096) or a number with a binary unit K, M, G or T "
         "(512M, 1G, 1.5G)")


@pytest.mark.parametrize("text,value", [
    ("4096", 4096), ("0", 0), ("1K", 1024), ("1k", 1024), ("512M", 512 << 20),
    ("1G", 1 << 30), ("1.5G", 1610612736), ("0.5M", 524288), ("2T", 2 << 40),
    (" 8M ", 8 << 20)])
def test_parse_size_accepts(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "12X", "-1", "1e3", "M", "1 G", "1.G", "1GB", "0x10"])
def test_parse_size_rejects(text):
    with pytest.raises(AcgError) as e:
        parse_size(text, "--swap")
    assert str(e.value) == f"--swap: invalid size {text!r}; accepted: {FORMS}"


def test_parse_size_rejects_fractional_bytes():
    with pytest.raises(AcgError) as e:
        parse_size("1.5", "--memory")
    assert str(e.value) == f"--memory: invalid size '1.5' (a fraction of a byte); accepted: {FORMS}"


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
