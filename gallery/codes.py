"""QJ6xx problem codes of the gallery build, in the shared registry shape, and the error that carries one."""

from __future__ import annotations

from schema.codes import Code, CodedError

CODES: tuple[Code, ...] = (
    Code("QJ601", "error", "curves file missing or unreadable",
         "Run from the repository root or pass --root; `python -m bot fit` writes reference/curves.json."),
    Code("QJ603", "error", "site directory cannot be written",
         "Pass --site-dir to a writable folder that is not a file."),
    Code("QJ604", "error", "changed records cannot be listed",
         "Run inside a git checkout with both commits fetched (actions/checkout with fetch-depth: 0)."),
)

def codes() -> tuple[Code, ...]:
    """Every QJ6xx code, for the shared table."""
    return CODES


class GalleryError(CodedError):
    """A bad input to the build, carrying its code and a hint (the CLI prints it, never a traceback)."""

    registry = CODES
