"""quantjoule gallery: deterministic plots, Markdown gallery and static site."""

from __future__ import annotations


def render_files(records: list[dict], curves: dict) -> dict[str, bytes]:
    """The committed Markdown gallery (gallery/README.md, gallery/plots/*): repo-relative path -> bytes."""
    from gallery.render import render_files as _render_files

    return _render_files(records, curves)


def build(repo_root, out_site=None, incremental: bool = False, progress=None):
    """Write the committed gallery files and the static site (default gallery/site/); see gallery.builder."""
    from gallery.builder import build as _build

    return _build(repo_root, out_site, incremental=incremental, progress=progress)


__all__ = ["build", "render_files"]
