"""acbench installed as a package (not editable) into a fresh virtual environment works on a
checkout named with --home, from a directory outside it; without a home it says how to name one."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv (--system-site-packages: the dependencies as installed here) with copies of acbench
    and acplot installed from a directory that is not the checkout; its bin/."""
    d = tmp_path_factory.mktemp("install")
    for pkg, sub in (("harness", "acbench"), ("analysis", "acplot")):
        shutil.copytree(TOP / pkg / sub, d / "src" / pkg / sub, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(TOP / pkg / "pyproject.toml", d / "src" / pkg)
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(d / "venv")
    # the system's setuptools builds the packages (no download) when it can make wheels
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("wheel") else []
    cp = subprocess.run([sys.executable, "-m", "pip", "--python", str(d / "venv/bin/python"), "install", "-q",
                         "--no-deps", *isolation, str(d / "src/harness"), str(d / "src/analysis")],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    return d / "venv" / "bin"


def outside(bin_dir: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ACBENCH_HOME", "TOP", "PYTHONPATH")}
    return subprocess.run([str(bin_dir / "acbench"), *args], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env=env)


def test_installed_package_is_the_venvs(installed: Path, tmp_path: Path) -> None:
    cp = subprocess.run([str(installed / "python"), "-c", "import acbench, acplot; print(acbench.__file__, "
                         "acplot.__file__)"], capture_output=True, text=True, cwd=tmp_path,
                        env={"PATH": os.environ["PATH"]})
    assert cp.returncode == 0, cp.stderr
    assert all(p.startswith(str(installed.parent / "lib")) for p in cp.stdout.split()), cp.stdout


def test_version_names_the_home(installed: Path, tmp_path: Path) -> None:
    from acbench import __version__, sysinfo
    cp = outside(installed, tmp_path, "--home", str(TOP), "--version")
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.splitlines()
    assert lines[0] == f"acbench {__version__}"
    assert lines[1] == f"home {TOP}"
    assert lines[2] == f"git revision {sysinfo.git_revision()}"
    assert lines[3].startswith(f"memcached-ac {TOP}/build/bin/memcached-ac sha256 {sysinfo.binary_sha256()}")


def test_dry_run_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    cp = outside(installed, tmp_path, "--home", str(TOP), "run", "experiments/ci.toml", "--dry-run", "--run-id", "t")
    assert cp.returncode == 0, cp.stderr
    assert f"results would go to {TOP}/build/results/ci/t" in cp.stdout.replace("\n", "")
    assert list(tmp_path.iterdir()) == []


def test_no_home(installed: Path, tmp_path: Path) -> None:
    cp = outside(installed, tmp_path, "run", "experiments/ci.toml", "--dry-run")
    assert cp.returncode == 2
    assert cp.stderr.strip() == (f"acbench: error: no memcached-ac checkout at or above {tmp_path.resolve()}: run "
                                 "acbench inside one, or name it with --home DIR or $ACBENCH_HOME")
    cp = outside(installed, tmp_path, "--home", str(tmp_path), "--version")
    assert cp.returncode == 2
    assert "not a memcached-ac checkout (accepted: a directory holding experiments/, harness/, memcached/)" in cp.stderr
