"""diskprobe.py: the host's disk IOPS measured once per boot, kept, and read back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from acbench import diskprobe


def test_measured_once_then_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake_measure(seconds: float = 1.0, size: int = 64 << 20, where: Path = diskprobe.PROBE_DIR):
        calls.append(seconds)
        return 12345.0, 81.0

    monkeypatch.setattr(diskprobe, "measure", fake_measure)
    cache = tmp_path / "run" / "disk-iops.json"
    assert diskprobe.host_iops(cache) == 12345.0 and len(calls) == 1
    assert json.loads(cache.read_text()) == {"iops": 12345.0, "latency_us": 81.0, "dir": str(diskprobe.PROBE_DIR)}
    assert diskprobe.host_iops(cache) == 12345.0 and len(calls) == 1      # this boot's value, not measured again
    cache.write_text("not json")
    assert diskprobe.host_iops(cache) == 12345.0 and len(calls) == 2      # a damaged cache is measured again


def test_no_probe_possible_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a, **k):
        raise diskprobe.ProbeError("O_DIRECT not possible in /x (Invalid argument); no IOPS probe")
    monkeypatch.setattr(diskprobe, "measure", refuse)
    assert diskprobe.host_iops(tmp_path / "disk-iops.json") is None
    assert not (tmp_path / "disk-iops.json").exists()


def test_a_real_probe_of_a_tenth_of_a_second() -> None:
    before = set(diskprobe.PROBE_DIR.glob("acbench-iops-*"))
    iops, lat_us = diskprobe.measure(0.1, 4 << 20)
    assert iops > 0 and lat_us > 0
    assert set(diskprobe.PROBE_DIR.glob("acbench-iops-*")) == before      # its file and directory removed
