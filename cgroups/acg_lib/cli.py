"""The acg command line: run, list, cleanup, swap on/zram/off/list (argparse, stdlib only)."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from .detect import detect
from .errors import AcgError
from .group import MemoryGroup
from .leftovers import cleanup, list_groups
from .registry import Registry
from .runner import block_signals, run_in_group
from .swap import cleanup_swaps, swap_list, swap_off, swap_on
from .units import SIZE_FORMS, parse_memory, parse_size, validate_name
from .zram import zram_on

RUN_USAGE = "acg run --name N --memory SIZE [--swap SIZE | --no-swap] -- CMD [ARG...]"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="acg", description="Memory-limited cgroups (v1 or v2) "
                                "and swap files, always cleaned up.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", usage=RUN_USAGE, help="run CMD in a new memory-limited group",
                       description="Run CMD in <root>/acg/<name>.<acg pid>, forward signals, "
                       "print the group's memory statistics as one JSON line on stdout when "
                       "CMD exits, remove the group. Exit status: CMD's (128+N if killed by "
                       "signal N, e.g. 137 after an OOM kill), 2 for acg errors.")
    r.add_argument("--name", required=True, help="group name, [A-Za-z0-9_.-]{1,64}")
    r.add_argument("--memory", required=True, help=f"memory limit (>= 4M): {SIZE_FORMS}")
    sw = r.add_mutually_exclusive_group()
    sw.add_argument("--swap", metavar="SIZE", help="allow this much swap (v1: memsw = "
                    "memory + SIZE; v2: memory.swap.max = SIZE)")
    sw.add_argument("--no-swap", action="store_true", help="allow no swap (v1: memsw = "
                    "memory; v2: memory.swap.max = 0). This is the default.")
    r.add_argument("--json-out", metavar="FILE", help="also write the JSON object to FILE")
    r.add_argument("--interval", type=float, default=0.1, metavar="SECONDS",
                   help="how often peaks (anon, swap, usage, file) are sampled (default 0.1)")
    r.add_argument("cmd", nargs=argparse.REMAINDER, help="the command, after --")
    ls = sub.add_parser("list", help="show acg's groups and whether their owner is alive")
    ls.add_argument("--json", action="store_true", help="one JSON object per line")
    c = sub.add_parser("cleanup", help="remove groups whose owning acg process is dead, and "
                       "swap files whose owning process is dead (API swap_on(owned=True))")
    c.add_argument("--kill", action="store_true", help="kill the commands the dead owner "
                   "started instead of moving them to the parent group")
    s = sub.add_parser("swap", help="swap files: on, off, list")
    ssub = s.add_subparsers(dest="swap_command", required=True)
    on = ssub.add_parser("on", help="create, mkswap and swapon a swap file")
    on.add_argument("--size", required=True, help=SIZE_FORMS)
    on.add_argument("--path", required=True, help="the file to create (must not exist)")
    on.add_argument("--priority", type=int, help="swap priority, 0 to 32767")
    z = ssub.add_parser("zram", help="create a zram device (compressed swap in RAM) and swapon it",
                        description="A new /dev/zramN (zram's hot_add), compressing with ALGORITHM, "
                        "SIZE of uncompressed capacity, enabled as swap. `acg swap off --path "
                        "/dev/zramN` removes it. Its memory is outside every memory cgroup.")
    z.add_argument("--size", required=True, help=SIZE_FORMS)
    z.add_argument("--algorithm", default="lz4", help="one the kernel's zram offers (default lz4)")
    z.add_argument("--priority", type=int, help="swap priority, 0 to 32767")
    off = ssub.add_parser("off", help="swapoff and delete a swap file (or zram device) acg created")
    off.add_argument("--path", required=True)
    ssub.add_parser("list", help="acg's swap files")
    return p


def _err(msg: str) -> None:
    print(f"acg: {msg}", file=sys.stderr)


def _report_removals(reports: list[dict]) -> bool:
    ok = True
    for rep in reports:
        if rep.get("stale_marker"):
            _err(f"dropped the marker of {rep['path']} (the group no longer exists)")
        elif rep["removed"]:
            _err(f"removed leftover group {rep['path']} (owner pid {rep['owner_pid']} is "
                 f"dead; moved tasks {rep['moved_pids']}, killed {rep['killed_pids']})")
        else:
            ok = False
            _err(f"leftover group {rep['path']} (owner pid {rep['owner_pid']} is dead) "
                 f"could not be removed: {rep.get('error')}")
    return ok


def cmd_run(a: argparse.Namespace) -> int:
    validate_name(a.name)
    memory = parse_memory(a.memory)
    swap = parse_size(a.swap, "--swap") if a.swap is not None else 0
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        raise AcgError(f"run: no command given; usage: {RUN_USAGE}")
    if shutil.which(cmd[0]) is None:
        raise AcgError(f"run: command not found or not executable: {cmd[0]}")
    if a.interval <= 0:
        raise AcgError(f"--interval: {a.interval} must be a positive number of seconds")
    child_mask = block_signals()  # from here on signals are forwarded, never fatal to acg
    backend = detect()
    registry = Registry()
    _report_removals(cleanup(backend, registry))
    group = MemoryGroup(a.name, memory, swap, backend=backend, run_dir=registry.run_dir)
    group.create()
    try:
        res = run_in_group(group, cmd, child_mask, a.interval)
        stats = group.stats()
    finally:
        removal = group.remove()
    stats.update({"command": cmd, "exit_status": res.exit_status, "signal": res.signal,
                  "wall_seconds": round(res.wall_seconds, 6), "received_signals": res.received,
                  "child_rusage": res.rusage, "sample_interval": a.interval,
                  "removal": removal})
    line = json.dumps(stats, sort_keys=True)
    print(line, flush=True)
    if not removal["removed"]:
        _err(removal.get("error", f"could not remove {group.path}"))
    if a.json_out:
        try:
            Path(a.json_out).write_text(line + "\n")
        except OSError as exc:
            _err(f"--json-out: cannot write {a.json_out}: {exc.strerror}")
    return res.exit_status


def cmd_list(a: argparse.Namespace) -> int:
    backend = detect()
    infos = list_groups(backend, Registry())
    if not a.json:
        print(f"{'STATE':<14}{'OWNER':>8}  {'TASKS':<16}PATH")
    for info in infos:
        d = info.as_dict()
        if a.json:
            print(json.dumps(d, sort_keys=True))
        else:
            tasks = ",".join(map(str, info.tasks)) or "-"
            print(f"{info.state:<14}{str(info.owner_pid):>8}  {tasks:<16}{info.path}")
        if info.state in ("dead", "stale-marker"):
            _err(f"leftover group {info.path} ({info.state}, owner pid {info.owner_pid}); "
                 "`acg cleanup` removes it")
    return 0


def _report_swap_removals(reports: list[dict]) -> bool:
    ok = True
    for rep in reports:
        if rep["removed"]:
            _err(f"removed leftover swap file {rep['path']} (owner pid {rep['owner_pid']} is "
                 f"dead; was active: {rep['was_active']})")
        elif "note" in rep:
            _err(f"dropped the marker of swap file {rep['path']} (the file no longer exists)")
        else:
            ok = False
            _err(f"leftover swap file {rep['path']} (owner pid {rep['owner_pid']} is dead) "
                 f"could not be removed: {rep.get('error')}")
    return ok


def cmd_cleanup(a: argparse.Namespace) -> int:
    reports = cleanup(detect(), Registry(), kill=a.kill)
    if not reports:
        print("no leftover groups")
    ok = _report_removals(reports)
    ok = _report_swap_removals(cleanup_swaps()) and ok
    return 0 if ok else 2


def cmd_swap(a: argparse.Namespace) -> int:
    if a.swap_command == "on":
        info = swap_on(a.path, parse_size(a.size, "--size"), a.priority)
        print(json.dumps(info, sort_keys=True))
    elif a.swap_command == "zram":
        print(json.dumps(zram_on(parse_size(a.size, "--size"), a.algorithm, a.priority), sort_keys=True))
    elif a.swap_command == "off":
        print(json.dumps(swap_off(a.path), sort_keys=True))
    else:
        for entry in swap_list():
            print(json.dumps(entry, sort_keys=True))
    return 0


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    handlers = {"run": cmd_run, "list": cmd_list, "cleanup": cmd_cleanup, "swap": cmd_swap}
    try:
        return handlers[a.command](a)
    except AcgError as exc:
        _err(str(exc))
        return exc.exit_status
    except OSError as exc:
        _err(f"{exc.filename or ''}: {exc.strerror}" if exc.strerror else str(exc))
        return 2
