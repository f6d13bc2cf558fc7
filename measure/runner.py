"""`measure run` as one core function: probe, load arms, run the protocol, write reports.

Dependencies (power source, sampler, workload, clock) come in through `Env`, so the CPU tests run
the whole path with a fake power source and real torch + bitsandbytes.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from measure import __version__
from measure import record as raw
from measure.analysis import analyse, subset
from measure.codes import MeasureError
from measure.gpu_arch import bandwidth_gb_s, resolve_arch
from measure.pinning import choose_cpus, pin_current_process
from measure.protocol import Outcome, PowerLost, Protocol, ProtocolConfig
from measure.provenance import provenance, software
from measure.reference import reference_report
from measure.report import MAX_REPORT_BYTES, build_report, dumps

EXIT_OK, EXIT_USAGE, EXIT_NO_GPU, EXIT_PARTIAL = 0, 2, 3, 4
PRECISIONS = ("NF4", "INT8")
METHOD = {
    "paired": "NVML total-energy counter per window + instant-power trace (separate process), "
    "resident arms, mirrored paired blocks (F Q Q F), loaded-idle cooldown",
    "all": "NVML total-energy counter per window + instant-power trace (separate process), "
    "resident arms, mirrored interleaved blocks (A B C C B A), loaded-idle cooldown",
}


@dataclass
class RunOptions:
    model: str | None = None
    synthetic: str | None = None
    precisions: tuple[str, ...] = PRECISIONS
    backend: str = "eager"
    device: int = 0
    gpu_arch: str | None = None
    out_dir: Path = Path(".")
    sample_rate_hz: float = 100.0
    pin_cpu: bool = False  # decode on one CPU, sampler on another core (measure.pinning)
    # bitsandbytes llm_int8_threshold for the INT8 arm; None = LLM.int8()'s default (6.0). 0.0 drops the
    # outlier decomposition, which changes what INT8 measures (recorded as workload.int8_outlier_threshold)
    int8_threshold: float | None = None
    argv: list[str] = field(default_factory=list)
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)


@dataclass
class Env:
    """Side effects of a run. `power` is None when there is no usable GPU/NVML (reason says why)."""

    power: object | None
    sampler: object | None
    workload: Callable | None  # (model_spec, backend, device, batch_size=, int8_threshold=) -> Workload
    reason: str | None = None
    device: str = "cuda:0"
    cpus: tuple[int, int] | None = None  # (measuring CPU, sampler CPU) when pinned
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    now_utc: Callable[[], datetime] = lambda: datetime.now(timezone.utc)


@dataclass
class RunResult:
    exit_code: int
    paths: list[Path]
    rows: list[dict]
    warnings: list[str]
    record: Path | None = None  # the raw record the reports were computed from


def model_spec(opts: RunOptions) -> str:
    return f"synthetic:{opts.synthetic}" if opts.synthetic else opts.model


# test-only: a real `python -m measure run` process on the fake power source and the CPU, so a real
# Ctrl-C can be sent to it; everything it writes is `simulated` and can never pass as a measurement
SIMULATE_ENV = "QUANTJOULE_SIMULATE_POWER"
SIMULATED_TRACE = ((0.0, 124.0), (0.25, 133.0), (0.5, 124.0))


def simulated_env(opts: RunOptions) -> Env:
    from measure.fake_power import FakePowerSource, open_fake
    from measure.sampler import ProcessSampler
    from measure.workload import Workload

    epoch = time.monotonic()
    src = FakePowerSource(SIMULATED_TRACE, epoch_s=epoch)
    sampler = ProcessSampler(functools.partial(open_fake, SIMULATED_TRACE, epoch), opts.sample_rate_hz)
    return Env(src, sampler, Workload, device="cpu")


def default_env(opts: RunOptions) -> Env:
    """The real GPU environment, or one with power=None and the reason."""
    if os.environ.get(SIMULATE_ENV) == "1":
        return simulated_env(opts)
    try:
        import torch
    except ImportError:
        return Env(None, None, None, reason="torch is not installed")
    if not torch.cuda.is_available():
        return Env(None, None, None, reason="no CUDA GPU is visible to torch")
    from measure.nvml import open_nvml
    from measure.sampler import ProcessSampler
    from measure.workload import Workload

    try:
        power = open_nvml(opts.device)
    except MeasureError as exc:
        return Env(None, None, None, reason=exc.message)
    cpus = choose_cpus() if opts.pin_cpu else None
    sampler = ProcessSampler(
        functools.partial(open_nvml, opts.device), opts.sample_rate_hz, cpu=cpus[1] if cpus else None
    )
    return Env(power, sampler, Workload, device=f"cuda:{opts.device}", cpus=cpus)


def _timestamp(env: Env) -> str:
    return env.now_utc().strftime("%Y-%m-%dT%H:%M:%SZ")


def _names(opts: RunOptions) -> tuple[str, str, str, float | None]:
    """(model_name, model_id, weights, params_b if known without loading)."""
    if opts.synthetic:
        from measure.synthetic import get_spec

        spec = get_spec(opts.synthetic)
        return spec.model_name, f"synthetic:{spec.name}", "random-init", spec.published_params_b
    return opts.model.rstrip("/").split("/")[-1], opts.model, "pretrained", None


def _out_paths(out_dir: Path, precisions: list[str]) -> dict[str, Path]:
    if len(precisions) == 1:
        return {precisions[0]: out_dir / "energy.json"}
    return {p: out_dir / f"energy-{p.lower()}.json" for p in precisions}


def _validate(report: dict) -> list[str]:
    try:
        from schema.validate import validate
    except ImportError:
        return []
    return [f"{p.code} {p.path}: {p.message}" for p in validate(report) if p.severity == "error"]


def _write(path: Path, report: dict) -> list[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(report)
    path.write_text(text, encoding="utf-8")
    too_big = len(text.encode()) > MAX_REPORT_BYTES
    size = [f"QJ413: {path.name} is {len(text.encode())} bytes, over {MAX_REPORT_BYTES}"] if too_big else []
    return size + [f"{path.name}: {e}" for e in _validate(report)]


def size_without_loading(model: str) -> tuple[float | None, str]:
    """(params_b, how) of a model id or path with no GPU and no download: the known-model table, else a
    local folder's config.json counted on the meta device; (None, why) otherwise."""
    from schema.models import lookup_model

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
    """No GPU or no NVML: one honest reference report per precision (the curve's value for this size on
    --gpu-arch, never labelled measured), or a usage error when there is nothing honest to write."""
    if opts.gpu_arch is None:  # a reference value is per architecture; with no GPU there is none to name
        raise MeasureError(
            "QJ409",
            f"{env.reason}, so nothing can be measured here. Pass --gpu-arch ARCH (hopper, ada, ampere, "
            "blackwell, turing, volta) to write a reference report instead: the published curve's value for "
            "this model size on that architecture, never graded",
        )
    name, mid, weights, params_b = _names(opts)
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
    for prec, path in _out_paths(opts.out_dir, precisions).items():
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
            timestamp_utc=_timestamp(env),
            software=software(None),
            provenance=provenance(__version__, opts.argv),
        )
        warnings += _write(path, rep)
        paths.append(path)
        rows.append(
            {
                "precision": prec,
                "basis": rep["results"]["basis"],
                "delta_e_pct": rep["results"]["vs_fp16_energy_pct"],
                "note": rep["results"]["note"],
            }
        )
    return RunResult(EXIT_NO_GPU, paths, rows, [f"QJ401: {env.reason}", *warnings])


