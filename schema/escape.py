"""Untrusted text escaped for Markdown, HTML, script data and the terminal: the one module every package uses.

Every mode first shows invisible and direction-changing characters as `U+XXXX` (schema.text.visible), so
nothing a submitter writes can hide or reorder the text around it. The Markdown modes differ where their
output is committed or filed and must stay byte-identical; each is named for what it is for:

- `md_text` (the gallery's README and tables): HTML-significant characters become entities, Markdown
  punctuation gets a backslash, and mentions, issue references and bare URLs get a zero-width space.
- `md_inline`, `md_block`, `md_code`, `plain` (the bot's comments, pull requests and commit messages):
  every ASCII punctuation character gets a backslash, and mentions, references and autolinks get a
  zero-width joiner (`defuse`).
- `md_verdict` (the cells of a verdict table, text the grader composed): a backslash before the
  characters that make emphasis, links, code or HTML.
`h` escapes HTML content and attribute values; `json_for_script` serialises data for a <script>; `safe_url`
lets through only links the project itself produces; `printable` replaces control characters for a
terminal.
"""

from __future__ import annotations

import functools
import html
import json
import re

from schema.text import visible

ZWSP, ZWJ = "\u200b", "\u200d"
_SPACE = re.compile(r"\s+")

# md_text: one pass over the text, HTML-significant characters to entities, Markdown punctuation escaped.
_TEXT_TABLE = str.maketrans({**{c: "\\" + c for c in "\\`*_{}[]()#+-.!|~"},
                             "&": "&amp;", "<": "&lt;", ">": "&gt;"})
# `@name` pings, `#12` and `GH-12` link an issue (GitHub links `GH-12` even with its hyphen escaped), bare
# URLs autolink: each gets a zero-width space to break it.
_TEXT_DEFUSE = re.compile(r"(@(?=[A-Za-z0-9])|#(?=[0-9])|://|www\.(?=\S)|\bGH(?=-\d))", re.IGNORECASE)

# md_inline: every ASCII punctuation character; the defusing runs after it, so it allows for the backslashes.
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
_INLINE_DEFUSE = re.compile(r"(@|#|:(?=\\?/)|www(?=\\?\.)|\bGH(?=\\?-\d))", re.IGNORECASE)

_VERDICT_SPECIAL = frozenset("\\`*_[]<>|~#!")

# Only links the project itself produces are made clickable; anything else stays plain text.
_GITHUB_URL = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./?=&%:+-]*)?")


def one_line(value: object) -> str:
    """Any value as a single line of visible text (tables and headings cannot hold newlines)."""
    if value is None:
        return ""
    return _SPACE.sub(" ", visible(value)).strip()


def md_text(value: object) -> str:
    """The gallery's Markdown: inline text and table cells of its README (see the module docstring)."""
    # Galleries repeat the same cards, models and handles thousands of times: remember recent answers.
    return _md_text_cached(value) if isinstance(value, str) else _md_text(value)


def _md_text(value: object) -> str:
    text = one_line(value)
    if any(c in text for c in "@#:wWgG"):
        text = _TEXT_DEFUSE.sub(lambda m: m.group(0)[0] + ZWSP + m.group(0)[1:], text)
    return text.translate(_TEXT_TABLE)


_md_text_cached = functools.lru_cache(maxsize=1 << 16)(_md_text)


def defuse(text: str) -> str:
    """A zero-width joiner after @, #, the colon of `://`, `www` and the `GH` of `GH-12`: no ping, no link."""
    return _INLINE_DEFUSE.sub(lambda m: m.group() + ZWJ, text)


def md_inline(text: object, limit: int = 200) -> str:
    """The bot's Markdown: one line of untrusted text, safe in running text, headings and table cells."""
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


def md_verdict(value: str) -> str:
    """A verdict table cell: a backslash before all Markdown could turn into emphasis, links or HTML."""
    return "".join("\\" + ch if ch in _VERDICT_SPECIAL else ch for ch in value)


def printable(value: str) -> str:
    """Control characters (terminal escapes, newlines) as `?`, so none reaches a terminal or a table."""
    return "".join(ch if ch.isprintable() else "?" for ch in value)


def h(value: object) -> str:
    """HTML element content and quoted attribute values, invisible characters shown as in Markdown."""
    if value is None:
        return ""
    return html.escape(visible(value), quote=True)


def safe_url(value: object) -> str | None:
    """The URL when it is a plain https GitHub URL, else None (never link what we cannot vouch for)."""
    if not isinstance(value, str):
        return None
    return value if _GITHUB_URL.fullmatch(value) else None


def json_for_script(value: object) -> str:
    """Data for a <script> or a .js file: no `</script>`, no HTML comment openers, no line separators."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
