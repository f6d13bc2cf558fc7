"""The honest no-GPU report: reference values from the fitted curves, never labelled measured."""

from __future__ import annotations

from measure import __version__
from measure.core.report import TOOL, round_floats


def _fp16_energy(arch: str, params_b: float) -> tuple[float, str]:
    """FP16 mJ/token of `arch`'s anchors (every anchor file the curves are fitted on, so Hopper's come from
    the project's own H200 rows), linear in size between the nearest two."""
    from curves.anchors import read_anchor_files
    from curves.store import DEFAULT_ANCHOR_PATHS

    pts = sorted(
        {
            (float(r["params_b"]), float(r["energy_fp16_j1k"]))
            for r in read_anchor_files(DEFAULT_ANCHOR_PATHS)
            if r["arch"] == arch
        }
    )
    if not pts:
        raise ValueError(f"no {arch} anchors")
    sizes = sorted({n for n, _ in pts})
    mean_at = {n: sum(e for m, e in pts if m == n) / sum(1 for m, _ in pts if m == n) for n in sizes}
    if params_b <= sizes[0] or params_b >= sizes[-1]:
        near = sizes[0] if params_b <= sizes[0] else sizes[-1]
        return mean_at[near], f"FP16 energy of the nearest {arch} anchor size ({near} B)"
    hi = next(n for n in sizes if n >= params_b)
    lo = max(n for n in sizes if n <= params_b)
    w = 0 if hi == lo else (params_b - lo) / (hi - lo)
    return (
        mean_at[lo] * (1 - w) + mean_at[hi] * w,
        f"FP16 energy interpolated between {arch} anchors at {lo} and {hi} B",
    )


def reference_values(
    arch: str | None, precision: str, backend: str, params_b: float | None, curves: dict | None = None
) -> dict:
    """basis, dE% (`pct`), its sd, the FP16 and quantized mJ/token and a note, from curves.predict and the
    anchors; basis unavailable with the reason when there is no curve. `curves` defaults to the shipped
    curves.json."""
    if arch is None:
        return {
            "basis": "unavailable",
            "pct": None,
            "note": "no GPU architecture known; pass --gpu-arch to get reference values",
        }
    if params_b is None:
        return {"basis": "unavailable", "pct": None, "note": "model size unknown without loading it"}
    try:
        import curves as curves_pkg

        table = curves if curves is not None else curves_pkg.load_curves()
        key, group = curves_pkg.resolve_curve(table, arch, precision, backend)
        if key is None:
            return {"basis": "unavailable", "pct": None, "note": f"no reference curve: {group}"}
        mean_pct, sd_pp = curves_pkg.predict(table, key, params_b)
        fp16_arch = group.get("borrowed_from") or group.get("arch") or arch
        fp16_mj, fp16_how = _fp16_energy(fp16_arch, params_b)
    except Exception as exc:  # curves missing or broken: say so rather than invent a number
        return {"basis": "unavailable", "pct": None, "note": f"reference curves unavailable ({exc})"}
    lo, hi = group.get("size_range_b", [None, None])
    inside = lo is not None and lo <= params_b <= hi
    return {
        "basis": "interpolated" if inside else "extrapolated",
        "pct": mean_pct,
        "sd_pp": sd_pp,
        "fp16_mj": fp16_mj,
        "quant_mj": fp16_mj * (1 + mean_pct / 100),
        "note": f"reference value from curve {key} (curves {table.get('version')}), "
        f"{'inside' if inside else 'outside'} its measured size range {lo}-{hi} B; "
        f"prediction sd {sd_pp:.1f} pp; {fp16_how}, {precision} = FP16 x (1 + dE%)",
    }


def reference_report(
    *,
    reason: str,
    arch: str | None,
    precision: str,
    backend: str,
    model_name: str,
    model_id: str,
    params_b: float | None,
    weights: str,
    tokens: int,
    timestamp_utc: str,
    software: dict,
    provenance: dict,
) -> dict:
    ref = reference_values(arch, precision, backend, params_b)
    note = f"not a measurement: {reason}. {ref['note']}"
    return round_floats(
        {
            "schema_version": "quantjoule-energy/2.0",
            "benchmark": "quantjoule",
            "scenario": "SingleStream",
            "certified_benchmark_result": False,
            "timestamp_utc": timestamp_utc,
            "tool": dict(TOOL),
            "system_under_test": {
                "gpu": "none (no GPU measured; reference values)",
                "gpu_arch": arch or "unknown",
                "accelerator_count": 1,
                "gpu_uuid_sha256": None,
            },
            "workload": {
                "model_name": model_name,
                "model_id": model_id,
                "model_revision": None,
                "params_b": params_b,
                "precision": precision,
                "batch_size": 1,
                "weights": weights,
                "backend": backend,
                "new_tokens": tokens,
                "decoding": "greedy",
            },
            "measurement": {"method": "reference curve prediction (no measurement)", "sample_rate_hz": 0},
            "measurement_source": "reference-dataset",
            "results": {
                "energy_per_token_mj": ref.get("quant_mj"),
                "fp16_energy_per_token_mj": ref.get("fp16_mj"),
                "vs_fp16_energy_pct": ref["pct"],
                "avg_power_watts": None,
                "throughput_tokens_per_s": None,
                "total_energy_joules": None,
                "tokens_generated": None,
                "basis": ref["basis"],
                "note": note,
            },
            "software": software,
            "provenance": {**provenance, "tool_version": __version__},
        }
    )
