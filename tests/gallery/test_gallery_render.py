"""render_files: the committed Markdown gallery and its plots, deterministic and escaped."""

from __future__ import annotations

import copy
import random
import re

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex

from gallery import draw, plots, render_files
from gallery.render import compose, readme_bytes
from schema.records import record_id
from tests.support.gallery_records import make_record, make_report


def _table_rows(readme: str) -> list[list[str]]:
    lines = readme.split("## Every replication", 1)[1].splitlines()
    body = [line for line in lines if line.startswith("| ") and not line.startswith("| date")]
    return [line.split(" | ") for line in body]


@pytest.fixture(scope="module")
def model(records, curves):
    return compose(records, curves)


def test_same_records_in_any_order_give_byte_identical_files(records, curves, rendered, small):
    few, few_curves = small
    shuffled = list(few)
    random.Random(3).shuffle(shuffled)
    assert render_files(shuffled, few_curves) == render_files(few, few_curves)
    first = rendered
    assert "gallery/README.md" in first
    names = {path for path in first if path.startswith("gallery/plots/")}
    # One PNG and one SVG per (arch, precision) that has a curve or a record.
    pairs = {(g["arch"], g["precision"]) for g in curves["groups"].values()}
    pairs |= {
        (r["report"]["system_under_test"]["gpu_arch"], r["report"]["workload"]["precision"])
        for r in records
        if r["report"]["results"]["basis"] == "measured"
    }
    assert names == {f"gallery/plots/{a}-{p}.{ext}" for a, p in pairs for ext in ("png", "svg")}


def test_plots_carry_no_dates_or_software_stamps(rendered):
    files = rendered
    for path, content in files.items():
        if path.endswith(".png"):
            assert content.startswith(b"\x89PNG")
            assert b"Software" not in content and b"Creation Time" not in content and b"tIME" not in content
        elif path.endswith(".svg"):
            assert b"<dc:date>" not in content and b"Matplotlib v" not in content


def test_readme_counts_sit_side_by_side_and_match_the_rows(rendered):
    readme = rendered["gallery/README.md"].decode()
    header, rule, values = readme.split("| confirmations", 1)[1].splitlines()[:3]
    assert header.strip() == "| contradictions | self-anchored (not independent) | ungraded |"
    assert rule.count("---:") == 4
    confirmations, contradictions, anchored, ungraded = (int(v) for v in values.strip("| ").split(" | "))
    rows = _table_rows(readme)
    verdicts = [row[1] for row in rows]
    assert (confirmations, contradictions, ungraded) == (
        verdicts.count("confirmation"),
        verdicts.count("contradiction"),
        verdicts.count("ungraded"),
    )
    assert contradictions > 0 and confirmations > 0, "the fixtures must exercise both verdicts"
    # no fixture anchors a curve, so every row is in one of the three label counts
    assert anchored == 0 and len(rows) == confirmations + contradictions + ungraded


def test_a_self_anchored_verdict_is_counted_apart_never_as_a_confirmation():
    from gallery.rows import counts

    rows = [{"label": "confirmation", "qualifiers": ["self-anchored"]},
            {"label": "contradiction", "qualifiers": ["self-anchored", "opposite-sign"]},
            {"label": "confirmation", "qualifiers": []},
            {"label": "ungraded", "qualifiers": ["self-anchored"]}]
    assert counts(rows) == {"confirmation": 1, "contradiction": 0, "self-anchored": 2, "ungraded": 1}


def test_readme_lists_every_measured_record_newest_first_with_links(records, rendered):
    readme = rendered["gallery/README.md"].decode()
    rows = _table_rows(readme)
    measured = [r for r in records if r["report"]["measurement_source"] != "simulated"]
    assert len(rows) == len(measured)
    dates = [row[0].lstrip("| ") for row in rows]
    assert dates == sorted(dates, reverse=True)
    for record in measured:
        assert f"(https://github.com/quantjoule/quantjoule/issues/{record['issue']})" in readme
        assert f"head%3Areplication%2Fissue-{record['issue']})" in readme


def test_simulated_records_are_left_out_and_said_so(records, rendered):
    readme = rendered["gallery/README.md"].decode()
    simulated = next(r for r in records if r["report"]["measurement_source"] == "simulated")
    assert "1 record(s) are not shown because they are not NVML measurements" in readme
    assert f"issues/{simulated['issue']})" not in readme


