"""The static site: index page, one page per replication, and the data files the browser reads (pure)."""

from __future__ import annotations

import functools
import re
from importlib import resources
from string import Template

from gallery.batch import layout as batch_layout
from gallery.batch import plot_name as batch_plot_name
from gallery.markdown import fmt_ci, fmt_pct, fmt_size, fmt_z
from gallery.plots import DPI, drawn, geometry, place, whole_generations
from gallery.rows import COUNT_KEYS, COUNT_NAMES
from schema.escape import h, json_for_script

# The browser port of the checker, in load order (each part reads what earlier parts put on window.QJ).
CHECKER_FILES = ("qj1-numbers.js", "qj2-read.js", "qj3-schema.js", "qj4-semantic.js", "qj5-claims.js",
                 "qj5-recompute.js", "qj5-trials.js", "qj6-grade.js", "qj7-panel.js")
STATIC_FILES = (*CHECKER_FILES, "app.js", "style.css")
# The site talks to nothing: no network at all, scripts and styles only from the site itself.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; "
       "object-src 'none'; base-uri 'none'; form-action 'none'")
# Columns of the compact row arrays in data/gallery.js; app.js reads them by name.
TABLE_COLUMNS = (
    "page", "date", "label", "qualifiers", "obs_pct", "ci_low_pct", "ci_high_pct", "ref_pct", "z", "card",
    "arch", "precision", "backend", "model", "params_b", "weights", "legacy", "submitter", "handle", "issue",
    "issue_url", "pr_url", "batch_size", "condition",
)
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")


def _head(depth: int) -> str:
    up = "../" * depth
    return (
        "<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{h(CSP)}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<link rel=\"icon\" href=\"data:,\">\n"
        f"<link rel=\"stylesheet\" href=\"{up}assets/style.css\">"
    )


@functools.lru_cache(maxsize=4)
def _template(name: str) -> Template:
    return Template((resources.files("gallery") / "templates" / name).read_text(encoding="utf-8"))


def counts_html(counts: dict[str, int]) -> str:
    """The counts side by side with one template: equal prominence."""
    boxes = "".join(
        f"<div class=\"count count-{label}\">"
        f"<span class=\"count-n\" id=\"count-{label}\">{counts[label]}</span>"
        f"<span class=\"count-label\">{COUNT_NAMES[label]}</span></div>"
        for label in COUNT_KEYS
    )
    return f"<div class=\"counts\">{boxes}</div>"


def _plot_figure(name: str, spec: dict, up: str, marker: tuple[float, float] | None = None,
                 clipped: bool = False, label: str = "ungraded") -> str:
    geom = geometry(spec)
    width, height = geom["size_px"]
    overlay = ""
    if marker is not None:  # the ring takes the verdict's colour, as the in-page checker's does
        cx, cy = marker[0] * width / 100, marker[1] * height / 100
        cls = f"you you-{h(label)}" + (" clipped" if clipped else "")
        overlay = f"<circle class=\"{cls}\" cx=\"{cx:.1f}\" cy=\"{cy:.1f}\" r=\"11\"></circle>"
    return (
        f"<figure class=\"plot\" id=\"plot-{h(name)}\" data-plot=\"{h(name)}\">"
        f"<div class=\"plotbox\"><img src=\"{up}plots/{h(name)}.png\" width=\"{width}\" height=\"{height}\" "
        f"alt=\"{h(spec['arch'])} {h(spec['precision'])}: ΔE% against model size\">"
        f"<svg class=\"overlay\" viewBox=\"0 0 {width} {height}\" aria-hidden=\"true\">{overlay}</svg></div>"
        f"<figcaption>{h(spec['arch'])} · {h(spec['precision'])} · {len(spec['points'])} replication(s) · "
        f"<a href=\"{up}plots/{h(name)}.svg\">SVG</a></figcaption></figure>"
    )


FILTERS = (("label", "verdict"), ("arch", "arch"), ("precision", "precision"), ("weights", "weights"),
           ("backend", "backend"), ("batch_size", "batch"))
HEADERS = (
    ("date", "date"), ("label", "verdict"), ("obs_pct", "ΔE%"), ("ci_low_pct", "95 % CI"),
    ("ref_pct", "ref ΔE%"), ("z", "z"), ("card", "card"), ("arch", "arch"), ("precision", "precision"),
    ("model", "model"), ("params_b", "size (B)"), ("weights", "weights"), ("submitter", "submitter"),
    ("issue", "issue"),
)


