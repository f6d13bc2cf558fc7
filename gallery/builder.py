"""`gallery build`: the one module that reads replications/ and curves.json and writes the generated files."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gallery import plots
from gallery.codes import GalleryError
from gallery.render import page_bytes, readme_bytes, site_shell
from schema.problem import Problem
from schema.records import read_record, record_files

# Both live in the build's state folder beside the site (state_dir), never in the site folder itself: the
# site folder is what Pages publishes, and a cache of machine-specific file signatures is not for readers.
MANIFEST = ".qj-build.json"  # what the last build wrote: deterministic, drives stale-file cleanup
CACHE = ".qj-cache.json"  # record entries keyed by file signature: a cache, machine-specific, never compared
ENTRY_VERSION = "entry/3"  # bump when rows.record_entry changes shape (3: ids from the record's path)
# Bump when a template or the page layout changes, so an incremental build re-renders every page.
PAGE_VERSION = "page/1"

Progress = Callable[[str, int, int], None]


@dataclass
class BuildResult:
    """What a build did, for the CLI to print and the benchmark to quote."""

    site_dir: Path
    gallery_dir: Path
    counts: dict[str, int]
    n_rows: int
    skipped: list[dict]
    unreadable: list[Problem]  # QJ013: files under replications/ that are not records, skipped
    plots_rendered: int = 0
    plots_reused: int = 0
    pages_rendered: int = 0
    pages_reused: int = 0
    removed: int = 0
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)

    @property
    def index(self) -> Path:
        return self.site_dir / "index.html"


def load_curves_file(path: Path) -> dict:
    try:
        curves = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GalleryError("QJ601", f"no curves file at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GalleryError("QJ601", f"curves file {path} is unreadable: {exc}",
                           "Regenerate it with `python -m bot fit`.") from None
    if not isinstance(curves, dict) or not isinstance(curves.get("groups"), dict):
        raise GalleryError("QJ601", f"curves file {path} has no groups")
    return curves


def state_dir(site_dir: Path) -> Path:
    """Where a build of `site_dir` keeps its manifest and cache: `.<site name>.qj-build` beside it."""
    return site_dir.parent / f".{site_dir.name}.qj-build"


def _signature(path: Path) -> list[int]:
    st = os.stat(path, follow_symlinks=False)  # a dangling link is refused by read_record, never followed
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


def _page_key(row: dict, digest: str, geom_hash: str, curves_version: str) -> str:
    # A row is a function of its record (digest), the curves (version) and its id; the page adds the plot
    # geometry its point is placed on. Any of them changing re-renders the page.
    blob = "|".join((PAGE_VERSION, digest, row["id"], geom_hash, curves_version))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _load_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entries(root: Path, curves: dict, cache: dict) -> tuple[list, list, list, list, list, dict]:
    """Record entries (cached when the file's size, mtime and inode are unchanged), their paths and digests,
    the records parsed this time (None where cached), the unreadable files, and the new cache."""
    from gallery.render import curves_api
    from gallery.rows import record_entry

    grade = curves_api()[0]
    entries, rels, digests, loaded, unreadable, new_cache = [], [], [], [], [], {}
    for rel, path in record_files(root):
        signature = _signature(path)
        hit = cache.get(rel)
        if hit and hit.get("sig") == signature:
            entry, digest, record = hit["entry"], hit["digest"], None
        else:
            record, digest, problem = read_record(path, rel)
            if problem:
                unreadable.append(problem)
                continue
            entry = record_entry(record, curves, grade, rel)
        entries.append(entry)
        rels.append(rel)
        digests.append(digest)
        loaded.append(record)
        new_cache[rel] = {"sig": signature, "digest": digest, "entry": entry}
    return entries, rels, digests, loaded, unreadable, new_cache


def build(repo_root: Path | str, out_site: Path | str | None = None, incremental: bool = False,
          progress: Progress | None = None) -> BuildResult:
    """Write gallery/README.md, gallery/plots/* and the static site; with `incremental`, reuse what the last
    build cached (records whose file is unchanged, plots whose input hash is unchanged, pages whose record,
    id, curves and plot geometry are unchanged).

    Both modes write byte-identical files for the same input. The record cache trusts a file's size,
    modification time and inode; a full build (the default) reads every record.
    """
    started = time.perf_counter()
    root = Path(repo_root)
    gallery_dir = root / "gallery"
    site_dir = Path(out_site) if out_site is not None else gallery_dir / "site"
    if site_dir.exists() and not site_dir.is_dir():
        raise GalleryError("QJ603", f"{site_dir} is a file, not a folder")
    tick = progress or (lambda stage, done, total: None)
    curves = load_curves_file(root / "reference" / "curves.json")
    version = str(curves.get("version"))
    state = state_dir(site_dir)
    # A site built before the state folder existed kept both files inside it: they are moved out, so
    # nothing of the cache is ever published.
    for name in (MANIFEST, CACHE):
        legacy = site_dir / name
        if legacy.is_file() and not (state / name).exists():
            _write(state / name, legacy.read_bytes())
        if legacy.is_file():
            legacy.unlink()
    old = _load_json(state / MANIFEST) if incremental else {}
    old_cache = _load_json(state / CACHE) if incremental else {}
    usable = old_cache.get("curves_version") == version and old_cache.get("entry_version") == ENTRY_VERSION
    entries, rels, digests, loaded, unreadable, cache = _entries(root, curves, old_cache.get("records", {})
                                                                 if usable else {})
    from gallery.render import compose_entries, render_plot

    model = compose_entries(entries, curves, loaded)
    result = BuildResult(site_dir=site_dir, gallery_dir=gallery_dir, counts=model.counts,
                         n_rows=len(model.rows), skipped=model.skipped, unreadable=unreadable)
    written: dict[str, str] = {}  # site-relative path -> what it is, for the manifest and stale cleanup

    _write(gallery_dir / "README.md", readme_bytes(model, curves))
    plot_hashes: dict[str, str] = {}
    every_plot = model.all_plots()
    for i, (name, spec) in enumerate(every_plot.items()):
        key = plots.spec_hash(spec)
        plot_hashes[name] = key
        targets = [folder / f"{name}.{fmt}" for folder in (gallery_dir / "plots", site_dir / "plots")
                   for fmt in ("png", "svg")]
        if (old.get("plots") or {}).get(name) == key and all(t.is_file() for t in targets):
            result.plots_reused += 1
        else:
            for fmt in ("png", "svg"):
                content = render_plot(spec, fmt)
                _write(gallery_dir / "plots" / f"{name}.{fmt}", content)
                _write(site_dir / "plots" / f"{name}.{fmt}", content)
            result.plots_rendered += 1
        written[f"plots/{name}.png"] = written[f"plots/{name}.svg"] = "plot"
        tick("plots", i + 1, len(every_plot))
    for stale in sorted((gallery_dir / "plots").glob("*")):
        if stale.is_file() and stale.suffix in (".png", ".svg") and stale.stem not in every_plot:
            stale.unlink()
            result.removed += 1

    for rel, content in site_shell(model, curves).items():
        _write(site_dir / rel, content)
        written[rel] = "shell"
    geom_hashes = {name: plots.spec_hash(plots.geometry(spec)) for name, spec in model.specs.items()}
    page_keys: dict[str, str] = {}
    old_pages = old.get("pages") or {}
    for i, (row, source) in enumerate(zip(model.rows, model.sources, strict=True)):
        rel = row["page"]
        geom = geom_hashes.get(plots.plot_name(row["arch"], row["precision"]), "")
        key = _page_key(row, digests[source], geom, version)
        page_keys[rel] = key
        if old_pages.get(rel) == key and (site_dir / rel).is_file():
            result.pages_reused += 1
        else:
            record = loaded[source]
            if record is None:  # cached entry: read the record only now that its page must be written
                record = read_record(root / rels[source], rels[source])[0]
            _write(site_dir / rel, page_bytes(row, record, model, curves))
            result.pages_rendered += 1
        written[rel] = "page"
        if (i + 1) % 250 == 0 or i + 1 == len(model.rows):
            tick("pages", i + 1, len(model.rows))

    # Only files an earlier build recorded are ever removed: a --site-dir may hold other things.
    for rel in sorted(set(_load_json(state / MANIFEST).get("files") or []) - set(written)):
        target = site_dir / rel
        if ".." not in Path(rel).parts and target.is_file():
            target.unlink()
            result.removed += 1
    manifest = {"plots": plot_hashes, "pages": page_keys, "files": sorted(written)}
    _write(state / MANIFEST, json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode())
    cache_doc = {"curves_version": version, "entry_version": ENTRY_VERSION, "records": cache}
    _write(state / CACHE, json.dumps(cache_doc, separators=(",", ":")).encode())
    result.files = sorted(written)
    result.seconds = time.perf_counter() - started
    return result
