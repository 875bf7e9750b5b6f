"""A run directory: results/<spec>/<run-id>/{cells.parquet, cells.csv, run.json, cells/<id>/}.

Both files hold the same columns with the same types: the column dictionary's (columns.py).
Rows of an older acbench are read in today's names and units (columns.upgrade)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from acbench import columns

PARQUET = "cells.parquet"
CSV = "cells.csv"


class ResultsError(RuntimeError):
    pass


class RunDir:
    def __init__(self, path: Path) -> None:
        self.path = path

    def cell_dir(self, cell_id: str) -> Path:
        return self.path / "cells" / cell_id

    def read(self) -> pd.DataFrame:
        f = self.path / PARQUET
        if not f.exists():
            return pd.DataFrame()
        return typed_rows(pd.read_parquet(f))

    def finished(self) -> set[str]:
        """Cells with a result (a cell reported as oom_killed is run again on resume)."""
        return set(self.finished_keys())

    def finished_keys(self) -> dict[str, str | None]:
        """Each finished cell and the cell key it ran with (cellkey.py; None for a row of an older
        acbench, which kept none)."""
        df = self.read()
        if "cell_id" not in df.columns:
            return {}
        if "status" in df.columns:
            df = df[df["status"].fillna("ok") == "ok"]
        keys = df["cell_key"] if "cell_key" in df.columns else pd.Series(None, index=df.index, dtype=object)
        return {cid: (None if pd.isna(k) else str(k)) for cid, k in zip(df["cell_id"], keys)}

    def append(self, row: dict[str, Any]) -> None:
        """Add one row (replacing an older row of the same cell), write Parquet then CSV."""
        df = self.read()
        if "cell_id" in df.columns:
            df = df[df["cell_id"] != row["cell_id"]]
        new = columns.typed(pd.DataFrame([row]))        # a column the dictionary lacks raises here
        self.write(new if df.empty else columns.typed(pd.concat([df, new], ignore_index=True), strict=False))

    def write(self, df: pd.DataFrame) -> None:
        """All the rows at once (Parquet then CSV, each written whole, then renamed)."""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / (PARQUET + ".tmp")
        df.to_parquet(tmp, index=False)
        tmp.replace(self.path / PARQUET)
        tmp = self.path / (CSV + ".tmp")
        df.to_csv(tmp, index=False)
        tmp.replace(self.path / CSV)

    def read_meta(self) -> dict[str, Any]:
        """run.json, or {} when there is none (or it is unreadable)."""
        f = self.path / "run.json"
        if not f.exists():
            return {}
        try:
            meta = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            raise ResultsError(f"{f}: unreadable ({e}); it holds the run's sessions: repair or remove it") from None
        return meta if isinstance(meta, dict) else {}

    def write_meta(self, meta: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f"run.json.tmp{os.getpid()}"
        tmp.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path / "run.json")


def write_published(df: pd.DataFrame, meta: dict[str, Any], dest: Path) -> None:
    """DEST/cells.csv (every row, every column) and DEST/run.json: a run as committed data
    (`acbench publish`, `acbench rerun`); read back by load_results."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, write in ((CSV, lambda f: df.to_csv(f, index=False)),
                        ("run.json", lambda f: f.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n"))):
        tmp = dest / f".{name}.tmp{os.getpid()}"      # whole or not at all: an interrupt leaves the old file
        write(tmp)
        tmp.replace(dest / name)


def load_results(path: Path) -> pd.DataFrame:
    """cells.parquet of a run directory, or a CSV / Parquet file given directly."""
    path = Path(path)
    if path.is_dir():
        f = path / PARQUET
        if not f.exists():
            raise ResultsError(f"{path}: no {PARQUET} (is this a run directory of `acbench run`?)")
        return typed_rows(pd.read_parquet(f))
    if not path.exists():
        raise ResultsError(f"{path}: no such file or directory")
    if path.suffix == ".parquet":
        return typed_rows(pd.read_parquet(path))
    if path.suffix == ".csv":
        return read_csv(path)
    raise ResultsError(f"{path}: accepted: a run directory, a .parquet or a .csv file")


def read_csv(path: Path) -> pd.DataFrame:
    """A cells.csv typed as the dictionary says (its text columns read as text: "1" stays "1")."""
    header = pd.read_csv(path, nrows=0).columns
    text = {c: str for c in header if columns.SCHEMA.get(columns.RENAMED.get(c, (c,))[0]) is not None
            and columns.SCHEMA[columns.RENAMED.get(c, (c,))[0]].type in ("str", "bool", "datetime")}
    return typed_rows(pd.read_csv(path, dtype=text))


def typed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows as the column dictionary types them (columns of an older acbench renamed; a column it
    does not know kept as read)."""
    try:
        return columns.typed(columns.upgrade(df), strict=False)
    except columns.SchemaError as e:
        raise ResultsError(str(e)) from None
