"""`acbench columns [--markdown | --json] [NAME ...]`: the column dictionary (columns.py)."""
from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from acbench import columns

_err = Console(stderr=True, soft_wrap=True, highlight=False)


def columns_cmd(
    names: Optional[list[str]] = typer.Argument(None, help="Only these columns (default: every one)."),
    markdown: bool = typer.Option(False, "--markdown", help="A Markdown table (the harness README's)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per column, as a list."),
) -> None:
    """Every column of `acbench run`'s rows: type, unit, meaning and where it comes from."""
    missing = columns.unknown(names or [])
    if missing:
        _err.print(f"acbench columns: error: no column {', '.join(missing)}; `acbench columns` lists them all",
                   markup=False)
        raise typer.Exit(2)
    keep = set(names or columns.SCHEMA)
    if as_json:
        print(json.dumps([r for r in columns.as_records() if r["name"] in keep], indent=1, ensure_ascii=False))
    elif markdown:
        text = columns.markdown().splitlines()
        print("\n".join(text[:2] + [ln for ln in text[2:] if ln.split("`")[1] in keep]))
    else:
        t = Table(title=f"{len(keep)} columns (cells.parquet and cells.csv; `acbench columns --markdown`)")
        for col in ("column", "type", "unit", "meaning", "source"):
            t.add_column(col, overflow="fold")
        for c in columns.SCHEMA.values():
            if c.name in keep:
                t.add_row(c.name, c.type, c.unit, c.meaning, c.source)
        Console().print(t)


def register(app: typer.Typer) -> None:
    app.command("columns")(columns_cmd)
