"""`gallery build`: the one module that reads replications/ and curves.json and writes the generated files."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gallery import plots
from gallery.codes import GalleryError
from gallery.render import Model, compose, page_bytes, readme_bytes, site_shell

MANIFEST = ".qj-build.json"
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
    unreadable: list[dict]
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


def read_records(replications: Path) -> tuple[list[dict], list[str], list[dict]]:
    """Every record under replications/ in path order, the sha256 of each file, and the unreadable ones."""
    records, digests, unreadable = [], [], []
    if not replications.is_dir():
        return records, digests, unreadable
    for path in sorted(replications.rglob("*.json")):
        rel = path.relative_to(replications.parent).as_posix()
        try:
            blob = path.read_bytes()
            record = json.loads(blob)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            unreadable.append({"path": rel, "code": "QJ602", "reason": str(exc).splitlines()[0]})
            continue
        if not isinstance(record, dict) or not isinstance(record.get("report"), dict):
            unreadable.append({"path": rel, "code": "QJ602", "reason": "not a record object with a report"})
            continue
        records.append(record)
        digests.append(hashlib.sha256(blob).hexdigest())
    return records, digests, unreadable


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


def _page_key(row: dict, digest: str, model: Model, curves_version: str) -> str:
    spec = model.specs.get(plots.plot_name(row["arch"], row["precision"]))
    geom = plots.geometry(spec) if spec else None
    blob = json.dumps([PAGE_VERSION, row, digest, geom, curves_version], sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _load_manifest(site_dir: Path) -> dict:
    try:
        manifest = json.loads((site_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def build(repo_root: Path | str, out_site: Path | str | None = None, incremental: bool = False,
          progress: Progress | None = None) -> BuildResult:
    """Write gallery/README.md, gallery/plots/* and the static site; with `incremental`, re-render only
    plots whose input hash changed and pages whose record, verdict or plot geometry changed.

    Both modes write byte-identical files for the same input.
    """
    started = time.perf_counter()
    root = Path(repo_root)
    gallery_dir = root / "gallery"
    site_dir = Path(out_site) if out_site is not None else gallery_dir / "site"
    tick = progress or (lambda stage, done, total: None)
    curves = load_curves_file(root / "reference" / "curves.json")
    records, digests, unreadable = read_records(root / "replications")
    digest_of = {id(record): digest for record, digest in zip(records, digests, strict=True)}
    model = compose(records, curves)
    old = _load_manifest(site_dir) if incremental else {}
    result = BuildResult(site_dir=site_dir, gallery_dir=gallery_dir, counts=model.counts,
                         n_rows=len(model.rows), skipped=model.skipped, unreadable=unreadable)
    written: dict[str, str] = {}  # site-relative path -> what it is, for the manifest and stale cleanup

    _write(gallery_dir / "README.md", readme_bytes(model, curves))
    plot_hashes: dict[str, str] = {}
    for i, (name, spec) in enumerate(model.specs.items()):
        key = plots.spec_hash(spec)
        plot_hashes[name] = key
        targets = [gallery_dir / "plots" / f"{name}.{fmt}" for fmt in ("png", "svg")]
        targets += [site_dir / "plots" / f"{name}.{fmt}" for fmt in ("png", "svg")]
        if (old.get("plots") or {}).get(name) == key and all(t.is_file() for t in targets):
            result.plots_reused += 1
        else:
            for fmt in ("png", "svg"):
                content = plots.render(spec, fmt)
                _write(gallery_dir / "plots" / f"{name}.{fmt}", content)
                _write(site_dir / "plots" / f"{name}.{fmt}", content)
            result.plots_rendered += 1
        written[f"plots/{name}.png"] = written[f"plots/{name}.svg"] = "plot"
        tick("plots", i + 1, len(model.specs))
    for stale in sorted((gallery_dir / "plots").glob("*")):
        if stale.is_file() and stale.suffix in (".png", ".svg") and stale.stem not in model.specs:
            stale.unlink()
            result.removed += 1

    for rel, content in site_shell(model, curves).items():
        _write(site_dir / rel, content)
        written[rel] = "shell"
    page_keys: dict[str, str] = {}
    old_pages = old.get("pages") or {}
    for i, (row, record) in enumerate(zip(model.rows, model.records, strict=True)):
        rel = row["page"]
        key = _page_key(row, digest_of.get(id(record), ""), model, str(curves.get("version")))
        page_keys[rel] = key
        if old_pages.get(rel) == key and (site_dir / rel).is_file():
            result.pages_reused += 1
        else:
            _write(site_dir / rel, page_bytes(row, record, model, curves))
            result.pages_rendered += 1
        written[rel] = "page"
        if (i + 1) % 250 == 0 or i + 1 == len(model.rows):
            tick("pages", i + 1, len(model.rows))

    # Only files an earlier build recorded are ever removed: a --site-dir may hold other things.
    for rel in sorted(set(_load_manifest(site_dir).get("files") or []) - set(written)):
        target = site_dir / rel
        if ".." not in Path(rel).parts and target.is_file():
            target.unlink()
            result.removed += 1
    manifest = {"plots": plot_hashes, "pages": page_keys, "files": sorted(written)}
    _write(site_dir / MANIFEST, json.dumps(manifest, sort_keys=True, indent=0).encode())
    result.files = sorted(written)
    result.seconds = time.perf_counter() - started
    return result
