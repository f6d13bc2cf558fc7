"""The built site in a real headless Chromium, served from 127.0.0.1: table, plots, filters, sorting, the
check panel (pasted, chosen and dropped energy.json graded like `python -m bot grade`), replication pages."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from gallery.site import CHECKER_FILES
from tests.gallery.helpers import HOSTILE, REPO, write_repo
from tests.support.gallery_records import make_report

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def bot_grade_all(paths: list[Path]) -> dict[str, dict]:
    """What the bot says about each file: one `python -m bot grade --json FILES...` subprocess."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", "grade", "--json", *map(str, paths)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return {answer["file"]: answer for answer in answers}


@pytest.fixture(scope="module")
def site(built, serve) -> tuple[str, Path, object]:
    root, result = built
    return serve(root / "gallery" / "site"), root, result


def open_index(browser, base: str) -> None:
    browser.get(base + "index.html")
    WebDriverWait(browser, 30).until(
        lambda d: d.execute_script("return document.body.getAttribute('data-table-ready') === 'true'")
    )


def visible_rows(browser) -> list[dict]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#replications tbody tr')).map(tr => ({"
        " label: tr.getAttribute('data-label'), cells: Array.from(tr.cells).map(td => td.textContent)}))"
    )


def test_index_has_every_row_and_the_counts(browser, site):
    base, _root, result = site
    open_index(browser, base)
    rows = visible_rows(browser)
    assert len(rows) == result.n_rows == 26
    for label, n in result.counts.items():
        assert browser.find_element(By.ID, f"count-{label}").text == str(n)
        assert sum(r["label"] == label for r in rows) == n
    dates = [r["cells"][0] for r in rows]
    assert dates == sorted(dates, reverse=True), "newest first, never by verdict"
    status = browser.find_element(By.ID, "table-status").text
    assert status.startswith(f"{result.n_rows} of {result.n_rows} replication(s) match")


def test_every_plot_loads(browser, site):
    base, root, _result = site
    open_index(browser, base)
    sizes = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
    )
    assert len(sizes) == len(list((root / "gallery" / "plots").glob("*.png")))
    assert all(complete and width == 800 for _src, complete, width in sizes), sizes


def test_nothing_leaves_the_site(browser, site):
    base, _root, _result = site
    open_index(browser, base)
    urls = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert urls and all(url.startswith(base) for url in urls), urls
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_filters_narrow_the_table(browser, site):
    base, _root, result = site
    open_index(browser, base)
    Select(browser.find_element(By.ID, "filter-label")).select_by_value("contradiction")
    rows = visible_rows(browser)
    assert len(rows) == result.counts["contradiction"] > 0
    assert {r["label"] for r in rows} == {"contradiction"}
    Select(browser.find_element(By.ID, "filter-label")).select_by_value("")
    Select(browser.find_element(By.ID, "filter-arch")).select_by_value("hopper")
    rows = visible_rows(browser)
    assert rows and {r["cells"][7] for r in rows} == {"hopper"}
    Select(browser.find_element(By.ID, "filter-arch")).select_by_value("")
    search = browser.find_element(By.ID, "filter-text")
    search.send_keys("legacy-user")
    rows = visible_rows(browser)
    assert len(rows) == 1 and "legacy" in rows[0]["cells"][11]
    search.clear()
    search.send_keys("no such thing at all")
    assert visible_rows(browser) == []
    assert browser.find_element(By.ID, "table-status").text.startswith("0 of")


def test_sorting_by_energy_change_and_back(browser, site):
    base, _root, _result = site
    open_index(browser, base)
    button = browser.find_element(By.CSS_SELECTOR, "button.sort[data-sort='obs_pct']")
    button.click()
    values = [float(r["cells"][2]) for r in visible_rows(browser)]
    assert values == sorted(values, reverse=True)
    button.click()
    values = [float(r["cells"][2]) for r in visible_rows(browser)]
    assert values == sorted(values)
    header = button.find_element(By.XPATH, "..")
    assert header.get_attribute("aria-sort") == "ascending"


def test_submission_text_is_shown_as_text(browser, site):
    base, _root, _result = site
    open_index(browser, base)
    assert browser.execute_script("return document.scripts.length") == 4 + len(CHECKER_FILES)
    cell = [r for r in visible_rows(browser) if "hostile-user" in r["cells"][12]][0]["cells"][12]
    assert HOSTILE in cell
    browser.get(base + next(p for p in _pages(site) if "/91-" in p))
    assert browser.execute_script("return document.scripts.length") == 0
    assert HOSTILE in browser.find_element(By.TAG_NAME, "main").text