def run(opts: RunOptions, env: Env, progress: Callable[..., None] | None = None) -> RunResult:
    """Measure, write one report per quantized precision, return the exit status and a summary."""
    progress = progress or (lambda *a, **k: None)
    if env.power is None:
        return run_reference(opts, env)
    power = env.power
    info = power.device_info()
    arch, how = resolve_arch(info["name"], opts.gpu_arch)
    if arch is None:  # never guess a neighbour: the verdict depends on the architecture
        raise MeasureError("QJ408", f"unknown GPU {info['name']!r}")
    warnings: list[str] = []
    arms_wanted = ["FP16", *opts.precisions]
    out = Outcome(config=opts.protocol, arms=arms_wanted)
    sampler = env.sampler
    if env.cpus:  # before the sampler starts and the arms load, so their threads inherit the mask
        pin_current_process(env.cpus[0])
    sampler.start()
    proto = Protocol(opts.protocol, power, sampler, env.clock, env.sleep, progress)
    workload = env.workload(model_spec(opts), opts.backend, env.device,
                            batch_size=opts.protocol.batch_size, int8_threshold=opts.int8_threshold)
    arms, weight_bytes, params, int8_threshold = {}, {}, {}, None
    quality: dict[str, dict] = {}
    try:
        out.idle_power_bare_w = proto.measure_bare_idle(3.0)
        t = env.clock()
        for name in arms_wanted:
            progress("load", arm=name)
            try:
                arm = workload.load(name)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # OOM or a bitsandbytes refusal: keep the other arms
                out.failed[name] = f"load failed: {type(exc).__name__}: {str(exc)[:200]}"
                progress("load_failed", arm=name, reason=out.failed[name])
                continue
            arms[name] = arm
            weight_bytes[name] = int(arm.weight_bytes)
            params[name] = float(arm.params_b)
            if name == "INT8" and hasattr(arm, "int8_thresholds"):  # as loaded, not as asked
                int8_threshold = _one_threshold(arm.int8_thresholds())
            progress("loaded", arm=name)
        out.time_split_s["load"] = env.clock() - t
        proto.run(arms, out)
    except KeyboardInterrupt:
        out.interrupted = True
    except PowerLost as exc:
        out.power_error = str(exc)
    finally:
        sampler.stop()
    if not out.interrupted and out.power_error is None:
        t = env.clock()
        quality = _quality(arms, workload)
        out.time_split_s["quality"] = env.clock() - t
    wl_info = workload.info() if hasattr(workload, "info") else {}
    if int8_threshold is not None:
        wl_info["int8_outlier_threshold"] = int8_threshold
    return _finish(opts, env, info, arch, how, out, sampler, weight_bytes, params, quality, warnings, wl_info)


