"""The code registry: well formed, one range per package, and the README table matches it exactly."""

from __future__ import annotations

import importlib
import re

import pytest

from schema import doc_table
from schema.codes import SEVERITIES, all_codes, codes, get

RANGES = {
    "schema.codes": ("QJ0", "QJ1", "QJ2"),
    "curves.codes": ("QJ3",),
    "measure.codes": ("QJ4",),
    "bot.codes": ("QJ5",),
}


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


def test_all_codes_is_sorted_unique_and_includes_every_package_present():
    gathered = all_codes()
    names = [c.code for c in gathered]
    assert names == sorted(names) and len(names) == len(set(names))
    assert set(codes()) <= set(gathered)
    for module_name, prefixes in RANGES.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        own = module.codes() if hasattr(module, "codes") else module.CODES
        for c in own:
            assert c.code.startswith(prefixes), f"{c.code} of {module_name} is outside its range"
            assert c.code in names and c.severity in SEVERITIES


def test_readme_table_is_the_generated_one():
    text = doc_table.README.read_text(encoding="utf-8")
    block = text.split(doc_table.BEGIN, 1)[1].split(doc_table.END, 1)[0]
    assert block.strip() == doc_table.render_table().strip(), "run `python -m schema.doc_table`"


def test_every_code_is_a_row_of_the_readme_table():
    text = doc_table.README.read_text(encoding="utf-8")
    for c in all_codes():
        assert f"| `{c.code}` | {c.severity} |" in text


def test_table_escapes_pipes_and_rewrites_only_between_markers():
    from schema.codes import Code

    table = doc_table.render_table([Code("QJ999", "warning", "a | b", "x")])
    assert "a \\| b" in table
    page = f"intro\n{doc_table.BEGIN}\nold\n{doc_table.END}\noutro\n"
    rewritten = doc_table.with_table(page, table)
    assert rewritten.startswith("intro\n") and rewritten.endswith(f"{doc_table.END}\noutro\n")
    assert "old" not in rewritten and doc_table.with_table(rewritten, table) == rewritten
    with pytest.raises(ValueError):
        doc_table.with_table("no markers", table)
