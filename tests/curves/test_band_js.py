"""The README's JavaScript predict() equals Python's predict_group(), run in a real headless Chromium."""

from __future__ import annotations

import json
import re

import pytest

from curves.model import predict_group
from tests.curves.helpers import ROOT
from tests.support.tooling import find_tool, require_tool

SIZES_B = [0.05, 0.3, 0.5, 1.1, 2.0, 3.7, 7.0, 9.0, 14.0, 40.0, 300.0]


@pytest.fixture(scope="module")
def chromium():
    driver_path = require_tool("chromedriver", "apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    if find_tool("chromium"):
        options.binary_location = find_tool("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


@pytest.mark.slow
@pytest.mark.browser
def test_readme_javascript_matches_python(chromium, fitted):
    readme = (ROOT / "curves" / "README.md").read_text(encoding="utf-8")
    js = re.search(r"```js\n(.*?)```", readme, re.S).group(1)
    got = chromium.execute_script(
        js + "\nconst groups = arguments[0], sizes = arguments[1];"
        "\nreturn Object.keys(groups).sort().map(k => sizes.map(n => predict(groups[k], n)));",
        json.loads(json.dumps(fitted["groups"])),
        SIZES_B,
    )
    for row, key in zip(got, sorted(fitted["groups"]), strict=True):
        for (mean_js, sd_js), n in zip(row, SIZES_B, strict=True):
            mean_py, sd_py = predict_group(fitted["groups"][key], n)
            assert mean_js == pytest.approx(mean_py, rel=1e-12, abs=1e-9), (key, n)
            assert sd_js == pytest.approx(sd_py, rel=1e-12, abs=1e-9), (key, n)
