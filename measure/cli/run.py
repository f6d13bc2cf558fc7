"""`measure run` and `measure replay`: the options, the RunOptions they make, and the run around them."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from measure.cli.progress import Bars, Interrupts, summary
from measure.codes import MeasureError
from measure.core.design import ALLOCATIONS, BACKENDS, PAIRINGS, QUANTIZED, ProtocolConfig
from measure.gpu.outliers import plant_problem
from measure.run.env import Env, default_env
from measure.run.options import EXIT_PARTIAL, EXIT_USAGE, RunOptions
from schema.models import KNOWN_ARCHS

CFG, OPTS = ProtocolConfig, RunOptions  # the defaults below are theirs: one default per option


def precisions_option(value: str) -> tuple[str, ...]:
    """'nf4,int8' -> ('NF4', 'INT8'); an unknown name is a usage error (QJ409)."""
    out = []
    for p in (x.strip().upper() for x in value.split(",") if x.strip()):
        if p not in QUANTIZED:
            raise click.BadParameter(f"QJ409: unknown precision {p!r}; use nf4, int8 or nf4,int8")
        if p not in out:
            out.append(p)
    return tuple(out)


def outlier_dims_option(ctx, param, value: str | None) -> int:
    """--outlier-dims K: an integer >= 0; anything else is a usage error (QJ409)."""
    if value is None:
        return OPTS.outlier_dims
    try:
        dims = int(value)
    except ValueError:
        dims = value
    why = plant_problem(dims, OPTS.outlier_scale)
    if why:
        raise click.BadParameter(f"QJ409: {why}")
    return dims


def outlier_scale_option(ctx, param, value: str | None) -> float | None:
    """--outlier-scale F: a finite number in (0, 1000]; anything else is a usage error (QJ409)."""
    if value is None:
        return None
    try:
        scale = float(value)
    except ValueError:
        scale = value
    why = plant_problem(OPTS.outlier_dims, scale)
    if why:
        raise click.BadParameter(f"QJ409: {why}")
    return scale


@click.command()
@click.option("--model", help="Hugging Face id or local path of the model.")
@click.option("--synthetic", help="A named architecture with random weights (e.g. tinyllama-1.1b).")
@click.option("--precisions", default=",".join(p.lower() for p in OPTS.precisions), show_default=True,
              help="Quantized arms, comma-separated.")
@click.option("--tokens", default=CFG.tokens, show_default=True, type=click.IntRange(2, 100000),
              help="New tokens per sequence whose energy per token is reported.")
@click.option(
    "--block-tokens",
    type=click.IntRange(2, 100000),
    help="Tokens per generation inside a block [default: --tokens, whole generations: the graded "
    "quantity]. Shorter generations are reconstructed to --tokens in `phases` but are not graded.",
)
@click.option("--trials", type=click.IntRange(1, 5000),
              help="Blocks (paired trials) per quantized precision.")
@click.option("--duration", "duration_s", type=click.FloatRange(1, 36000),
              help=f"Block-phase budget in seconds [default: {CFG.duration_s:g} when --trials is not "
              "given].")
@click.option("--backend", type=click.Choice(BACKENDS), default=OPTS.backend, show_default=True)
@click.option("--batch-size", default=CFG.batch_size, show_default=True, type=click.IntRange(1, 4096),
              help="Prompts of equal length decoded together; energy per generated token = energy / (batch x "
              "tokens).")
@click.option(
    "--int8-threshold",
    type=click.FloatRange(0, 1000),
    help="bitsandbytes llm_int8_threshold for the INT8 arm [default: LLM.int8()'s 6.0]. 0 turns the "
    "outlier decomposition off: a different INT8 (recorded in the report), the one the static backend "
    "can capture.",
)
@click.option(
    "--outlier-dims",
    metavar="K",
    callback=outlier_dims_option,
    help="Synthetic models only: plant K outlier features, the same K hidden dims (chosen from the "
    "weights' seed) of every decoder layer's two RMSNorm weights set to --outlier-scale, like real "
    f"checkpoints' LLM.int8() outliers [default: {OPTS.outlier_dims}, the plain random init]. A "
    "sensitivity condition: never graded.",
)
@click.option("--outlier-scale", metavar="F", callback=outlier_scale_option,
              help=f"Value of the planted norm weights [default: {OPTS.outlier_scale:g}; needs "
              "--outlier-dims].")
@click.option("--seed", default=CFG.seed, show_default=True, type=int, help="Seed of the block orders.")
@click.option("--gpu-arch", type=click.Choice(KNOWN_ARCHS),
              help="Override the architecture detected from the GPU name.")
@click.option("--device", default=OPTS.device, show_default=True, type=click.IntRange(0, 63),
              help="GPU index.")
@click.option("--sample-rate", "sample_rate_hz", default=OPTS.sample_rate_hz, show_default=True,
              type=click.FloatRange(1, 1000), help="Power trace rate in Hz.")
@click.option("--warmup", default=CFG.warmup_runs, show_default=True, type=click.IntRange(0, 100))
@click.option("--direct-check", default=CFG.direct_check_runs, show_default=True,
              type=click.IntRange(0, 20),
              help="Mirrored rounds of full --tokens generations to check the reconstruction.")
@click.option("--pairing", type=click.Choice(PAIRINGS), default=CFG.pairing, show_default=True,
              help="paired: each block compares FP16 with one quantized arm (F Q Q F); all: every arm per "
              "block.")
@click.option(
    "--window-reps",
    type=click.IntRange(1, 1000),
    help="Back-to-back generations per measured window, so a window spans many of NVML's 100 ms "
    "refreshes [default: 1 eager; 2 static].",
)
@click.option("--rounds-per-block", default=CFG.block_rounds, show_default=True,
              type=click.IntRange(1, 100),
              help="Mirrored rounds (F Q Q F, Q F F Q, ...) per block; cooldown and preroll are paid once "
              "per block.")
@click.option(
    "--chunk-tokens",
    type=click.IntRange(0, 100000),
    default=CFG.chunk_tokens,
    show_default=True,
    help="Make each whole generation in chunks of this many tokens, each continuing its own KV cache, the "
    "block's generations taking turns chunk by chunk, so host speed that drifts within a generation "
    "lands on both arms alike (eager, whole generations; 0: each generation in one call).",
)
@click.option(
    "--allocation",
    type=click.Choice(ALLOCATIONS),
    default=CFG.allocation,
    show_default=True,
    help="Duration-bounded paired runs: after 5 blocks each, give each block to the quantized arm whose "
    "dE% interval is furthest from its target (target), or let the arms take turns (even).",
)
@click.option("--pin-cpu/--no-pin-cpu", default=OPTS.pin_cpu, show_default=True,
              help="Pin the decode to one CPU and the power sampler to a CPU of another core (Linux).")
@click.option("--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False))
def run(**given) -> None:
    """Measure FP16 against NF4/INT8 and write energy-<precision>.json (energy.json for one).

    Also writes energy-raw.json.gz, every power sample and window of the run, from which
    `measure replay` rebuilds the same reports."""
    if bool(given["model"]) == bool(given["synthetic"]):
        raise click.UsageError("QJ409: pass exactly one of --model or --synthetic")
    if given["outlier_dims"] and given["model"]:
        raise click.UsageError("QJ409: --outlier-dims plants outlier features in a --synthetic model's "
                               "random init; a --model has its own weights")
    if given["outlier_scale"] is not None and not given["outlier_dims"]:
        raise click.UsageError("QJ409: --outlier-scale needs --outlier-dims K with K > 0")
    why = chunk_problem(given)
    if why:
        raise click.UsageError(f"QJ409: {why}")
    sys.exit(execute(run_options(given, sys.argv[2:])))


def chunk_problem(given: dict) -> str | None:
    """Why --chunk-tokens cannot run with the other options given, or None."""
    chunk, tokens = given.get("chunk_tokens") or 0, given["tokens"]
    if not chunk:
        return None
    block = min(given["block_tokens"] or tokens, tokens)
    if given["backend"] != "eager":
        return "--chunk-tokens runs on the eager backend only (a CUDA graph replays whole generations)"
    if block != tokens:
        return "--chunk-tokens chunks whole --tokens generations; drop --block-tokens"
    if chunk >= tokens or tokens % chunk:
        return f"--chunk-tokens must divide --tokens {tokens} into two or more chunks (e.g. 32)"
    if (given["window_reps"] or 1) != 1 or given["rounds_per_block"] != 1:
        return "--chunk-tokens takes one generation per window and one round per block"
    return None


def run_options(given: dict, argv: list[str]) -> RunOptions:
    """The RunOptions of `measure run`'s parsed options."""
    tokens, trials, duration_s = given["tokens"], given["trials"], given["duration_s"]
    cfg = ProtocolConfig(
        tokens=tokens,
        # whole --tokens generations by default: the curves grade what their anchors measured (QJ309)
        block_tokens=min(given["block_tokens"] or tokens, tokens),
        trials=trials,
        duration_s=duration_s if (duration_s or trials) else CFG.duration_s,
        warmup_runs=given["warmup"],
        seed=given["seed"],
        direct_check_runs=given["direct_check"],
        pairing=given["pairing"],
        window_reps=given["window_reps"] or (2 if given["backend"] == "static" else 1),
        block_rounds=given["rounds_per_block"],
        allocation=given["allocation"],
        batch_size=given["batch_size"],
        chunk_tokens=given.get("chunk_tokens") or 0,
    )
    return RunOptions(
        model=given["model"],
        synthetic=given["synthetic"],
        precisions=precisions_option(given["precisions"]),
        backend=given["backend"],
        device=given["device"],
        gpu_arch=given["gpu_arch"],
        out_dir=Path(given["out_dir"]),
        sample_rate_hz=given["sample_rate_hz"],
        pin_cpu=given["pin_cpu"],
        int8_threshold=given["int8_threshold"],
        outlier_dims=given["outlier_dims"],
        outlier_scale=OPTS.outlier_scale if given["outlier_scale"] is None else given["outlier_scale"],
        argv=argv,
        protocol=cfg,
    )


