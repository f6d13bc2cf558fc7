"""The one code table: every package's registry in its range, sorted, unique, and the README table."""

from __future__ import annotations

import pytest

from problem_codes import REGISTRIES, all_codes, doc_table
from schema.codes import SEVERITIES, Code, codes

RANGES = {
    "schema.codes": ("QJ0", "QJ1", "QJ2"),
    "schema.records": ("QJ013",),
    "curves.codes": ("QJ3",),
    "measure.codes": ("QJ4",),
    "bot.codes": ("QJ5",),
    "assess.codes": ("QJ506",),  # the acceptance rule, numbered when the bot raised it
    "gallery.codes": ("QJ6",),
}


def test_all_codes_is_sorted_unique_and_includes_every_package():
    gathered = all_codes()
    names = [c.code for c in gathered]
    assert names == sorted(names) and len(names) == len(set(names))
    assert set(codes()) <= set(gathered)
    assert set(REGISTRIES) == set(RANGES)
    for module_name, prefixes in RANGES.items():
        for c in REGISTRIES[module_name].codes():
            assert c.code.startswith(prefixes), f"{c.code} of {module_name} is outside its range"
            assert c.code in names and c.severity in SEVERITIES


def test_readme_table_is_the_generated_one():
    text = doc_table.README.read_text(encoding="utf-8")
    block = text.split(doc_table.BEGIN, 1)[1].split(doc_table.END, 1)[0]
    assert block.strip() == doc_table.render_table().strip(), "run `python -m problem_codes`"


def test_every_code_is_a_row_of_the_readme_table():
    text = doc_table.README.read_text(encoding="utf-8")
    for c in all_codes():
        assert f"| `{c.code}` | {c.severity} |" in text


def test_table_escapes_pipes_and_rewrites_only_between_markers():
    table = doc_table.render_table([Code("QJ999", "warning", "a | b", "x")])
    assert "a \\| b" in table
    page = f"intro\n{doc_table.BEGIN}\nold\n{doc_table.END}\noutro\n"
    rewritten = doc_table.with_table(page, table)
    assert rewritten.startswith("intro\n") and rewritten.endswith(f"{doc_table.END}\noutro\n")
    assert "old" not in rewritten and doc_table.with_table(rewritten, table) == rewritten
    with pytest.raises(ValueError):
        doc_table.with_table("no markers", table)
