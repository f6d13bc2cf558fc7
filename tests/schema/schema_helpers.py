"""Shared helpers of the schema tests: the example directories and the example generator module."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE / "examples"
VALID = EXAMPLES / "valid"
INVALID = EXAMPLES / "invalid"


def load_generator():
    spec = importlib.util.spec_from_file_location("schema_make_examples", HERE / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name: str) -> dict:
    return json.loads((VALID / name).read_text(encoding="utf-8"))


def codes_of(problems) -> list[str]:
    return sorted({p.code for p in problems})
