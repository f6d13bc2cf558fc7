"""ΔE% against batch size, eager and static side by side: specs from fixture records (TEST FIXTURES, not
measurements), deterministic renders, the README section and the site's figures, filter and columns, and
the same site in a real headless Chromium."""

from __future__ import annotations

import io
import json

import pytest
from matplotlib import image as mpimg

from gallery import batch
from gallery.rows import build_rows
from tests.gallery.helpers import write_repo
from tests.support.gallery_records import make_record, make_report

MODELS = (("Qwen2-0.5B", 0.494), ("Qwen2-1.5B", 1.544))
GRID = [(m, p, backend, b) for m, p in MODELS for backend in ("eager", "static") for b in (1, 8, 32)]


@pytest.fixture(scope="module")
def batch_records(curves) -> list[dict]:
    out = []
    for i, (model, size, backend, b) in enumerate(GRID):
        # an effect that shrinks with the batch, so the plot has something to show
        rep = make_report(arch="hopper", model=model, params_b=size, precision="NF4", delta_pct=30.0 / b - 5,
                          seed=500 + i, backend=backend, batch_size=b, blocks=6 + i % 3)
        when = f"2026-10-{1 + i:02d}T00:00:00Z"
        out.append(make_record(rep, issue=500 + i, curves=curves, submitted_at=when))
    # one INT8 with the outlier decomposition off: a series of its own, never mixed with LLM.int8()
    rep = make_report(arch="hopper", model="Qwen2-0.5B", params_b=0.494, precision="INT8", delta_pct=80.0,
                      seed=600, backend="static", batch_size=8)
    rep["workload"]["int8_outlier_threshold"] = 0.0
    out.append(make_record(rep, issue=600, curves=curves, submitted_at="2026-10-20T00:00:00Z"))
    rep = make_report(arch="hopper", model="Qwen2-0.5B", params_b=0.494, precision="INT8", delta_pct=150.0,
                      seed=601, backend="eager", batch_size=1)
    out.append(make_record(rep, issue=601, curves=curves, submitted_at="2026-10-21T00:00:00Z"))
    return out


@pytest.fixture(scope="module")
def specs(batch_records, curves):
    rows, _skipped, _records = build_rows(batch_records, curves)
    return rows, batch.batch_specs(rows)


def test_a_batch_plot_per_arch_and_precision_that_spans_conditions(specs, records, curves):
    rows, found = specs
    assert sorted(found) == ["hopper-INT8-batch", "hopper-NF4-batch"]
    nf4 = found["hopper-NF4-batch"]
    assert nf4["batches"] == [1, 8, 32] and [s["label"] for s in nf4["series"]] == [
        "Qwen2-0.5B (0.494 B)", "Qwen2-1.5B (1.544 B)"]
    for series in nf4["series"]:
        for backend in ("eager", "static"):
            assert [p[0] for p in series["points"][backend]] == [1, 8, 32]
    # every point carries the report's own mean, 95 % CI and n
    by_issue = {r["issue"]: r for r in rows}
    first = nf4["series"][0]["points"]["eager"][0]
    row = by_issue[500]
    assert first == [1, pytest.approx(row["obs_pct"], rel=1e-5), pytest.approx(row["ci_low_pct"], rel=1e-5),
                     pytest.approx(row["ci_high_pct"], rel=1e-5), row["n_pairs"]]
    assert first[2] < first[1] < first[3] and first[4] == 6
    int8 = found["hopper-INT8-batch"]
    assert [s["label"] for s in int8["series"]] == [
        "Qwen2-0.5B (0.494 B)", "Qwen2-0.5B (0.494 B), INT8 threshold 0"]
    # the shared fixture population is all batch 1 and eager: no batch plot at all
    population_rows, _, _ = build_rows(records, curves)
    assert batch.batch_specs(population_rows) == {}


