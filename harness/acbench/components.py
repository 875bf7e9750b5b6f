"""The policies, tiers and valid pairs the memcached-ac binary has: its `-o ac_list`
(policies/README.md, "-o ac_list"), read once per binary. approaches.py checks its table
against it and makes an approach of any pair the table does not name ("P" for policy P over
its default tier, "P+T" over tier T), so a policy added to the server runs in a spec with no
change to the harness."""
from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from acbench import paths


class ComponentsError(RuntimeError):
    pass


def _version(binary: Path | None, what: str) -> tuple[str, int, int]:
    """(path, mtime, size) of the binary (memcached-ac of build/bin or $ACBENCH_BIN by default): the
    key its answers are cached under, read again when it is rebuilt."""
    b = binary or paths.binary("memcached-ac")
    try:
        st = b.stat()
    except OSError:
        raise ComponentsError(f"{b} is missing: build it with `make` (it lists its {what})") from None
    return str(b), st.st_mtime_ns, st.st_size


def listing(binary: Path | None = None) -> dict[str, Any]:
    """The binary's -o ac_list."""
    return _read(*_version(binary, "policies and tiers"))


@functools.lru_cache(maxsize=4)
def _read(binary: str, mtime_ns: int, size: int) -> dict[str, Any]:
    try:
        out = subprocess.run([binary, "-o", "ac_list"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ComponentsError(f"{binary} -o ac_list failed: {e}") from None
    try:
        data = json.loads(out.stdout)
    except json.JSONDecodeError:
        raise ComponentsError(f"{binary} -o ac_list printed no JSON (exit {out.returncode}): "
                              f"{(out.stderr or out.stdout).strip()[:300]}") from None
    if not isinstance(data, dict) or not all(k in data for k in ("policies", "tiers", "pairs", "aliases")):
        raise ComponentsError(f"{binary} -o ac_list: not the listing this harness reads (policies, tiers, pairs, "
                              "aliases)")
    return data


def pair(data: dict[str, Any], policy: str, tier: str | None) -> dict[str, Any] | None:
    """The listing's pair entry of (policy, tier); tier None: the policy's default pair. An alias
    (ospaging) stands for its pair."""
    alias = next((a for a in data["aliases"] if a["name"] == policy), None)
    if alias is not None:
        policy, tier = alias["policy"], tier or alias["tier"]
    for p in data["pairs"]:
        if p["policy"] == policy and (p["tier"] == tier if tier else p["default"]):
            return p
    return None


def pair_names(data: dict[str, Any]) -> list[str]:
    """Every valid pair as an approach name: "P" over its default tier, "P+T" over another."""
    return [p["policy"] if p["default"] else f"{p['policy']}+{p['tier']}" for p in data["pairs"]]


def policy(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in data["policies"] if p["name"] == name)


def tier(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["tiers"] if t["name"] == name)


def option_keys(binary: Path | None = None) -> set[str]:
    """Every -o ac_* option the binary's -h lists (core, policies, tiers)."""
    return _keys(*_version(binary, "options"))


@functools.lru_cache(maxsize=4)
def _keys(binary: str, mtime_ns: int, size: int) -> set[str]:
    try:
        out = subprocess.run([binary, "-h"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ComponentsError(f"{binary} -h failed: {e}") from None
    return set(re.findall(r"^\s+- (ac_[a-z0-9_]+)\b", out.stdout + out.stderr, re.M))
