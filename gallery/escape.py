"""Escaping of submission text for Markdown (GitHub) and HTML: the one place that decides what is safe."""

from __future__ import annotations

import functools
import html
import json
import re

from schema.text import visible

# One pass over the text: HTML-significant characters become entities, Markdown punctuation gets a backslash.
_MD_TABLE = str.maketrans({**{c: "\\" + c for c in "\\`*_{}[]()#+-.!|~"},
                           "&": "&amp;", "<": "&lt;", ">": "&gt;"})
# `@name` pings, `#12` and `GH-12` link an issue (GitHub links `GH-12` even with its hyphen escaped), bare
# URLs autolink: each gets a zero-width space to break it.
_DEFUSE = re.compile(r"(@(?=[A-Za-z0-9])|#(?=[0-9])|://|www\.(?=\S)|\bGH(?=-\d))", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
# Only links the project itself produces are made clickable; anything else stays plain text.
_GITHUB_URL = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./?=&%:+-]*)?")
_ZWSP = "\u200b"


def one_line(value: object) -> str:
    """Collapse any value to a single line of text (tables and headings cannot hold newlines). Bidi
    overrides, zero-width and other invisible characters are shown as `U+XXXX` (schema.text.visible), so
    nothing a submitter writes can reorder or hide the text around it; lone surrogates likewise."""
    if value is None:
        return ""
    return _SPACE.sub(" ", visible(value)).strip()


def md(value: object) -> str:
    """Escape text for an inline Markdown context, including a table cell (see _md)."""
    # Galleries repeat the same cards, models and handles thousands of times: remember recent answers.
    return _md_cached(value) if isinstance(value, str) else _md(value)


def _md(value: object) -> str:
    """Escape text for an inline Markdown context, including a table cell.

    HTML-significant characters become entities, Markdown punctuation is backslash-escaped, and
    mentions, issue references and bare URLs get a zero-width space so GitHub never pings or links them.
    """
    text = one_line(value)
    if any(c in text for c in "@#:wWgG"):
        text = _DEFUSE.sub(lambda m: m.group(0)[0] + _ZWSP + m.group(0)[1:], text)
    return text.translate(_MD_TABLE)


_md_cached = functools.lru_cache(maxsize=1 << 16)(_md)


def h(value: object) -> str:
    """Escape text for HTML element content and quoted attribute values; invisible and direction-changing
    characters are shown as `U+XXXX`, as in Markdown."""
    if value is None:
        return ""
    return html.escape(visible(value), quote=True)


def safe_url(value: object) -> str | None:
    """Return the URL when it is a plain https GitHub URL, else None (never link what we cannot vouch for)."""
    if not isinstance(value, str):
        return None
    return value if _GITHUB_URL.fullmatch(value) else None


def json_for_script(value: object) -> str:
    """Serialise data for embedding in a <script> or a .js file: no `</script>`, no HTML comment openers."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
