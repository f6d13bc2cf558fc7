"""Shared helpers of the schema tests: the example directories, loading an example, the codes of problems."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE / "examples"
VALID = EXAMPLES / "valid"
INVALID = EXAMPLES / "invalid"


def load(name: str) -> dict:
    return json.loads((VALID / name).read_text(encoding="utf-8"))


def codes_of(problems) -> list[str]:
    return sorted({p.code for p in problems})
