"""Safe reading of report text: size, encoding, NaN/Infinity, duplicate keys, depth, then JSON."""

from __future__ import annotations

import json
import re
import sys

from schema.problem import Problem, pointer, problem

# A report must fit in one GitHub issue body (65,536 characters) together with the issue form around it.
MAX_REPORT_BYTES = 60_000
# A valid report nests at most 5 levels; 32 leaves room for free-form provenance and stays far from
# Python's recursion limit.
MAX_DEPTH = 32

# Every reader must see the same numbers: Python reads any integer, a browser only those a double holds
# exactly, and a subnormal double loses precision and divides into infinity. Integers beyond 2^53 - 1 in
# magnitude and non-zero numbers below the smallest normal double are refused (QJ012).
MAX_SAFE_INTEGER = 2**53 - 1
SMALLEST_NORMAL = sys.float_info.min
MAX_LISTED = 20  # a report with thousands of bad numbers gets the first few, the last saying how many more

SCHEMA_V2 = "quantjoule-energy/2.0"
LEGACY_VERSIONS = ("ecocompute-energy/1.0", "ecocompute-energy/1.1")
KNOWN_VERSIONS = (SCHEMA_V2, *LEGACY_VERSIONS)

# Strings (possibly unterminated), brackets, and the bare NaN/Infinity words JSON does not have.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[{]|[\]}]|NaN|Infinity', re.S)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _BareConstant(Exception):
    pass


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def _scan(text: str, max_depth: int = MAX_DEPTH) -> Problem | None:
    """Depth and NaN/Infinity check by token scan, before json.loads can recurse on hostile input."""
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                line, col = _line_col(text, match.start())
                return problem("QJ007", f"nesting deeper than {max_depth} levels at line {line} "
                                        f"column {col}")
        elif token in ("]", "}"):
            depth -= 1
        elif token in ("NaN", "Infinity"):
            line, col = _line_col(text, match.start())
            return problem("QJ004", f"{token} literal at line {line} column {col}")
    return None


def _decode(data, max_bytes: int = MAX_REPORT_BYTES) -> tuple[str | None, Problem | None]:
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            return None, problem("QJ003", f"text contains an unpaired surrogate at character {exc.start}")
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    else:
        return None, problem("QJ005", f"expected report text or bytes, got {type(data).__name__}")
    if len(raw) > max_bytes:
        message = f"report is at least {len(raw):,} bytes; the limit is {max_bytes:,}"
        return None, problem("QJ002", message)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, problem("QJ003", f"byte {exc.start} (0x{raw[exc.start]:02x}) is not valid UTF-8")
    # Editors on some systems prepend a byte-order mark; it carries no content.
    return text.removeprefix("\ufeff"), None


def _loads(text: str) -> tuple[object, list[tuple[int, str]]]:
    duplicates: list[tuple[int, str]] = []

    def pairs_hook(pairs):
        obj = dict(pairs)
        if len(obj) != len(pairs):  # rare: find which keys repeat
            seen: set = set()
            for key, _value in pairs:
                if key in seen:
                    duplicates.append((id(obj), key))
                seen.add(key)
        return obj

    def no_constant(name):
        raise _BareConstant(name)  # _scan rejects these first; this keeps NaN out for certain

    return json.loads(text, object_pairs_hook=pairs_hook, parse_constant=no_constant), duplicates