def _one_threshold(thresholds: list[float]) -> float | None:
    """The INT8 arm's outlier threshold; None when it has no int8 layer or (never seen) several values."""
    return thresholds[0] if len(thresholds) == 1 else None


def _quality(arms: dict, workload) -> dict:
    """Perplexity per arm after the sampler has stopped; unavailable with the reason otherwise."""
    vals, notes = {}, {}
    for name, arm in arms.items():
        try:
            res = arm.perplexity()
        except Exception as exc:
            res = (None, f"perplexity failed: {type(exc).__name__}")
        val, note = res if isinstance(res, tuple) else (res, getattr(arm, "perplexity_reason", None))
        vals[name], notes[name] = val, note
    out = {}
    for name in arms:
        v, f = vals.get(name), vals.get("FP16")
        if v is None:
            out[name] = {
                "metric": "perplexity",
                "basis": "unavailable",
                "note": notes.get(name) or "perplexity unavailable",
            }
        else:
            out[name] = {
                "metric": "perplexity",
                "basis": "measured",
                "value": v,
                "fp16_value": f,
                "delta_vs_fp16_pct": (v - f) / f * 100 if f else None,
                "note": "teacher-forced perplexity on the vendored text, after the sampler stopped",
            }
    return out


def _note(out: Outcome, prec: str, source: str, int8_threshold: float | None = None) -> str:
    parts = []
    if source == "simulated":
        parts.append("simulated power source (tests/demo): not a measurement")
    if out.interrupted:
        parts.append("interrupted before the protocol finished: partial data, not a measurement")
    if out.power_error:
        parts.append(f"{out.power_error}; the run stopped there: partial data, not a measurement")
    if out.faults.get("counter_stalls"):
        parts.append(
            f"energy counter stopped advancing in {out.faults['counter_stalls']} windows: "
            "their energy is the power trace's (see the trials' reason)"
        )
    if out.faults.get("trace_gaps"):
        parts.append(
            f"power trace has gaps in {out.faults['trace_gaps']} windows (longest "
            f"{out.faults['max_trace_gap_s']} s): their energy is the counter's"
        )
    if prec in out.failed:
        parts.append(f"{prec} arm failed: {out.failed[prec]}")
    if "FP16" in out.failed and prec != "FP16":
        parts.append(f"FP16 baseline failed: {out.failed['FP16']}")
    if prec == "INT8" and int8_threshold == 0.0:
        parts.append(
            "INT8 with llm_int8_threshold=0: bitsandbytes' vector-wise int8 matmul with no outlier "
            "decomposition, not LLM.int8() (no FP16 outlier columns; needed for CUDA-graph capture)"
        )
    cfg = out.config
    parts.append(
        f"results and statistics: energy per generated token of {cfg.block_tokens}-token greedy generations "
        f"(paired per block); phases: reconstructed to {cfg.tokens}-token generations from prefill + decode "
        "energy, with a direct check"
    )
    return "; ".join(parts)


