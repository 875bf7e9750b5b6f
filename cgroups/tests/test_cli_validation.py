"""Every usage error of the executable: exit status 2 and a message naming the problem."""
import subprocess

import pytest

from conftest import ACG

FORMS = ("a whole number of bytes (4096) or a number with a binary unit K, M, G or T "
         "(512M, 1G, 1.5G)")


def acg(*args):
    return subprocess.run([str(ACG), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args,message", [
    (["--name", "bad/name", "--memory", "64M", "--", "true"],
     "acg: --name: invalid name 'bad/name'; accepted: 1 to 64 characters from A-Z a-z 0-9 _ . -"),
    (["--name", "x" * 65, "--memory", "64M", "--", "true"],
     f"acg: --name: invalid name '{'x' * 65}'; accepted: 1 to 64 characters from A-Z a-z 0-9 _ . -"),
    (["--name", "ok", "--memory", "12X", "--", "true"],
     f"acg: --memory: invalid size '12X'; accepted: {FORMS}"),
    (["--name", "ok", "--memory", "3M", "--", "true"],
     "acg: --memory: '3M' is 3145728 bytes; the memory limit must be at least 4M (4194304 bytes)"),
    (["--name", "ok", "--memory", "64M", "--swap", "lots", "--", "true"],
     f"acg: --swap: invalid size 'lots'; accepted: {FORMS}"),
    (["--name", "ok", "--memory", "64M", "--swap", "1.5", "--", "true"],
     f"acg: --swap: invalid size '1.5' (a fraction of a byte); accepted: {FORMS}"),
    (["--name", "ok", "--memory", "64M", "--swap", "0.1K", "--", "true"],
     f"acg: --swap: invalid size '0.1K' (a fraction of a byte); accepted: {FORMS}"),
    (["--name", "ok", "--memory", " 64M ", "--", "true"],
     f"acg: --memory: invalid size ' 64M '; accepted: {FORMS}"),
    (["--name", "ok", "--memory", "16777216T", "--", "true"],
     "acg: --memory: invalid size '16777216T' (too large: more than 2^64 - 1 bytes); "
     f"accepted: {FORMS}"),
    (["--name", "ok", "--memory", "64M"],
     "acg: run: no command given; usage: acg run --name N --memory SIZE [--swap SIZE | --no-swap] -- CMD [ARG...]"),
    (["--name", "ok", "--memory", "64M", "--", "/nonexistent/acg-test-cmd"],
     "acg: run: command not found or not executable: /nonexistent/acg-test-cmd"),
    (["--name", "ok", "--memory", "64M", "--interval", "0", "--", "true"],
     "acg: --interval: 0.0 must be a positive number of seconds"),
])
def test_run_usage_errors(args, message):
    r = acg("run", *args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", message + "\n")


def test_swap_and_no_swap_exclusive():
    r = acg("run", "--name", "ok", "--memory", "64M", "--swap", "1G", "--no-swap", "--", "true")
    assert r.returncode == 2
    assert "argument --no-swap: not allowed with argument --swap" in r.stderr


def test_unknown_subcommand():
    r = acg("frob")
    assert r.returncode == 2
    assert ("argument command: invalid choice: 'frob' (choose from 'run', 'list', 'cleanup', "
            "'swap')") in r.stderr


def test_unknown_swap_subcommand():
    r = acg("swap", "flip")
    assert r.returncode == 2
    assert "argument swap_command: invalid choice: 'flip' (choose from 'on', 'zram', 'off', 'list')" in r.stderr


def test_missing_required_options():
    r = acg("run", "--", "true")
    assert r.returncode == 2
    assert "the following arguments are required: --name, --memory" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["on", "--size", "8Q", "--path", "/var/tmp/acg-never"],
     f"acg: --size: invalid size '8Q'; accepted: {FORMS}"),
    (["on", "--size", "512K", "--path", "/var/tmp/acg-never"],
     "acg: --size: 524288 bytes is too small for a swap file; it must be at least 1M"),
    (["on", "--size", "8M", "--priority", "40000", "--path", "/var/tmp/acg-never"],
     "acg: --priority: 40000 is out of range; accepted: 0 to 32767"),
    (["on", "--size", "8M", "--path", "/nonexistent-dir/swapfile"],
     "acg: --path: directory /nonexistent-dir does not exist"),
    (["off", "--path", "/var/tmp/acg-never-existed"],
     "acg: --path: /var/tmp/acg-never-existed does not exist"),
])
def test_swap_usage_errors(args, message):
    r = acg("swap", *args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", message + "\n")