def test_rows_carry_the_condition(specs):
    rows, _ = specs
    row = next(r for r in rows if r["issue"] == 600)
    assert (row["backend"], row["batch_size"], row["tokens_per_run"], row["int8_outlier_threshold"]) == (
        "static", 8, 256, 0.0)
    assert "batch 8" in row["condition"]


def test_renders_are_byte_identical_and_sized(specs):
    _, found = specs
    spec = found["hopper-NF4-batch"]
    png = batch.render(spec, "png")
    assert png == batch.render(json.loads(json.dumps(spec)), "png")
    assert batch.render(spec, "svg") == batch.render(spec, "svg")
    assert mpimg.imread(io.BytesIO(png)).shape[:2] == (540, 1000)


def test_submission_text_cannot_reach_matplotlib_as_mathematics(curves):
    rep = make_report(arch="ada", model="x$\\frac{1}{0}$<b>", params_b=1.0, precision="NF4", delta_pct=5.0,
                      seed=7, backend="static")
    eager = make_report(arch="ada", model="x$\\frac{1}{0}$<b>", params_b=1.0, precision="NF4", delta_pct=5.0,
                        seed=8)
    recs = [make_record(r, issue=700 + i, curves=curves, submitted_at="2026-10-01T00:00:00Z")
            for i, r in enumerate((rep, eager))]
    rows, _, _ = build_rows(recs, curves)
    spec = batch.batch_specs(rows)["ada-NF4-batch"]
    assert spec["series"][0]["label"] == "xfrac10b (1 B)"
    assert batch.render(spec, "png")[:4] == b"\x89PNG"


def test_the_gallery_files_and_site_show_the_batch_plots(tmp_path, batch_records, curves):
    from gallery import render_files
    from gallery.builder import build

    files = render_files(batch_records, curves)
    assert "gallery/plots/hopper-NF4-batch.png" in files and "gallery/plots/hopper-NF4-batch.svg" in files
    readme = files["gallery/README.md"].decode()
    assert "## ΔE% against batch size, eager and static" in readme
    assert "12 replication(s)](plots/hopper-NF4-batch.png)" in readme
    root = write_repo(tmp_path, batch_records, curves)
    build(root)
    site = root / "gallery" / "site"
    png = files["gallery/plots/hopper-NF4-batch.png"]
    assert (site / "plots" / "hopper-NF4-batch.png").read_bytes() == png
    index = (site / "index.html").read_text()
    assert 'id="plot-hopper-NF4-batch"' in index and 'id="filter-batch_size"' in index
    # the img reserves the PNG's own box (its height grows with the legend)
    height, width = mpimg.imread(io.BytesIO(png)).shape[:2]
    assert f'hopper-NF4-batch.png" width="{width}" height="{height}"' in index
    data = (site / "data" / "gallery.js").read_text()
    assert '"batch_size"' in data and '"condition"' in data
    # an incremental build reuses them, and once only batch-1 eager records are left they are removed
    again = build(root, incremental=True)
    assert again.plots_reused >= 2
    for path in (root / "replications").rglob("*.json"):
        workload = json.loads(path.read_text())["report"]["workload"]
        if workload["batch_size"] != 1 or workload["backend"] != "eager":
            path.unlink()
    build(root)
    assert not list((root / "gallery" / "plots").glob("*-batch.*"))
    assert "against batch size" not in (root / "gallery" / "README.md").read_text()