def test_readme_escapes_every_piece_of_submission_text(records, rendered):
    readme = rendered["gallery/README.md"].decode()
    row = next(r for r in _table_rows(readme) if "hostile" in r[13])
    assert len(row) == 16, "a pipe in the handle must not add a column"
    assert "<script>" not in readme and "](javascript" not in readme
    assert "@octocat" not in readme and "@\u200boctocat" in readme
    assert "[x](" not in readme


def _spec(model, name):
    return model.specs[name]


def _point_collections(fig):
    return [c for c in fig.axes[0].collections if isinstance(c, PathCollection) and len(c.get_offsets())]


def test_confirmations_and_contradictions_have_equal_marker_size(model):
    seen = {}
    for spec in model.specs.values():
        fig = draw.figure(spec)
        for coll in _point_collections(fig):
            colour = to_hex(coll.get_facecolors()[0])
            seen.setdefault(colour, set()).update(float(s) for s in coll.get_sizes())
    confirmation, contradiction = draw.COLOURS["confirmation"], draw.COLOURS["contradiction"]
    assert seen[confirmation] == seen[contradiction] == {draw.MARKER_AREA_PT2}


def test_anchors_are_filled_for_two_trials_and_hollow_for_one(model):
    spec = _spec(model, "ada-NF4")
    fig = draw.figure(spec)
    anchors = [c for c in _point_collections(fig) if to_hex(c.get_edgecolors()[0]) == draw.ANCHOR_COLOUR]
    by_face = {to_hex(c.get_facecolors()[0]): len(c.get_offsets()) for c in anchors}
    expected = spec["curves"][0]["anchors"]
    assert by_face[draw.ANCHOR_COLOUR] == sum(a["n_trials"] >= 2 for a in expected)
    assert by_face["#ffffff"] == sum(a["n_trials"] == 1 for a in expected)


def test_random_init_and_legacy_points_have_their_own_edges(model):
    styles = set()
    for spec in model.specs.values():
        for coll in _point_collections(draw.figure(spec)):
            if to_hex(coll.get_facecolors()[0]) in draw.COLOURS.values():
                dashed = coll.get_linestyles()[0][1] is not None
                styles.add((dashed, float(coll.get_linewidths()[0])))
    assert (True, 1.3) in styles, "random-init points: dotted edge"
    assert (False, 2.0) in styles, "legacy points: heavy edge"
    assert (False, 0.6) in styles, "pretrained v2 points: thin edge"


def test_hopper_curves_are_its_own_with_random_init_anchors_marked_and_backends_apart(model):
    spec = _spec(model, "hopper-NF4")
    by_backend = {c["backend"]: c for c in spec["curves"]}
    assert sorted(by_backend) == ["eager", "static"]  # eager and CUDA graphs, drawn side by side
    for curve in spec["curves"]:
        assert curve["borrowed_from"] is None and curve["source"] == "quantjoule-hopper"
        assert curve["anchors"] and all(a["random_init"] for a in curve["anchors"])
    ax = draw.figure(spec).axes[0]
    fitted = [line for line in ax.get_lines() if len(line.get_xdata()) == plots.GRID_POINTS]
    styles = {(line.get_linestyle(), to_hex(line.get_color())) for line in fitted}
    assert styles == {("-", draw.BACKEND_STYLE["eager"][0]), ("-.", draw.BACKEND_STYLE["static"][0])}
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert "eager curve: quantjoule-hopper, random-init" in legend
    assert "CUDA-graph curve: quantjoule-hopper, random-init" in legend
    assert not any("borrowed" in t for t in legend)
    for backend, colour in (("eager", draw.ANCHOR_COLOUR), ("static", draw.BACKEND_STYLE["static"][0])):
        marked = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())
                  and to_hex(c.get_edgecolors()[0]) == colour]
        assert sum(len(c.get_offsets()) for c in marked) == len(by_backend[backend]["anchors"]), backend
    own = draw.figure(_spec(model, "ada-NF4"))
    # one backend on a plot: the label stays as it was (no backend named), in the eager colour
    assert "fitted curve" in [t.get_text() for t in own.legends[0].get_texts()]  # the published source


