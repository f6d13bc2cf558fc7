"""Concurrency: N submissions processed at once, each in its own process, against one fake GitHub.

Then every PR is merged (a squash merge, as a maintainer would) and the gallery rebuilt from the merged
main branch with `gallery.build`. Used by tests/hostile (forked processes) and benchmarks/concurrency.py
(real `python -m bot process` processes). What is checked: one branch, one PR and one record per issue,
each record holding exactly its own issue's report; the gallery shows all N rows.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.fake_github import FakeGitHub
from tests.support.hostile.corpus import HOPPER, VOLTA
from tests.support.hostile.harness import fake_changed, seed_fake
from tests.support.webhooks import form_body, issues_event

ROOT = Path(__file__).resolve().parents[3]


def reports(n: int) -> list[dict]:
    """`n` distinct constructed fixture reports (Hopper NF4 and Volta INT8, distinct seeds)."""
    out = []
    for i in range(n):
        report = json.loads(HOPPER if i % 2 == 0 else VOLTA)
        report["protocol"]["seed"] = 1000 + i
        out.append(report)
    return out


def _child(event_path: str, repo_dir: str, slug: str, api_url: str) -> int:
    from bot.forge import Retrier
    from bot.forge_github import GitHubForge
    from bot.pipeline import load_curves, process

    payload = json.loads(Path(event_path).read_text(encoding="utf-8"))
    forge = GitHubForge(slug, "write-token", api_url=api_url, throttle=False, timeout_s=10)
    _, result = process(payload, "issues", repo_dir, load_curves(), forge, Retrier(sleep=time.sleep))
    return 0 if result["ok"] else 1


def _fork_main(args) -> int:
    return _child(*args)


def run(n: int, work: Path, base_gallery: dict, mode: str = "fork") -> dict:
    """Process `n` submissions at once; merge all; build the gallery. A summary dict (see the checks)."""
    checkout = work / "checkout"
    for path, content in base_gallery.items():
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_bytes(content)
    (checkout / "replications").mkdir(parents=True, exist_ok=True)
    with FakeGitHub() as fake:
        seed_fake(fake, base_gallery)
        jobs, sent = [], {}
        for report in reports(n):
            body = form_body(json.dumps(report, indent=2))
            number = fake.state.add_issue("[replication] load", body, "octocat", ("replication",))["number"]
            payload = issues_event(number=number, body=body)
            payload["repository"]["full_name"] = fake.slug
            event = work / f"event-{number}.json"
            event.write_text(json.dumps(payload), encoding="utf-8")
            jobs.append((str(event), str(checkout), fake.slug, fake.base_url))
            sent[number] = report
        start = time.perf_counter()
        if mode == "fork":
            with multiprocessing.get_context("fork").Pool(n) as pool:
                codes = pool.map(_fork_main, jobs, chunksize=1)
        else:
            env = {**os.environ, "GITHUB_TOKEN": "write-token", "PYTHONPATH": str(ROOT)}
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "bot",
                        "process",
                        "--event",
                        ev,
                        "--forge",
                        "github",
                        "--repo",
                        slug,
                        "--api-url",
                        url,
                        "--repo-dir",
                        repo,
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                for ev, repo, slug, url in jobs
            ]
            codes = [p.wait() for p in procs]
        seconds = time.perf_counter() - start
        return _check_and_merge(fake, sent, codes, seconds, work)


def _check_and_merge(fake, sent: dict, codes: list[int], seconds: float, work: Path) -> dict:
    import gallery

    state = fake.state
    branches = sorted(r for r in state.refs if r.startswith("refs/heads/replication/"))
    mixed, records_by_issue = [], {}
    for number, report in sent.items():
        changed = fake_changed(fake, f"replication/issue-{number}")
        recs = [p for p in changed if p.startswith("replications/")]
        records_by_issue[number] = recs
        for path in recs:
            record = json.loads(state.files_at(f"replication/issue-{number}")[path])
            if record["issue"] != number or record["report"] != report or f"/{number}-" not in path:
                mixed.append(path)
    conflicts = 0
    for pull in sorted(state.open_pulls(), key=lambda p: p["number"]):
        head = state.commits[state.refs[f"refs/heads/{pull['head']['ref']}"]]
        parent = state.files_at(head["parents"][0])
        main = state.files_at("main")
        # a squash merge conflicts where main changed a file the PR also changes since the PR's base
        conflicts += sum(
            1
            for p, b in state.files_at(pull["head"]["ref"]).items()
            if parent.get(p) != b and main.get(p) != parent.get(p)
        )
        state.merge_pull(pull["number"])
    merged = work / "merged"
    for path, content in state.files_at("main").items():
        if path.startswith("replications/"):
            (merged / path).parent.mkdir(parents=True, exist_ok=True)
            (merged / path).write_bytes(content)
    (merged / "reference").mkdir(parents=True, exist_ok=True)
    (merged / "reference" / "curves.json").write_bytes((ROOT / "reference" / "curves.json").read_bytes())
    built = gallery.build(merged, merged / "site")
    return {
        "exit_codes": codes,
        "seconds": seconds,
        "branches": len(branches),
        "pulls": len(state.pulls),
        "records_per_issue": sorted({len(v) for v in records_by_issue.values()}),
        "distinct_record_paths": len({p for v in records_by_issue.values() for p in v}),
        "mixed": mixed,
        "merged_records": sum(1 for p in state.files_at("main") if p.startswith("replications/")),
        "merge_conflicts_in_gallery_files": conflicts,
        "gallery_rows": built.n_rows,
        "gallery_counts": dict(built.counts),
        "requests": len(fake.log),
    }
