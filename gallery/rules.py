"""The numbers the browser's check panel needs, gathered from schema/ and curves/ (one source of truth)."""

from __future__ import annotations

from schema.escape import json_for_script


def rules() -> dict:
    """Schemas, problem codes, limits, known models and the grading constants, as plain data."""
    import importlib

    from curves import codes as curves_codes
    from curves import condition, point, store
    from schema import codes, gpus, limits, models, parse, recompute, semantic, structure, text

    # `curves.grade` the attribute is the function; the module holds the constants.
    grade_module = importlib.import_module("curves.grade")
    limit_names = [name for name in dir(limits) if name.isupper()]
    return {
        "schema_v2": parse.SCHEMA_V2,
        "known_versions": list(parse.KNOWN_VERSIONS),
        "max_report_bytes": parse.MAX_REPORT_BYTES,
        "max_depth": parse.MAX_DEPTH,
        "max_schema_problems": structure.MAX_SCHEMA_PROBLEMS,
        "schemas": {"v2": structure.load_schema(structure.SCHEMA_FILES[parse.SCHEMA_V2]),
                    "legacy": structure.load_schema(structure.SCHEMA_FILES["legacy"])},
        # The checker reads, validates and grades: it reports the codes of schema and curves only.
        "codes": {c.code: {"severity": c.severity, "title": c.title, "hint": c.hint}
                  for c in sorted((*codes.codes(), *curves_codes.codes()), key=lambda c: c.code)},
        "limits": {name: getattr(limits, name) for name in limit_names},
        "known_archs": list(models.KNOWN_ARCHS),
        "known_models": [{"name": m.name, "hf_id": m.hf_id, "nominal_b": m.nominal_b,
                          "counted_b": m.counted_b} for m in models.KNOWN_MODELS],
        "model_variant": models.VARIANT.pattern,
        "nvml_sources_v2": list(semantic.NVML_SOURCES_V2),
        "nvml_source_legacy": semantic.NVML_SOURCE_LEGACY,
        "not_measured_sources_v2": list(semantic.NOT_MEASURED_SOURCES_V2),
        "not_measured_words": semantic.NOT_MEASURED_WORDS.pattern,
        "disowning_note": semantic.DISOWNING_NOTE.pattern,
        "positive_fields": list(semantic.POSITIVE_FIELDS),
        "baseline_fields": list(semantic.BASELINE_FIELDS),
        "arch_aliases": dict(store.ARCH_ALIASES),
        "max_safe_integer": parse.MAX_SAFE_INTEGER,
        "smallest_normal": parse.SMALLEST_NORMAL,
        "max_listed": parse.MAX_LISTED,
        "gpu_arch_patterns": [list(p) for p in gpus.ARCH_PATTERNS],
        "confusables": dict(text.CONFUSABLES),
        "invisible": _js_regex_source(text.INVISIBLE.pattern),
        "t975": list(recompute.T975),
        "grade": {"z_limit": point.Z_LIMIT,
                  "measured_sources": sorted((*semantic.NVML_SOURCES_V2, semantic.NVML_SOURCE_LEGACY)),
                  "legacy_prefix": grade_module.LEGACY_PREFIX,
                  "reference_condition": condition.REFERENCE_CONDITION,
                  "llm_int8_threshold": condition.LLM_INT8_THRESHOLD},
    }


def _js_regex_source(pattern: str) -> str:
    """A Python character-class pattern as JavaScript `u`-flag regex source written in ASCII: every control
    or non-ASCII character as \\u{...}, so the published script holds no invisible character itself."""
    return "".join(ch if " " <= ch < "\x7f" else f"\\u{{{ord(ch):X}}}" for ch in pattern)


def rules_js() -> str:
    """data/rules.js."""
    return "window.QJ_RULES = " + json_for_script(rules()) + ";\n"