def _depth(doc) -> int:
    """How many containers deep `doc` nests (an object of numbers is 1), found without recursion."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return deepest


def _fast_load(text: str, max_depth: int):
    """(doc, duplicates) when the text parses with no NaN/Infinity and nests at most `max_depth` deep;
    None otherwise, for the token scan and the full path to say exactly what and where."""
    try:
        doc, duplicates = _loads(text)
    except (ValueError, _BareConstant, RecursionError):
        return None
    return (doc, duplicates) if _depth(doc) <= max_depth else None


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
        return [problem("QJ009", "schema_version is missing", "/schema_version")]
    version = report["schema_version"]
    if not isinstance(version, str):
        return [problem("QJ009", f"schema_version is a {type(version).__name__}, "
                                 "not a string", "/schema_version")]
    if version not in KNOWN_VERSIONS:
        shown = version if len(version) <= 60 else version[:57] + "..."
        return [problem("QJ010", f"schema_version {shown!r} is not one this tool reads", "/schema_version")]
    return []


def _number_problem(value, where: tuple) -> Problem | None:
    if isinstance(value, bool):
        return None
    path = pointer(where)
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        digits = len(str(abs(value))) if abs(value) < 10**60 else None
        size = f"an integer of {digits} digits" if digits else "an integer of more than 60 digits"
        return problem("QJ012", f"{path or 'the value'} is {size}, beyond +/-{MAX_SAFE_INTEGER:,} "
                                "(2^53 - 1), the largest a browser reads exactly",
                                path)
    if isinstance(value, float) and value != 0.0 and abs(value) < SMALLEST_NORMAL:
        return problem("QJ012", f"{path or 'the value'} is {value!r}, a subnormal number below "
                                f"{SMALLEST_NORMAL!r}", path)
    return None


def _all_safe(doc) -> bool:
    """The quick pass of unsafe_values (no paths built): True when nothing in `doc` is unsafe."""
    stack = [doc]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key, value in node.items():
                if type(key) is str and not key.isascii() and _SURROGATE.search(key):
                    return False
                stack.append(value)
        elif kind is list:
            stack.extend(node)
        elif kind is str:
            if not node.isascii() and _SURROGATE.search(node):
                return False
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:
                return False
        elif kind is float and node != 0.0 and -SMALLEST_NORMAL < node < SMALLEST_NORMAL:
            return False
    return True


def unsafe_values(doc) -> list[Problem]:
    """QJ003 for text holding an unpaired surrogate (a `\\udXXX` escape with no partner: not UTF-8 once
    written), then QJ012 for each number outside what every reader agrees on; found without recursion."""
    if _all_safe(doc):
        return []
    surrogates: list[tuple[str, str]] = []  # (pointer, the text holding it)
    numbers: list[Problem] = []
    stack = [(doc, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                surrogates.append((pointer(where), node))
        elif isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    surrogates.append((pointer((*where, key)), key))
                stack.append((value, (*where, key)))
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(node))
        else:
            found = _number_problem(node, where)
            if found:
                numbers.append(found)
    if surrogates:
        where, holder = min(surrogates)
        code = ord(_SURROGATE.search(holder)[0])
        return [problem("QJ003", f"a \\u escape decodes to an unpaired surrogate (U+{code:04X}) at "
                                 f"{where or 'the top level'}; such text is not UTF-8")]
    numbers.sort(key=lambda p: p.path)
    if len(numbers) > MAX_LISTED:
        rest = len(numbers) - MAX_LISTED + 1
        last = numbers[MAX_LISTED - 1]
        numbers = numbers[: MAX_LISTED - 1] + [problem("QJ012", f"{last.message}; and {rest - 1} "
                                                                "more such numbers",
                                                                last.path)]
    return numbers


def read_json_text(data, max_bytes: int = MAX_REPORT_BYTES,
                   max_depth: int = MAX_DEPTH) -> tuple[dict | None, list[Problem]]:
    """Read untrusted JSON text or bytes into an object; never raises. The one policy for report and
    record files alike: size, UTF-8, depth, NaN/Infinity, syntax, a top-level object, duplicate keys,
    unpaired surrogates and numbers outside every reader's common range, each refused with its code."""
    text, failure = _decode(data, max_bytes)
    if failure:
        return None, [failure]
    if not text.strip():
        return None, [problem("QJ001", "the report is empty")]
    # Most texts are well formed: parse first (the C parser), and scan tokens only when something is off,
    # which gives the same answers in the same order as scanning first (a text that parses has no bare
    # NaN/Infinity, and its nesting is the depth of what it parsed to).
    fast = _fast_load(text, max_depth)
    if fast is not None:
        doc, duplicates = fast
    else:
        failure = _scan(text, max_depth)
        if failure:
            return None, [failure]
        try:
            doc, duplicates = _loads(text)
        except json.JSONDecodeError as exc:
            return None, [problem("QJ005", f"{exc.msg} (line {exc.lineno}, column {exc.colno})")]
        except (ValueError, _BareConstant, RecursionError) as exc:
            # e.g. an integer literal longer than Python's int-conversion limit
            return None, [problem("QJ005", f"cannot read a value: {str(exc)[:120]}")]
    if not isinstance(doc, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        kind = kinds.get(type(doc), "a number")
        return None, [problem("QJ008", f"the top level is {kind}, not an object")]
    if duplicates:
        return None, [problem("QJ006", f"key {path.rsplit('/', 1)[-1]!r} appears more than once "
                                       f"in {path.rsplit('/', 1)[0] or 'the top-level object'}",
                                       path)
                      for path in _duplicate_paths(doc, duplicates)]
    unsafe = unsafe_values(doc)
    if unsafe:
        return None, unsafe
    return doc, []


def parse_report(data) -> tuple[dict | None, list[Problem]]:
    """Parse report text or bytes; never raises. The report is None whenever a problem makes it unusable."""
    doc, found = read_json_text(data)
    if doc is None:
        return None, found
    found = version_problems(doc)
    return (None if found else doc), found
