"""Escaping of submission text for Markdown and HTML."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from schema.escape import h, json_for_script, md_text, safe_url
from schema.text import INVISIBLE, visible


def test_markdown_escapes_table_breakers_links_code_and_html():
    out = md_text("a|b [x](javascript:alert(1)) `code` <script>alert(1)</script> *em* _u_ ![img](y)")
    assert "|" not in out.replace("\\|", "")
    assert "<" not in out and ">" not in out
    assert "&lt;script&gt;" in out
    for raw in ("[x]", "](", "`code`", "*em*", "_u_", "!["):
        assert raw not in out


def test_markdown_defuses_mentions_issue_refs_and_autolinks():
    out = md_text("thanks @octocat and @org/team, see #12 and https://evil.example www.evil.example WWW.X.Y")
    assert "@octocat" not in out and "@org" not in out
    assert "@\u200boctocat" in out
    assert "#12" not in out and "\\#\u200b12" in out
    assert "https://" not in out and "www." not in out.lower()


def test_markdown_is_one_line():
    assert "\n" not in md_text("line one\nline two\r\n| third")


@given(st.text(max_size=200))
def test_markdown_never_leaves_a_bare_pipe_or_angle_bracket(text):
    out = md_text(text)
    assert "<" not in out and ">" not in out and "\n" not in out
    assert "|" not in out.replace("\\|", "")


@given(st.text(max_size=200))
def test_html_escape_round_trips_through_an_html_parser(text):
    # What a reader sees is the text, with invisible and direction-changing characters spelled U+XXXX
    assert html.unescape(h(text)) == visible(text)
    assert "<" not in h(text) and '"' not in h(text)
    # (md's own zero-width spaces defuse mentions and links; the input's are spelled out before that)
    assert not INVISIBLE.search(h(text)) and not INVISIBLE.search(md_text(text).replace("\u200b", ""))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn")), max_size=100)
       .filter(lambda t: not INVISIBLE.search(t)))
def test_visible_text_round_trips_unchanged(text):
    assert html.unescape(h(text)) == text.replace("\t", " ")


def test_bidi_overrides_reach_no_page_raw():
    for raw in ("\u202eevil\u202c", "a\u2066b\u2069", "zero\u200bwidth", "\u061c", "\ufeff"):
        assert not INVISIBLE.search(h(raw)) and not INVISIBLE.search(md_text(raw).replace("\u200b", ""))
    assert h("\u202egpj.exe") == "U+202Egpj.exe"


def test_only_plain_github_https_urls_are_linked():
    assert safe_url("https://github.com/o/r/issues/12") == "https://github.com/o/r/issues/12"
    for bad in (
        "javascript:alert(1)",
        "https://evil.example/o/r",
        "http://github.com/o/r",
        'https://github.com/o/r"x',
        "https://github.com/o/r/issues/1 onmouseover=1",
        None,
        12,
    ):
        assert safe_url(bad) is None


def test_json_for_script_cannot_close_the_script_element():
    out = json_for_script({"x": "</script><script>alert(1)</script>", "y": "\u2028"})
    assert "</script>" not in out and "<" not in out and "\u2028" not in out