def _batch_figure(name: str, spec: dict, up: str) -> str:
    """A batch plot: no overlay (the check panel places a point on the size plots only). The img's size is
    the PNG's, so the browser reserves the right box before it loads (the figure grows with its legend)."""
    width_in, height_in = batch_layout(spec)["size_in"]
    return (
        f"<figure class=\"plot plot-batch\" id=\"plot-{h(name)}\" data-plot=\"{h(name)}\">"
        f"<div class=\"plotbox\"><img src=\"{up}plots/{h(name)}.png\" width=\"{round(width_in * DPI)}\" "
        f"height=\"{round(height_in * DPI)}\" "
        f"alt=\"{h(spec['arch'])} {h(spec['precision'])}: ΔE% against batch size, eager and static\"></div>"
        f"<figcaption>{h(spec['arch'])} · {h(spec['precision'])} · ΔE% against batch, eager and static side "
        f"by side · {spec['n_points']} replication(s) · <a href=\"{up}plots/{h(name)}.svg\">SVG</a>"
        "</figcaption></figure>"
    )


def render_index(counts: dict[str, int], specs: dict[str, dict], skipped: list[dict], curves: dict,
                 n_rows: int, batch_specs: dict[str, dict] | None = None) -> str:
    skipped_note = f"<p class=\"note\">{len(skipped)} record(s) not shown: not NVML measurements.</p>"
    filters = "\n".join(
        f"<label>{h(text)} <select id=\"filter-{key}\" data-column=\"{key}\">"
        "<option value=\"\">all</option></select></label>"
        for key, text in FILTERS
    )
    headers = "".join(
        f"<th scope=\"col\"><button type=\"button\" class=\"sort\" data-sort=\"{key}\">"
        f"{h(text)}</button></th>"
        for key, text in HEADERS
    )
    return _template("index.html").substitute(
        head=_head(0),
        curves_version=h(curves.get("version", "?")),
        counts=counts_html(counts),
        skipped=skipped_note if skipped else "",
        plots="\n".join([*(_plot_figure(name, spec, "") for name, spec in specs.items()),
                         *(_batch_figure(name, spec, "") for name, spec in (batch_specs or {}).items())]),
        filters=filters,
        n_rows=n_rows,
        headers=headers,
        checker="\n".join(f"<script src=\"assets/{name}\"></script>" for name in CHECKER_FILES),
    )


def gallery_data(rows: list[dict], counts: dict[str, int], specs: dict[str, dict], curves: dict) -> str:
    """data/gallery.js: the table rows as compact arrays, the counts, and each plot's geometry."""
    data = {
        "columns": list(TABLE_COLUMNS),
        "rows": [[row[c] for c in TABLE_COLUMNS] for row in rows],
        "counts": counts,
        "plots": {name: {"arch": spec["arch"], "precision": spec["precision"], **geometry(spec)}
                  for name, spec in specs.items()},
        "curves_version": curves.get("version"),
    }
    return "window.QJ_GALLERY = " + json_for_script(data) + ";\n"


def curves_data(curves: dict) -> str:
    """data/curves.js: curves.json verbatim, so the browser grades with the very same numbers."""
    return "window.QJ_CURVES = " + json_for_script(curves) + ";\n"


def static_files() -> dict[str, bytes]:
    folder = resources.files("gallery") / "static"
    return {f"assets/{name}": (folder / name).read_bytes() for name in STATIC_FILES}


_NULL = "<span class=\"null\">null</span>"


def _value(value: object) -> str:
    kind = type(value)
    if kind is float:
        return repr(value)  # digits, sign, '.', 'e', 'inf' or 'nan': nothing to escape
    if kind is int:
        return str(value)
    if value is None:
        return _NULL
    if kind is bool:
        return "true" if value else "false"
    return h(value)


def _fields(value: object, depth: int = 0) -> str:
    """Every field of a report as nested HTML tables; a list of objects becomes one table."""
    kind = type(value)
    if kind is dict:
        if not value:
            return "<span class=\"null\">{}</span>"
        body = "".join(f"<tr><th scope=\"row\">{h(k)}</th><td>{_fields(v, depth + 1)}</td></tr>"
                       for k, v in value.items())
        return f"<table class=\"fields\">{body}</table>"
    if kind is list:
        if value and depth < 4 and all(type(v) is dict for v in value):
            keys: list[str] = []
            for item in value:
                keys.extend(k for k in item if k not in keys)
            head = "".join(f"<th scope=\"col\">{h(k)}</th>" for k in keys)
            rows = []
            for item in value:
                cells = [_fields(item[k], depth + 1) if k in item else "" for k in keys]
                rows.append("<tr><td>" + "</td><td>".join(cells) + "</td></tr>")
            return f"<table class=\"fields list\"><tr>{head}</tr>{''.join(rows)}</table>"
        return "[" + ", ".join(_fields(v, depth + 1) for v in value) + "]"
    return _value(value)


