"""JSON Schema validation (v2 Draft 2020-12, legacy draft-07), each violation mapped to a QJ1xx code."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import best_match

from schema.parse import SCHEMA_V2
from schema.problem import Problem, pointer, problem

SCHEMA_FILES = {SCHEMA_V2: "energy-2.0.schema.json", "legacy": "ecocompute-energy.schema.json"}
# A badly broken report can violate thousands of rules; listing the first few is enough to act on.
MAX_SCHEMA_PROBLEMS = 50

_KEYWORD_CODES = {
    "required": "QJ101", "dependentRequired": "QJ101",
    "type": "QJ102",
    "enum": "QJ103",
    "const": "QJ104",
    "minimum": "QJ105", "maximum": "QJ105", "exclusiveMinimum": "QJ105", "exclusiveMaximum": "QJ105",
    "multipleOf": "QJ105",
    "additionalProperties": "QJ106", "unevaluatedProperties": "QJ106", "propertyNames": "QJ106",
    "pattern": "QJ107", "minLength": "QJ107", "maxLength": "QJ107", "format": "QJ107",
    "minItems": "QJ108", "maxItems": "QJ108", "uniqueItems": "QJ108", "minProperties": "QJ108",
    "maxProperties": "QJ108", "contains": "QJ108", "minContains": "QJ108", "maxContains": "QJ108",
}
FALLBACK_CODE = "QJ109"  # oneOf / anyOf / not / a false schema: no single keyword to blame


def load_schema(name: str) -> dict:
    """The parsed JSON Schema file `name` shipped in this package."""
    return json.loads(resources.files("schema").joinpath(name).read_text(encoding="utf-8"))


@cache
def _validator(version: str):
    # Cached because the schemas are constants shipped with the package; the validators hold no state.
    if version == SCHEMA_V2:
        return Draft202012Validator(load_schema(SCHEMA_FILES[SCHEMA_V2]))
    return Draft7Validator(load_schema(SCHEMA_FILES["legacy"]))


def _short(value) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _range_text(keyword: str, bound) -> str:
    return {"minimum": f">= {bound}", "maximum": f"<= {bound}", "exclusiveMinimum": f"> {bound}",
            "exclusiveMaximum": f"< {bound}", "multipleOf": f"a multiple of {bound}"}[keyword]


def _problems_of(error) -> list[Problem]:
    parts = tuple(error.absolute_path)
    where = pointer(parts) or "the report"
    keyword, bound, value = error.validator, error.validator_value, error.instance
    if "propertyNames" in error.relative_schema_path or "propertyNames" in error.schema_path:
        return [problem("QJ106", f"key {_short(value)} is not allowed in {where}", pointer((*parts, value)))]
    code = _KEYWORD_CODES.get(keyword, FALLBACK_CODE)
    if keyword in ("required", "dependentRequired") and isinstance(value, dict):
        names = bound if keyword == "required" else [n for deps in bound.values() for n in deps]
        return [problem(code, f"{n!r} is missing from {where}", pointer((*parts, n)))
                for n in names if n not in value]
    if keyword == "additionalProperties" and isinstance(value, dict):
        known = error.schema.get("properties", {})
        return [problem(code, f"{k!r} is not a field of {where}", pointer((*parts, k)))
                for k in value if k not in known]
    if keyword == "type":
        wanted = bound if isinstance(bound, list) else [bound]
        message = f"{where} is {_json_type(value)}; expected {' or '.join(wanted)}"
    elif keyword == "enum":
        message = f"{where} is {_short(value)}; allowed: {', '.join(_short(v) for v in bound)}"
    elif keyword == "const":
        message = f"{where} is {_short(value)}; it must be {_short(bound)}"
    elif code == "QJ105":
        message = f"{where} is {_short(value)}; it must be {_range_text(keyword, bound)}"
    elif keyword == "pattern":
        form = error.schema.get("description") or f"match {bound}"
        message = f"{where} is {_short(value)}; it must {form}"
    elif keyword in ("minLength", "maxLength"):
        message = f"{where} has {len(value)} characters; {keyword} is {bound}"
    elif keyword in ("minItems", "maxItems"):
        message = f"{where} has {len(value)} items; {keyword} is {bound}"
    elif keyword == "uniqueItems":
        message = f"{where} repeats an item: {_short(value)}"
    elif code == FALLBACK_CODE and error.context:
        nearest = best_match(error.context)
        message = f"{where} matches none of the allowed shapes; nearest: {nearest.message[:120]}"
    else:
        message = f"{where}: {error.message[:160]}"
    return [problem(code, message, pointer(parts))]


def structure_problems(report: dict, version: str) -> list[Problem]:
    """Every schema violation of `report` against the schema of `version` (v2 or a legacy version)."""
    found: dict[tuple[str, str, str], Problem] = {}
    for error in _validator(version).iter_errors(report):
        for p in _problems_of(error):
            found.setdefault((p.path, p.code, p.message), p)
    listed = [found[k] for k in sorted(found)]
    if len(listed) > MAX_SCHEMA_PROBLEMS:
        rest = len(listed) - (MAX_SCHEMA_PROBLEMS - 1)
        first_left = listed[MAX_SCHEMA_PROBLEMS - 1]
        listed = listed[: MAX_SCHEMA_PROBLEMS - 1] + [
            problem(first_left.code, f"{first_left.message}; and {rest - 1} more schema "
                                     "problems not listed",
                                     first_left.path)]
    return listed
