"""server.free_port: ports below the kernel's ephemeral range (which outgoing connections take their
source ports from), none that something is bound to, and the kernel's choice when there is no room."""
from __future__ import annotations

import socket
from pathlib import Path

from acbench import server


def test_ports_below_the_ephemeral_range(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "range"
    f.write_text("32768\t60999\n")
    monkeypatch.setattr(server, "EPHEMERAL_RANGE", f)
    assert server.listen_range() == (20768, 32767)
    ports = {server.free_port() for _ in range(50)}
    assert all(20768 <= p <= 32767 for p in ports) and len(ports) > 40


def test_a_bound_port_is_not_handed_out(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "range"
    f.write_text("13025 60999\n")       # the span: the 12000 ports below 13025
    monkeypatch.setattr(server, "EPHEMERAL_RANGE", f)
    lo, hi = server.listen_range()
    assert (lo, hi) == (1025, 13024)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        taken = s.getsockname()[1]
        monkeypatch.setattr(server, "listen_range", lambda: (taken, taken))
        p = server.free_port()        # the only candidate is bound: the kernel's choice instead
        assert p != taken


def test_no_room_below(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "range"
    f.write_text("1500 60999\n")
    monkeypatch.setattr(server, "EPHEMERAL_RANGE", f)
    assert server.listen_range() is None
    assert server.free_port() > 0
