"""Command-line entry for `python -m gallery`: thin commands over gallery.builder."""

from __future__ import annotations

from pathlib import Path

import click

from gallery.codes import GalleryError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Build the replication gallery (plots, Markdown, static site)."""


@main.command()
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root holding replications/ and reference/curves.json.")
@click.option("--site-dir", type=click.Path(path_type=Path), default=None,
              help="Where to write the static site [default: ROOT/gallery/site].")
@click.option("--incremental", is_flag=True,
              help="Re-render only the plots and pages whose inputs changed since the last build.")
def build(root: Path, site_dir: Path | None, incremental: bool) -> None:
    """Rebuild gallery/README.md, gallery/plots/ and the static site from replications/."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from gallery.builder import build as run_build

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console,
                  transient=True) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        try:
            result = run_build(root, site_dir, incremental=incremental, progress=progress)
        except GalleryError as exc:
            raise click.ClickException(exc.render()) from None
        except OSError as exc:
            raise click.ClickException(GalleryError("QJ603", str(exc)).render()) from None
    counts = result.counts
    click.echo(f"{result.n_rows} replication(s): {counts['confirmation']} confirmation(s), "
               f"{counts['contradiction']} contradiction(s), {counts['self-anchored']} self-anchored, "
               f"{counts['ungraded']} ungraded")
    click.echo(f"plots: {result.plots_rendered} rendered, {result.plots_reused} unchanged; "
               f"pages: {result.pages_rendered} rendered, {result.pages_reused} unchanged "
               f"({result.seconds:.2f} s)")
    for item in result.skipped:
        click.echo(f"not shown: {item['id']}: {item['reason']}")
    for p in result.unreadable:
        click.echo(f"{p.code}: {p.message}\n  hint: {p.hint}", err=True)
    click.echo(f"Markdown gallery: {result.gallery_dir / 'README.md'}")
    index = result.index.resolve()
    click.echo(f"Open the site: {index.as_uri()}")
    click.echo(f"  or serve it: python -m http.server --directory {result.site_dir} 8000  ->  http://127.0.0.1:8000/")


@main.command("merged-issues")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root (a git checkout).")
@click.option("--before", default=None, help="Commit before the push (github.event.before); HEAD~1 if unset.")
@click.option("--after", default="HEAD", show_default=True, help="Commit after the push.")
def merged_issues_cmd(root: Path, before: str | None, after: str) -> None:
    """Print `ISSUE:PAGE` for each submission whose record the push added or changed (for the workflow).

    Each item is built from the record by the one naming rule (schema.records), so it only ever holds
    digits, `r/`, `[a-z0-9.-]`, `[A-Z0-9]` and `.html`; a file that is not a record is named on stderr."""
    import subprocess

    from gallery.merged import changed_record_paths, merged_issues

    try:
        paths = changed_record_paths(root, before, after)
    except (OSError, subprocess.CalledProcessError) as exc:
        error = GalleryError("QJ604", f"cannot list the changed records: {exc}")
        raise click.ClickException(error.render()) from None
    found, unreadable = merged_issues(root, paths)
    for p in unreadable:  # the workflow reads stdout only; the run's log keeps these for a maintainer
        click.echo(f"{p.code}: {p.message}\n  hint: {p.hint}", err=True)
    click.echo(" ".join(f"{issue}:{page}" for issue, page in found))
