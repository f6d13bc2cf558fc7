"""Per (arch, precision) size plots as plain-data specs from rows + curves, and where a point lands on one
(gallery/draw.py renders a spec)."""

from __future__ import annotations

import hashlib
import json
import math

from curves.condition import REFERENCE_CONDITION
from gallery.rows import count_key

# Figure size and the fixed axes rectangle (figure fractions) are the spec's geometry: the browser places
# a point over the image without layout. The axes take the full width; the legend sits in its own band
# below them, so it hides no data.
FIG_SIZE_IN = (8.0, 5.8)
DPI = 100
AXES_RECT = (0.085, 0.32, 0.895, 0.62)
GRID_POINTS = 121
RENDER_VERSION = "plots/5"
REFERENCE_TOKENS = REFERENCE_CONDITION["generation_tokens"]  # the curves' condition: whole generations


def plot_name(arch: str, precision: str) -> str:
    return f"{arch}-{precision}"


def spec_round(value: float, digits: int = 6) -> float:
    """Round so the spec (and its hash) does not depend on the last bits of float arithmetic."""
    return float(f"{value:.{digits}g}")


def _group_keys(curves: dict) -> dict[tuple[str, str], list[str]]:
    keys: dict[tuple[str, str], list[str]] = {}
    for key, group in sorted((curves.get("groups") or {}).items()):
        keys.setdefault((str(group.get("arch")), str(group.get("precision"))), []).append(key)
    return keys


def _band_z(group: dict) -> float:
    band = group.get("band") if isinstance(group.get("band"), dict) else {}
    z = band.get("z", band.get("z_pp", 2.0))
    return float(z) if isinstance(z, (int, float)) and not isinstance(z, bool) else 2.0


def _curve_spec(curves: dict, key: str, group: dict, predict, x_lo: float, x_hi: float) -> dict:
    z = _band_z(group)
    xs, mean, low, high = [], [], [], []
    for i in range(GRID_POINTS):
        x = x_lo * (x_hi / x_lo) ** (i / (GRID_POINTS - 1))
        m, sd = predict(curves, key, x)
        xs.append(spec_round(x))
        mean.append(spec_round(m))
        low.append(spec_round(m - z * sd))
        high.append(spec_round(m + z * sd))
    borrowed = group.get("borrowed_from")
    crossover = group.get("crossover_b")
    return {
        "key": key,
        "backend": str(group.get("backend") or "eager"),
        "borrowed_from": str(borrowed) if borrowed else None,
        # Where the anchors come from: a curve fitted on the project's own random-init runs is labelled so.
        "source": None if borrowed or group.get("source") in (None, "ecocompute") else str(group["source"]),
        "weights": str(group.get("weights") or "not recorded"),
        "band_z": z,
        "x": xs,
        "mean": mean,
        "low": low,
        "high": high,
        "size_range_b": [spec_round(v) for v in (group.get("size_range_b") or [])],
        "crossover_b": spec_round(crossover) if isinstance(crossover, (int, float)) else None,
        "anchors": sorted(
            (
                {
                    "params_b": spec_round(float(a["params_b"])),
                    "delta_e_pct": spec_round(float(a["delta_e_pct"])),
                    "n_trials": int(a.get("n_trials") or 1),
                    "gpu": str(a.get("gpu") or ""),
                    "random_init": a.get("weights") == "random-init",
                }
                for a in (group.get("anchors") or [])
            ),
            key=lambda a: (a["params_b"], a["delta_e_pct"], a["gpu"]),
        ),
    }


def _fit_stamp(curves: dict) -> str:
    date = next((curves[k] for k in ("fit_date", "fitted_at", "fitted_on", "date") if curves.get(k)), None)
    return f"curves {curves.get('version', '?')} · fit {str(date)[:10] if date else 'date not recorded'}"


def whole_generations(row: dict) -> bool:
    """Measured as the curves' quantity: whole 256-token generations (a shorter one's ratio is another)."""
    return row.get("tokens_per_run") in (None, REFERENCE_TOKENS)


def drawn(row: dict) -> bool:
    """A point of the size plot: the curves' condition, batch 1 and whole 256-token generations (other
    batches are drawn against batch, gallery.batch)."""
    return (row["params_b"] is not None and row["obs_pct"] is not None and row["params_b"] > 0
            and row.get("batch_size", 1) == 1 and whole_generations(row))


def _shorter_note(rows: list[dict]) -> str:
    shorter = sum(1 for r in rows if r["obs_pct"] is not None and r.get("batch_size", 1) == 1
                  and not whole_generations(r))
    return f"{shorter} replication(s) of shorter generations not drawn (see the table)" if shorter else ""


def _stamp(first: str, *notes: str) -> str:
    """The footnote: the curves stamp, then the notes, on a second line when they would not fit one."""
    notes = tuple(n for n in notes if n)
    if not notes:
        return first
    line = " · ".join((first, *notes))
    return line if len(line) <= 120 else first + "\n" + " · ".join(notes)


def _anchored_note(rows: list[dict]) -> str:
    n = sum(1 for r in rows if drawn(r) and count_key(r) == "self-anchored")
    return f"{n} self-anchored replication(s): their anchors, with their 95 % CI" if n else ""