def render_page(row: dict, record: dict, spec: dict | None, curves: dict,
                batch_spec: dict | None = None) -> str:
    """One replication: the verdict with its numbers, the point on its plot, then every report field.

    A replication the size plot does not draw (batch > 1, or shorter generations) gets no ring on it: a
    batch one is shown on its ΔE%-against-batch plot instead, and the page says why."""
    up = "../" * (row["id"].count("/") + 1)
    title = f"{row['model'] or 'model'} {row['precision']} on {row['card'] or row['arch']}"
    numbers = [
        ("observed ΔE%", fmt_pct(row["obs_pct"])),
        ("95 % CI", fmt_ci(row["ci_low_pct"], row["ci_high_pct"])),
        (f"reference ΔE% ({row['ref_source'] or 'none'})", fmt_pct(row["ref_pct"])),
        ("σ observed (pp)", fmt_pct(row["sigma_obs_pp"], signed=False)),
        ("σ reference (pp)", fmt_pct(row["sigma_ref_pp"], signed=False)),
        ("z", fmt_z(row["z"])),
        ("reference band", fmt_ci(row["band_low_pct"], row["band_high_pct"])),
        ("detectable difference (pp)", fmt_pct(row["min_detectable_pp"], signed=False)),
        ("condition", row["condition"] or "—"),
        ("qualifiers", ", ".join(row["qualifiers"]) or "—"),
        ("curve", row["curve_key"] or "—"),
        ("curves version", str(curves.get("version", "?"))),
    ]
    if row["reason"]:
        numbers.append(("why ungraded", row["reason"]))
    filed = ""
    if row["filed_label"]:
        filed = (f"<p class=\"note\">When filed it was graded against curves "
                 f"<code>{h(row['filed_curves_version'])}</code>: {h(row['filed_label'])}.</p>")
    figure = ""
    batch_size = int(row.get("batch_size") or 1)
    placeable = bool(row["params_b"]) and row["obs_pct"] is not None
    if placeable and not drawn(row):
        if batch_size > 1 and batch_spec is not None and whole_generations(row):
            figure = _batch_figure(batch_plot_name(row["arch"], row["precision"]), batch_spec, up)
            figure += (f"<p class=\"note\">This replication is batch {batch_size}: the size plot's curves "
                       f"are batch 1, so it is drawn against batch size here, in the "
                       f"{h(row['backend'] or 'eager')} panel, as its model's series.</p>")
        else:
            why = (f"it is batch {batch_size}" if whole_generations(row) else
                   f"it measured {row['tokens_per_run']}-token generations and the plots draw whole "
                   "256-token ones only")
            figure = f"<p class=\"note\">This replication is not on the plots: {h(why)}.</p>"
    elif placeable and spec is not None:
        left, top, clipped = place(geometry(spec), row["params_b"], row["obs_pct"])
        figure = _plot_figure(f"{row['arch']}-{row['precision']}", spec, up, (left, top), clipped,
                              row["label"])
        figure += "<p class=\"note\">The ringed point is this replication" + (
            " (outside the plotted range, shown at the edge)" if clipped else "") + ".</p>"
    login = row["submitter"]
    login_html = (f"<a href=\"https://github.com/{h(login)}\">{h(login)}</a>" if _LOGIN.fullmatch(login)
                  else h(login) or "—")
    links = [(text, url) for text, url in (("issue", row["issue_url"]), ("pull request", row["pr_url"]))
             if url]
    meta = [
        ("submitter (GitHub login)", login_html),
        ("credited as", h(record.get("credited_handle")) or "—"),
        ("affiliation", h(record.get("affiliation")) or "—"),
        ("notes", h(record.get("notes")) or "—"),
        ("submitted", h(record.get("submitted_at")) or "—"),
        ("recorded", h(record.get("recorded_at")) or "—"),
        ("links", " · ".join(f"<a href=\"{h(url)}\">{text}</a>" for text, url in links) or "—"),
        ("record", f"<code>{h(row['record_path'])}</code>"),
        ("report sha256", f"<code>{h(record.get('report_sha256'))}</code>"),
    ]
    return _template("page.html").substitute(
        head=_head(up.count("/")),
        up=up,
        title=h(title),
        subtitle=h(f"{fmt_size(row['params_b'])} B parameters · {row['weights'] or 'weights unknown'} · "
                   f"{row['backend']} backend · {row['arch']}"),
        label=row["label"],
        sentence=h(row["sentence"]),
        numbers="".join(f"<tr><th scope=\"row\">{h(k)}</th><td>{h(v)}</td></tr>" for k, v in numbers),
        filed=filed,
        figure=figure,
        meta="".join(f"<tr><th scope=\"row\">{h(k)}</th><td>{v}</td></tr>" for k, v in meta),
        fields=_fields(record.get("report")),
    )
