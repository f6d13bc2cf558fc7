"""Randomized GitHub-fault campaign: N submissions against the fake GitHub with a share of every API call
failing (5xx, 403/429 with Retry-After, connection reset, lost answer, timeout).

Prints, after the first pass and each re-run of the `bot-error` issues, how many submissions are in each
state: `pr-open`, `refused` (with a coded comment), `retry` (bot-error label + error comment), and the
two that must stay zero: `none` (no state: silently dropped) and `several` (inconsistent).

    python -m benchmarks.fault_campaign [--submissions 200] [--rate 0.2] [--seed 7]
"""

from __future__ import annotations

import sys
import time

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--submissions", default=200, show_default=True, help="Number of issues filed.")
@click.option("--rate", default=0.2, show_default=True, help="Share of API requests that fail.")
@click.option("--seed", default=7, show_default=True, help="Seed of the submissions and the faults.")
def main(submissions: int, rate: float, seed: int) -> None:
    """Run the campaign and print the tally of every pass."""
    import curves
    import gallery
    from tests.support.hostile import campaign

    curves_data = curves.load_curves()
    base = gallery.render_files([], curves_data)
    start = time.perf_counter()
    out = campaign.run(submissions, rate, seed, curves_data, base, echo=click.echo)
    last = out["passes"][-1]
    click.echo(
        f"{submissions} submissions, {out['requests']} API requests, {out['failed_share']:.1%} failed "
        f"by injection {out['faults']}"
    )
    click.echo(f"expected: {out['expected']}; runs that could not record their failure: {out['unrecorded']}")
    click.echo(
        f"retry waits asked for (not slept): {out['waits_s']:.0f} s; wall {time.perf_counter() - start:.0f} s"
    )
    ok = all(p["none"] == 0 and p["several"] == 0 for p in out["passes"]) and last["retry"] == 0
    ok = (
        ok and last["pr-open"] == out["expected"]["pr-open"] and last["refused"] == out["expected"]["refused"]
    )
    click.echo(
        f"every submission in exactly one state after every pass: {ok}; bot-error left: {last['retry']} "
        f"after {len(out['passes'])} pass(es)"
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
