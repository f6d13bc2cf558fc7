"""#13 class 11, what reaches the gallery: no bidi override or invisible character raw on any page or data
file, two reports of one model in one issue keep their own page and record file, the in-browser checker
agrees with the bot on a big-integer seed, and build caches are never in the folder Pages publishes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import gallery
from assess import assess
from bot.forge_local import LocalForge
from bot.pipeline import process
from gallery.rules import rules
from schema.records import canonical_sha256, read_records, record_id
from schema.text import INVISIBLE
from tests.support.hostile.corpus_13 import HOPPER, TINY_NF4, TINY_NF4_B, edit
from tests.support.hostile.harness import git, make_repo
from tests.support.webhooks import form_body, issues_event

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "gallery" / "js_check_runner.js"


def merged_gallery(tmp_path, base_gallery, curves_data, body: str, number: int = 3) -> Path:
    """File one issue on the local forge, merge its branch as a maintainer would, build the gallery."""
    repo = make_repo(tmp_path / "repo", base_gallery)
    (repo / "reference").mkdir()
    (repo / "reference" / "curves.json").write_text(json.dumps(curves_data), encoding="utf-8")
    plan, result = process(
        issues_event(number=number, body=body),
        "issues",
        repo,
        curves_data,
        LocalForge(repo, tmp_path / "outbox"),
    )
    assert result["ok"] and plan["status"] == "accepted", plan["status"]
    git(repo, "merge", "-q", "--ff-only", f"replication/issue-{number}")
    gallery.build(repo)
    return repo


def test_bidi_and_invisible_characters_reach_no_page_raw(tmp_path, base_gallery, curves_data):
    report = edit(
        HOPPER,
        {
            "workload.model_name": "Tiny\u202eLlama-1.1B",
            "system_under_test.gpu": "NVIDIA H200\u2066",
            "system_under_test.host": "h\u200bost\u061c",
        },
    )
    body = form_body(
        report, handle="\u202eadmin\u2069", affiliation="Lab\u2067x\ufeff", gpu=None, notes="n\u200fote"
    )
    repo = merged_gallery(tmp_path, base_gallery, curves_data, body)
    published = [
        p for p in (repo / "gallery").rglob("*") if p.is_file() and p.suffix in (".html", ".js", ".md")
    ]
    assert len(published) > 10
    for path in published:
        assert not INVISIBLE.search(path.read_text(encoding="utf-8")), path
    page = next((repo / "gallery" / "site" / "r").rglob("*.html")).read_text(encoding="utf-8")
    assert "TinyU+202ELlama-1.1B" in page and "U+202Eadmin" in page


def test_two_reports_of_one_model_in_one_issue_keep_their_own_page_and_file(
    tmp_path, base_gallery, curves_data
):
    # Block order opposite to sha order: a gallery that numbered by sort order would swap them.
    first, second = sorted(
        (TINY_NF4, TINY_NF4_B), key=lambda t: canonical_sha256(json.loads(t)), reverse=True
    )
    repo = merged_gallery(tmp_path, base_gallery, curves_data, form_body([first, second]))
    records, unreadable = read_records(repo)
    assert unreadable == [] and sorted(records) == [
        "replications/hopper/3-NF4-tinyllama-1.1b-2.json",
        "replications/hopper/3-NF4-tinyllama-1.1b.json",
    ]
    assert records["replications/hopper/3-NF4-tinyllama-1.1b.json"]["report"] == json.loads(first)
    for path, record in records.items():
        rid = record_id(record, path)
        assert f"replications/{rid}.json" == path
        page = (repo / "gallery" / "site" / "r" / f"{rid}.html").read_text(encoding="utf-8")
        assert record["report_sha256"] in page and path in page


def _node():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return node


def test_the_sites_checker_agrees_with_the_bot_on_big_integers(tmp_path, curves_data):
    texts = [
        HOPPER.replace('"seed": 0', '"seed": 18446744073709551617'),
        HOPPER.replace('"seed": 0', '"seed": ' + "9" * 400),
        HOPPER.replace('"seed": 0', '"seed": 9007199254740991'),  # the largest exact integer: fine
        HOPPER.replace('"seed": 0', '"seed": 9007199254740992'),
        HOPPER.replace('"seed": 0', '"seed": 5e-324'),
    ]
    payload = tmp_path / "in.json"
    payload.write_text(json.dumps({"rules": rules(), "curves": curves_data, "texts": texts}))
    done = subprocess.run([_node(), str(RUNNER), str(payload)], capture_output=True, text=True, check=True)
    browser = json.loads(done.stdout)
    for text, js in zip(texts, browser, strict=True):
        python = assess(text, curves_data).graded_dict()
        assert sorted((p["code"], p["path"]) for p in js["problems"]) == sorted(
            (p["code"], p["path"]) for p in python["problems"]
        )
        assert (js["verdict"] or {}).get("label") == (python["verdict"] or {}).get("label")
    assert [bool(r["problems"]) for r in browser] == [True, True, False, True, True]


def test_build_caches_are_never_in_the_folder_pages_publishes(tmp_path, base_gallery, curves_data):
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "gallery.yml").read_text())
    steps = flow["jobs"]["build"]["steps"]
    build = next(s["run"] for s in steps if "gallery build" in s.get("run", ""))
    upload = next(s for s in steps if "upload-pages-artifact" in s.get("uses", ""))
    site_name = upload["with"]["path"]
    assert f"--site-dir {site_name}" in build
    repo = merged_gallery(tmp_path, base_gallery, curves_data, form_body(HOPPER))
    site = repo / site_name
    for incremental in ([], ["--incremental"]):
        out = subprocess.run(
            ["python", "-m", "gallery", "build", "--root", str(repo), "--site-dir", str(site), *incremental],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert out.returncode == 0, out.stderr
        assert (site / "index.html").is_file()
        assert [p for p in site.rglob("*") if p.name.startswith(".") or "cache" in p.name] == []