def test_borrowed_curve_is_dashed_and_labelled(model):
    spec = copy.deepcopy(_spec(model, "hopper-NF4"))
    spec["curves"] = [c for c in spec["curves"] if c["backend"] == "eager"]
    spec["curves"][0].update(borrowed_from="ampere", source=None)  # what a borrowed group's spec holds
    ax = draw.figure(spec).axes[0]
    fitted = [line for line in ax.get_lines() if len(line.get_xdata()) == plots.GRID_POINTS]
    assert [line.get_linestyle() for line in fitted] == ["--"]
    assert "borrowed curve: ampere's fit" in [t.get_text() for t in ax.figure.legends[0].get_texts()]
    own = draw.figure(_spec(model, "ada-NF4")).axes[0]
    assert [
        line.get_linestyle() for line in own.get_lines() if len(line.get_xdata()) == plots.GRID_POINTS
    ] == ["-"]


def test_plot_is_stamped_with_the_curves_version_and_names_both_verdicts_in_the_legend(model, curves):
    fig = draw.figure(_spec(model, "ada-NF4"))
    stamps = [t.get_text() for t in fig.texts]
    assert any(curves["version"] in s and "fit" in s for s in stamps)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "confirmation (|z| ≤ 2)" in labels and "contradiction (|z| > 2)" in labels


def test_curve_and_band_come_from_the_curves_package(model, curves):
    from curves import predict

    spec = _spec(model, "ada-NF4")
    curve = spec["curves"][0]
    for x, mean, low in zip(curve["x"][::30], curve["mean"][::30], curve["low"][::30], strict=True):
        m, sd = predict(curves, curve["key"], x)
        assert np.isclose(mean, m, rtol=1e-5) and np.isclose(low, m - 2 * sd, rtol=1e-5, atol=1e-4)


def test_a_new_record_changes_only_its_own_plot(records, curves, model):
    """Rendering is a pure function of each plot's spec (the determinism test), so equal spec hashes
    mean byte-identical plots: a new record changes the README and its own plot, nothing else."""
    extra = dict(records[0])
    extra["issue"] = 999
    extra["submitted_at"] = "2027-01-01T00:00:00Z"
    after = compose([*records, extra], curves)
    own = record_id(extra).split("/")[0] + "-" + extra["report"]["workload"]["precision"]
    changed = {
        name
        for name, spec in after.specs.items()
        if plots.spec_hash(spec) != plots.spec_hash(model.specs[name])
    }
    assert changed == {own}
    readme = readme_bytes(after, curves).decode()
    assert re.search(r"\| 2027-01-01 \|", readme)
    assert len(_table_rows(readme)) == len(model.rows) + 1


def test_records_graded_against_older_curves_are_regraded_and_say_so(records, curves):
    """The gallery shows each point against the curve it draws: a record filed under another curves
    version is graded again, and its page says what it was at filing."""
    import copy

    from gallery.site import render_page

    record = next(
        r
        for r in records
        if r["verdict"]["label"] == "confirmation" and r["verdict"]["curve_key"] == "ada/NF4/eager"
    )
    moved = copy.deepcopy(curves)
    moved["version"] = "0123456789abcdef"
    group = moved["groups"]["ada/NF4/eager"]
    group["params"]["A"] += 400.0  # the whole curve and its anchors move up 400 points
    for anchor in group["anchors"]:
        anchor["delta_e_pct"] += 400.0
    model = compose([record], moved)
    row = model.rows[0]
    assert row["label"] == "contradiction" and row["filed_label"] == "confirmation"
    assert row["filed_curves_version"] == curves["version"]
    page = render_page(row, record, model.specs["ada-NF4"], moved)
    assert f"graded against curves <code>{curves['version']}</code>: confirmation" in page
    same = compose([record], curves).rows[0]
    assert same["label"] == "confirmation" and same["filed_label"] is None


