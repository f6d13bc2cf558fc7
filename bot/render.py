"""Markdown of the bot's sticky comment, verdict-change notice, PR title/body and commit message.

Every piece of submission text goes through bot.markdown (escaped, defused); numbers are formatted here.
Confirmation and contradiction share one template (equal prominence).
"""

from __future__ import annotations

import json
import re

from schema.escape import defuse, md_block, md_code, md_inline, plain

_FOOTER = (
    "<sub>Edit the issue to resubmit: the bot checks every edit. A maintainer can comment "
    "`/recheck` to run it again.</sub>"
)


# GitHub logins: letters, digits and single hyphens. Such a login reads best as a code span (as typed);
# anything else (only a forged event can carry it) is escaped like any other submission text.
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")


def _login(login: object) -> str:
    text = str(login or "")
    return md_code(text, 60) if _LOGIN.fullmatch(text) else f"`{md_inline(text, 60)}`"


def defused(markdown: str) -> str:
    """Markdown produced by the grader from validated fields: only mentions and references are defused."""
    return defuse(str(markdown))


def summary(report: dict) -> dict:
    """The fields a reader needs to recognise a point, copied (unescaped) from the report."""
    sut, wl = report.get("system_under_test") or {}, report.get("workload") or {}
    res, stats = report.get("results") or {}, (report.get("statistics") or {}).get("delta_e_pct") or {}
    return {
        "model": wl.get("model_name"),
        "params_b": wl.get("params_b"),
        "precision": wl.get("precision"),
        "weights": wl.get("weights", "unknown (legacy)"),
        "backend": wl.get("backend", "eager"),
        "gpu": sut.get("gpu"),
        "arch": sut.get("gpu_arch"),
        "source": report.get("measurement_source"),
        "basis": res.get("basis"),
        "schema_version": report.get("schema_version"),
        "n_pairs": (report.get("statistics") or {}).get("n_pairs"),
        "ci95_half_width_pp": stats.get("ci95_half_width_pp"),
        "energy_per_token_mj": res.get("energy_per_token_mj"),
        "fp16_energy_per_token_mj": res.get("fp16_energy_per_token_mj"),
        "vs_fp16_energy_pct": res.get("vs_fp16_energy_pct"),
    }


def _num(value: object, fmt: str = "{:+.1f}", unit: str = "") -> str:
    return (
        fmt.format(value) + unit if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"
    )


def _title_of(point: dict) -> str:
    s = point.get("summary") or {}
    if not s:
        return f"Report {point['index']}"
    return (
        f"Report {point['index']}: {md_inline(s['model'], 60)} {md_inline(s['precision'], 8)} "
        f"on {md_inline(s['gpu'], 60)}"
    )


def _problems(problems: list[dict]) -> list[str]:
    return [
        f"- **{p['code']}** ({p['severity']})"
        f"{' at ' + md_inline(p['path'], 80) if p['path'] else ''}: "
        f"{md_inline(p['message'], 300)}. *Hint:* {md_inline(p['hint'], 300)}"
        for p in problems
    ]


def sticky(sub, plan: dict, state: dict, marker: str, pr_slot: str) -> str:
    points = plan["points"]
    n_ok = sum(p["status"] in ("accepted", "already-recorded") for p in points)
    heading = {"accepted": "accepted", "partial": "partly accepted", "refused": "not accepted",
               "withdrawn": "withdrawn"}[plan["status"]]
    lines = [
        marker,
        f"<!-- quantjoule-state: {json.dumps(state, separators=(',', ':'))} -->",
        f"## Replication submission {heading}",
        "",
        f"Read {len(points)} report(s): {n_ok} accepted, {len(points) - n_ok} refused.",
    ]
    if plan["problems"]:
        lines += ["", "**About the issue itself**", *_problems(plan["problems"])]
    for point in points:
        lines += ["", f"### {_title_of(point)} — **{point['label']}**"]
        if point["verdict_markdown"]:
            lines += ["", point["verdict_markdown"].strip(), "", f"Record: `{point['path']}`"]
        if point["status"] == "already-recorded":
            lines.append("This report is already recorded on the main branch; nothing to add.")
        if point.get("duplicate_of"):
            url = point["duplicate_of"]["issue_url"] or ""
            lines.append(f"First submitted in {url} as `{point['duplicate_of']['path']}`.")
        if point["problems"]:
            lines += ["", *_problems(point["problems"])]
    lines += _maintainer_notes(plan)
    lines += ["", pr_slot, "", "---", _FOOTER]
    return "\n".join(lines) + "\n"


