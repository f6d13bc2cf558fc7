"""The report codes of schema.codes: well formed, unique, looked up by code."""

from __future__ import annotations

import re

import pytest

from schema.codes import SEVERITIES, codes, get


def test_report_codes_are_well_formed():
    seen = set()
    for c in codes():
        assert re.fullmatch(r"QJ[012]\d\d", c.code), c.code
        assert c.code not in seen
        seen.add(c.code)
        assert c.severity in SEVERITIES
        assert c.title and c.hint.endswith(".") and "\n" not in c.hint
        assert get(c.code) is c
    with pytest.raises(KeyError):
        get("QJ999")


def test_schema_codes_imports_no_other_package():
    """schema is the bottom: its registry module imports nothing of ours but itself."""
    import ast
    from pathlib import Path

    import schema.codes

    tree = ast.parse(Path(schema.codes.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "dataclasses"}, imported