@pytest.mark.browser
@pytest.mark.slow
def test_the_batch_filter_and_plot_in_a_browser(tmp_path, batch_records, curves, browser, serve):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from gallery.builder import build

    root = write_repo(tmp_path, batch_records, curves)
    build(root)
    base = serve(root / "gallery" / "site")
    browser.get(base + "index.html")
    WebDriverWait(browser, 30).until(
        lambda d: d.execute_script("return document.body.getAttribute('data-table-ready') === 'true'"))
    select = Select(browser.find_element(By.ID, "filter-batch_size"))
    assert [o.get_attribute("value") for o in select.options] == ["", "1", "8", "32"]  # numeric order
    select.select_by_value("8")
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#replications tbody tr'))"
        ".map(tr => tr.cells[8].textContent)")
    assert len(cells) == 5 and all("batch 8" in c for c in cells)
    loaded = browser.execute_script(
        "var img = document.querySelector('#plot-hopper-NF4-batch img');"
        "return img.complete && img.naturalWidth")
    assert loaded == 1000
    search = browser.find_element(By.ID, "filter-text")
    select.select_by_value("")
    search.send_keys("batch 32")  # the condition is searchable
    rows = browser.execute_script("return document.querySelectorAll('#replications tbody tr').length")
    assert rows == 4


def test_the_size_plots_keep_batch_1_points_only(batch_records, curves):
    from gallery.render import compose

    model = compose(batch_records, curves)
    points = model.specs["hopper-NF4"]["points"]
    assert len(points) == 4  # two models x two backends at batch 1; batches 8 and 32 only on the batch plot
    assert model.batch_specs["hopper-NF4-batch"]["n_points"] == 12


def test_the_browser_checker_reads_the_condition_like_python(tmp_path, curves):
    """Batched, static and threshold-0 INT8 reports: the in-browser checker gives the problems and the
    verdict (QJ309 condition refusals included) that Python gives."""
    from gallery.rules import rules
    from tests.gallery.test_gallery_js_parity import _compare, run_js

    texts = []
    for i, (backend, b, precision) in enumerate(
        (be, b, p) for be in ("eager", "static") for b in (1, 8, 32) for p in ("NF4", "INT8")
    ):
        rep = make_report(arch="hopper", model="Qwen2-1.5B", params_b=1.544, precision=precision,
                          delta_pct=20.0, seed=800 + i, backend=backend, batch_size=b)
        if precision == "INT8":
            rep["workload"]["int8_outlier_threshold"] = 0.0 if i % 4 == 1 else 6.0
        texts.append(json.dumps(rep))
    bad = json.loads(texts[1])
    bad["workload"]["int8_outlier_threshold"] = -1
    texts.append(json.dumps(bad))
    js = run_js(tmp_path, {"rules": rules(), "curves": curves, "texts": texts})
    assert _compare(texts, js, curves) == []
    assert any("batch 8" in (v["verdict"] or {}).get("condition", "") for v in js)
    assert any(p["code"] == "QJ105" for p in js[-1]["problems"])


def test_only_whole_256_token_generations_are_drawn_and_the_rest_are_counted(batch_records, curves):
    # a 32-token window is another quantity (its ratio is not the 256-token one): drawn beside the grid it
    # would read as a batch or backend effect, so it is left out and said to be
    rep = make_report(arch="hopper", model="Qwen2-0.5B", params_b=0.494, precision="NF4", delta_pct=60.0,
                      seed=650, backend="eager", batch_size=1, tokens=32)
    short = make_record(rep, issue=650, curves=curves, submitted_at="2026-10-25T00:00:00Z")
    rows, _, _ = build_rows([*batch_records, short], curves)
    spec = batch.batch_specs(rows)["hopper-NF4-batch"]
    assert spec["not_drawn_shorter"] == 1 and spec["n_points"] == 12
    drawn = [p[1] for s in spec["series"] for p in s["points"]["eager"]]
    assert all(abs(v - 60.0) > 10 for v in drawn)
    assert batch.render(spec, "png") != batch.render({**spec, "not_drawn_shorter": 0}, "png")
    assert batch._means([[1, 10.0, None, None, 4], [8, 2.0, None, None, 4], [1, 20.0, None, None, 4]]) == [
        (1, 15.0), (8, 2.0)]


