"""Gallery test fixtures: the real curves, generated fixture records, a built site, a browser."""

from __future__ import annotations

import copy
import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from tests.gallery.helpers import HOSTILE, REPO, write_repo
from tests.support.gallery_records import (
    FIXTURE_NOTE,
    make_legacy_report,
    make_record,
    make_report,
    population,
)
from tests.support.tooling import find_tool, require_tool

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def curves() -> dict:
    from curves import load_curves

    return load_curves(REPO / "reference" / "curves.json")


def special_records(curves: dict) -> list[dict]:
    """A legacy report, a hostile-text submission, and a simulated one that must never be shown."""
    legacy = make_record(
        make_legacy_report(
            arch="ampere", model="Qwen2.5-14B", params_b=14.77, precision="NF4", delta_pct=3.0
        ),
        issue=90,
        curves=curves,
        submitted_at="2026-03-03T03:03:03Z",
        login="legacy-user",
    )
    hostile_report = make_report(
        arch="ada", model="Qwen2-1.5B", params_b=1.544, precision="NF4", delta_pct=20.0, seed=91
    )
    hostile = make_record(
        hostile_report,
        issue=91,
        curves=curves,
        submitted_at="2026-04-04T04:04:04Z",
        login="hostile-user",
        handle=HOSTILE,
        affiliation="<b>Uni</b> | @team",
        notes=f"{HOSTILE} {FIXTURE_NOTE}",
    )
    simulated_report = make_report(
        arch="ada",
        model="Qwen2-7B",
        params_b=7.616,
        precision="NF4",
        delta_pct=-20.0,
        seed=92,
        source="simulated",
    )
    simulated = make_record(simulated_report, issue=92, curves=curves, submitted_at="2026-05-05T05:05:05Z")
    return [legacy, hostile, simulated]


@pytest.fixture(scope="session")
def records(curves) -> list[dict]:
    """24 generated fixture records plus the three special ones (shared; tests must not mutate them)."""
    return population(curves, 24) + special_records(curves)


SMALL_GROUPS = ("ada/NF4/eager", "ampere/NF4/eager", "hopper/NF4/eager")


@pytest.fixture(scope="session")
def small(records, curves) -> tuple[list[dict], dict]:
    """Fewer plots for the tests that build many times: three real groups of curves.json and the records
    whose plots they are, plus the architecture with no curve (volta)."""
    groups = {key: curves["groups"][key] for key in SMALL_GROUPS}
    keep = {tuple(key.split("/")[:2]) for key in SMALL_GROUPS} | {("volta", "NF4")}
    chosen = [
        r
        for r in records
        if (r["report"]["system_under_test"]["gpu_arch"], r["report"]["workload"]["precision"]) in keep
    ]
    return chosen, {**curves, "groups": groups}


@pytest.fixture(scope="session")
def rendered(records, curves) -> dict[str, bytes]:
    """render_files of the shared records, computed once."""
    from gallery import render_files

    return render_files(records, curves)


@pytest.fixture(scope="session")
def built(tmp_path_factory, records, curves):
    """One full build shared by the read-only tests: (repo root, BuildResult)."""
    from gallery.builder import build

    root = write_repo(tmp_path_factory.mktemp("gallery-repo"), records, curves)
    return root, build(root)


@pytest.fixture()
def fresh_records(records) -> list[dict]:
    return copy.deepcopy(records)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test output stays readable
        pass


@pytest.fixture(scope="session")
def serve():
    """serve(folder) -> base URL of a loopback HTTP server for that folder (stopped at session end)."""
    servers = []

    def start(folder: Path) -> str:
        handler = functools.partial(_QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def browser():
    """A real headless Chromium driven by selenium; skipped only when the driver is not installed."""
    driver_path = require_tool("chromedriver", "apt-get install chromium chromium-driver", CHROMEDRIVER)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    binary = find_tool("chromium", CHROMIUM)
    if binary:
        options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1800",
        "--disable-extensions",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
