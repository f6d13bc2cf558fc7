"""`measure run` with no GPU or no NVML: one honest reference report per precision, or a usage error."""

from __future__ import annotations

from pathlib import Path

from measure import __version__
from measure.codes import MeasureError, problem
from measure.core.reference import reference_report
from measure.run.env import Env
from measure.run.options import EXIT_NO_GPU, RunOptions, RunResult, out_paths
from measure.run.provenance import provenance, software
from measure.run.reports import write_report
from schema.models import KNOWN_ARCHS, lookup_model


def size_without_loading(model: str) -> tuple[float | None, str]:
    """(params_b, how) of a model id or path with no GPU and no download: the known-model table, else a
    local folder's config.json counted on the meta device; (None, why) otherwise."""
    known = lookup_model(model)
    if known is not None:
        return known.counted_b, f"size of {known.name} from the known-model table"
    config = Path(model) / "config.json"
    if config.is_file():
        try:
            import torch
            from transformers import AutoConfig, AutoModelForCausalLM

            with torch.device("meta"):
                built = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(str(Path(model))))
            return sum(p.numel() for p in built.parameters()) / 1e9, f"size counted from {config}"
        except Exception as exc:  # an unreadable or unsupported config: say so, never guess a size
            return None, f"{config} could not be read ({type(exc).__name__}: {str(exc)[:120]})"
    return None, f"{model!r} is not a known model and not a local folder with a config.json"


def run_reference(opts: RunOptions, env: Env) -> RunResult:
    """The curve's value for this size on --gpu-arch, never labelled measured; a usage error (QJ409)
    when there is nothing honest to write."""
    if opts.gpu_arch is None:  # a reference value is per architecture; with no GPU there is none to name
        raise MeasureError(
            "QJ409",
            f"{env.reason}, so nothing can be measured here. Pass --gpu-arch ARCH ({', '.join(KNOWN_ARCHS)}) "
            "to write a reference report instead: the published curve's value for this model size on that "
            "architecture, never graded",
        )
    name, mid, weights, params_b = opts.names()
    size_note = None
    if params_b is None:
        params_b, size_note = size_without_loading(opts.model)
        if params_b is None:
            raise MeasureError(
                "QJ409",
                f"{env.reason}, and the size of {opts.model} is unknown without loading it: {size_note}. "
                "Pass --synthetic NAME, a model of the known table (schema/models.py) or a local folder",
            )
    precisions = list(opts.precisions) or ["FP16"]
    paths, warnings, rows = [], [], []
    for prec, path in out_paths(opts.out_dir, precisions).items():
        rep = reference_report(
            reason=env.reason if size_note is None else f"{env.reason}; {size_note}",
            arch=opts.gpu_arch,
            precision=prec,
            backend=opts.backend,
            model_name=name,
            model_id=mid,
            params_b=params_b,
            weights=weights,
            tokens=opts.protocol.tokens,
            timestamp_utc=env.timestamp(),
            software=software(None),
            provenance=provenance(__version__, opts.argv),
        )
        warnings += write_report(path, rep)
        paths.append(path)
        rows.append(
            {
                "precision": prec,
                "basis": rep["results"]["basis"],
                "delta_e_pct": rep["results"]["vs_fp16_energy_pct"],
                "note": rep["results"]["note"],
            }
        )
    return RunResult(EXIT_NO_GPU, paths, rows, [problem("QJ401", env.reason), *warnings])
