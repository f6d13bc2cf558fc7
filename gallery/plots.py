"""Per (arch, precision) plots: plain-data specs from rows + curves, rendered byte-identically."""

from __future__ import annotations

import hashlib
import io
import json
import math

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from gallery.rows import count_key

# Okabe-Ito colours: distinguishable under the common colour-vision deficiencies, similar visual weight.
COLOURS = {"confirmation": "#0072b2", "contradiction": "#d55e00", "ungraded": "#999999",
           "self-anchored": "#444444"}
ANCHOR_COLOUR = "#222222"
# Each backend's curve, band and anchors in a colour of its own (never a verdict colour): eager and CUDA
# graphs differ in sign on Hopper, so the two must never read as one curve.
BACKEND_STYLE = {"eager": ("#08306b", "#9ecae1", "-", "eager"),
                 "static": ("#1b7837", "#a6dba0", "-.", "CUDA-graph")}
MARKER_AREA_PT2 = 42  # one size for every replication marker: equal prominence is a rule
FIG_SIZE_IN = (8.0, 5.8)
DPI = 100
# Fixed axes rectangle (figure fractions): the browser places a point over the image without layout.
# The axes take the full width; the legend sits in its own band below them, so it hides no data.
AXES_RECT = (0.085, 0.32, 0.895, 0.62)
# Size ticks in billions of parameters, labelled plainly ("0.5 B", "7 B"), where inside the x range.
SIZE_TICKS_B = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 5, 7, 10, 14, 20, 30, 50, 70, 100, 200, 500, 1000)
GRID_POINTS = 121
RENDER_VERSION = "plots/5"
REFERENCE_TOKENS = 256  # the curves' condition: whole 256-token generations
RC = {
    "svg.hashsalt": "quantjoule-gallery",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "path.simplify": False,
    "axes.unicode_minus": False,
}


def plot_name(arch: str, precision: str) -> str:
    return f"{arch}-{precision}"


