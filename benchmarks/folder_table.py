"""The command line shared by the benchmarks that read every run under measurement folders and print a
Markdown table of rows (or the rows as JSON)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path


def run(description: str, argv: list[str] | None, collect: Callable[[list[Path]], list[dict]],
        table: Callable[[list[dict]], str], footer: Callable[[list[dict]], str] | None = None) -> int:
    """Parse FOLDER... [--json], collect the rows and print them; `footer` adds lines under the table."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("folders", nargs="+", type=Path, help="measurement folders holding one run per folder")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    rows = collect(args.folders)
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    if footer is not None and not args.json:
        print(footer(rows))
    return 0
