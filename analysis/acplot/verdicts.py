"""Verdicts before and after: two reports' claims (report.csv, written by notebooks/report.py) side
by side, claim by claim, with whether its verdict moved. The closing list of a rerun comes from here:

    python3 -m acplot.verdicts OLD NEW [--markdown]

OLD and NEW are report.csv files, or GIT_REVISION:PATH (e.g. HEAD~3:experiments/results/paper/report.csv,
read with `git show` in the current directory's repository; PATH is from the repository's root). Claims are matched by source and
wording; a claim in one report only is listed as added or dropped. Each verdict's kind
(acplot.claims.verdict_kind: reproduced, contradicted, not decided, regime-dependent, not testable)
decides "moved"; its full text (fractions, margins, intervals) is printed under it. The reason a
verdict moved is not in the data: the note that publishes a rerun says it."""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

import pandas as pd

from acplot.claims import verdict_kind
from acplot.loss import ResultsError

COLUMNS = ("source", "claim", "verdict")


def read_report(where: str) -> pd.DataFrame:
    """A report.csv from a file, or GIT_REVISION:PATH from git (a path that exists is a file)."""
    if os.path.exists(where):
        if not os.path.isfile(where):
            raise ResultsError(f"{where}: not a file (a report.csv, or GIT_REVISION:PATH)")
        try:
            with open(where, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ResultsError(f"{where}: cannot be read as a report.csv ({e})") from None
    elif ":" in where:
        try:
            done = subprocess.run(["git", "show", where], capture_output=True, text=True, encoding="utf-8",
                                  errors="replace")
        except OSError as e:
            raise ResultsError(f"{where}: not a file, and git cannot be run to read it as GIT_REVISION:PATH "
                               f"({e})") from None
        if done.returncode != 0:
            raise ResultsError(f"{where}: neither a file nor a git revision:path git can show "
                               f"({done.stderr.strip() or 'git show failed'})")
        text = done.stdout
    else:
        raise ResultsError(f"{where}: no such file (a report.csv, or GIT_REVISION:PATH)")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise ResultsError(f"{where}: not a report.csv ({e})") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ResultsError(f"{where}: not a report.csv: it lacks the column(s) {', '.join(missing)} "
                           f"(it has {', '.join(df.columns) or 'none'})")
    dup = df[df.duplicated(["source", "claim"], keep=False)]
    if len(dup):
        r = dup.iloc[0]
        raise ResultsError(f"{where}: the claim {r['source']} \"{r['claim']}\" is listed more than once")
    for _, r in df.iterrows():
        try:
            verdict_kind(r["verdict"])
        except ValueError:
            raise ResultsError(f"{where}: the claim {r['source']} \"{r['claim']}\" has no verdict this code "
                               f"knows: {r['verdict']!r} (a verdict starts with reproduced, contradicted, "
                               "not decided, regime-dependent or not testable)") from None
    return df


def compare(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """One row per claim, in the new report's order, then the claims only the old one has:
    source, claim, before, after (kinds; "" where the report lacks the claim), change (same, moved,
    added, dropped), verdict before, verdict after (full texts)."""
    old_by = {(r["source"], r["claim"]): r["verdict"] for _, r in old.iterrows()}
    new_keys = [(r["source"], r["claim"]) for _, r in new.iterrows()]
    rows = []
    for (source, claim), after in zip(new_keys, new["verdict"]):
        before = old_by.get((source, claim))
        kb, ka = (verdict_kind(before) if before is not None else ""), verdict_kind(after)
        change = "added" if before is None else ("same" if kb == ka else "moved")
        rows.append({"source": source, "claim": claim, "before": kb, "after": ka, "change": change,
                     "verdict before": before or "", "verdict after": after})
    seen = set(new_keys)
    for (source, claim), before in old_by.items():
        if (source, claim) not in seen:
            rows.append({"source": source, "claim": claim, "before": verdict_kind(before), "after": "",
                         "change": "dropped", "verdict before": before, "verdict after": ""})
    return pd.DataFrame(rows, columns=["source", "claim", "before", "after", "change",
                                       "verdict before", "verdict after"])


def counts(table: pd.DataFrame) -> str:
    """'moved 3, same 14, added 1' (only the changes that occur, in that order)."""
    got = table["change"].value_counts()
    return ", ".join(f"{c} {int(got[c])}" for c in ("moved", "same", "added", "dropped") if c in got)


def markdown(table: pd.DataFrame) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")
    lines = ["| source | claim | before | after | change |", "|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(f"| {cell(r['source'])} | {cell(r['claim'])} | {r['before'] or '—'} | "
                     f"{r['after'] or '—'} | {r['change']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m acplot.verdicts", description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the earlier report.csv (a file or GIT_REVISION:PATH)")
    ap.add_argument("new", help="the later report.csv (a file or GIT_REVISION:PATH)")
    ap.add_argument("--markdown", action="store_true",
                    help="a markdown table of the kinds only (the full texts are printed without it)")
    args = ap.parse_args(argv)
    try:
        table = compare(read_report(args.old), read_report(args.new))
    except ResultsError as e:
        print(f"acplot.verdicts: {e}", file=sys.stderr)
        return 2
    if args.markdown:
        print(markdown(table))
    else:
        for _, r in table.iterrows():
            print(f"{r['source']}: {r['claim']}\n  {r['change']}: {r['before'] or '—'} -> {r['after'] or '—'}")
            if r["verdict before"]:
                print(f"    before: {r['verdict before']}")
            if r["verdict after"]:
                print(f"    after:  {r['verdict after']}")
    print(f"\n{counts(table)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