def _r(value: float, digits: int = 6) -> float:
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
        xs.append(_r(x))
        mean.append(_r(m))
        low.append(_r(m - z * sd))
        high.append(_r(m + z * sd))
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
        "size_range_b": [_r(v) for v in (group.get("size_range_b") or [])],
        "crossover_b": _r(crossover) if isinstance(crossover, (int, float)) else None,
        "anchors": sorted(
            (
                {
                    "params_b": _r(float(a["params_b"])),
                    "delta_e_pct": _r(float(a["delta_e_pct"])),
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
                    _r(row["params_b"]),
                    _r(row["obs_pct"]),
                    _r(row["ci_low_pct"]) if row["ci_low_pct"] is not None else None,
                    _r(row["ci_high_pct"]) if row["ci_high_pct"] is not None else None,
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
        x_lo, x_hi = _r(max(x_lo, 0.05)), _r(max(x_hi, x_lo * 4))
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
    return [_r(math.floor((lo - pad) / 5) * 5), _r(math.ceil((hi + pad) / 5) * 5)]


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


def size_label(params_b: float) -> str:
    """A size as people write it: 0.5 B, 7 B, 1.1 B."""
    return f"{params_b:g} B"


def _size_axis(ax, x_range) -> None:
    lo, hi = x_range
    ticks = [t for t in SIZE_TICKS_B if lo <= t <= hi]
    if len(ticks) > 9:  # a wide range: keep the 1-2-5 steps only
        ticks = [t for t in ticks if f"{t:g}".lstrip("0.")[:1] in ("1", "2", "5")]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_label(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _curve_label(curve: dict, name_backend: bool = False) -> str:
    borrowed, source = curve["borrowed_from"], curve.get("source")
    kind = f"{BACKEND_STYLE[curve['backend']][3]} curve" if name_backend else "fitted curve"
    if borrowed:
        return f"borrowed curve: {borrowed}'s fit"
    return f"{kind}: {source}, {curve['weights']}" if source else kind


def _draw(spec: dict) -> Figure:
    fig = Figure(figsize=FIG_SIZE_IN, dpi=DPI)
    fig.patch.set_facecolor("white")
    ax = fig.add_axes(AXES_RECT)
    ax.set_xscale("log")
    ax.set_xlim(*spec["x_range"])
    ax.set_ylim(*spec["y_range"])
    _size_axis(ax, spec["x_range"])
    ax.axhline(0.0, color="#555555", linewidth=0.8, zorder=1)
    ax.grid(True, which="major", color="#e6e6e6", linewidth=0.6, zorder=0)
    curve_handles, seen_random_anchor = [], False
    several = len({c["backend"] for c in spec["curves"]}) > 1
    for curve in spec["curves"]:
        colour, band, line, _name = BACKEND_STYLE.get(curve["backend"], BACKEND_STYLE["eager"])
        style = "--" if curve["borrowed_from"] else line
        anchor_colour = colour if curve["backend"] != "eager" else ANCHOR_COLOUR
        ax.fill_between(curve["x"], curve["low"], curve["high"], color=band, alpha=0.35, linewidth=0,
                        zorder=2)
        ax.plot(curve["x"], curve["mean"], style, color=colour, linewidth=1.6, zorder=3)
        curve_handles.append(Line2D([], [], color=colour, linewidth=1.6, linestyle=style,
                                    label=_curve_label(curve, several)))
        if curve["crossover_b"]:
            cross = curve["crossover_b"]
            ax.axvline(cross, color="#08306b", linestyle=":", linewidth=0.9, zorder=2)
            # labelled where it is defined: the size at which the curve crosses 0 (top of the axes, so
            # it never sits on the points around the zero line)
            ax.annotate(f"crossover ≈ {size_label(_r(cross, 2))}", (cross, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(4, -14), textcoords="offset points",
                        fontsize=8, color="#08306b", ha="left", va="top", zorder=6,
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none",
                              "alpha": 0.85})
        for n_min, face in ((2, anchor_colour), (1, "white")):
            for random_init in (False, True):
                chosen = [a for a in curve["anchors"] if (a["n_trials"] >= 2) == (n_min == 2)
                          and bool(a.get("random_init")) == random_init]
                if chosen:
                    seen_random_anchor = seen_random_anchor or random_init
                    # Random-init anchors: diamonds, so they never read as the published squares.
                    ax.scatter(
                        [a["params_b"] for a in chosen], [a["delta_e_pct"] for a in chosen],
                        marker="D" if random_init else "s", s=30, facecolors=face, edgecolors=anchor_colour,
                        linewidths=1.1, zorder=4,
                    )
    for label in ("confirmation", "contradiction", "ungraded", "self-anchored"):
        for random_init, legacy in ((False, False), (True, False), (False, True), (True, True)):
            pts = [p for p in spec["points"] if p[4] == label and p[5] == random_init and p[6] == legacy]
            if not pts:
                continue
            with_ci = [p for p in pts if p[2] is not None and p[3] is not None]
            if label == "self-anchored":
                # an anchor of the curve graded against itself confirms nothing: no verdict marker, only
                # its interval through its own anchor (the footnote counts them)
                if with_ci:
                    ax.vlines([p[0] for p in with_ci], [p[2] for p in with_ci], [p[3] for p in with_ci],
                              colors=COLOURS[label], linewidths=0.8, alpha=0.45, zorder=4)
                continue
            if with_ci:
                ax.vlines(
                    [p[0] for p in with_ci], [p[2] for p in with_ci], [p[3] for p in with_ci],
                    colors=COLOURS[label], linewidths=0.9, alpha=0.7, zorder=4,
                )
            ax.scatter(
                [p[0] for p in pts], [p[1] for p in pts], marker="o", s=MARKER_AREA_PT2,
                facecolors=COLOURS[label], edgecolors="black" if (random_init or legacy) else "white",
                linewidths=2.0 if legacy else (1.3 if random_init else 0.6),
                linestyles=(0, (1.6, 1.2)) if random_init else "solid", zorder=5,
            )
    ax.set_xlabel("model size (parameters, log scale)")
    ax.set_ylabel(f"ΔE% {spec['precision']} vs FP16 (energy per token)")
    ax.set_title(f"{spec['arch']} · {spec['precision']}: energy per token vs model size", fontsize=10.5)
    ax.text(0.005, 0.995, "quantization costs energy ↑", transform=ax.transAxes, ha="left", va="top",
            fontsize=7.5, color="#555555")
    ax.text(0.005, 0.005, "quantization saves energy ↓", transform=ax.transAxes, ha="left", va="bottom",
            fontsize=7.5, color="#555555")
    fig.text(0.01, 0.01, spec["stamp"], fontsize=7.5, color="#444444", ha="left", va="bottom")
    shown = [p for p in spec["points"] if p[4] != "self-anchored"]
    present = {"random_init": any(p[5] for p in shown), "legacy": any(p[6] for p in shown),
               "random_anchor": seen_random_anchor}
    fig.legend(handles=[*curve_handles, *_legend_handles(ax, present)], loc="upper center",
               bbox_to_anchor=(0.5, AXES_RECT[1] - 0.085), ncol=3, frameon=False, fontsize=8,
               handlelength=2.2, columnspacing=1.6)
    return fig


def _legend_handles(ax, present: dict) -> list:
    """The verdicts are always all in the legend (equal prominence, whether or not this plot has such a
    point); edge styles and random-init anchors only where the plot shows them."""

    def point(label: str, face: str, edge: str = "white", width: float = 0.6, style="solid"):
        # An empty scatter is the only proxy that shows a dotted marker edge in the legend.
        return ax.scatter([], [], marker="o", s=MARKER_AREA_PT2, facecolors=face, edgecolors=edge,
                          linewidths=width, linestyles=style, label=label)

    handles = [
        Patch(facecolor="#9ecae1", alpha=0.35, label="prediction band (±2 sd)"),
        Line2D([], [], linestyle="none", marker="s", markersize=5.5, markerfacecolor=ANCHOR_COLOUR,
               markeredgecolor=ANCHOR_COLOUR, label="anchor, n ≥ 2 trials"),
        Line2D([], [], linestyle="none", marker="s", markersize=5.5, markerfacecolor="white",
               markeredgecolor=ANCHOR_COLOUR, label="anchor, n = 1 trial"),
    ]
    if present["random_anchor"]:
        handles.append(Line2D([], [], linestyle="none", marker="D", markersize=5.0,
                              markerfacecolor=ANCHOR_COLOUR, markeredgecolor=ANCHOR_COLOUR,
                              label="anchor, random-init weights"))
    handles += [
        point("confirmation (|z| ≤ 2)", COLOURS["confirmation"]),
        point("contradiction (|z| > 2)", COLOURS["contradiction"]),
        point("ungraded (reason in the table)", COLOURS["ungraded"]),
    ]
    if present["random_init"]:
        handles.append(point("random-init weights (dotted edge)", "#dddddd", "black", 1.3, (0, (1.6, 1.2))))
    if present["legacy"]:
        handles.append(point("legacy schema (heavy edge)", "#dddddd", "black", 2.0))
    handles.append(Line2D([], [], color="#555555", linewidth=0.9, label="95 % CI of a replication"))
    return handles


def render_with(draw, spec: dict, fmt: str) -> bytes:
    """PNG or SVG bytes of the figure `draw(spec)` makes; same input, same bytes (no dates, fixed salt
    and fonts). Every gallery figure is saved through here."""
    metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    with matplotlib.rc_context(RC):
        fig = draw(spec)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=metadata, facecolor="white")
    return buf.getvalue()


def render(spec: dict, fmt: str) -> bytes:
    """PNG or SVG bytes of one size plot."""
    return render_with(_draw, spec, fmt)
