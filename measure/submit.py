"""`measure submit`: a prefilled new-issue URL for the replication form."""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

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