def execute(opts: RunOptions, env: Env | None = None, console: Console | None = None) -> int:
    """`measure run` on parsed options: the run with its progress bars and summary; the exit status."""
    from measure.run.runner import run as measure

    console = console or Console(stderr=True)
    interrupts = Interrupts()
    try:
        if opts.synthetic:
            from measure.gpu.synthetic import UnknownSyntheticModel, get_spec

            try:
                spec = get_spec(opts.synthetic)
            except UnknownSyntheticModel as exc:
                raise MeasureError("QJ410", str(exc)) from exc
            why = plant_problem(opts.outlier_dims, opts.outlier_scale, spec.hidden_size)
            if why:
                raise MeasureError("QJ409", why)
        elif opts.outlier_dims:
            raise MeasureError("QJ409", "--outlier-dims needs a --synthetic model")
        env = env or default_env(opts)
        cols = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),  # copes with an unknown total while an arm loads
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        if env.power is None:  # nothing to measure: the reference report needs no progress bars
            result = measure(opts, env)
        else:
            cfg = opts.protocol
            with interrupts, Progress(*cols, console=console, transient=False) as progress:
                log = None if console.is_terminal else console
                bars = Bars(progress, ["FP16", *opts.precisions], cfg.trials, cfg.duration_s, log)
                result = measure(opts, env, bars)
    except MeasureError as exc:
        console.print(f"[red]{exc}[/red]")
        return EXIT_USAGE
    except KeyboardInterrupt:
        if interrupts.abandoned:  # a third interrupt while the partial report was being written
            console.print("[red]QJ404: abandoned while the partial report was being written; what it had "
                          "not yet written is lost[/red]")
        else:  # before the sampler started: nothing was measured, nothing to write
            console.print("[red]QJ404: interrupted before the measurement started; nothing was written[/red]")
        return EXIT_PARTIAL
    summary(console, result)
    return result.exit_code


@click.command()
@click.argument("record", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False))
def replay(record, out_dir) -> None:
    """Rebuild the reports of a run from its raw record (energy-raw.json.gz), with no GPU."""
    sys.exit(replay_record(Path(record), Path(out_dir)))


def replay_record(path: Path, out_dir: Path, console: Console | None = None) -> int:
    """`measure replay`: the reports again, from the raw record alone."""
    from measure.core import record as raw
    from measure.run.reports import reports_from_record

    console = console or Console(stderr=True)
    try:
        result = reports_from_record(raw.read(path), out_dir)
    except MeasureError as exc:
        console.print(f"[red]{exc}[/red]")
        return EXIT_USAGE
    summary(console, result)
    return result.exit_code
