"""Drawing one size plot from its spec with matplotlib, and the byte-identical PNG/SVG save every gallery
figure goes through."""

from __future__ import annotations

import io

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from gallery.plots import AXES_RECT, DPI, FIG_SIZE_IN, spec_round

# Okabe-Ito colours: distinguishable under the common colour-vision deficiencies, similar visual weight.
COLOURS = {"confirmation": "#0072b2", "contradiction": "#d55e00", "ungraded": "#999999",
           "self-anchored": "#444444"}
ANCHOR_COLOUR = "#222222"
# Each backend's curve, band and anchors in a colour of its own (never a verdict colour): eager and CUDA
# graphs differ in sign on Hopper, so the two must never read as one curve.
BACKEND_STYLE = {"eager": ("#08306b", "#9ecae1", "-", "eager"),
                 "static": ("#1b7837", "#a6dba0", "-.", "CUDA-graph")}
MARKER_AREA_PT2 = 42  # one size for every replication marker: equal prominence is a rule
# Size ticks in billions of parameters, labelled plainly ("0.5 B", "7 B"), where inside the x range.
SIZE_TICKS_B = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 5, 7, 10, 14, 20, 30, 50, 70, 100, 200, 500, 1000)
RC = {
    "svg.hashsalt": "quantjoule-gallery",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "path.simplify": False,
    "axes.unicode_minus": False,
}


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


def figure(spec: dict) -> Figure:
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
            ax.annotate(f"crossover ≈ {size_label(spec_round(cross, 2))}", (cross, 1.0),
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
    return render_with(figure, spec, fmt)