def _maintainer_notes(plan: dict) -> list[str]:
    """What a maintainer must fix on the base branch (the submission itself is planned without it)."""
    notes = plan.get("maintainer_notes") or []
    if not notes:
        return []
    return ["", "**For maintainers** (about the base branch, not this submission)", *_problems(notes)]


def notice(marker: str, before: dict, after: dict) -> str:
    old = {i: label for i, label in before.get("points", [])}
    changes = [
        f"report {i}: {old.get(i, 'absent')} → {label}" for i, label in after["points"] if old.get(i) != label
    ]
    changes += [
        f"report {i}: {label} → absent"
        for i, label in before.get("points", [])
        if i not in {j for j, _ in after["points"]}
    ]
    return (
        f"{marker}\nThe verdict changed ({'; '.join(changes)}). "
        "Details are in the bot's summary comment above.\n"
    )


def _row(label: str, value: str) -> str:
    return f"| {label} | {value} |"


def _point_table(point: dict, plot_paths: list[str]) -> list[str]:
    s, v = point["summary"], point["verdict"] or {}
    quals = ", ".join(v.get("qualifiers") or []) or "none"
    rows = [
        "| | |",
        "| --- | --- |",
        _row(
            "model",
            f"{md_inline(s['model'], 60)} ({_num(s['params_b'], '{:g}')} B params, "
            f"{md_inline(s['weights'], 20)} weights)",
        ),
        _row(
            "GPU",
            f"{md_inline(s['gpu'], 60)} ({md_inline(s['arch'], 20)}), backend {md_inline(s['backend'], 20)}",
        ),
        _row("precision", f"{md_inline(s['precision'], 8)} vs FP16, same session"),
        _row(
            "energy per token",
            f"{_num(s['energy_per_token_mj'], '{:.2f}', ' mJ')} vs FP16 "
            f"{_num(s['fp16_energy_per_token_mj'], '{:.2f}', ' mJ')}",
        ),
        _row(
            "ΔE% observed",
            f"{_num(v.get('obs_pct'), unit=' %')} ± {_num(v.get('sigma_obs_pp'), '{:.1f}', ' pp')} "
            f"(σ), {_num(s['n_pairs'], '{:d}')} paired trials",
        ),
        _row(
            "ΔE% reference",
            f"{_num(v.get('ref_pct'), unit=' %')} ± {_num(v.get('sigma_ref_pp'), '{:.1f}', ' pp')} "
            f"from {md_inline(v.get('ref_source') or '—', 20)}, curve "
            f"{md_inline(v.get('curve_key') or 'none', 60)}",
        ),
        _row("band", f"{_num(v.get('band_low_pct'), unit=' %')} … {_num(v.get('band_high_pct'), unit=' %')}"),
        _row(
            "detectable difference",
            f"{_num(v.get('min_detectable_pp'), '{:.1f}', ' pp')} (a larger |observed − reference| is a "
            f"contradiction); condition {md_inline(v.get('condition') or '—', 80)}",
        ),
        _row("z", _num(v.get("z"), "{:+.2f}")),
        _row(
            "verdict",
            f"**{md_inline(v.get('label', point['label']), 20)}**; qualifiers: {md_inline(quals, 200)}",
        ),
        _row(
            "source",
            f"{md_inline(s['source'], 40)}, basis {md_inline(s['basis'], 20)}, "
            f"{md_inline(s['schema_version'], 40)}",
        ),
        _row("report sha256", f"`{point['sha256']}`"),
        _row("record", f"`{point['path']}`"),
    ]
    if plot_paths:
        rows.append(_row("plot", ", ".join(f"`{p}`" for p in plot_paths)))
    return rows


