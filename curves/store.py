"""Reading curves.json and looking up a curve: load_curves, resolve_curve, predict."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

from curves.codes import CurvesError
from curves.model import predict_group


def reference_dir() -> Path:
    """The folder holding curves.json and the anchor CSVs: the copy an installed wheel ships inside this
    package (`curves/reference/`, mapped from the repository's reference/ by pyproject.toml), else the
    checkout's reference/ beside the package (a source tree or an editable install)."""
    packaged = resources.files("curves") / "reference"
    if packaged.is_dir() and (packaged / "curves.json").is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "reference"


DEFAULT_CURVES_PATH = reference_dir() / "curves.json"
DEFAULT_ANCHORS_PATH = reference_dir() / "anchors.csv"
# Every anchor file the committed curves.json is fitted on: the published rows first, then the project's own
# measured sources (one CSV per source; a new one is added here and regenerated with curves.measured).
DEFAULT_ANCHOR_PATHS = (
    DEFAULT_ANCHORS_PATH,
    DEFAULT_ANCHORS_PATH.parent / "anchors-quantjoule-hopper.csv",
)

ARCH_ALIASES = {
    "ada lovelace": "ada",
    "ada-lovelace": "ada",
    "ada_lovelace": "ada",
    "lovelace": "ada",
    "sm_89": "ada",
    "sm_90": "hopper",
    "sm_80": "ampere",
    "sm_86": "ampere",
    "sm_75": "turing",
    "sm_100": "blackwell",
    "sm_120": "blackwell",
}


def normalise_arch(arch: object) -> str | None:
    """Lower-case architecture name with common spellings folded ('Ada Lovelace' -> 'ada')."""
    if not isinstance(arch, str) or not arch.strip():
        return None
    name = " ".join(arch.strip().lower().split())
    return ARCH_ALIASES.get(name, name)


def load_curves(path: str | Path | None = None) -> dict:
    """The curves dict from `path` (default reference/curves.json); a bad file is a QJ310 error."""
    path = Path(path) if path is not None else DEFAULT_CURVES_PATH
    try:
        curves = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CurvesError("QJ310", f"cannot read curves file {path}: {exc}") from None
    if not isinstance(curves, dict) or not isinstance(curves.get("groups"), dict) or "version" not in curves:
        raise CurvesError("QJ310", f"{path} is not a curves.json (needs 'version' and 'groups')")
    return curves


def resolve_with_code(curves: dict, arch: object, precision: object, backend: object) -> tuple:
    """(key, group, None, None) when a curve applies, else (None, None, QJ3xx code, reason)."""
    groups = curves.get("groups", {})
    arch_n = normalise_arch(arch)
    prec = precision.strip().upper() if isinstance(precision, str) else None
    back = backend.strip().lower() if isinstance(backend, str) and backend.strip() else "eager"
    key = f"{arch_n}/{prec}/{back}"
    if key in groups:
        return key, groups[key], None, None
    unfitted = curves.get("unfitted") or {}
    if isinstance(unfitted, dict) and isinstance(unfitted.get(key), str):
        return None, None, "QJ301", f"no {key} curve yet: {unfitted[key]}"
    archs = sorted({g["arch"] for g in groups.values()})
    if arch_n not in archs:
        return (
            None,
            None,
            "QJ301",
            (f"no reference curve for GPU architecture {arch!r} (curves exist for {', '.join(archs)})"),
        )
    backs = sorted({g["backend"] for g in groups.values() if g["arch"] == arch_n})
    if back not in backs:
        return (
            None,
            None,
            "QJ302",
            f"no reference curve for backend {back!r} (curves exist for {', '.join(backs)})",
        )
    precs = sorted({g["precision"] for g in groups.values() if g["arch"] == arch_n and g["backend"] == back})
    return (
        None,
        None,
        "QJ308",
        (f"no reference curve for precision {precision!r} on {arch_n} (curves exist for {', '.join(precs)})"),
    )


def resolve_curve(curves: dict, arch: object, precision: object, backend: object) -> tuple:
    """(key, group) for this arch/precision/backend, borrowed groups included; else (None, reason)."""
    key, group, _code, reason = resolve_with_code(curves, arch, precision, backend)
    return (key, group) if key is not None else (None, reason)


def predict(curves: dict, key: str, params_b: float) -> tuple[float, float]:
    """(mean ΔE%, prediction sd pp) of the curve `key` at `params_b` billion parameters."""
    group = curves.get("groups", {}).get(key)
    if group is None:
        raise KeyError(f"no curve {key!r} in curves version {curves.get('version')}")
    mean, sd = predict_group(group, float(params_b))
    if not (math.isfinite(mean) and math.isfinite(sd)):
        raise ValueError(f"curve {key!r} gives a non-finite prediction at {params_b} B")
    return mean, sd