# the verdict colours of gallery/static/style.css (--confirmation, --contradiction) as computed styles
RING = {"confirmation": "rgb(0, 114, 178)", "contradiction": "rgb(213, 94, 0)"}


def _pages(site) -> list[str]:
    _base, root, _result = site
    folder = root / "gallery" / "site"
    return sorted(p.relative_to(folder).as_posix() for p in (folder / "r").rglob("*.html"))


def test_a_replication_page_shows_the_verdict_its_numbers_and_its_point(browser, site, records):
    base, _root, _result = site
    record = next(r for r in records if r["verdict"]["label"] == "contradiction")
    page = next(p for p in _pages(site) if f"/{record['issue']}-" in p)
    browser.get(base + page)
    assert browser.find_element(By.CSS_SELECTOR, ".verdict-label").text == "contradiction"
    numbers = browser.find_element(By.CSS_SELECTOR, "table.numbers").text
    assert f"{record['verdict']['z']:+.2f}" in numbers
    assert browser.execute_script("const i = document.images[0]; return i.complete && i.naturalWidth") == 800
    (ring,) = browser.find_elements(By.CSS_SELECTOR, "svg.overlay circle.you")
    stroke = browser.execute_script("return getComputedStyle(arguments[0]).stroke", ring)
    assert stroke == RING["contradiction"]
    fields = browser.find_element(By.XPATH, "//h2[text()='The report, every field']/..").text
    for key in ("schema_version", "counter_energy_j", "ci95_half_width_pp", "gpu_arch", "n_pairs"):
        assert key in fields


