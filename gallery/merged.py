"""Which submissions a push merged: record files added or changed between two commits (reads git)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from gallery.rows import is_replication
from schema.problem import Problem
from schema.records import read_record, record_id

_SHA = re.compile(r"[0-9a-f]{7,40}")
_ZERO = re.compile(r"0+")


def changed_record_paths(root: Path, before: str | None, after: str = "HEAD") -> list[str]:
    """Paths under replications/ added or modified by the push `before..after` (HEAD's own commit when
    `before` is missing or all zeros, as on a branch's first push)."""
    base = before if before and _SHA.fullmatch(before) and not _ZERO.fullmatch(before) else f"{after}~1"
    cmd = ["git", "-C", str(root), "diff", "--name-only", "--diff-filter=AM", "--no-renames", base, after,
           "--", "replications/"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if line.endswith(".json"))


def merged_issues(root: Path, paths: list[str]) -> tuple[list[tuple[int, str]], list[Problem]]:
    """(issue number, site page path) of each record among `paths` that the gallery shows, sorted, one per
    record, and a QJ013 warning for each file among them that is not a record (schema.records reads them)."""
    found, unreadable = set(), []
    for rel in paths:
        record, _digest, bad = read_record(root / rel, rel)
        if bad is not None:
            unreadable.append(bad)
            continue
        issue = record.get("issue")
        if isinstance(issue, int) and not isinstance(issue, bool) and issue > 0 and is_replication(record)[0]:
            found.add((issue, f"r/{record_id(record, rel)}.html"))
    return sorted(found), unreadable
