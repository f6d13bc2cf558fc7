"""Rendering: confirmation and contradiction share one template, fields, order and emphasis."""

from __future__ import annotations

import re

from curves import grade, predict, render_markdown, render_text
from curves.render import verdict_fields
from schema.escape import md_verdict
from tests.curves.helpers import v2_report


def pair(curves):
    mean, sd = predict(curves, "blackwell/NF4/eager", 2.0)
    confirm = grade(v2_report("blackwell", "NF4", 2.0, mean + 0.5 * sd), curves)
    contra = grade(v2_report("blackwell", "NF4", 2.0, mean + 4.0 * sd), curves)
    assert (confirm.label, contra.label) == ("confirmation", "contradiction")
    return confirm, contra


def template(rendered: str, fields: list[tuple[str, str]], markdown: bool) -> list[str]:
    """Each line with its field's value cut off the end: what remains is the template."""
    lines = rendered.splitlines()[2 if markdown else 0 :]
    assert len(lines) == len(fields)
    out = []
    for line, (_, value) in zip(lines, fields, strict=True):
        body, value = (line[:-2], md_verdict(value)) if markdown else (line, value)
        assert body.endswith(value), (line, value)
        out.append(body[: len(body) - len(value)])
    return out


def test_same_fields_same_order(curves):
    confirm, contra = pair(curves)
    assert [n for n, _ in verdict_fields(confirm)] == [n for n, _ in verdict_fields(contra)]


def test_renderings_differ_only_in_values(curves):
    confirm, contra = pair(curves)
    for render, markdown in ((render_text, False), (render_markdown, True)):
        a, b = render(confirm), render(contra)
        assert a != b
        assert a.splitlines()[:2] == b.splitlines()[:2] or not markdown
        assert template(a, verdict_fields(confirm), markdown) == template(b, verdict_fields(contra), markdown)


def test_no_label_gets_extra_emphasis(curves):
    for verdict in pair(curves):
        md, text = render_markdown(verdict), render_text(verdict)
        assert "**" not in md and "__" not in md and "<" not in md.replace("\\<", "")
        assert "\x1b" not in text
        assert re.search(rf"^\| Verdict \| {verdict.label} \|$", md, re.M)


def test_ungraded_uses_the_same_template_and_gives_the_reason(curves):
    v = grade(v2_report(arch="volta"), curves)
    names = [n for n, _ in verdict_fields(v)]
    assert names == [n for n, _ in verdict_fields(pair(curves)[0])]
    assert "QJ301" in render_text(v) and "volta" in render_markdown(v)


def test_untrusted_text_cannot_inject_markup_or_terminal_escapes(curves):
    v = grade(v2_report(arch="**bold** <img src=x> [a](http://x) \x1b[31mred\n| cell |"), curves)
    md, text = render_markdown(v), render_text(v)
    assert "**bold**" not in md and not re.search(r"(?<!\\)<img", md) and not re.search(r"(?<!\\)\]\(", md)
    assert "\x1b" not in text and "\x1b" not in md
    assert all(line.startswith("| ") and line.endswith(" |") for line in md.splitlines())
