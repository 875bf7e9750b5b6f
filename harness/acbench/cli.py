"""The `acbench` command line: one module per command, registered here; --home and --version
are options of acbench itself (acbench --home DIR run SPEC)."""
import sys
from pathlib import Path
from typing import Optional

import typer

from acbench import (check_env, cleanup_cmd, columns_cmd, compare_cmd, fig2_cmd, init_cmd, maketrace_cmd,
                     opt_cmd, paths, plot_cmd, publish_cmd, report_cmd, rerun_cmd, run_cmd, tables_cmd)

app = typer.Typer(
    name="acbench",
    help="memcached-ac experiment harness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help texts are plain text: "[run]" names a spec table, it is no markup
    rich_markup_mode=None,
)


def version_text() -> str:
    """The package version, the home's git revision and the memcached-ac binary it runs."""
    from acbench import __version__, sysinfo
    home = paths.top()
    b = paths.binary("memcached-ac")
    return (f"acbench {__version__}\nhome {home}\ngit revision {sysinfo.git_revision()}\n"
            f"memcached-ac {b} sha256 {sysinfo.binary_sha256()}"
            + ("" if b.exists() else " (not built: make)"))


def _home(value: Optional[Path]) -> Optional[Path]:
    if value is not None:
        try:
            paths.set_home(value)
        except paths.HomeError as e:
            raise typer.BadParameter(str(e).removeprefix("--home ")) from None
    return value


def _version(value: bool) -> None:
    if value:
        try:
            typer.echo(version_text())
        except paths.HomeError as e:
            typer.echo(f"acbench: error: {e}", err=True)
            raise typer.Exit(2)
        raise typer.Exit(0)


@app.callback()
def main(
    home: Optional[Path] = typer.Option(None, "--home", callback=_home, is_eager=True,
                                        help="The memcached-ac checkout to work on (its build/, experiments/, "
                                        "cgroups/); default: $ACBENCH_HOME, else the checkout holding the "
                                        "current directory."),
    version: bool = typer.Option(False, "--version", callback=_version,
                                 help="Print the acbench version, the home's git revision and the "
                                 "memcached-ac binary's checksum, and exit."),
) -> None:
    """memcached-ac experiment harness (see `acbench COMMAND --help`)."""


def run() -> None:
    """The console script: app() with a missing checkout said in one line, not a traceback."""
    try:
        app()
    except paths.HomeError as e:
        print(f"acbench: error: {e}", file=sys.stderr)
        sys.exit(2)


# Each command module exposes register(app); add new commands the same way.
init_cmd.register(app)
opt_cmd.register(app)
maketrace_cmd.register(app)
run_cmd.register(app)
check_env.register(app)
columns_cmd.register(app)
plot_cmd.register(app)
compare_cmd.register(app)
report_cmd.register(app)
cleanup_cmd.register(app)
fig2_cmd.register(app)
tables_cmd.register(app)
publish_cmd.register(app)
rerun_cmd.register(app)
