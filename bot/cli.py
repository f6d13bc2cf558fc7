"""Command-line entry for `python -m bot`: plan, apply, process, refresh-plan, demo (+ fit and grade)."""

from __future__ import annotations

import json
import os
import sys

import click

from bot.codes import BotError

# Exit statuses of apply/process: 0 done, 1 a forge failure recorded on the issue (bot-error label),
# 2 bad input or usage, 3 a forge failure that could not even be recorded.
EXIT_RECORDED, EXIT_USAGE, EXIT_UNRECORDED = 1, 2, 3


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Validate, grade and file replication submissions."""


def _fail(err: BotError) -> None:
    p = err.problem
    click.echo(f"error {p.code}: {p.message}\nhint: {p.hint}", err=True)
    sys.exit(EXIT_USAGE)


def _forge(
    kind: str, repo: str | None, api_url: str, bot_login: str | None, repo_dir: str, outbox: str | None
):
    from bot.codes import problem

    if kind == "none":
        return None
    if kind == "local":
        from bot.forge_local import LocalForge

        return LocalForge(repo_dir, outbox or os.path.join(repo_dir, ".git", "quantjoule-outbox"))
    from bot.forge_github import GitHubForge

    token = os.environ.get("GITHUB_TOKEN", "")
    repo = repo or os.environ.get("GITHUB_REPOSITORY")
    if not token or not repo:
        raise BotError(problem("QJ516", "GITHUB_TOKEN is not set" if not token else "no --repo given"))
    # PyGithub's pacing between calls (GitHub's advice for api.github.com) is kept for github.com only.
    throttle = api_url.rstrip("/") == "https://api.github.com"
    return GitHubForge(
        repo, token, api_url=api_url, bot_login=bot_login or "github-actions[bot]", throttle=throttle
    )


def _inputs(event_path, curves_path, forge_kind, repo, api_url, bot_login, repo_dir, outbox):
    """The event payload, the forge and the curves an event command needs; a coded exit when one fails."""
    from bot.pipeline import load_curves, read_json_file

    try:
        payload = read_json_file(event_path, "QJ513")
        forge = _forge(forge_kind, repo, api_url, bot_login, repo_dir, outbox)
        return payload, forge, load_curves(curves_path)
    except BotError as err:
        _fail(err)


def _forge_options(fn):
    fn = click.option("--repo", help="OWNER/NAME on GitHub (default: $GITHUB_REPOSITORY).")(fn)
    fn = click.option(
        "--api-url",
        default=lambda: os.environ.get("GITHUB_API_URL", "https://api.github.com"),
        show_default="$GITHUB_API_URL or https://api.github.com",
        help="GitHub REST API base URL.",
    )(fn)
    fn = click.option(
        "--bot-login", help="Login whose comments are the bot's (default github-actions[bot])."
    )(fn)
    fn = click.option(
        "--repo-dir",
        default=".",
        show_default=True,
        type=click.Path(file_okay=False),
        help="Checkout of the base branch (records are read from its replications/).",
    )(fn)
    fn = click.option(
        "--outbox",
        type=click.Path(file_okay=False),
        help="local forge: where comments, labels and PR bodies are written.",
    )(fn)
    return fn


def _event_options(fn):
    fn = click.option(
        "--event",
        "event_path",
        required=True,
        type=click.Path(dir_okay=False),
        help="Webhook payload (Actions: $GITHUB_EVENT_PATH).",
    )(fn)
    fn = click.option(
        "--event-name",
        default=lambda: os.environ.get("GITHUB_EVENT_NAME"),
        help="issues or issue_comment (default $GITHUB_EVENT_NAME, else inferred).",
    )(fn)
    fn = click.option(
        "--curves",
        "curves_path",
        type=click.Path(dir_okay=False),
        help="curves.json to grade against (default reference/curves.json).",
    )(fn)
    return fn


@main.command()
@_event_options
@click.option(
    "--forge",
    "forge_kind",
    type=click.Choice(["none", "github", "local"]),
    default="none",
    show_default=True,
    help="Where to read the previous summary comment from.",
)
@_forge_options
@click.option("--out", type=click.Path(dir_okay=False), help="Write the plan here instead of stdout.")
def plan(
    event_path, event_name, curves_path, forge_kind, repo, api_url, bot_login, repo_dir, outbox, out
) -> None:
    """Plan one issue event: print the plan JSON (comment, labels, files, PR). Reads, never writes.

    When planning fails (the API keeps failing, or an error in the bot), the plan written records that
    failure instead (QJ518), so `apply` leaves the bot-error label and a comment: nothing is dropped."""
    from bot.forge import StepFailed
    from bot.pipeline import failure_plan, plan_event

    payload, forge, curves_data = _inputs(event_path, curves_path, forge_kind, repo, api_url, bot_login,
                                          repo_dir, outbox)
    try:
        result = plan_event(payload, event_name, repo_dir, curves_data, forge)
    except BotError as err:
        _fail(err)
    except StepFailed as err:
        result = failure_plan(payload, err.step, err.error)
    except Exception as err:  # noqa: BLE001 - an unforeseen error still leaves a coded trace on the issue
        result = failure_plan(payload, "plan", err)
    if result.get("failed"):
        click.echo(f"error QJ518: planning issue {result['issue']} failed: {result['failed']['error']}",
                   err=True)
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(f"plan for issue {result.get('issue', '-')}: {result.get('status', 'ignored')} -> {out}")
    else:
        click.echo(text, nl=False)


def _report(result: dict) -> None:
    if result.get("ignored"):
        click.echo(f"ignored: {result['reason']}")
        return
    for action in result["actions"]:
        click.echo(f"  {action}")
    if not result["ok"]:
        click.echo(f"forge failure at {result['step']}: {result['error']}", err=True)
        sys.exit(EXIT_RECORDED if result["recorded"] else EXIT_UNRECORDED)


@main.command("refresh-plan")
@click.option(
    "--curves",
    "curves_path",
    type=click.Path(dir_okay=False),
    help="curves.json to grade against (default reference/curves.json).",
)
@_forge_options
@click.option("--base", default="main", show_default=True, help="The branch the replication PRs target.")
@click.option("--out-dir", required=True, type=click.Path(file_okay=False), help="Where the plans go.")
def refresh_plan(curves_path, repo, api_url, bot_login, repo_dir, outbox, base, out_dir) -> None:
    """Plan every open replication PR again on the base checkout at --repo-dir (after a merge moved it).

    Writes OUT_DIR/issue-<n>.json, one plan per open PR, for `apply`. Reads, never writes."""
    from pathlib import Path

    from bot.forge import StepFailed
    from bot.pipeline import load_curves
    from bot.refresh import refresh_plans

    try:
        forge = _forge("github", repo, api_url, bot_login, repo_dir, outbox)
        plans = refresh_plans(forge, repo_dir, load_curves(curves_path), base)
    except BotError as err:
        _fail(err)
    except StepFailed as err:
        click.echo(f"forge failure: {err}", err=True)
        sys.exit(EXIT_UNRECORDED)
    for number, the_plan in sorted(plans.items()):
        if the_plan.get("failed"):  # written too: apply leaves bot-error on that issue; the others go on
            click.echo(f"error QJ518: issue {number} could not be planned: {the_plan['failed']['error']}",
                       err=True)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for number, the_plan in sorted(plans.items()):
        path = out / f"issue-{number}.json"
        path.write_text(json.dumps(the_plan, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        click.echo(f"plan for issue {number}: {the_plan.get('status', 'ignored')} -> {path}")
    if not plans:
        click.echo("no open replication pull requests")


@main.command()
@click.argument("plan_path", metavar="PLAN", type=click.Path(dir_okay=False))
@click.option("--forge", "forge_kind", type=click.Choice(["github", "local"]), required=True)
@_forge_options
def apply(plan_path, forge_kind, repo, api_url, bot_login, repo_dir, outbox) -> None:
    """Apply a plan written by `plan`: comment, labels, branch + commit, pull request."""
    from bot.forge import apply_plan
    from bot.pipeline import check_plan, read_json_file

    try:
        the_plan = check_plan(read_json_file(plan_path, "QJ514"))
        forge = _forge(forge_kind, repo, api_url, bot_login, repo_dir, outbox)
    except BotError as err:
        _fail(err)
    _report(apply_plan(forge, the_plan))


@main.command()
@_event_options
@click.option(
    "--forge", "forge_kind", type=click.Choice(["github", "local"]), default="local", show_default=True
)
@_forge_options
def process(
    event_path, event_name, curves_path, forge_kind, repo, api_url, bot_login, repo_dir, outbox
) -> None:
    """Plan and apply one event in one go."""
    from bot.forge import StepFailed, apply_plan
    from bot.pipeline import failure_plan
    from bot.pipeline import process as run_process

    payload, forge, curves_data = _inputs(event_path, curves_path, forge_kind, repo, api_url, bot_login,
                                          repo_dir, outbox)
    try:
        the_plan, result = run_process(payload, event_name, repo_dir, curves_data, forge)
    except BotError as err:
        _fail(err)
    except Exception as err:  # noqa: BLE001 - planning failed: record it on the issue (QJ518), never drop it
        step = err.step if isinstance(err, StepFailed) else "plan"
        the_plan = failure_plan(payload, step, err.error if isinstance(err, StepFailed) else err)
        result = apply_plan(forge, the_plan)
    if not the_plan.get("ignored") and not the_plan.get("failed"):
        click.echo(
            f"issue {the_plan['issue']}: {the_plan['status']} "
            f"({', '.join(p['label'] for p in the_plan['points']) or 'no reports'})"
        )
    _report(result)


@main.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Directory for the throwaway clone (default: a new temp dir).",
)
@click.option(
    "--source",
    type=click.Path(file_okay=False),
    default=None,
    help="Repository to clone (default: the one this package is in).",
)
def demo(out, source) -> None:
    """Run the bot end to end on the bundled submissions in a throwaway clone, then build the gallery."""
    from bot.demo_run import run_demo

    try:
        run_demo(out, source, echo=click.echo)
    except BotError as err:
        _fail(err)


def _register() -> None:
    from bot.grade_cli import grade
    from bot.refit import main as refit
    from curves.cli import fit

    main.add_command(fit)
    main.add_command(grade)
    main.add_command(refit)


_register()
