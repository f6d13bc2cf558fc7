"""Reading a report file from disk into (report, problems): the one file-system touch of the package."""

from __future__ import annotations

from pathlib import Path

from schema.parse import MAX_REPORT_BYTES, parse_report
from schema.problem import Problem, problem


def read_bytes(path: str | Path) -> tuple[bytes | None, list[Problem]]:
    """At most MAX_REPORT_BYTES + 1 bytes of `path`, or a QJ011 problem when it cannot be read."""
    target = Path(path)
    try:
        if target.is_dir():
            return None, [problem("QJ011", f"{target} is a directory, not a file")]
        with target.open("rb") as handle:
            # One byte over the limit is enough to say "too large" without reading a huge file.
            return handle.read(MAX_REPORT_BYTES + 1), []
    except FileNotFoundError:
        return None, [problem("QJ011", f"{target} does not exist")]
    except PermissionError:
        return None, [problem("QJ011", f"{target} is not readable (permission denied)")]
    except OSError as exc:
        return None, [problem("QJ011", f"{target} cannot be read: {exc.strerror or exc}")]


def read_report_file(path: str | Path) -> tuple[dict | None, list[Problem]]:
    """parse_report of the file's bytes; QJ011 when the file cannot be read."""
    data, found = read_bytes(path)
    if data is None:
        return None, found
    return parse_report(data)