def test_rows_of_one_date_are_ordered_by_issue_number(curves):
    from gallery.rows import build_rows

    base = make_report(arch="ada", model="Qwen2-7B", params_b=7.616, precision="NF4", delta_pct=-20.0, seed=3)
    # issue 12 was filed earlier that day than issue 9 (edited and re-filed later): the table shows dates
    # only, so within one date it reads by issue number, newest (highest) first like the dates
    times = {9: "2026-11-20T18:00:00Z", 12: "2026-11-20T08:00:00Z", 10: "2026-11-21T09:00:00Z"}
    records = [make_record(base, issue=n, curves=curves, submitted_at=t) for n, t in times.items()]
    rows, _, _ = build_rows(records, curves)
    assert [r["issue"] for r in rows] == [10, 12, 9]


@pytest.mark.parametrize("name", ["ada-NF4", "hopper-NF4", "ampere-INT8"])
def test_the_legend_sits_below_the_axes_and_the_sizes_read_in_b(model, name):
    spec = _spec(model, name)
    fig = draw.figure(spec)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    axes_box = fig.axes[0].get_window_extent(renderer)
    legend_box = fig.legends[0].get_window_extent(renderer)
    assert legend_box.y1 < axes_box.y0, "the legend covers no part of the plot"
    assert fig.bbox.x0 <= legend_box.x0 and legend_box.x1 <= fig.bbox.x1, "the legend fits the figure"
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert ticks and all(re.fullmatch(r"[0-9.]+ B", t) for t in ticks), ticks
    assert "1 B" in ticks


def test_the_crossover_is_labelled_with_its_size(model):
    for spec in model.specs.values():
        texts = [t.get_text() for t in draw.figure(spec).axes[0].texts]
        for curve in spec["curves"]:
            if curve["crossover_b"]:
                assert f"crossover ≈ {draw.size_label(plots.spec_round(curve['crossover_b'], 2))}" in texts
            else:
                assert not any(t.startswith("crossover") for t in texts)


def test_the_size_plot_draws_whole_256_token_generations_and_counts_the_rest(records, curves, model):
    # a 32-token window's ratio is another quantity than the curve's 256-token one: drawn on the curve it
    # would read as a confirmation or a contradiction it is not, so it is left out and said to be
    rep = make_report(arch="ada", model="Qwen2-1.5B", params_b=1.5, precision="NF4", delta_pct=90.0,
                      seed=4321, tokens=32)
    short = make_record(rep, issue=4321, curves=curves, submitted_at="2026-11-30T00:00:00Z")
    after = compose([*records, short], curves)
    spec, before = after.specs["ada-NF4"], model.specs["ada-NF4"]
    assert spec["points"] == before["points"]
    assert spec["stamp"].endswith("1 replication(s) of shorter generations not drawn (see the table)")
    assert "shorter" not in before["stamp"]
    assert len(_table_rows(readme_bytes(after, curves).decode())) == len(model.rows) + 1


def test_a_self_anchored_point_is_its_anchor_with_its_interval_never_a_verdict_marker():
    # a committed campaign run is an anchor of the repository's own hopper curve: graded against it, it
    # confirms nothing, so the size plot draws no confirmation marker for it (its anchor is already there),
    # only its interval, and the footnote says so
    import json
    from pathlib import Path

    from curves.store import load_curves

    real = load_curves()
    root = Path(__file__).resolve().parents[2]
    rep = json.loads((root / "measurements" / "hopper-campaign" / "qwen2.5-3b-d2-nf4" / "energy.json")
                     .read_text(encoding="utf-8"))
    rec = make_record(rep, issue=4400, curves=real, submitted_at="2026-12-01T00:00:00Z")
    spec = compose([rec], real).specs["hopper-NF4"]
    assert [p[4] for p in spec["points"]] == ["self-anchored"]
    assert spec["stamp"].endswith("1 self-anchored replication(s): their anchors, with their 95 % CI")
    fig = draw.figure(spec)
    faces = {to_hex(c.get_facecolors()[0]) for c in _point_collections(fig) if len(c.get_facecolors())}
    assert draw.COLOURS["confirmation"] not in faces and draw.COLOURS["self-anchored"] not in faces
    grey = [c for c in fig.axes[0].collections if isinstance(c, LineCollection)
            and len(c.get_segments()) and to_hex(c.get_colors()[0]) == draw.COLOURS["self-anchored"]]
    assert len(grey) == 1 and len(grey[0].get_segments()) == 1
