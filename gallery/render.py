"""The pure heart of the gallery: records + curves -> rows, plot specs and every generated file's content."""

from __future__ import annotations

from dataclasses import dataclass, field

from gallery import batch, draw, markdown, plots, site
from gallery.rows import assemble, counts, record_entry, with_paths
from gallery.rules import rules_js


@dataclass(frozen=True)
class Model:
    """Everything the outputs are rendered from, as plain data."""

    rows: list[dict]
    sources: list[int]  # rows[i] came from entry (and record) number sources[i]
    records: list[dict | None]  # records[i] is the record behind rows[i], when it was loaded
    skipped: list[dict]
    specs: dict[str, dict]
    counts: dict[str, int]
    batch_specs: dict[str, dict] = field(default_factory=dict)  # ΔE% against batch (gallery.batch)

    def all_plots(self) -> dict[str, dict]:
        """Every plot by file name: the size plots, then the batch plots."""
        return {**self.specs, **self.batch_specs}


def curves_api():
    """The one grader and curve lookup of curves/ (imported on first use: they bring scipy along)."""
    from curves.grade import grade
    from curves.store import predict, resolve_curve

    return grade, predict, resolve_curve


def compose_entries(entries: list[dict], curves: dict, records: list[dict | None] | None = None) -> Model:
    """The model from record entries (rows.record_entry), fresh or cached."""
    _grade, predict, resolve = curves_api()
    rows, skipped, sources = assemble(entries)
    specs = plots.plot_specs(rows, curves, predict, resolve)
    loaded = [records[i] if records is not None else None for i in sources]
    return Model(rows=rows, sources=sources, records=loaded, skipped=skipped, specs=specs,
                 counts=counts(rows), batch_specs=batch.batch_specs(rows))


def render_plot(spec: dict, fmt: str) -> bytes:
    """The bytes of any plot spec: a batch plot or a size plot."""
    return batch.render(spec, fmt) if spec.get("kind") == "batch" else draw.render(spec, fmt)


def compose(records, curves: dict) -> Model:
    """The model of `records`: a list, or a mapping of record file path -> record (ids from the paths)."""
    grade, _predict, _resolve = curves_api()
    paths, items = with_paths(records)
    entries = [record_entry(r, curves, grade, p) for p, r in zip(paths, items, strict=True)]
    return compose_entries(entries, curves, items)


def readme_bytes(model: Model, curves: dict) -> bytes:
    text = markdown.render_readme(model.rows, model.skipped, model.specs, model.counts, curves)
    return (text + markdown.batch_section(model.batch_specs)).encode("utf-8")


def render_files(records, curves: dict) -> dict[str, bytes]:
    """The committed Markdown gallery: repository-relative path -> bytes (README and every plot).

    `records` is a list, or a mapping of record file path -> record (each row's id is then its file's name).
    Pure and deterministic: the same records and curves give byte-identical files, whatever their order.
    """
    model = compose(records, curves)
    files = {"gallery/README.md": readme_bytes(model, curves)}
    for name, spec in model.all_plots().items():
        for fmt in ("png", "svg"):
            files[f"gallery/plots/{name}.{fmt}"] = render_plot(spec, fmt)
    return dict(sorted(files.items()))


def site_shell(model: Model, curves: dict) -> dict[str, bytes]:
    """The site's index, data files and assets (plots and per-replication pages come separately)."""
    files = {
        "index.html": site.render_index(model.counts, model.specs, model.skipped, curves, len(model.rows),
                                        model.batch_specs),
        "data/gallery.js": site.gallery_data(model.rows, model.counts, model.specs, curves),
        "data/curves.js": site.curves_data(curves),
        "data/rules.js": rules_js(),
    }
    out = {path: text.encode("utf-8") for path, text in files.items()}
    out.update(site.static_files())
    return out


def page_bytes(row: dict, record: dict, model: Model, curves: dict) -> bytes:
    spec = model.specs.get(plots.plot_name(row["arch"], row["precision"]))
    batch_spec = model.batch_specs.get(batch.plot_name(row["arch"], row["precision"]))
    return site.render_page(row, record, spec, curves, batch_spec).encode("utf-8")
