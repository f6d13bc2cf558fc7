"""Reading and normalising anchor rows: the published ones (reference/anchors.csv) and the project's own."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from curves.codes import CurvesError

REQUIRED_COLUMNS = ("gpu", "arch", "model", "params_b", "precision", "energy_fp16_j1k", "energy_quant_j1k")
# Rows without a `source` column are the published EcoCompute measurements (reference/anchors.csv).
DEFAULT_SOURCE = "ecocompute"
DEFAULT_BACKEND = "eager"


def read_anchors(path: str | Path) -> list[dict]:
    """Rows of the anchors CSV as dicts of strings, in file order."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CurvesError("QJ312", f"cannot read anchors file {path}: {exc}") from None
    return parse_anchors_csv(text)


def read_anchor_files(paths) -> list[dict]:
    """Rows of several anchor CSVs, concatenated in the order given (the published file first)."""
    rows: list[dict] = []
    for path in paths:
        rows.extend(read_anchors(path))
    return rows


def parse_anchors_csv(text: str) -> list[dict]:
    """Parse CSV text into rows; a missing column is a QJ312 error."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise CurvesError("QJ312", f"anchors CSV lacks column(s): {', '.join(missing)}")
    return [dict(row) for row in reader]


def _number(row: dict, key: str, index: int, positive: bool = True) -> float:
    raw = row.get(key)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise CurvesError("QJ313", f"anchors row {index + 1}: {key} is not a number ({raw!r})") from None
    if not math.isfinite(value) or (positive and value <= 0):
        raise CurvesError("QJ313", f"anchors row {index + 1}: {key} must be positive and finite ({raw!r})")
    return value


def _optional_int(raw: object) -> int | None:
    try:
        return int(str(raw).strip())
    except (TypeError, ValueError):
        return None


def _optional_text(row: dict, key: str, lower: bool = False) -> str | None:
    text = str(row.get(key) or "").strip()
    return (text.lower() if lower else text) or None


def _optional_float(row: dict, key: str) -> float | None:
    try:
        value = float(str(row.get(key)).strip())
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def normalise_rows(rows: list[dict]) -> list[dict]:
    """Typed anchor points with their ΔE%, notes kept verbatim (the data's quirks stay visible).

    Points carry where they come from (`source`, `weights`, `backend`, `report`), so a curve fitted on
    the project's own random-init runs can never pass as one fitted on the published data."""
    points = []
    for i, row in enumerate(rows):
        for key in ("gpu", "arch", "model", "precision"):
            if not str(row.get(key) or "").strip():
                raise CurvesError("QJ313", f"anchors row {i + 1}: {key} is empty")
        fp16 = _number(row, "energy_fp16_j1k", i)
        quant = _number(row, "energy_quant_j1k", i)
        points.append(
            {
                "gpu": str(row["gpu"]).strip(),
                "arch": str(row["arch"]).strip().lower(),
                "model": str(row["model"]).strip(),
                "params_b": _number(row, "params_b", i),
                "precision": str(row["precision"]).strip().upper(),
                "delta_e_pct": (quant - fp16) / fp16 * 100.0,
                "n_trials": _optional_int(row.get("n_trials")),
                "note": str(row.get("note") or "").strip(),
                "source": _optional_text(row, "source") or DEFAULT_SOURCE,
                "weights": _optional_text(row, "weights", lower=True),
                "backend": _optional_text(row, "backend", lower=True) or DEFAULT_BACKEND,
                "report": _optional_text(row, "report"),
                "report_sha256": _optional_text(row, "report_sha256", lower=True),
                "ci95_half_width_pp": _optional_float(row, "ci95_half_width_pp"),
                "report_id": _optional_text(row, "report_id"),
                "gpu_uuid_sha256": _optional_text(row, "gpu_uuid_sha256", lower=True),
            }
        )
    return points
