"""A randomized fault campaign against the fake GitHub: many submissions, a share of every API call failing.

Each submission is planned (pure, no faults) and applied once with faults on; then the state of every issue
is read back from the fake server and put in exactly one of: PR open, refused with a comment, labelled
`bot-error` for retry. Re-runs apply the plans of the `bot-error` issues again (what a `/recheck` or the
contributor's next edit does) until none is left. Used by tests/hostile (a slice) and
benchmarks/fault_campaign.py (the full run).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from bot.forge import ERROR_LABEL, Retrier, apply_plan
from bot.intake import read_event
from bot.plan import ERROR_MARKER, STICKY_MARKER, PlanContext, build_plan
from tests.support.fake_github import FakeGitHub, RandomFaults
from tests.support.hostile.corpus import HOPPER, LEGACY_MEASURED, VOLTA, cases
from tests.support.hostile.harness import github_forge, seed_fake
from tests.support.webhooks import form_body, issues_event

KINDS = ("500", "502", "503", "rate", "rate403", "reset", "lost", "timeout")
STATES = ("pr-open", "refused", "retry")


def bodies(n: int, seed: int) -> list[str]:
    """`n` issue bodies: about 60 % distinct valid constructed reports, the rest from the hostile corpus."""
    rng = random.Random(seed)
    hostile = [c.bodies[-1] for c in cases() if c.status == "refused" and c.bodies[-1]]
    out = []
    for i in range(n):
        if rng.random() < 0.6:
            base = json.loads(rng.choice((HOPPER, VOLTA, HOPPER)))
            base["protocol"]["seed"] = i  # a distinct report (sha256), same numbers
            out.append(form_body(json.dumps(base, indent=2)))
        elif rng.random() < 0.1:
            out.append(form_body(LEGACY_MEASURED))
        else:
            out.append(rng.choice(hostile))
    return out


@dataclass
class Campaign:
    fake: FakeGitHub
    plans: dict[int, dict] = field(default_factory=dict)
    sleeps_s: list[float] = field(default_factory=list)
    unrecorded: int = 0

    def submit(self, bodies_: list[str], curves: dict, base_gallery: dict, progress=None) -> None:
        """Open one issue per body and plan it (planning reads no forge state: it is pure)."""
        for body in bodies_:
            issue = self.fake.state.add_issue("[replication] campaign", body, "octocat", ("replication",))
            payload = issues_event(number=issue["number"], body=body)
            payload["repository"]["full_name"] = self.fake.slug
            ctx = PlanContext(curves=curves, records={}, gallery_base=dict(base_gallery))
            self.plans[issue["number"]] = build_plan(read_event(payload, "issues"), ctx)
            if progress:
                progress()

    def apply(self, numbers: list[int], progress=None) -> None:
        forge = github_forge(self.fake, timeout_s=1)
        retrier = Retrier(sleep=self.sleeps_s.append)  # waits are recorded, not slept
        for number in numbers:
            result = apply_plan(forge, self.plans[number], retrier)
            self.unrecorded += not result["ok"] and not result["recorded"]
            if progress:
                progress()

    def state_of(self, number: int) -> list[str]:
        """Every state the issue is in (exactly one is the healthy answer)."""
        s = self.fake.state
        plan = self.plans[number]
        labels = {lb["name"] for lb in s.issues[number]["labels"]}
        bodies_ = [c["body"] for c in s.list_comments(number)]
        sticky = [b for b in bodies_ if b.startswith(STICKY_MARKER)]
        target = set(plan["labels"]["target"])
        branch = f"replication/issue-{number}"
        open_pr = [p for p in s.open_pulls() if p["head"]["ref"] == branch]
        states = []
        if open_pr and sticky and open_pr[0]["html_url"] in sticky[0] and labels == target:
            states.append("pr-open")
        if not open_pr and sticky and plan["pr"] is None and labels == target and "invalid" in labels:
            states.append("refused")
        if ERROR_LABEL in labels and any(b.startswith(ERROR_MARKER) for b in bodies_):
            states.append("retry")
        return states

    def tally(self) -> dict:
        counts = {name: 0 for name in (*STATES, "none", "several")}
        for number in self.plans:
            states = self.state_of(number)
            key = states[0] if len(states) == 1 else ("none" if not states else "several")
            counts[key] += 1
        return counts

    def needing_retry(self) -> list[int]:
        return [n for n in self.plans if "retry" in self.state_of(n)]


def run(n: int, rate: float, seed: int, curves: dict, base_gallery: dict, max_passes: int = 10, echo=None):
    """The whole campaign; returns {"passes": [tally, ...], "faults": {...}, "waits_s": ...}."""
    with FakeGitHub() as fake:
        seed_fake(fake, base_gallery)
        camp = Campaign(fake)
        camp.submit(bodies(n, seed), curves, base_gallery)
        fake.random_faults = RandomFaults(rate, seed, KINDS, timeout_s=1.5)
        camp.apply(sorted(camp.plans))
        passes = [camp.tally()]
        if echo:
            echo(f"pass 1: {passes[-1]}")
        while camp.needing_retry() and len(passes) < max_passes:
            camp.apply(camp.needing_retry())
            passes.append(camp.tally())
            if echo:
                echo(f"pass {len(passes)}: {passes[-1]}")
        requests = len(fake.log)
        failed = sum(fake.random_faults.drawn.values())
        return {
            "passes": passes,
            "requests": requests,
            "faults": dict(sorted(fake.random_faults.drawn.items())),
            "failed_share": failed / requests if requests else 0.0,
            "waits_s": sum(camp.sleeps_s),
            "unrecorded": camp.unrecorded,
            "expected": {
                "pr-open": sum(p["pr"] is not None for p in camp.plans.values()),
                "refused": sum(p["pr"] is None for p in camp.plans.values()),
            },
        }