def plot_specs(rows: list[dict], curves: dict, predict, resolve) -> dict[str, dict]:
    """One spec per (arch, precision) that has a curve or rows; plain data, sorted, hashable.

    `predict(curves, key, N) -> (mean_pct, sd_pp)` and `resolve(curves, arch, precision, backend)
    -> (key, group) | (None, reason)` are the curves package's functions, passed in to keep this pure.
    """
    groups = curves.get("groups") or {}
    by_plot: dict[tuple[str, str], dict[str, list]] = {}
    for pair, keys in _group_keys(curves).items():
        by_plot.setdefault(pair, {"keys": [], "rows": []})["keys"].extend(keys)
    for row in rows:
        entry = by_plot.setdefault((row["arch"], row["precision"]), {"keys": [], "rows": []})
        entry["rows"].append(row)
        if not entry["keys"]:
            key, _group = resolve(curves, row["arch"], row["precision"], row["backend"])
            if key:
                entry.setdefault("borrowed", set()).add(key)
    specs: dict[str, dict] = {}
    for (arch, precision), entry in sorted(by_plot.items()):
        keys = sorted(set(entry["keys"]) | entry.get("borrowed", set()))
        points = sorted(
            (
                [
                    spec_round(row["params_b"]),
                    spec_round(row["obs_pct"]),
                    spec_round(row["ci_low_pct"]) if row["ci_low_pct"] is not None else None,
                    spec_round(row["ci_high_pct"]) if row["ci_high_pct"] is not None else None,
                    count_key(row),
                    row["weights"] == "random-init",
                    bool(row["legacy"]),
                ]
                for row in entry["rows"]
                if drawn(row)
            ),
            key=lambda p: (p[0], p[1], p[4], p[5], p[6], p[2] is None, p[2] or 0.0, p[3] or 0.0),
        )
        xs = [p[0] for p in points]
        for key in keys:
            group = groups.get(key) or {}
            xs.extend(float(v) for v in (group.get("size_range_b") or []))
            xs.extend(float(a["params_b"]) for a in group.get("anchors") or [])
        x_lo, x_hi = (min(xs) / 1.6, max(xs) * 1.6) if xs else (0.3, 30.0)
        x_lo, x_hi = spec_round(max(x_lo, 0.05)), spec_round(max(x_hi, x_lo * 4))
        curve_specs = []
        for key in keys:
            group = dict(groups.get(key) or {})
            if group.get("arch") not in (None, arch):
                group["borrowed_from"] = group.get("borrowed_from") or group.get("arch")
            curve_specs.append(_curve_spec(curves, key, group, predict, x_lo, x_hi))
        specs[plot_name(arch, precision)] = {
            "render_version": RENDER_VERSION,
            "arch": arch,
            "precision": precision,
            "stamp": _stamp(_fit_stamp(curves), _shorter_note(entry["rows"]), _anchored_note(entry["rows"])),
            "x_range": [x_lo, x_hi],
            "curves": curve_specs,
            "points": points,
        }
    for spec in specs.values():
        spec["y_range"] = _y_range(spec)
    return specs


def _y_range(spec: dict) -> list[float]:
    ys = [0.0]
    for curve in spec["curves"]:
        ys.extend(curve["low"])
        ys.extend(curve["high"])
        ys.extend(a["delta_e_pct"] for a in curve["anchors"])
    for p in spec["points"]:
        ys.extend(v for v in (p[1], p[2], p[3]) if v is not None)
    lo, hi = min(ys), max(ys)
    pad = max((hi - lo) * 0.08, 5.0)
    return [spec_round(math.floor((lo - pad) / 5) * 5), spec_round(math.ceil((hi + pad) / 5) * 5)]


def spec_hash(spec: dict) -> str:
    """Input hash of one plot: what the incremental build compares."""
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def geometry(spec: dict) -> dict:
    """Where data coordinates land on the image, in fractions of its width and height (log x)."""
    left, bottom, width, height = AXES_RECT
    return {
        "axes": [left, bottom, width, height],
        "x_range": spec["x_range"],
        "y_range": spec["y_range"],
        "x_log": True,
        "size_px": [int(FIG_SIZE_IN[0] * DPI), int(FIG_SIZE_IN[1] * DPI)],
    }


def place(geom: dict, params_b: float, delta_e_pct: float) -> tuple[float, float, bool]:
    """(left %, top %, clipped) of a data point over the image; qj6-grade.js placeOnPlot is its port."""
    left, bottom, width, height = geom["axes"]
    (x_lo, x_hi), (y_lo, y_hi) = geom["x_range"], geom["y_range"]
    fx = (math.log(max(params_b, 1e-9)) - math.log(x_lo)) / (math.log(x_hi) - math.log(x_lo))
    fy = (delta_e_pct - y_lo) / (y_hi - y_lo)
    clipped = not (0.0 <= fx <= 1.0 and 0.0 <= fy <= 1.0)
    fx, fy = min(max(fx, 0.0), 1.0), min(max(fy, 0.0), 1.0)
    return round((left + fx * width) * 100, 3), round((1.0 - (bottom + fy * height)) * 100, 3), clipped
