"""`measure submit`: a prefilled new-issue URL for the replication form, for a report the bot accepts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import quote, urlencode

import click

DEFAULT_REPO = "quantjoule/quantjoule"
TEMPLATE = "replication.yml"
# Browsers and GitHub reject very long URLs; past this the report has to be pasted by hand.
MAX_URL_CHARS = 8000


def refusal(report_text: str) -> list[str]:
    """Why the bot would refuse this report (one line per error problem), empty when it would accept it.

    The bot's own acceptance (assess) against the curves this install ships."""
    from assess import assess
    from curves import load_curves

    found = assess(report_text, load_curves())
    return [f"{p.code} {p.path or '/'}: {p.message}" for p in found.problems if p.severity == "error"]


def issue_url(report_text: str, repo: str = DEFAULT_REPO, field: str = "report") -> tuple[str, bool]:
    """(url, fits): with the report prefilled when the URL fits, else the bare form URL."""
    report = json.loads(report_text)
    wl = report.get("workload", {})
    sut = report.get("system_under_test", {})
    title = f"Replication: {wl.get('model_name', '?')} {wl.get('precision', '?')} on {sut.get('gpu', '?')}"
    base = f"https://github.com/{repo}/issues/new"
    body = "```json\n" + report_text.strip() + "\n```"
    params = {"template": TEMPLATE, "title": title, "gpu": str(sut.get("gpu", "")), field: body}
    url = base + "?" + urlencode(params, quote_via=quote)
    if len(url) <= MAX_URL_CHARS:
        return url, True
    return base + "?" + urlencode({"template": TEMPLATE, "title": title}, quote_via=quote), False


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--repo",
    default=DEFAULT_REPO,
    show_default=True,
    envvar="QUANTJOULE_REPO",
    help="owner/name of the repository that receives replications.",
)
def submit(file, repo) -> None:
    """Print a prefilled new-issue URL for the replication form, only for a report the bot would accept.

    Exit status: 0 URL printed, 1 the bot would refuse the report (no URL; `measure check` says why),
    2 the file could not be read."""
    try:
        text = Path(file).read_text(encoding="utf-8")
        refused = refusal(text)
        url, fits = issue_url(text, repo)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        click.echo(
            f"QJ409: cannot read {file} as a JSON report: {exc}\n  hint: pass an energy.json file", err=True
        )
        sys.exit(2)
    if refused:
        click.echo(f"{file}: the bot would refuse this report, so no issue URL is printed:", err=True)
        for line in refused:
            click.echo(f"  {line}", err=True)
        click.echo(f"  (python -m measure check {file} shows every problem and its hint)", err=True)
        sys.exit(1)
    click.echo(url)
    if not fits:
        click.echo(
            "The report is too long for a URL: open the link and paste the file's contents into the "
            "report field.",
            err=True,
        )
