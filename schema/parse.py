"""Safe reading of report text: size, encoding, NaN/Infinity, duplicate keys, depth, then JSON."""

from __future__ import annotations

import json
import re

from schema.problem import Problem, pointer, problem

# A report must fit in one GitHub issue body (65,536 characters) together with the issue form around it.
MAX_REPORT_BYTES = 60_000
# A valid report nests at most 5 levels; 32 leaves room for free-form provenance and stays far from
# Python's recursion limit.
MAX_DEPTH = 32

SCHEMA_V2 = "quantjoule-energy/2.0"
LEGACY_VERSIONS = ("ecocompute-energy/1.0", "ecocompute-energy/1.1")
KNOWN_VERSIONS = (SCHEMA_V2, *LEGACY_VERSIONS)

# Strings (possibly unterminated), brackets, and the bare NaN/Infinity words JSON does not have.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[{]|[\]}]|NaN|Infinity', re.S)


class _BareConstant(Exception):
    pass


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def _scan(text: str) -> Problem | None:
    """Depth and NaN/Infinity check by token scan, before json.loads can recurse on hostile input."""
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                line, col = _line_col(text, match.start())
                return problem("QJ007", "", f"nesting deeper than {MAX_DEPTH} levels at line {line} "
                                            f"column {col}")
        elif token in ("]", "}"):
            depth -= 1
        elif token in ("NaN", "Infinity"):
            line, col = _line_col(text, match.start())
            return problem("QJ004", "", f"{token} literal at line {line} column {col}")
    return None


def _decode(data) -> tuple[str | None, Problem | None]:
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            return None, problem("QJ003", "", f"text contains an unpaired surrogate at character {exc.start}")
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    else:
        return None, problem("QJ005", "", f"expected report text or bytes, got {type(data).__name__}")
    if len(raw) > MAX_REPORT_BYTES:
        message = f"report is at least {len(raw):,} bytes; the limit is {MAX_REPORT_BYTES:,}"
        return None, problem("QJ002", "", message)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, problem("QJ003", "", f"byte {exc.start} (0x{raw[exc.start]:02x}) is not valid UTF-8")
    # Editors on some systems prepend a byte-order mark; it carries no content.
    return text.removeprefix("\ufeff"), None


def _loads(text: str) -> tuple[object, list[tuple[int, str]]]:
    duplicates: list[tuple[int, str]] = []

    def pairs_hook(pairs):
        obj: dict = {}
        for key, value in pairs:
            if key in obj:
                duplicates.append((id(obj), key))
            obj[key] = value
        return obj

    def no_constant(name):
        raise _BareConstant(name)  # _scan rejects these first; this keeps NaN out for certain

    return json.loads(text, object_pairs_hook=pairs_hook, parse_constant=no_constant), duplicates


def _duplicate_paths(doc, duplicates: list[tuple[int, str]]) -> list[str]:
    wanted = {}
    for obj_id, key in duplicates:
        wanted.setdefault(obj_id, []).append(key)
    found: list[str] = []
    stack = [(doc, ())]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, dict):
            for key in wanted.get(id(node), ()):
                found.append(pointer((*parts, key)))
            stack.extend((v, (*parts, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*parts, i)) for i, v in enumerate(node))
    return sorted(set(found))


def version_problems(report: dict) -> list[Problem]:
    """QJ009/QJ010 for a missing, mistyped or unknown schema_version; [] when it is readable."""
    if "schema_version" not in report:
        return [problem("QJ009", "/schema_version", "schema_version is missing")]
    version = report["schema_version"]
    if not isinstance(version, str):
        return [problem("QJ009", "/schema_version", f"schema_version is a {type(version).__name__}, "
                                                    "not a string")]
    if version not in KNOWN_VERSIONS:
        shown = version if len(version) <= 60 else version[:57] + "..."
        return [problem("QJ010", "/schema_version", f"schema_version {shown!r} is not one this tool reads")]
    return []


def parse_report(data) -> tuple[dict | None, list[Problem]]:
    """Parse report text or bytes; never raises. The report is None whenever a problem makes it unusable."""
    text, failure = _decode(data)
    if failure:
        return None, [failure]
    if not text.strip():
        return None, [problem("QJ001", "", "the report is empty")]
    failure = _scan(text)
    if failure:
        return None, [failure]
    try:
        doc, duplicates = _loads(text)
    except json.JSONDecodeError as exc:
        return None, [problem("QJ005", "", f"{exc.msg} (line {exc.lineno}, column {exc.colno})")]
    except (ValueError, _BareConstant, RecursionError) as exc:
        # e.g. an integer literal longer than Python's int-conversion limit
        return None, [problem("QJ005", "", f"cannot read a value: {str(exc)[:120]}")]
    if not isinstance(doc, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        kind = kinds.get(type(doc), "a number")
        return None, [problem("QJ008", "", f"the top level is {kind}, not an object")]
    if duplicates:
        return None, [problem("QJ006", path, f"key {path.rsplit('/', 1)[-1]!r} appears more than once "
                                             f"in {path.rsplit('/', 1)[0] or 'the top-level object'}")
                      for path in _duplicate_paths(doc, duplicates)]
    found = version_problems(doc)
    return (None if found else doc), found
