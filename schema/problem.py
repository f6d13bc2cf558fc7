"""The Problem record every check returns, and helpers to build one from a registered code."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from schema.codes import get


@dataclass(frozen=True)
class Problem:
    code: str
    severity: str  # "error" | "warning"
    path: str  # JSON pointer into the report, "" for the whole document
    message: str
    hint: str

    def to_dict(self) -> dict:
        return asdict(self)


def problem(code: str, path: str, message: str, hint: str | None = None) -> Problem:
    """A Problem with the registered severity of `code` and its registered hint unless one is given."""
    registered = get(code)
    one_line = " ".join(message.split())
    return Problem(code, registered.severity, path, one_line, hint or registered.hint)


def pointer(parts) -> str:
    """RFC 6901 JSON pointer of a sequence of keys and indices."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def has_errors(problems) -> bool:
    return any(p.severity == "error" for p in problems)


def sort_problems(problems) -> list[Problem]:
    """Deterministic order: by path, then code, then message."""
    return sorted(problems, key=lambda p: (p.path, p.code, p.message))
