"""Escaping of untrusted text for GitHub Markdown: the only way submission text reaches a comment or PR.

Rules: invisible and direction-changing characters are shown as `U+XXXX` (so nothing hides or reorders
text); Markdown and HTML punctuation is backslash-escaped (no raw HTML, no links, no emphasis); mentions
(`@name`), references (`#12`, `owner/repo#12`, `GH-12`) and autolinks (`https://`, `www.`) get a zero-width
joiner so GitHub neither pings nor links anyone.
"""

from __future__ import annotations

import re

from schema.text import visible

ZWJ = "\u200d"
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
# `GH-12` is an issue reference too (GitHub links it even when its hyphen is backslash-escaped).
_DEFUSE = re.compile(r"(@|#|:(?=\\?/)|www(?=\\?\.)|\bGH(?=\\?-\d))", re.IGNORECASE)


def defuse(text: str) -> str:
    """Insert a zero-width joiner after @, #, the colon of `://`, `www` and `GH` of `GH-12` so nothing
    pings or links."""
    return _DEFUSE.sub(lambda m: m.group() + ZWJ, text)


def md_inline(text: object, limit: int = 200) -> str:
    """One line of untrusted text, safe in running Markdown, headings and table cells."""
    one = " ".join(visible(text).split())
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    return defuse(_PUNCT.sub(r"\\\1", one))


def md_code(text: object, limit: int = 200) -> str:
    """One line of untrusted text as a Markdown code span, fence included. Inside a code span backslashes
    are literal (md_inline's escapes would show) and nothing links or pings; the fence is longer than any
    run of backticks in the text, so the text cannot close it."""
    one = " ".join(visible(text).split())[:limit]
    fence = "`" * (max((len(run) for run in re.findall(r"`+", one)), default=0) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{fence}{pad}{one}{pad}{fence}"


def md_block(text: object, limit: int = 2000) -> str:
    """Several lines of untrusted text (notes) as a Markdown quote, each line escaped like md_inline."""
    raw = visible(text).split("\n")
    lines, used = [], 0
    for line in raw:
        if used + len(line) > limit:
            lines.append("…")
            break
        used += len(line) + 1
        lines.append(md_inline(line, limit))
    return "\n".join(f"> {line}" if line else ">" for line in lines)


def plain(text: object, limit: int = 120) -> str:
    """Untrusted text for a place Markdown is not rendered but references are (a PR or commit title)."""
    return defuse(" ".join(visible(text).split()))[:limit]
