"""Fuzz intake + validate + plan with hypothesis at volume and print a tally of the outcomes.

Each example is a whole `issues` webhook payload (form sections, fenced blocks with mutated constructed
reports or random JSON, unclosed fences, hostile text, odd actions and logins); the invariants are those of
tests/support/hostile/fuzz.py (no exception, every problem coded with a hint, nothing that pings or links).

    python -m benchmarks.stress_fuzz [--examples 10000] [--seed 0]
"""

from __future__ import annotations

import collections
import sys
import time
import traceback

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--examples", default=10_000, show_default=True, help="Hypothesis examples to run.")
@click.option("--seed", default=0, show_default=True, help="Hypothesis seed (same seed, same examples).")
def main(examples: int, seed: int) -> None:
    """Run the examples; exit 1 on the first broken invariant (hypothesis prints the shrunk input)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    import curves
    import gallery
    from tests.support.hostile.fuzz import check_one, issue_payload

    curves_data = curves.load_curves()
    base = gallery.render_files([], curves_data)
    tally: collections.Counter = collections.Counter()
    codes: collections.Counter = collections.Counter()

    @hseed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(payload=issue_payload())
    def run(payload):
        outcome = check_one(payload, curves_data, base)
        tally[outcome] += 1
        if outcome != "ignored":
            from bot.intake import read_event

            sub = read_event(payload, "issues")
            codes.update(p.code for p in sub.problems)

    start = time.perf_counter()
    try:
        run()
    except Exception:  # noqa: BLE001 - the shrunk failing example is the point of the run
        traceback.print_exc()
        click.echo(f"FAILED after {sum(tally.values())} examples: {dict(tally)}")
        sys.exit(1)
    seconds = time.perf_counter() - start
    total = sum(tally.values())
    click.echo(
        f"{total} examples in {seconds:.0f} s ({total / seconds:.0f}/s), 0 unhandled exceptions, 0 leaks"
    )
    click.echo("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    click.echo("issue-level codes seen: " + ", ".join(f"{k} {v}" for k, v in sorted(codes.items())))


if __name__ == "__main__":
    main()
