"""What GitHub shows of an issue body (pure): its lines outside HTML comments, its fenced blocks, and
whether a line is the licence consent.

Text GitHub does not show is read as absent, so nothing hidden counts: an HTML comment is removed from its
line, and one left open hides every line up to the one holding `-->` (fences inside it are no fences).
Consent is a ticked task-list item (at most 3 spaces in: deeper is a code block) whose text, read as
`schema.text.skeleton` (look-alike letters and invisible characters do not count), starts with the form's
sentence, with no strike-through and no negation on the line.
"""

from __future__ import annotations

import re

from schema.text import skeleton

_OPEN_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_TASK = re.compile(r"^ {0,3}[-*+][ \t]+\[[xX]\][ \t]+(.*)$")
_CONSENT_TEXT = re.compile(r"i license this report under cc[ -]by[ -]4\.0\b")
_NEGATION = re.compile(
    r"\b(not|never|no|don'?t|doesn'?t|won'?t|cannot|can'?t|refuse[sd]?|withdraw\w*|revoke\w*)\b")
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"


def is_consent(line: str) -> bool:
    """A ticked task-list line whose text is the licence sentence: not struck through, not negated."""
    match = _TASK.match(line)
    if not match or "~~" in match[1]:
        return False
    words = skeleton(match[1])
    found = _CONSENT_TEXT.match(words)
    return bool(found) and not _NEGATION.search(words)


def shown_lines(body: str):
    """Yield (kind, payload) for each line GitHub shows: ("text", line) or ("block", (info, content,
    closed)). HTML comments are hidden: removed from a line, or, once one opens and does not close on
    its line, every line up to the one holding `-->` (fences inside it are no fences)."""
    lines = body.split("\n")
    i, hidden = 0, False
    while i < len(lines):
        line = lines[i]
        if hidden:
            end = line.find(_COMMENT_CLOSE)
            i += 1
            if end == -1:
                continue
            hidden = False
            # The rest of the closing line is raw HTML text, never a list item, heading or fence.
            yield "text", "\x00" + line[end + len(_COMMENT_CLOSE):]
            continue
        m = _OPEN_FENCE.match(line)
        if not m or (m[2][0] == "`" and "`" in m[3]):
            text, hidden = _strip_comments(line)
            yield "text", text
            i += 1
            continue
        indent, fence, info = len(m[1]), m[2], m[3].strip()
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        content, i, closed = [], i + 1, False
        while i < len(lines):
            if close.match(lines[i]):
                closed, i = True, i + 1
                break
            content.append(re.sub(r"^ {0," + str(indent) + "}", "", lines[i]))
            i += 1
        yield "block", (info, "\n".join(content), closed)


def _strip_comments(line: str) -> tuple[str, bool]:
    """The line without its HTML comments, and whether a comment is left open at its end. A line that
    starts with a comment is an HTML block, so what follows it is marked (a NUL) as not Markdown."""
    lead = line.lstrip(" ")
    starts = lead.startswith(_COMMENT_OPEN) and len(line) - len(lead) <= 3
    out, rest = [], line
    while True:
        start = rest.find(_COMMENT_OPEN)
        if start == -1:
            out.append(rest)
            break
        out.append(rest[:start])
        end = rest.find(_COMMENT_CLOSE, start + len(_COMMENT_OPEN))
        if end == -1:
            return ("\x00" if starts else "") + "".join(out), True
        rest = rest[end + len(_COMMENT_CLOSE):]
    return ("\x00" if starts else "") + "".join(out), False


def outside_fences(body: str) -> list[str]:
    """The text lines GitHub shows outside code fences and HTML comments."""
    return [payload for kind, payload in shown_lines(body) if kind == "text"]