def test_a_batch_replications_page_shows_it_against_batch_not_ringed_on_the_size_curve(batch_records, curves):
    from gallery.render import compose, page_bytes

    model = compose(batch_records, curves)
    by_issue = {r["issue"]: r for r in model.rows}
    records = {r["issue"]: r for r in batch_records}
    batched = page_bytes(by_issue[501], records[501], model, curves).decode()  # Qwen2-0.5B eager batch 8
    assert 'id="plot-hopper-NF4-batch"' in batched and "<circle" not in batched
    assert "This replication is batch 8" in batched and "in the eager panel" in batched
    single = page_bytes(by_issue[500], records[500], model, curves).decode()  # batch 1: ringed on its curve
    assert "<circle" in single and "The ringed point is this replication" in single
    rep = make_report(arch="hopper", model="Qwen2-0.5B", params_b=0.494, precision="NF4", delta_pct=60.0,
                      seed=651, backend="eager", batch_size=1, tokens=32)
    short = make_record(rep, issue=651, curves=curves, submitted_at="2026-10-26T00:00:00Z")
    model = compose([*batch_records, short], curves)
    row = next(r for r in model.rows if r["issue"] == 651)
    page = page_bytes(row, short, model, curves).decode()
    assert "<circle" not in page and "it measured 32-token generations" in page


def test_repeat_runs_at_one_batch_stand_apart_and_share_one_n_label():
    # [batch, ΔE%, CI low, CI high, n]: two runs of a model at batch 1 (one wide, one narrow), one at 8
    pts = [[1, 23.3, -16.0, 70.0, 4], [1, 11.2, -6.3, 28.7, 5], [8, 40.0, None, None, None]]
    xs = batch._placed(pts, series_x=1.0)
    assert xs[0] != xs[1] and xs[0] < 1.0 < xs[1] and xs[2] == 8.0  # the narrow one is not hidden
    assert batch._n_labels(pts) == [(1, "n=4,5", -16.0, 70.0), (8, "n=?", 40.0, 40.0)]
    # five series at a batch take their own columns, narrower than the octave between batch 4 and 8
    step = min(batch.SERIES_STEP_OCTAVES, batch.SERIES_SPAN_OCTAVES / 5)
    cols = [batch._offset(i, 5, step) for i in range(5)]
    assert cols == sorted(cols) and len(set(cols)) == 5 and cols[-1] / cols[0] < 2.0


def test_the_y_range_leaves_room_under_the_lowest_interval_for_its_label(specs):
    _rows, found = specs
    for spec in found.values():
        lows = [p[2] if p[2] is not None else p[1]
                for s in spec["series"] for pts in s["points"].values() for p in pts]
        highs = [p[3] if p[3] is not None else p[1]
                 for s in spec["series"] for pts in s["points"].values() for p in pts]
        span = max(highs + [0.0]) - min(lows + [0.0])
        assert min(lows) - spec["y_range"][0] >= batch.LABEL_ROOM * span


def test_every_series_label_at_a_batch_hangs_from_the_panels_lowest_point_with_room_for_the_longest():
    # two series at batch 1 (the second reaching lower), one of them also at 8; eager panel only
    wide = [[1, 23.3, -16.0, 70.0, 4], [1, 29.2, 20.0, 38.0, 19], [1, 11.2, -6.3, 28.7, 4],
            [1, 34.0, -2.0, 70.0, 13], [8, 40.0, 35.0, 45.0, 15]]
    narrow = [[1, 20.5, 18.9, 22.1, 4]]
    spec = {"series": [{"points": {"eager": wide, "static": []}},
                       {"points": {"eager": narrow, "static": []}}]}
    assert batch._label_floors(spec, "eager") == {1: -16.0, 8: 35.0}
    assert batch._label_floors(spec, "static") == {}
    lo, hi = batch._y_range(spec)
    # "n=4,19,4,13" hangs from -16: the range under it holds the label's length as a share of the panel
    chars = len("n=4,19,4,13")
    need = (3.0 + batch.LABEL_CHAR_PT * chars) / batch.PANEL_HEIGHT_PT
    assert (-16.0 - lo) / (hi - lo) >= need > batch.LABEL_ROOM / (1 + batch.LABEL_ROOM)