def _finish(
    opts, env, info, arch, how, out, sampler, weight_bytes, params, quality, warnings, wl_info
) -> RunResult:
    """Write the raw record, then compute every report from it (the path `measure replay` takes)."""
    power = env.power
    ctx = _context(opts, env, info, arch, how, out, sampler, weight_bytes, params, quality, wl_info)
    trace = sampler.trace()
    record = raw.encode(
        out,
        trace,
        ctx,
        source={
            "measurement_source": power.measurement_source,
            "power_field": getattr(power, "power_field", None),
            "has_energy_counter": bool(power.has_energy_counter),
        },
        sampler={
            "kind": sampler.kind,
            "samples": len(trace[0]),
            "dropped": sampler.dropped(),
            "counter_every": getattr(sampler, "counter_every", None),
        },
        options={"precisions": list(opts.precisions)},
    )
    raw_path = opts.out_dir / raw.RAW_NAME
    try:
        raw.write(raw_path, record)
    except OSError as exc:  # the GPU work is done: never lose it to a full disk
        warnings.append(f"QJ417: {raw_path}: {type(exc).__name__}: {exc}")
        raw_path = None
    result = reports_from_record(record, opts.out_dir, warnings)
    result.record = raw_path
    return result


def _context(opts, env, info, arch, how, out, sampler, weight_bytes, params, quality, wl_info) -> dict:
    power = env.power
    name, mid, weights, _ = _names(opts)
    params_b = params.get("FP16") or next(iter(params.values()), None)
    bw = bandwidth_gb_s(info["name"])
    ctx = {
        "timestamp_utc": _timestamp(env),
        "system_under_test": {
            "gpu": info["name"],
            "gpu_arch": arch,
            "accelerator_count": 1,
            "memory_total_gb": info.get("memory_total_gb"),
            "power_limit_w": info.get("power_limit_w"),
            **({} if (pm := info.get("persistence_mode")) is None else {"persistence_mode": pm}),
            "gpu_uuid_sha256": info.get("gpu_uuid_sha256"),
            "datasheet_bandwidth_gb_s": bw,
        },
        "workload": {
            "model_name": name,
            "model_id": mid,
            "model_revision": None,
            "params_b": round(params_b, 4) if params_b else None,
            "batch_size": out.config.batch_size,
            "weights": weights,
            "backend": opts.backend,
            "prompt_tokens": None,
            "decoding": "greedy",
        },
        "method": METHOD[out.config.pairing]
        + (f"; decode pinned to CPU {env.cpus[0]}, sampler to CPU {env.cpus[1]}" if env.cpus else "")
        + ("" if how == "table" else f"; gpu_arch from --gpu-arch ({info['name']})"),
        "measurement_source": power.measurement_source,
        "sample_rate_hz": opts.sample_rate_hz,
        "sample_rate_achieved_hz": sampler.achieved_rate_hz(),
        "dropped_samples": sampler.dropped(),
        "sampler": sampler.kind,
        "power_field": power.power_field
        if power.power_field in ("NVML_FI_DEV_POWER_INSTANT", "nvmlDeviceGetPowerUsage")
        else None,
        "weight_bytes": weight_bytes,
        "quality": quality,
        "software": software(info.get("driver")),
        "provenance": provenance(__version__, opts.argv),
    }
    ctx["workload"].update({k: v for k, v in wl_info.items() if k in ("model_revision", "prompt_tokens")})
    if "int8_outlier_threshold" in wl_info:  # absent in records made before it was recorded
        ctx["int8_outlier_threshold"] = wl_info["int8_outlier_threshold"]
    return ctx


