"""`python -m bot demo`: the bot end to end on the bundled submissions, in a throwaway clone.

Every real measured report in the demo's folders of measurements/ is filed as an issue (the accepted path),
then a report written without a GPU (refused: not a measurement), a truncated report (refused: not JSON) and
a resubmission of the first measured report (refused: duplicate). Each accepted PR branch is merged as a
maintainer would (fast-forward), then the gallery is built in the clone.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import tempfile
from pathlib import Path

from bot.codes import BotError, problem
from bot.forge_local import LocalForge
from bot.pipeline import load_curves, process

DEMO_DIR = Path(__file__).resolve().parent / "demo"
# The measurements/ folders whose reports the demo files (measurements/README.md): the protocol studies beside
# them are replayed by the tests, not submitted. h200-protocol-2026-12-02/static-256tok is a real static run
# that no curve is fitted on: an independent check.
DEMO_FOLDERS = ("h200", "h200-protocol-2026-12-02/static-256tok", "hopper-campaign", "hopper-batch")
DEMO_REPO = {"full_name": "demo/quantjoule", "html_url": "https://github.com/demo/quantjoule"}


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BotError(problem("QJ517", f"git {' '.join(args[:2])}: {proc.stderr.strip()}"))
    return proc.stdout.strip()


def _event(number: int, title: str, body: str, branch: str, now: str) -> dict:
    issue = {
        "number": number,
        "title": title,
        "body": body,
        "state": "open",
        "user": {"login": "demo-contributor", "type": "User"},
        "labels": [{"name": "replication"}],
        "html_url": f"{DEMO_REPO['html_url']}/issues/{number}",
        "created_at": now,
        "updated_at": now,
    }
    return {"action": "opened", "issue": issue, "repository": {**DEMO_REPO, "default_branch": branch}}


def _submissions(clone: Path) -> list[tuple[str, str]]:
    """(title, issue body) for each demo issue, in filing order."""
    template = (DEMO_DIR / "measured.md").read_text(encoding="utf-8")
    out = []
    found = [p for folder in DEMO_FOLDERS for p in (clone / "measurements" / folder).rglob("*.json")]
    for path in sorted(found):
        rel = path.relative_to(clone).as_posix()
        body = template.replace("{path}", rel).replace("{report}", path.read_text(encoding="utf-8").strip())
        out.append((f"[replication] {rel}", body))
    reference = (DEMO_DIR / "not-a-measurement.json").read_text(encoding="utf-8").strip()
    out.append(
        (
            "[replication] no GPU here",
            (DEMO_DIR / "not-a-measurement.md").read_text(encoding="utf-8").replace("{report}", reference),
        )
    )
    out.append(("[replication] RTX 4090 Qwen2-1.5B", (DEMO_DIR / "malformed.md").read_text(encoding="utf-8")))
    if len(out) > 2:
        out.append((f"{out[0][0]} (again)", out[0][1]))
    return out


def run_demo(out: str | None, source: str | None, echo=print) -> Path:
    src = Path(source) if source else Path(__file__).resolve().parents[1]
    top = Path(_git(src, "rev-parse", "--show-toplevel"))
    work = Path(out) if out else Path(tempfile.mkdtemp(prefix="quantjoule-demo-"))
    clone, outbox = work / "repo", work / "forge"
    if clone.exists() or outbox.exists():
        raise BotError(problem("QJ517", f"{work} already holds a demo; pass an empty or new --out"))
    work.mkdir(parents=True, exist_ok=True)
    _git(work, "clone", "--quiet", str(top), str(clone))
    branch = _git(clone, "rev-parse", "--abbrev-ref", "HEAD")
    echo(f"Throwaway clone of {top} ({branch} at {_git(clone, 'rev-parse', '--short', 'HEAD')}): {clone}")
    forge = LocalForge(clone, outbox)
    curves = load_curves(clone / "reference" / "curves.json")
    subs = _submissions(clone)
    if len(subs) == 2:
        echo("measurements/ holds no measured reports yet: only the refusal paths can be shown.")
    groups = curves.get("groups", {})
    own = sorted(k for k, g in groups.items() if g.get("source") not in (None, "ecocompute"))
    if own:
        echo(f"Note: {', '.join(own)} are fitted on these same measurements/ files, so their verdicts "
             "below are circular (a report compared with itself), not independent checks.")
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for number, (title, body) in enumerate(subs, start=1):
        plan, result = process(_event(number, title, body, branch, now), "issues", clone, curves, forge)
        _print_issue(echo, number, title, plan, result, forge)
        if plan.get("pr") and result["ok"] and result.get("pr"):
            _git(clone, "merge", "--quiet", "--ff-only", plan["branch"])
            echo(f"    merged {plan['branch']} into {branch} (as a maintainer would)")
    _build_gallery(echo, clone)
    return work


def _print_issue(echo, number: int, title: str, plan: dict, result: dict, forge: LocalForge) -> None:
    echo(f"\nissue #{number} {title}: {plan['status']}")
    for point in plan["points"]:
        v = point.get("verdict") or {}
        if v:
            echo(f"  report {point['index']}: {point['label'].upper()} - {v.get('sentence')}")
            echo(f"    record: {point['path']}")
        else:
            codes = ", ".join(
                f"{p['code']} {p['message']}" for p in point["problems"] if p["severity"] == "error"
            )
            echo(f"  report {point['index']}: refused - {codes}")
    for p in plan["problems"]:
        echo(f"  issue: {p['code']} {p['message']}")
    comments = forge.comments(plan["issue"])
    if comments:
        where = forge.outbox / "issues" / str(plan["issue"]) / f"comment-{comments[0]['id']}.md"
        echo(f"    comment: {where}")
    echo(f"    labels: {', '.join(forge.get_labels(plan['issue']))}")
    if result.get("pr"):
        echo(f"    pull request: {result['pr']}")
    if not result["ok"]:
        echo(f"    forge failure: {result['error']}")


def _build_gallery(echo, clone: Path) -> None:
    import gallery

    built = gallery.build(clone)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(built.counts.items()))
    echo(f"\nGallery built in the clone: {built.n_rows} replication(s) ({counts}).")
    echo(f"  Markdown: {built.gallery_dir / 'README.md'}")
    echo(f"  Site: open {built.site_dir / 'index.html'} in a browser")
