"""Per (arch, precision): ΔE% against batch size, eager and static (CUDA graph) side by side (pure specs,
byte-identical renders).

A batch plot exists for an (arch, precision) whose replications span more than one batch size or more
than one backend; its two panels are always eager | static, so the backends read side by side. Only whole
256-token generations are drawn, so that every point is the same quantity (the graded one) and only the
condition moves; shorter ones are counted under the figure. A series is one model (and, for INT8, one
outlier threshold: 0 is not LLM.int8()), coloured in a fixed order, in a column of its own at each batch
(its repeat runs spread inside it); every point carries its 95 % CI, one upright label per series and
batch lists its runs' n (paired blocks), and the line joins the mean of a series' runs at each batch
size. Colour says which model, never which verdict: a batch > 1 point has no reference curve, and each point's
verdict stays on its page and in the table. The panels share one y scale unless sharing would squeeze
a panel's points into less than half of its height (eager LLM.int8() at +200 % beside threshold-0 INT8
near 0): then each panel has its own scale, and the panel title says so. The figure grows by a legend
row's height for every row past two, so the legend never runs into the note under it.
"""

from __future__ import annotations

import math
import re

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from gallery.draw import render_with
from gallery.plots import DPI, whole_generations

RENDER_VERSION = "batch/5"
BACKENDS = ("eager", "static")
PANEL_TITLES = {"eager": "eager (plain generate)", "static": "static (CUDA-graph replay)"}
# Okabe-Ito, then black: told apart under the common colour-vision deficiencies
SERIES_COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
SERIES_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
FIG_SIZE_IN = (10.0, 5.4)
PANEL_RECTS = ((0.075, 0.25, 0.43, 0.65), (0.545, 0.25, 0.43, 0.65))  # eager, static: figure fractions
SERIES_SPAN_OCTAVES = 0.8  # the series of one batch share at most this much of the log2 x axis
SERIES_STEP_OCTAVES = 0.15  # and stand at most this far apart (a 6 pt upright label is about 0.12)
RUN_STEP_OCTAVES = 0.035  # runs of one series at one batch, inside its column
LABEL_ROOM = 0.16  # the y range's margin under its lowest point, as a share of the points' span, at least
LABEL_PT = 6.0  # the n labels' font size
LABEL_CHAR_PT = 3.8  # widest advance of its characters (digits, "n", "=") at that size, DejaVu Sans
PANEL_HEIGHT_PT = PANEL_RECTS[0][3] * FIG_SIZE_IN[1] * 72  # the axes' height in points
SHARE_Y_MIN = 0.5  # a panel's own span as a share of the shared span, below which it gets its own scale
LEGEND_COLUMNS = 4
LEGEND_ROWS_IN_BASE = 2  # rows the base layout has room for between the x labels and the note
LEGEND_ROW_IN = 0.17  # one more row of 7.5 pt legend entries, with its spacing
NOTE_Y_IN = 0.081  # the note's baseline above the figure's bottom edge
LEGEND_TOP_IN = 0.702  # the legend's top edge above the bottom edge, in the base layout
TITLE_FROM_TOP_IN = 0.162
_LABEL_CHARS = re.compile(r"[^A-Za-z0-9 ._+()-]+")


def plot_name(arch: str, precision: str) -> str:
    return f"{arch}-{precision}-batch"


def _r(value: float, digits: int = 6) -> float:
    """Rounded, so a spec (and its hash) does not depend on the last bits of float arithmetic."""
    return float(f"{value:.{digits}g}")


def _label(row: dict) -> str:
    """A series label from submission text, reduced to plain characters (matplotlib would read `$` as
    mathematics) and a fixed length."""
    model = _LABEL_CHARS.sub("", str(row.get("model") or "model"))[:32].strip() or "model"
    size = row.get("params_b")
    text = f"{model} ({size:g} B)" if isinstance(size, (int, float)) else model
    if row.get("int8_outlier_threshold") == 0:
        text += ", INT8 threshold 0"
    return text


