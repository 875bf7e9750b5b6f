#!/usr/bin/env python3
"""policies/README.md's "How to add a policy", done in a scratch copy of the
tree and run: the policy file and the registry line are taken from the
README's own blocks (so the README stays true), the scratch tree's source list
(sources.mk) must pick the new file up, and memcached-ac is rebuilt the short
way -- only the new file and the files that include core/ac_components.def
compiled, with upstream's compiler and flags as memcached/Makefile does, the
rest of build/obj/policies and upstream's objects reused, then linked. The
binary must list the policy in -o ac_list, and a server of it over its default
tier must spill (a small -m, four times as much written), read every value
back byte-exact and bring spilled items back, lose nothing, and stop cleanly.
Then the same policy without a member the README calls mandatory (on_access)
must be refused at start with a message naming it.

Usage: add_policy.py TOP   (needs `make -C memcached all` done in TOP)"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
README = TOP / "policies" / "README.md"
passed = failed = 0


def check(ok: bool, what: str) -> None:
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"add_policy: FAIL {what}")


def readme_steps() -> tuple[str, str, str]:
    """(policy file name, its text, the registry line) from the README section"""
    text = README.read_text()
    start = text.index("**How to add a policy**")
    section = text[start:text.index("**How to add a tier**", start)]
    name = re.search(r"`policy/(\w+)\.c`", section).group(1)
    code = re.search(r"```c\n(.*?)```", section, re.S).group(1)
    line = re.search(r"```\n(AC_POLICY\(\w+\))\n```", section).group(1)
    return name, code, line


def mkvar(src: Path, name: str) -> str:
    for line in (src / "Makefile").read_text().splitlines():
        if line.startswith(f"{name} = "):
            return line[len(name) + 3:]
    return ""


def build(scratch: Path, name: str) -> Path:
    src = next((TOP / "build" / "upstream").glob("memcached-*"))
    obj = TOP / "build" / "obj" / "policies"
    out = scratch / "obj"
    out.mkdir()
    # what the scratch tree's build would compile: every file of sources.mk's list
    srcs = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-", f"TOP={scratch}"],
                          input="include $(TOP)/policies/sources.mk\nall:\n\t@echo $(AC_SRCS)\n",
                          capture_output=True, text=True, check=True).stdout.split()
    check(str(scratch / "policies" / "policy" / f"{name}.c") in srcs, "sources.mk does not pick up the new file")
    # compiled anew: the new file, and those that include the registry list
    again = [s for s in map(Path, srcs)
             if s.name == f"{name}.c" or "ac_components.def" in s.read_text()]
    cc = mkvar(src, "CC").split()
    flags = (mkvar(src, "DEFS").split() + [f"-I{src}", f"-I{scratch}/policies/core", f"-I{scratch}/policies",
             f"-I{TOP}/ycsb-driver"] + mkvar(src, "CPPFLAGS").split() + mkvar(src, "CFLAGS").split())
    for s in again:
        subprocess.run(cc + flags + ["-c", str(s), "-o", str(out / f"{s.stem}.o")], check=True)
    objs = [out / f"{Path(s).stem}.o" if (out / f"{Path(s).stem}.o").exists() else obj / f"{Path(s).stem}.o"
            for s in srcs if Path(s).parent.parent == scratch / "policies"]
    objs += [obj / f"{p.stem}.o" for p in (TOP / "ycsb-driver" / "inproc").glob("*.c")]
    upstream = sorted(str(p) for p in src.glob("memcached-*.o"))
    binary = scratch / "memcached-ac"
    libs = mkvar(src, "LIBS").split() + [str(TOP / "build" / "lib" / "libycsb.a"),
                                         "-llz4", "-lzstd", "-luring", "-laio", "-lm"]
    subprocess.run(cc + mkvar(src, "CFLAGS").split() + mkvar(src, "LDFLAGS").split() + ["-o", str(binary)]
                   + upstream + [str(o) for o in objs] + libs, check=True)
    return binary


class Text:
    """memcached's text protocol over one connection"""
    def __init__(self, port: int):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.buf += self.s.recv(65536)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def set(self, key: str, value: bytes) -> bytes:
        self.s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(value), value))
        return self.line()

    def get(self, key: str) -> bytes | None:
        self.s.sendall(b"get %s\r\n" % key.encode())
        head = self.line()
        if head == b"END":
            return None
        n = int(head.split()[3])
        value = self.exact(n + 2)[:n]
        assert self.line() == b"END"
        return value

    def stats(self) -> dict[str, str]:
        self.s.sendall(b"stats anticache\r\n")
        out = {}
        while (line := self.line()) != b"END":
            _, k, v = line.decode().split(" ", 2)
            out[k] = v
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(binary: Path, name: str, scratch: Path) -> None:
    listed = json.loads(subprocess.run([str(binary), "-o", "ac_list"], capture_output=True, text=True,
                                       check=True).stdout)
    entry = [p for p in listed["policies"] if p["name"] == name]
    check(len(entry) == 1, f"-o ac_list does not list policy {name}")
    port, spill = free_port(), scratch / "spill"
    log = open(scratch / "stderr.log", "w+")
    proc = subprocess.Popen([str(binary), "-U", "0", "-l", "127.0.0.1", "-p", str(port), "-m", "8", "-u", "root",
                             "-t", "2", "-o", f"ac_policy={name},ac_spill_dir={spill}"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        for _ in range(200):
            try:
                c = Text(port)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("the server did not start: " + (scratch / "stderr.log").read_text())
        values = {f"k{i}": (b"%05d" % i) * 800 for i in range(8000)}     # 4000-byte values, 32 MB for -m 8
        refused = [k for k, v in values.items() if c.set(k, v) != b"STORED"]
        check(not refused, f"{len(refused)} sets not stored, e.g. {refused[:3]}")
        st = c.stats()
        check(st["policy"] == name and int(st["spilled_items"]) > 0, f"nothing spilled: {st.get('spilled_items')}")
        bad = [k for k, v in values.items() if c.get(k) != v]
        check(not bad, f"{len(bad)} values not read back byte-exact, e.g. {bad[:3]}")
        st = c.stats()
        check(int(st["fetched_items"]) > 0 and int(st["disk_hits"]) > 0, "no spilled item came back")
        check(st["lost_items"] == "0" and st["refused_items"] == "0",
              f"lost {st['lost_items']}, refused {st['refused_items']}")
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    check(rc == 0, f"exit code {rc} after SIGTERM")
    check(not spill.exists(), "the spill directory is left after exit")


def main() -> int:
    t0 = time.monotonic()
    name, code, line = readme_steps()
    with tempfile.TemporaryDirectory(prefix="ac-add-policy.") as d:
        scratch = Path(d)
        shutil.copytree(TOP / "policies", scratch / "policies",
                        ignore=shutil.ignore_patterns("tests", "*.sh", "README.md"))
        # the README's steps: the policy's file, and its line in the registry list
        (scratch / "policies" / "policy" / f"{name}.c").write_text(code)
        with open(scratch / "policies" / "core" / "ac_components.def", "a") as f:
            f.write(line + "\n")
        binary = build(scratch, name)
        run(binary, name, scratch)
        # a member the README calls mandatory left out: refused at start, named
        lacking = code.replace("    .on_access = fifo_no_op,\n", "")
        check(lacking != code, "the README's block has no .on_access line to leave out")
        (scratch / "policies" / "policy" / f"{name}.c").write_text(lacking)
        shutil.rmtree(scratch / "obj")
        binary = build(scratch, name)
        r = subprocess.run([str(binary), "-U", "0", "-p", "0", "-m", "8", "-u", "root", "-o",
                            f"ac_policy={name},ac_spill_dir={scratch}/spill2"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        want = f"memcached-ac: policy {name} does not set on_access, which core/ac_policy.h says it must\n"
        check(r.returncode != 0 and r.stderr == want, f"a policy without on_access: exit {r.returncode}, {r.stderr!r}")
    print(f"add_policy: policy {name} added as the README says, built and run in {time.monotonic() - t0:.1f} s")
    print(f"add_policy: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
