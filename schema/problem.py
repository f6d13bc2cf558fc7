"""The Problem record every check returns, and helpers to build one from a registered code."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from schema.codes import Code, codes, lookup


@dataclass(frozen=True)
class Problem:
    code: str
    severity: str  # "error" | "warning"
    path: str  # JSON pointer into the report, "" for the whole document; a file's path for a whole file
    message: str
    hint: str

    def to_dict(self) -> dict:
        return asdict(self)


def problem_in(
    registry: tuple[Code, ...], code: str, message: str, path: str = "", hint: str | None = None
) -> Problem:
    """A Problem for `code` of one package's registry: its registered severity, the message on one line,
    and its registered hint unless one is given. Each package's `problem` is this over its own codes."""
    registered = lookup(registry, code)
    one_line = " ".join(message.split())
    return Problem(code, registered.severity, path, one_line, hint or registered.hint)


def problem(code: str, message: str, path: str = "", hint: str | None = None) -> Problem:
    """A Problem for a report code (QJ0xx-QJ2xx); `path` is a JSON pointer, "" for the whole report."""
    return problem_in(codes(), code, message, path, hint)


def pointer(parts) -> str:
    """RFC 6901 JSON pointer of a sequence of keys and indices."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def has_errors(problems) -> bool:
    return any(p.severity == "error" for p in problems)


def sort_problems(problems) -> list[Problem]:
    """Deterministic order: by path, then code, then message."""
    return sorted(problems, key=lambda p: (p.path, p.code, p.message))
