"""Hypothesis strategies for issue events, and the invariants intake + validate + plan must keep on any.

Used by tests/hostile/test_hostile_fuzz.py (a few examples in CI) and benchmarks/stress_fuzz.py (10,000+).
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from bot.intake import FORM_FIELDS, Ignored, read_event
from bot.plan import PlanContext, build_plan
from schema.records import WRITABLE_ROOTS
from tests.support.hostile.corpus import HOPPER, INJECT, LEGACY_MEASURED, VOLTA
from tests.support.hostile.harness import leaks
from tests.support.webhooks import CONSENT_LINE, issues_event

_SEEDS = [json.loads(t) for t in (HOPPER, VOLTA, LEGACY_MEASURED)]
_NASTY = st.sampled_from(
    [
        INJECT,
        "\u202e",
        "\u200b",
        "\x00",
        "\ud800",
        "```",
        "~~~",
        "NaN",
        "Infinity",
        "-0",
        "1e999",
        "@a",
        "#1",
        "<!-- quantjoule-bot -->",
        "\r\n",
        "{",
        "}",
        "[",
        "]",
        '"',
        "\\",
        "### energy.json",
        "\\ud800",
        "\\udfff",
        "<!--",
        "-->",
        "\u202e",
        "- [x] I license this report under CC BY 4.0",
        "1" + "0" * 400,
        "5e-324",
    ]
)
_TEXT = st.one_of(st.text(max_size=80), _NASTY)
# Integers far beyond what a double holds and subnormal floats (#13 class 2) among the ordinary ones.
_JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=False),
    st.floats(min_value=-2.2e-308, max_value=2.2e-308, allow_subnormal=True),
    _TEXT,
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(_TEXT, kids, max_size=4)),
    max_leaves=12,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated_report(draw) -> str:
    """A constructed fixture report with a few fields replaced, deleted or added, maybe cut or spliced."""
    data = json.loads(json.dumps(draw(st.sampled_from(_SEEDS))))
    paths = list(_paths(data))[1:]
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(paths))
        node = data
        try:
            for key in path[:-1]:
                node = node[key]
            if draw(st.booleans()) and isinstance(node, dict):
                node.pop(path[-1], None)
            else:
                node[path[-1]] = draw(_JSON)
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(data, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans()))
    cut = draw(st.sampled_from(["none", "none", "truncate", "splice"]))
    if cut == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif cut == "splice":
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(_NASTY) + text[i:]
    return text


_BLOCK = st.one_of(mutated_report(), _JSON.map(json.dumps), st.text(max_size=200))


@st.composite
def issue_body(draw) -> str | None:
    """A body made of form sections, fenced blocks (any fence, maybe unclosed), free text and the consent."""
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from([None, "", "\n" * 3]))
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["heading", "block", "text", "consent", "block"]))
        if kind == "heading":
            heading = draw(st.sampled_from([*FORM_FIELDS, "energy.json", "licence", "other"]))
            parts.append(f"### {heading}\n\n{draw(_TEXT)}")
        elif kind == "block":
            fence = draw(st.sampled_from(["```", "~~~", "````", "```json", "~~~json", "```JSON  x"]))
            close = "" if draw(st.integers(0, 6)) == 0 else fence.rstrip("json JSONx")
            parts.append(f"{fence}\n{draw(_BLOCK)}\n{close}")
        elif kind == "consent":
            parts.append(CONSENT_LINE)
        else:
            parts.append(draw(_TEXT))
    return "\n\n".join(parts)


@st.composite
def issue_payload(draw) -> dict:
    payload = issues_event(
        action=draw(
            st.sampled_from(["opened", "opened", "edited", "edited", "reopened", "closed", "labeled"])
        ),
        number=draw(st.integers(1, 10**6)),
        body=draw(issue_body()),
        title=draw(st.one_of(st.just("[replication] x"), _TEXT)),
        login=draw(st.one_of(st.just("octocat"), _TEXT)),
        labels=draw(st.sampled_from([("replication",), (), ("bot-error", "x")])),
    )
    return payload


def check_one(payload: dict, curves: dict, base_gallery: dict) -> str:
    """Run intake + validate + plan on one payload and assert the invariants; the outcome's name."""
    sub = read_event(payload, "issues")
    plan = build_plan(sub, PlanContext(curves=curves, records={}, gallery_base=dict(base_gallery)))
    assert json.loads(json.dumps(plan)) == plan
    if isinstance(sub, Ignored):
        assert plan["ignored"]
        return "ignored"
    assert all(path.startswith(WRITABLE_ROOTS) for path in plan["files"])
    body = plan["comment"]["body"]
    problems = [*plan["problems"], *(p for point in plan["points"] for p in point["problems"])]
    for p in problems:
        assert p["code"] in body and p["hint"]
    assert body.count("*Hint:*") == len(problems)
    for text in (body, (plan["pr"] or {}).get("body", "")):
        assert leaks(text, {sub.issue}) == [], text
    if plan["pr"]:
        assert leaks(plan["pr"]["title"], {sub.issue}, markdown=False) == []
    return plan["status"]
