"""Marker files under /run/acg (or $ACG_RUN_DIR): who created which group and swap file."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

RUN_DIR_ENV = "ACG_RUN_DIR"
DEFAULT_RUN_DIR = Path("/run/acg")


class Registry:
    def __init__(self, run_dir: Path | str | None = None) -> None:
        if run_dir is None:
            run_dir = os.environ.get(RUN_DIR_ENV) or DEFAULT_RUN_DIR
        self.run_dir = Path(run_dir)

    # --- groups: one marker per group, named after the group path ---
    def group_marker(self, path: Path) -> Path:
        return self.run_dir / "groups" / (_key(str(path)) + ".json")

    def record_group(self, path: Path, info: dict) -> None:
        _write_json(self.group_marker(path), {"path": str(path), **info})

    def group_info(self, path: Path) -> dict | None:
        return _read_json(self.group_marker(path))

    def group_markers(self) -> list[dict]:
        return _read_all(self.run_dir / "groups")

    def forget_group(self, path: Path) -> None:
        _unlink(self.group_marker(path))

    # --- swap files ---
    def swap_marker(self, path: Path) -> Path:
        return self.run_dir / "swap" / (_key(str(path)) + ".json")

    def record_swap(self, path: Path, info: dict) -> None:
        _write_json(self.swap_marker(path), {"path": str(path), **info})

    def swap_info(self, path: Path) -> dict | None:
        return _read_json(self.swap_marker(path))

    def swap_markers(self) -> list[dict]:
        return _read_all(self.run_dir / "swap")

    def forget_swap(self, path: Path) -> None:
        _unlink(self.swap_marker(path))


def _key(text: str) -> str:
    readable = "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[-80:]
    return readable + "-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:
        return {"path": None, "corrupt_marker": str(path)}


def _read_all(directory: Path) -> list[dict]:
    if not directory.is_dir():
        return []
    out = []
    for p in sorted(directory.glob("*.json")):
        data = _read_json(p)
        if data is not None:
            out.append(data)
    return out


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
