"""Concurrency: N submissions processed at once by N separate `python -m bot process --forge github`
processes against one fake GitHub, then every PR merged and the gallery rebuilt with `gallery.build`.

    python -m benchmarks.concurrency [--submissions 20]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--submissions", default=20, show_default=True, help="Processes started at once.")
def main(submissions: int) -> None:
    """Run the processes, merge, build, print what was found."""
    import curves
    import gallery
    from tests.support.hostile import concurrency

    base = gallery.render_files([], curves.load_curves())
    with tempfile.TemporaryDirectory(prefix="qj-concurrency-") as tmp:
        out = concurrency.run(submissions, Path(tmp), base, mode="cli")
    for key, value in out.items():
        click.echo(f"{key}: {value}")
    ok = (
        out["exit_codes"] == [0] * submissions
        and out["branches"] == out["pulls"] == out["merged_records"] == out["gallery_rows"] == submissions
        and out["records_per_issue"] == [1]
        and not out["mixed"]
    )
    click.echo(f"{submissions} processes -> {out['pulls']} PRs, {out['gallery_rows']} gallery rows: {ok}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