def _series_key(row: dict) -> tuple:
    size = row.get("params_b") if isinstance(row.get("params_b"), (int, float)) else 0.0
    return (float(size), _label(row))


def batch_specs(rows: list[dict]) -> dict[str, dict]:
    """One spec per (arch, precision) whose rows span several batch sizes or backends; plain data."""
    by_plot: dict[tuple[str, str], list[dict]] = {}
    shorter: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.get("obs_pct") is None or row.get("backend") not in BACKENDS:
            continue
        key = (row["arch"], row["precision"])
        if not whole_generations(row):
            shorter[key] = shorter.get(key, 0) + 1
            continue
        by_plot.setdefault(key, []).append(row)
    specs: dict[str, dict] = {}
    for (arch, precision), chosen in sorted(by_plot.items()):
        batches = {int(r.get("batch_size") or 1) for r in chosen}
        backends = {r["backend"] for r in chosen}
        if len(batches) < 2 and len(backends) < 2:
            continue
        keys = sorted({_series_key(r) for r in chosen})
        series = []
        for index, key in enumerate(keys):
            points = {b: [] for b in BACKENDS}
            for r in chosen:
                if _series_key(r) != key:
                    continue
                n = r.get("n_pairs") if isinstance(r.get("n_pairs"), int) else None
                lo, hi = r.get("ci_low_pct"), r.get("ci_high_pct")
                points[r["backend"]].append([
                    int(r.get("batch_size") or 1), _r(r["obs_pct"]),
                    None if lo is None else _r(lo), None if hi is None else _r(hi), n,
                ])
            for b in BACKENDS:
                points[b].sort(key=lambda p: (p[0], p[1], p[2] is None, p[2] or 0.0, p[3] or 0.0, p[4] or 0))
            series.append({"label": key[1], "params_b": _r(key[0]) if key[0] else None,
                           "colour": SERIES_COLOURS[index % len(SERIES_COLOURS)],
                           "marker": SERIES_MARKERS[(index // len(SERIES_COLOURS)) % len(SERIES_MARKERS)],
                           "points": points})
        spec = {"render_version": RENDER_VERSION, "kind": "batch", "arch": arch, "precision": precision,
                "batches": sorted(batches), "series": series,
                "n_points": sum(len(s["points"][b]) for s in series for b in BACKENDS),
                "not_drawn_shorter": shorter.get((arch, precision), 0)}
        spec["y_range"] = _y_range(spec)
        spec["y_ranges"], spec["shared_y"] = _panel_ranges(spec)
        spec["x_range"] = [_r(min(batches) / 1.6), _r(max(batches) * 1.6)]
        specs[plot_name(arch, precision)] = spec
    return specs


def _panel_ranges(spec: dict) -> tuple[dict[str, list[float]], bool]:
    """Each panel's y range and whether they are one shared range: shared unless a panel with points
    would span less than SHARE_Y_MIN of the shared range."""
    shared = spec["y_range"]
    own = {b: _y_range(spec, (b,)) for b in BACKENDS
           if any(s["points"][b] for s in spec["series"])}
    squeezed = any((hi - lo) < SHARE_Y_MIN * (shared[1] - shared[0]) for lo, hi in own.values())
    if not squeezed:
        return {b: shared for b in BACKENDS}, True
    return {b: own.get(b, shared) for b in BACKENDS}, False


def _y_range(spec: dict, backends: tuple[str, ...] = BACKENDS) -> list[float]:
    ys = [0.0]
    for s in spec["series"]:
        for b in backends:
            for p in s["points"][b]:
                ys.extend(v for v in (p[1], p[2], p[3]) if v is not None)
    lo, hi = min(ys), max(ys)
    top = max((hi - lo) * 0.08, 5.0)
    # room under the lowest interval for the longest upright n label: its share of the panel's height,
    # made a share of the y range (the labels of a batch all hang from its lowest point)
    chars = max((len(text) for s in spec["series"] for b in backends
                 for _b, text, _lo, _hi in _n_labels(s["points"][b])), default=0)
    frac = min((3.0 + LABEL_CHAR_PT * chars) / PANEL_HEIGHT_PT, 0.4)
    room = max((hi - lo) * LABEL_ROOM, (hi - lo + top) * frac / (1.0 - frac), 5.0)
    return [_r(math.floor((lo - room) / 5) * 5), _r(math.ceil((hi + top) / 5) * 5)]


def _means(points: list[list]) -> list[tuple[int, float]]:
    """(batch, mean ΔE% of the runs at it), in batch order: what a series' line joins."""
    by_batch: dict[int, list[float]] = {}
    for p in points:
        by_batch.setdefault(p[0], []).append(p[1])
    return [(b, sum(v) / len(v)) for b, v in sorted(by_batch.items())]


def _offset(index: int, count: int, step: float) -> float:
    """A fixed multiplicative x offset, `step` octaves apart, so points at one batch stay apart."""
    return 2.0 ** (step * (index - (count - 1) / 2)) if count > 1 else 1.0


def _placed(pts: list[list], series_x: float) -> list[float]:
    """Each run's x: the series' own column, with the runs at one batch spread a little inside it, so a
    wide interval does not hide a narrow one drawn at the same place."""
    counts: dict[int, int] = {}
    for p in pts:
        counts[p[0]] = counts.get(p[0], 0) + 1
    xs, done = [], {}
    for p in pts:
        j = done.get(p[0], 0)
        done[p[0]] = j + 1
        xs.append(p[0] * series_x * _offset(j, counts[p[0]], RUN_STEP_OCTAVES))
    return xs


def _n_labels(pts: list[list]) -> list[tuple[int, str, float, float]]:
    """One label per batch of a series: (batch, "n=4,4" over its runs, lowest and highest point drawn)."""
    out = []
    for batch in sorted({p[0] for p in pts}):
        runs = [p for p in pts if p[0] == batch]
        text = "n=" + ",".join(str(p[4]) if p[4] is not None else "?" for p in runs)
        lows = [p[2] if p[2] is not None else p[1] for p in runs]
        highs = [p[3] if p[3] is not None else p[1] for p in runs]
        out.append((batch, text, min(lows), max(highs)))
    return out


def _label_floors(spec: dict, backend: str) -> dict[int, float]:
    """Per batch, the lowest point drawn in the panel (interval end, or the mean without one): every
    series' n label at that batch hangs from this one line, side by side in the series' columns, so a
    label never runs over a neighbouring series' points or interval."""
    floors: dict[int, float] = {}
    for s in spec["series"]:
        for batch, _text, low, _high in _n_labels(s["points"][backend]):
            floors[batch] = min(low, floors.get(batch, low))
    return floors


def legend_rows(spec: dict) -> int:
    return math.ceil((len(spec["series"]) + 1) / LEGEND_COLUMNS)  # the series, then the CI entry


def layout(spec: dict) -> dict:
    """Figure size and the panels', legend's, title's and note's places (figure fractions): the panels
    keep their size in inches, the figure grows under them by one row's height per legend row past two."""
    extra_in = max(0, legend_rows(spec) - LEGEND_ROWS_IN_BASE) * LEGEND_ROW_IN
    width_in, base_in = FIG_SIZE_IN
    height_in = base_in + extra_in
    rects = [(x, (y * base_in + extra_in) / height_in, w, h * base_in / height_in)
             for x, y, w, h in PANEL_RECTS]
    return {"size_in": (width_in, height_in), "panels": rects,
            "legend_top": (LEGEND_TOP_IN + extra_in) / height_in, "note_y": NOTE_Y_IN / height_in,
            "title_y": 1.0 - TITLE_FROM_TOP_IN / height_in}


def _draw(spec: dict) -> Figure:
    place = layout(spec)
    fig = Figure(figsize=place["size_in"], dpi=DPI)
    fig.patch.set_facecolor("white")
    axes = [fig.add_axes(rect) for rect in place["panels"]]
    count = len(spec["series"])
    step = min(SERIES_STEP_OCTAVES, SERIES_SPAN_OCTAVES / max(count, 1))
    for ax, backend in zip(axes, BACKENDS, strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xlim(*spec["x_range"])
        ax.set_ylim(*spec["y_ranges"][backend])
        ax.set_xticks(spec["batches"], [str(b) for b in spec["batches"]])
        ax.minorticks_off()
        ax.axhline(0.0, color="#555555", linewidth=0.8, zorder=1)
        ax.grid(True, which="major", color="#e6e6e6", linewidth=0.6, zorder=0)
        own = "" if spec["shared_y"] else " · own y scale"
        ax.set_title(PANEL_TITLES[backend] + own, fontsize=9.5)
        ax.set_xlabel("batch size (prompts decoded together)")
        drawn = 0
        floors = _label_floors(spec, backend)
        for index, s in enumerate(spec["series"]):
            pts = s["points"][backend]
            if not pts:
                continue
            drawn += len(pts)
            series_x = _offset(index, count, step)
            xs = _placed(pts, series_x)
            with_ci = [(x, p) for x, p in zip(xs, pts, strict=True) if p[2] is not None and p[3] is not None]
            if with_ci:
                ax.vlines([x for x, _ in with_ci], [p[2] for _, p in with_ci], [p[3] for _, p in with_ci],
                          colors=s["colour"], linewidths=1.1, zorder=3)
            means = _means(pts)
            ax.plot([b * series_x for b, _ in means], [m for _, m in means], color=s["colour"],
                    linewidth=0.9, alpha=0.6, zorder=3)
            ax.scatter(xs, [p[1] for p in pts], marker=s["marker"], s=34, facecolors=s["colour"],
                       edgecolors="white", linewidths=0.6, zorder=4)
            # n upright in the series' own column, under the panel's lowest point at that batch (the y
            # range leaves room for it): one label per batch, side by side with its neighbours' labels
            for batch, text, _low, _high in _n_labels(pts):
                ax.annotate(text, (batch * series_x, floors[batch]), xytext=(0, -3),
                            textcoords="offset points", rotation=90, ha="center", va="top", fontsize=LABEL_PT,
                            color="#444444", zorder=5)
        if not drawn:
            ax.text(0.5, 0.5, f"no {backend} replications yet", transform=ax.transAxes, ha="center",
                    va="center", fontsize=8.5, color="#777777")
    axes[0].set_ylabel(f"ΔE% {spec['precision']} vs FP16 (energy per generated token)")
    if spec["shared_y"]:
        axes[1].tick_params(labelleft=False)
    title = f"{spec['arch']} · {spec['precision']}: ΔE% against batch size, eager and static side by side"
    fig.suptitle(title, fontsize=10.5, y=place["title_y"])
    note = ("points: mean paired ΔE% with its 95 % CI; n = paired blocks; colour = model; "
            "whole 256-token generations only")
    if spec.get("not_drawn_shorter"):
        note += f" ({spec['not_drawn_shorter']} replication(s) of shorter generations not drawn)"
    fig.text(0.01, place["note_y"], note, fontsize=7.5, color="#444444", ha="left", va="bottom")
    handles = [Line2D([], [], color=s["colour"], marker=s["marker"], linewidth=0.9, markersize=5.5,
                      markeredgecolor="white", label=s["label"]) for s in spec["series"]]
    handles.append(Line2D([], [], color="#555555", linewidth=1.1, label="95 % CI"))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, place["legend_top"]),
               ncol=LEGEND_COLUMNS, frameon=False, fontsize=7.5)
    return fig


def render(spec: dict, fmt: str) -> bytes:
    """PNG or SVG bytes; same spec, same bytes (saved as every gallery figure is)."""
    return render_with(_draw, spec, fmt)