def _warnings(record: dict, out: Outcome, analysis: dict) -> list[str]:
    warnings = []
    src, smp = record["source"], record["sampler"]
    if smp["dropped"] > 0.01 * max(1, smp["samples"]):
        warnings.append(f"QJ406: {smp['dropped']} power samples dropped")
    if out.timeouts:
        warnings.append(f"QJ405: cooldown timed out {out.timeouts} times")
    if src["measurement_source"] == "nvml-power-trace":
        warnings.append("QJ411: no energy counter; energies from the power trace")
    if src["power_field"] == "nvmlDeviceGetPowerUsage":
        warnings.append(
            "QJ412: instant power field unsupported; nvmlDeviceGetPowerUsage may be a 1 s average"
        )
    agree_max = analysis["agreement"]["counter_vs_trace_max_pct"]
    if agree_max is not None and agree_max > 5.0:
        warnings.append(f"QJ407: counter and trace disagree by up to {agree_max:.2f} % on a trial")
    for arm, reason in out.failed.items():
        warnings.append(f"QJ403: {arm}: {reason}")
    if out.interrupted:
        warnings.append("QJ404: interrupted; partial reports written, not measurements")
    if out.power_error:
        warnings.append(f"QJ414: {out.power_error}; partial reports written, not measurements")
    if out.faults.get("counter_stalls"):
        warnings.append(
            f"QJ415: the energy counter stopped advancing ({out.faults['counter_stalls']} windows "
            "fell back to the power trace)"
        )
    if out.faults.get("trace_gaps"):
        warnings.append(
            f"QJ406: power trace gaps in {out.faults['trace_gaps']} windows, longest "
            f"{out.faults['max_trace_gap_s']} s (energy from the counter there)"
        )
    return warnings


def condition_text(report: dict) -> str:
    """The measured condition in one line, from the fields that carry it (what the grader compares)."""
    wl, sut = report["workload"], report["system_under_test"]
    text = (
        f"{sut.get('gpu_arch')} {wl['precision']}, {wl['backend']} backend, batch {wl['batch_size']}, "
        f"{report['measurement']['tokens_per_run']}-token generations"
    )
    if "int8_outlier_threshold" in wl:
        text += f", llm_int8_threshold {wl['int8_outlier_threshold']:g}"
    return text


def reports_from_record(record: dict, out_dir: Path, warnings: list[str] | None = None) -> RunResult:
    """Replay the record and write one report per precision: what `run` and `replay` both end with."""
    out = raw.replay(record)
    ctx = dict(record["context"])
    source = ctx["measurement_source"]
    warnings = [*(warnings or []), *_warnings(record, out, analyse(out))]
    ctx["notes"] = {p: _note(out, p, source, ctx.get("int8_outlier_threshold")) for p in out.arms}
    precisions = list(record["options"]["precisions"]) or ["FP16"]
    paths, rows = [], []
    for prec, path in _out_paths(out_dir, precisions).items():
        part = subset(out, prec)
        rep = build_report(ctx, part, analyse(part), prec)
        warnings += _write(path, rep)
        paths.append(path)
        st = (rep.get("statistics") or {}).get("delta_e_pct") or {}
        rows.append(
            {
                "precision": prec,
                "basis": rep["results"]["basis"],
                "energy_per_token_mj": rep["results"]["energy_per_token_mj"],
                "fp16_energy_per_token_mj": rep["results"]["fp16_energy_per_token_mj"],
                "delta_e_pct": st.get("mean", rep["results"]["vs_fp16_energy_pct"]),
                "ci95_half_width_pp": st.get("ci95_half_width_pp"),
                "n_pairs": (rep.get("statistics") or {}).get("n_pairs"),
                "agreement_max_pct": rep["agreement"]["counter_vs_trace_max_pct"],
                "time_split_s": out.time_split_s,
                "note": rep["results"]["note"],
                "condition": condition_text(rep),
            }
        )
    partial = out.interrupted or bool(out.failed) or out.power_error is not None
    return RunResult(EXIT_PARTIAL if partial else EXIT_OK, paths, rows, warnings)
