"""The committed gallery files: those of a checkout, and those a change of records alters (README, plots).

`changed_files` is pure. `gallery.render_files` renders every plot (about 0.1 s each with matplotlib),
which alone would take planning over its one-second budget. The gallery composes its plot specs cheaply
and hashes them, so `changed_files` composes the gallery before and after the new records, renders only
the plots whose spec changed (or that the base branch lacks), and keeps the README only when its bytes
change. The output equals `gallery.render_files(after)` restricted to the files that differ from the base
branch's.
"""

from __future__ import annotations

from pathlib import Path

from gallery import draw, plots
from gallery.render import compose, readme_bytes


def committed_files(repo_root: str | Path) -> dict[str, bytes]:
    """The committed gallery files (README and plots) of a checkout, keyed by repository-relative path."""
    root = Path(repo_root)
    found = sorted((root / "gallery").glob("README.md")) + sorted((root / "gallery" / "plots").glob("*"))
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in found if path.is_file()}


def changed_files(
    base_records: list[dict] | dict[str, dict],
    new_records: list[dict] | dict[str, dict],
    curves: dict,
    base_files: dict[str, bytes],
) -> dict[str, bytes]:
    """Repository-relative path -> bytes for every gallery file that differs from `base_files`."""
    before, after = compose(base_records, curves), compose(new_records, curves)
    out = {}
    readme = readme_bytes(after, curves)
    if base_files.get("gallery/README.md") != readme:
        out["gallery/README.md"] = readme
    for name, spec in after.specs.items():
        old = before.specs.get(name)
        paths = {fmt: f"gallery/plots/{name}.{fmt}" for fmt in ("png", "svg")}
        unchanged = old is not None and plots.spec_hash(old) == plots.spec_hash(spec)
        if unchanged and all(p in base_files for p in paths.values()):
            continue
        for fmt, path in paths.items():
            content = draw.render(spec, fmt)
            if base_files.get(path) != content:
                out[path] = content
    return dict(sorted(out.items()))