def _spec(series_points: list[dict], label: str = "Qwen2.5-3B (3.0859 B), INT8 threshold 0") -> dict:
    """A batch spec made the way batch_specs makes it, from plain [batch, ΔE%, low, high, n] points."""
    series = [{"label": f"{label} #{i}", "params_b": 1.0, "colour": batch.SERIES_COLOURS[i % 8],
               "marker": batch.SERIES_MARKERS[(i // 8) % 8], "points": pts}
              for i, pts in enumerate(series_points)]
    spec = {"render_version": batch.RENDER_VERSION, "kind": "batch", "arch": "hopper", "precision": "INT8",
            "batches": [1, 8, 32], "series": series, "not_drawn_shorter": 0, "x_range": [0.625, 51.2]}
    spec["y_range"] = batch._y_range(spec)
    spec["y_ranges"], spec["shared_y"] = batch._panel_ranges(spec)
    return spec


def test_a_panel_whose_points_would_be_squeezed_gets_its_own_y_scale(specs):
    # eager LLM.int8() near +200 %, threshold-0 INT8 under graphs near 0: one shared scale would flatten
    # the static panel's 17 pp of differences into a twentieth of its height
    eager = {"eager": [[1, 200.0, 150.0, 250.0, 4]], "static": []}
    static = {"eager": [],
              "static": [[1, 5.2, 4.4, 6.0, 5], [8, 6.5, 6.1, 6.9, 5], [32, -11.6, -11.9, -11.3, 5]]}
    spec = _spec([eager, static])
    assert spec["shared_y"] is False
    lo_e, hi_e = spec["y_ranges"]["eager"]
    lo_s, hi_s = spec["y_ranges"]["static"]
    assert lo_e < 150.0 and hi_e > 250.0 and lo_s < -11.9 and hi_s > 6.9
    assert hi_s - lo_s < 0.5 * (spec["y_range"][1] - spec["y_range"][0])
    # panels whose spans are alike keep one scale, so eager and static read against the same ticks
    for found in specs[1].values():
        if found["shared_y"]:
            assert found["y_ranges"] == {"eager": found["y_range"], "static": found["y_range"]}
    nf4 = specs[1]["hopper-NF4-batch"]
    assert nf4["shared_y"] is True


@pytest.mark.parametrize("n_series", [3, 8, 12])
def test_the_legend_stays_between_the_panels_labels_and_the_note_however_many_series(n_series):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from gallery.draw import RC

    pts = [{"eager": [[1, 20.0 + i, 10.0 + i, 30.0 + i, 4]], "static": [[8, -5.0 - i, -6.0 - i, -4.0 - i, 5]]}
           for i in range(n_series)]
    spec = _spec(pts)
    rows = batch.legend_rows(spec)
    place = batch.layout(spec)
    # the panels keep their height in inches; the figure grows by one row's height per row past two
    assert place["size_in"][1] == pytest.approx(batch.FIG_SIZE_IN[1]
                                                + max(0, rows - 2) * batch.LEGEND_ROW_IN)
    assert place["panels"][0][3] * place["size_in"][1] == pytest.approx(
        batch.PANEL_RECTS[0][3] * batch.FIG_SIZE_IN[1])
    import matplotlib

    with matplotlib.rc_context(RC):
        fig = batch._draw(spec)
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        legend = fig.legends[0].get_window_extent(renderer)
        note = next(t for t in fig.texts if t.get_text().startswith("points:")).get_window_extent(renderer)
        xlabels = [ax.xaxis.label.get_window_extent(renderer) for ax in fig.axes]
    assert note.y1 < legend.y0, (note, legend)
    assert legend.y1 < min(b.y0 for b in xlabels), (legend, xlabels)
