"""Gallery speed with 10,000 generated replications: full build, incremental build after one new record,
and the index page's load in headless Chromium. Targets: 30 s, 3 s, 2 s.

    python -m benchmarks.bench_gallery [--records 10000] [--keep DIR]

The records are TEST FIXTURES from tests/support/gallery_records.py (graded by the real grader against
reference/curves.json); the builds run as `python -m gallery build` subprocesses, as a user would run them.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TARGETS_S = {
    "full build": 30.0,
    "incremental build (one new record)": 3.0,
    "index page load in Chromium": 2.0,
}


def make_repo(root: Path, n: int) -> dict:
    from curves import load_curves
    from schema.records import record_id
    from tests.support.gallery_records import population

    curves = load_curves(REPO / "reference" / "curves.json")
    (root / "reference").mkdir(parents=True)
    shutil.copy(REPO / "reference" / "curves.json", root / "reference" / "curves.json")
    for record in population(curves, n, seed=2026):
        path = root / "replications" / f"{record_id(record)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return curves


def timed_build(root: Path, *extra: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gallery", "build", "--root", str(root), *extra],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return time.perf_counter() - started, done.stdout


def add_one_record(root: Path, curves: dict) -> None:
    from schema.records import record_id
    from tests.support.gallery_records import make_record, make_report

    report = make_report(
        arch="ada", model="Qwen2-7B", params_b=7.616, precision="NF4", delta_pct=-12.0, seed=777_777
    )
    record = make_record(report, issue=777_777, curves=curves, submitted_at="2027-06-01T12:00:00Z")
    path = root / "replications" / f"{record_id(record)}.json"
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def page_load(site: Path, repeats: int = 3) -> tuple[float, float, int]:
    """(best wall seconds from navigation until the table is rendered, the page's own performance.now()
    at that moment, rows in the data) over `repeats` cold loads."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1800",
        "--disable-application-cache",
        "--incognito",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(
        service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options
    )
    walls, insides, rows = [], [], 0
    try:
        for _ in range(repeats):
            driver.get("about:blank")
            driver.execute_cdp_cmd("Network.clearBrowserCache", {})
            started = time.perf_counter()
            driver.get(url)
            WebDriverWait(driver, 60).until(
                lambda d: d.execute_script("return document.body.getAttribute('data-table-ready') === 'true'")
            )
            walls.append(time.perf_counter() - started)
            insides.append(driver.execute_script("return performance.now()") / 1000)
            rows = driver.execute_script("return window.QJ_GALLERY.rows.length")
    finally:
        driver.quit()
        server.shutdown()
    return min(walls), min(insides), rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument(
        "--keep", type=Path, default=None, help="build here and keep it (default: a temp dir)"
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="qj-bench-"))
    if root.exists() and any(root.iterdir()):
        shutil.rmtree(root)
    started = time.perf_counter()
    curves = make_repo(root, args.records)
    print(f"generated {args.records} fixture records in {time.perf_counter() - started:.1f} s under {root}")

    full_s, out = timed_build(root)
    print(out.strip().splitlines()[0])
    print(out.strip().splitlines()[1])
    add_one_record(root, curves)
    incremental_s, out = timed_build(root, "--incremental")
    print(out.strip().splitlines()[1])
    site = root / "gallery" / "site"
    size_mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6
    print(
        f"site: {sum(1 for _ in site.rglob('*.html'))} HTML pages, {size_mb:.0f} MB; "
        f"data/gallery.js {(site / 'data' / 'gallery.js').stat().st_size / 1e6:.1f} MB"
    )
    load_s, inside_s, rows = page_load(site)
    print(
        f"index page: {rows} rows in the data; ready (table rendered) {inside_s:.2f} s after navigation "
        "start by the page's clock"
    )

    figures = {
        "full build": full_s,
        "incremental build (one new record)": incremental_s,
        "index page load in Chromium": load_s,
    }
    print(f"\n{'measure':40} {'seconds':>8} {'target':>8}  result")
    ok = True
    for name, seconds in figures.items():
        passed = seconds <= TARGETS_S[name]
        ok &= passed
        print(f"{name:40} {seconds:8.2f} {TARGETS_S[name]:8.1f}  {'ok' if passed else 'OVER'}")
    if args.keep is None:
        shutil.rmtree(root)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
