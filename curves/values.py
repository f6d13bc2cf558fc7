"""Total readers of untrusted JSON values: a path that is not there, or a value of the wrong type, is None."""

from __future__ import annotations

import math


def get_path(obj: object, *path: str) -> object:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:  # an integer beyond float range
        return None
    return value if math.isfinite(value) else None


def text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
