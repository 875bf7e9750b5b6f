"""The `acbench` command line: one module per command, registered here."""
import typer

from acbench import (check_env, cleanup_cmd, columns_cmd, compare_cmd, fig2_cmd, init_cmd, maketrace_cmd, opt_cmd, plot_cmd,
                     publish_cmd, report_cmd, run_cmd, tables_cmd)

app = typer.Typer(
    name="acbench",
    help="memcached-ac experiment harness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help texts are plain text: "[run]" names a spec table, it is no markup
    rich_markup_mode=None,
)


@app.callback()
def main() -> None:
    """memcached-ac experiment harness (see `acbench COMMAND --help`)."""


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