def _check_panel_verdict(browser) -> dict:
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "check-verdict"))
    return browser.execute_script(
        "const v = document.getElementById('check-verdict');"
        "const items = Array.from(document.querySelectorAll('#check-result li'));"
        "return {label: v.getAttribute('data-label'),"
        " text: document.getElementById('check-result').textContent,"
        " codes: items.map(li => li.getAttribute('data-code')),"
        " ring: document.querySelectorAll('#check-figure circle.you').length,"
        " stroke: Array.from(document.querySelectorAll('#check-figure circle.you'))"
        "   .map(c => getComputedStyle(c).stroke)}"
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("reports")
    made = {
        "far": make_report(
            arch="ada", model="Qwen2-7B", params_b=7.616, precision="NF4", delta_pct=45.0, seed=71
        ),
        "near": make_report(
            arch="blackwell",
            model="Qwen2.5-3B",
            params_b=3.086,
            precision="NF4",
            delta_pct=12.0,
            seed=72,
            weights="pretrained",
        ),
        "nocurve": make_report(
            arch="volta", model="Qwen2-1.5B", params_b=1.544, precision="INT8", delta_pct=90.0, seed=73
        ),
        "batched": make_report(
            arch="ada", model="Qwen2-7B", params_b=7.616, precision="NF4", delta_pct=45.0, seed=74,
            batch_size=8,
        ),
    }
    paths = {}
    for name, report in made.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(report, indent=1), encoding="utf-8")
    bad = dict(made["near"])
    bad["measurement_source"] = "simulated"
    paths["bad"] = folder / "bad.json"
    paths["bad"].write_text(json.dumps(bad), encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def bot_says(reports) -> dict[str, dict]:
    by_file = bot_grade_all(list(reports.values()))
    return {name: by_file[str(path)] for name, path in reports.items()}


def test_pasted_reports_get_the_bots_verdict(browser, site, reports, bot_says):
    base, _root, _result = site
    open_index(browser, base)
    for name in ("far", "near", "nocurve", "bad"):
        expected = bot_says[name]
        box = browser.find_element(By.ID, "paste")
        browser.execute_script("arguments[0].value = arguments[1];", box, reports[name].read_text())
        browser.find_element(By.ID, "check-button").click()
        shown = _check_panel_verdict(browser)
        assert shown["label"] == expected["verdict"]["label"], name
        assert expected["verdict"]["sentence"] in shown["text"]
        assert sorted(shown["codes"]) == sorted(p["code"] for p in expected["problems"])
        if expected["verdict"]["label"] != "ungraded":
            assert f"{expected['verdict']['z']:+.2f}" in shown["text"]
            assert shown["ring"] == 1, "the point is placed on its plot"
    labels = {bot_says[n]["verdict"]["label"] for n in ("far", "near", "nocurve")}
    assert labels == {"contradiction", "confirmation", "ungraded"}


def test_a_chosen_file_gets_the_bots_verdict(browser, site, reports, bot_says):
    base, _root, _result = site
    open_index(browser, base)
    browser.find_element(By.ID, "file-input").send_keys(str(reports["far"]))
    shown = _check_panel_verdict(browser)
    assert shown["label"] == bot_says["far"]["verdict"]["label"] == "contradiction"
    assert shown["stroke"] == [RING["contradiction"]], "the ring takes the verdict's colour"


def test_a_dropped_file_gets_the_bots_verdict(browser, site, reports, bot_says):
    base, _root, _result = site
    open_index(browser, base)
    browser.execute_script(
        "const zone = document.getElementById('dropzone');"
        "const data = new DataTransfer();"
        "data.items.add(new File([arguments[0]], 'energy.json', {type: 'application/json'}));"
        "const init = {dataTransfer: data, bubbles: true, cancelable: true};"
        "zone.dispatchEvent(new DragEvent('dragover', init));"
        "zone.dispatchEvent(new DragEvent('drop', init));",
        reports["near"].read_text(),
    )
    shown = _check_panel_verdict(browser)
    expected = bot_says["near"]
    assert shown["label"] == expected["verdict"]["label"] == "confirmation"
    assert expected["verdict"]["sentence"] in shown["text"] and shown["ring"] == 1
    assert shown["stroke"] == [RING["confirmation"]]


def test_screenshot_is_not_blank(browser, site, tmp_path):
    base, _root, _result = site
    open_index(browser, base)
    png = browser.get_screenshot_as_png()
    (tmp_path / "index.png").write_bytes(png)
    pixels = mpimg.imread(io.BytesIO(png), format="png")[..., :3]
    grey = pixels.mean(axis=2)
    assert grey.shape[0] > 500 and grey.shape[1] > 1000
    assert float(grey.var()) > 0.01, "a blank page has no variance"
    assert len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50


@pytest.fixture(scope="module")
def big_site(tmp_path_factory, serve, small):
    """130 records on three plots: enough rows to page through."""
    from gallery.builder import build
    from tests.support.gallery_records import population

    records, curves = small
    plotted = {("ada", "NF4"), ("ampere", "NF4"), ("hopper", "NF4")}
    many = [
        r
        for r in population(curves, 600, seed=5)
        if (r["report"]["system_under_test"]["gpu_arch"], r["report"]["workload"]["precision"]) in plotted
    ][:130]
    root = write_repo(tmp_path_factory.mktemp("big"), many, curves)
    result = build(root)
    return serve(root / "gallery" / "site"), result


def test_pages_of_rows_cover_every_row_once(browser, big_site):
    base, result = big_site
    open_index(browser, base)
    Select(browser.find_element(By.ID, "page-size")).select_by_visible_text("50")
    seen = []
    while True:
        seen += [tuple(r["cells"]) for r in visible_rows(browser)]
        nxt = browser.find_element(By.ID, "next-page")
        if not nxt.is_enabled():
            break
        nxt.click()
    assert len(seen) == len(set(seen)) == result.n_rows == 130
    Select(browser.find_element(By.ID, "page-size")).select_by_value("0")
    assert len(visible_rows(browser)) == 130


def test_a_batch_report_is_graded_but_never_ringed_on_a_size_curve(browser, site, reports, bot_says):
    # the size plots are batch 1: the checker says why the point is not placed instead of ringing it
    base, _root, _result = site
    open_index(browser, base)
    box = browser.find_element(By.ID, "paste")
    browser.execute_script("arguments[0].value = arguments[1];", box, reports["batched"].read_text())
    browser.find_element(By.ID, "check-button").click()
    shown = _check_panel_verdict(browser)
    expected = bot_says["batched"]["verdict"]
    assert shown["label"] == expected["label"] == "ungraded" and expected["reason_code"] == "QJ309"
    assert shown["ring"] == 0
    assert "not placed on the plots: it is batch 8 and the size plots are batch 1" in browser.find_element(
        By.ID, "check-plot").text
