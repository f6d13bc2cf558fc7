"""The per-group summary of curves.json as a Markdown table (curves/README.md quotes it, a test checks)."""

from __future__ import annotations

import math

from curves.model import delta_method_variance, parameter_variance


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def group_table(curves: dict) -> str:
    """One row per curve: parameters, bounds hit, scatter, LOO error, sizes, crossover, and the parameter sd
    at the geometric middle of the sizes from the sigma points next to the delta method's."""
    lines = [
        "| curve | n | A % | S % | N\\* B | on a bound | residual sd pp (dof) | σ_new pp | LOO rmse pp "
        "| sizes B | crossover B | param sd at mid size, sigma pts / delta pp |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, g in sorted(curves["groups"].items()):
        p = g["params"]
        lo_b, hi_b = g["size_range_b"]
        mid_b = math.sqrt(lo_b * hi_b)
        bound = ", ".join(f"{k} {v}" for k, v in sorted(g["on_bound"].items()) if v) or "none"
        if g["n_star_rule"] != "fitted":
            bound += "; N\\* pinned at the median size"
        name = key if not g["borrowed_from"] else f"{key} (borrows {g['borrowed_from']})"
        if g.get("source") and g["source"] != "ecocompute" and not g["borrowed_from"]:
            name += f" ({g['source']}, {g.get('weights') or 'weights not recorded'} weights)"
        cross = _num(g["crossover_b"]) if g["crossover_b"] is not None else f"none ({g['crossover_note']})"
        sd_points, sd_delta = (math.sqrt(f(g, mid_b)) for f in (parameter_variance, delta_method_variance))
        lines.append(
            f"| {name} | {g['n_points']} | {_num(p['A'], 4)} | {_num(p['S'], 4)} | {_num(p['N_star'])} "
            f"| {bound} | {_num(g['residual_sd_pp'])} ({g['dof']}) | {_num(g['sigma_pp'])} "
            f"| {_num(g['loo_rmse_pp'])} | {_num(lo_b)}–{_num(hi_b)} | {cross} "
            f"| {sd_points:.1f} / {sd_delta:.1f} |"
        )
    return "\n".join(lines) + "\n"
