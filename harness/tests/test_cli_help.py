"""Every `acbench COMMAND --help` shows its help texts as written: "[run]" names a spec table and
must not be eaten as markup."""
from __future__ import annotations

import re

import typer
from typer.testing import CliRunner

from acbench.cli import app


def test_help_texts_keep_their_brackets() -> None:
    group = typer.main.get_command(app)
    checked = set()
    for name, cmd in group.commands.items():   # type: ignore[attr-defined]
        out = " ".join(CliRunner().invoke(app, [name, "--help"]).output.split())
        texts = [p.help or "" for p in cmd.params] + [cmd.help or ""]
        for token in {t for text in texts for t in re.findall(r"\[[a-z_]+\]", text)}:
            assert token in out, (name, token)
            checked.add((name, token))
    assert ("run", "[run]") in checked      # --mode, --spill-device and --run-set name it
