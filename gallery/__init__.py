"""quantjoule gallery: deterministic plots, Markdown gallery and static site."""

from __future__ import annotations


def render_files(records: list[dict], curves: dict) -> dict[str, bytes]:
    """The committed Markdown gallery (gallery/README.md, gallery/plots/*): repo-relative path -> bytes."""
    from gallery.render import render_files as _render_files

    return _render_files(records, curves)


def changed_files(base_records, new_records, curves: dict, base_files: dict[str, bytes]) -> dict[str, bytes]:
    """The committed gallery files that differ from `base_files` once `base_records` become `new_records`
    (each a list, or a mapping of record file path -> record): what a PR adding records must change."""
    from gallery.changed import changed_files as _changed_files

    return _changed_files(base_records, new_records, curves, base_files)


def committed_files(repo_root) -> dict[str, bytes]:
    """The committed gallery files (README and plots) of a checkout: repository-relative path -> bytes."""
    from gallery.changed import committed_files as _committed_files

    return _committed_files(repo_root)


def build(repo_root, out_site=None, incremental: bool = False, progress=None):
    """Write the committed gallery files and the static site (default gallery/site/); see gallery.builder."""
    from gallery.builder import build as _build

    return _build(repo_root, out_site, incremental=incremental, progress=progress)


__all__ = ["build", "changed_files", "committed_files", "render_files"]