def pull_request(sub, plan: dict) -> dict:
    ok = [p for p in plan["points"] if p["status"] in ("accepted", "already-recorded")]
    verdicts = ", ".join(sorted({p["label"] for p in ok}))
    first = ok[0]["summary"]
    more = f" (+{len(ok) - 1} more)" if len(ok) > 1 else ""
    title = (
        f"Replication from issue {sub.issue}: {plain(first['model'], 60)} {plain(first['precision'], 8)} "
        f"on {plain(first['gpu'], 60)}{more} — {verdicts}"
    )
    who = md_inline(sub.fields.get("credited_handle") or sub.submitter_login, 100)
    lines = [
        f"Adds {len(ok)} replication record(s) from issue #{sub.issue}; merging files them in the "
        "gallery (the plot and table below are already rebuilt in this diff).",
        "",
        f"- submitted by {_login(sub.submitter_login)} (GitHub login from the event), "
        f"credited as {who}",
        f"- affiliation: {md_inline(sub.fields.get('affiliation') or '—', 100)}",
        f"- GPU named in the form: {md_inline(sub.fields.get('gpu') or '—', 100)}",
        "- licence: CC BY 4.0 consent ticked" if sub.consent else "- licence: consent missing",
    ]
    if sub.fields.get("notes"):
        lines += ["- notes:", "", md_block(sub.fields["notes"], 2000)]
    for point in ok:
        plots = [
            p
            for p in plan["files"]
            if p.startswith("gallery/")
            and p.endswith((".png", ".svg"))
            and str(point["summary"]["arch"]).lower() in p.lower()
            and str(point["summary"]["precision"]).lower() in p.lower()
        ]
        warnings = [p["code"] for p in point["problems"] if p["severity"] == "warning"]
        lines += [
            "",
            f"### {_title_of(point)} — **{point['label']}**",
            "",
            *_point_table(point, plots),
            "",
            "Checks passed: report parsed (size, depth, NaN, duplicate keys) ✓ · JSON Schema ✓ · "
            "semantic checks ✓"
            + (f" (warnings: {', '.join(warnings)})" if warnings else "")
            + " · NVML measurement ✓ · not a duplicate ✓ · licence consent ✓",
            "",
            f"> {defused(point['verdict'].get('sentence') or '')}",
        ]
        png = next((p for p in plots if p.endswith(".png")), None)
        if png and sub.repo_url.startswith("https://"):
            # The plot as committed on this PR's branch, so the reviewer sees the new point on the curve.
            lines += [
                "",
                f"![plot of {md_inline(point['summary']['arch'], 20)}]"
                f"({sub.repo_url}/raw/{plan['branch']}/{png})",
            ]
    refused = [p for p in plan["points"] if p not in ok]
    if refused:
        lines += ["", f"{len(refused)} other report(s) in the issue were refused; see the issue comment."]
    lines += _maintainer_notes(plan)
    lines += ["", "Files: " + ", ".join(f"`{p}`" for p in plan["files"])]
    body = "\n".join(lines) + "\n"
    return {"title": title[:250], "body": body if len(body) < 60000 else body[:59000] + "\n\n(truncated)\n"}


def commit_message(sub, plan: dict) -> str:
    ok = [p for p in plan["points"] if p["status"] in ("accepted", "already-recorded")]
    lines = [f"Replication from issue {sub.issue}: {len(ok)} record(s)", ""]
    lines += [f"- {p['path']}: {p['label']}" for p in ok]
    return "\n".join(lines) + "\n"
