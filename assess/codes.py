"""The acceptance rule's code, QJ506: in the bot's range, where it was raised before assess held it."""

from __future__ import annotations

from schema.codes import Code
from schema.problem import Problem, problem_in

CODES: tuple[Code, ...] = (
    Code(
        "QJ506",
        "error",
        "not a measurement",
        "Only a complete `python -m measure run` on an NVIDIA GPU (results.basis 'measured' from an NVML "
        "source) enters the gallery; reference, simulated and partial runs are checked but never accepted.",
    ),
)


def codes() -> tuple[Code, ...]:
    """QJ506, for the shared table."""
    return CODES


def problem(code: str, message: str, path: str = "", hint: str | None = None) -> Problem:
    return problem_in(CODES, code, message, path, hint)
