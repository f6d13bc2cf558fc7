"""`measure run` as one function over its side effects: probe, load arms, run the protocol, then the
raw record and the reports computed from it.

Dependencies (power source, sampler, workload, clock) come in through `Env`, so the CPU tests run
the whole path with a fake power source and real torch + bitsandbytes.
"""

from __future__ import annotations

from collections.abc import Callable

from measure.codes import MeasureError, problem
from measure.core import record as raw
from measure.core.outcome import Outcome
from measure.gpu.quality import quality_blocks
from measure.power.pinning import pin_current_process
from measure.run.context import Loaded, resolve_arch, run_context
from measure.run.env import Env
from measure.run.options import RunOptions, RunResult
from measure.run.protocol import PowerLost, Protocol
from measure.run.reference_run import run_reference
from measure.run.reports import reports_from_record


def run(opts: RunOptions, env: Env, progress: Callable[..., None] | None = None) -> RunResult:
    """Measure, write one report per quantized precision, return the exit status and a summary."""
    progress = progress or (lambda *a, **k: None)
    if env.power is None:
        return run_reference(opts, env)
    power, sampler = env.power, env.sampler
    info = power.device_info()
    arch, how = resolve_arch(info["name"], opts.gpu_arch)
    if arch is None:  # never guess a neighbour: the verdict depends on the architecture
        raise MeasureError("QJ408", f"unknown GPU {info['name']!r}")
    arms_wanted = ["FP16", *opts.precisions]
    out = Outcome(config=opts.protocol, arms=arms_wanted)
    if env.cpus:  # before the sampler starts and the arms load, so their threads inherit the mask
        pin_current_process(env.cpus[0])
    sampler.start()
    proto = Protocol(opts.protocol, power, sampler, env.clock, env.sleep, progress)
    workload = env.workload(opts.model_spec, opts.backend, env.device,
                            batch_size=opts.protocol.batch_size, int8_threshold=opts.int8_threshold,
                            outlier_dims=opts.outlier_dims, outlier_scale=opts.outlier_scale)
    arms, loaded, int8_threshold = {}, Loaded(), None
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
            loaded.weight_bytes[name] = int(arm.weight_bytes)
            loaded.params_b[name] = float(arm.params_b)
            if name == "INT8":  # as loaded, not as asked
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
        loaded.quality = quality_blocks(arms)
        loaded.int8_outliers = int8_outlier_probe(arms)
        out.time_split_s["quality"] = env.clock() - t
    loaded.workload_info = workload.info()
    if int8_threshold is not None:
        loaded.workload_info["int8_outlier_threshold"] = int8_threshold
    return _finish(opts, env, info, arch, how, out, loaded)


def int8_outlier_probe(arms: dict) -> dict | None:
    """The INT8 arm's outlier-column probe, after the sampler has stopped (its hooks sync); a failure is
    recorded as such, never as a share of zero."""
    arm = arms.get("INT8")
    if arm is None:
        return None
    try:
        return arm.int8_outliers()
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _one_threshold(thresholds: list[float]) -> float | None:
    """The INT8 arm's outlier threshold; None when it has no int8 layer or (never seen) several values."""
    return thresholds[0] if len(thresholds) == 1 else None


def _finish(
    opts: RunOptions, env: Env, info: dict, arch: str, how: str, out: Outcome, loaded: Loaded
) -> RunResult:
    """Write the raw record, then compute every report from it (the path `measure replay` takes)."""
    power, sampler = env.power, env.sampler
    ctx = run_context(opts, env, info, arch, how, out, sampler, loaded)
    trace = sampler.trace()
    record = raw.encode(
        out,
        trace,
        ctx,
        source={
            "measurement_source": power.measurement_source,
            "power_field": power.power_field,
            "has_energy_counter": bool(power.has_energy_counter),
        },
        sampler={
            "kind": sampler.kind,
            "samples": len(trace[0]),
            "dropped": sampler.dropped(),
            "counter_every": sampler.counter_every,
        },
        options={"precisions": list(opts.precisions)},
    )
    raw_path = opts.out_dir / raw.RAW_NAME
    warnings = []
    try:
        raw.write(raw_path, record)
    except OSError as exc:  # the GPU work is done: never lose it to a full disk
        warnings.append(problem("QJ417", f"{raw_path}: {type(exc).__name__}: {exc}"))
        raw_path = None
    result = reports_from_record(record, opts.out_dir, warnings)
    result.record = raw_path
    return result
