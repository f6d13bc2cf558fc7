"""Command-line entry for `python -m measure`: run, sweep, replay, env, submit (and check, from check.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from measure.codes import MeasureError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="quantjoule", prog_name="measure")
def main() -> None:
    """Measure GPU energy per generated token, FP16 vs NF4/INT8, and check reports."""


def _precisions(value: str) -> tuple[str, ...]:
    out = []
    for p in (x.strip().upper() for x in value.split(",") if x.strip()):
        if p not in ("NF4", "INT8"):
            raise click.BadParameter(f"QJ409: unknown precision {p!r}; use nf4, int8 or nf4,int8")
        if p not in out:
            out.append(p)
    return tuple(out)


@main.command()
@click.option("--model", help="Hugging Face id or local path of the model.")
@click.option("--synthetic", help="A named architecture with random weights (e.g. tinyllama-1.1b).")
@click.option("--precisions", default="nf4,int8", show_default=True, help="Quantized arms, comma-separated.")
@click.option(
    "--tokens",
    default=256,
    show_default=True,
    type=click.IntRange(2, 100000),
    help="New tokens per sequence whose energy per token is reported.",
)
@click.option(
    "--block-tokens",
    type=click.IntRange(2, 100000),
    help="Tokens per generation inside a block [default: --tokens, whole generations: the graded "
    "quantity]. Shorter generations are reconstructed to --tokens in `phases` but are not graded.",
)
@click.option(
    "--trials", type=click.IntRange(1, 5000), help="Blocks (paired trials) per quantized precision."
)
@click.option(
    "--duration",
    "duration_s",
    type=click.FloatRange(1, 36000),
    help="Block-phase budget in seconds [default: 300 when --trials is not given].",
)
@click.option("--backend", type=click.Choice(["eager", "static"]), default="eager", show_default=True)
@click.option(
    "--batch-size",
    default=1,
    show_default=True,
    type=click.IntRange(1, 4096),
    help="Prompts of equal length decoded together; energy per generated token = energy / (batch x tokens).",
)
@click.option(
    "--int8-threshold",
    type=click.FloatRange(0, 1000),
    help="bitsandbytes llm_int8_threshold for the INT8 arm [default: LLM.int8()'s 6.0]. 0 turns the "
    "outlier decomposition off: a different INT8 (recorded in the report), the one the static backend "
    "can capture.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the block orders.")
@click.option(
    "--gpu-arch",
    type=click.Choice(["hopper", "ada", "ampere", "blackwell", "turing", "volta"]),
    help="Override the architecture detected from the GPU name.",
)
@click.option("--device", default=0, show_default=True, type=click.IntRange(0, 63), help="GPU index.")
@click.option(
    "--sample-rate",
    "sample_rate_hz",
    default=100.0,
    show_default=True,
    type=click.FloatRange(1, 1000),
    help="Power trace rate in Hz.",
)
@click.option("--warmup", default=2, show_default=True, type=click.IntRange(0, 100))
@click.option(
    "--direct-check",
    default=0,
    show_default=True,
    type=click.IntRange(0, 20),
    help="Mirrored rounds of full --tokens generations to check the reconstruction.",
)
@click.option(
    "--pairing",
    type=click.Choice(["paired", "all"]),
    default="paired",
    show_default=True,
    help="paired: each block compares FP16 with one quantized arm (F Q Q F); all: every arm per block.",
)
@click.option(
    "--window-reps",
    type=click.IntRange(1, 1000),
    help="Back-to-back generations per measured window, so a window spans many of NVML's 100 ms "
    "refreshes [default: 1 eager; 2 static].",
)
@click.option(
    "--rounds-per-block",
    default=1,
    show_default=True,
    type=click.IntRange(1, 100),
    help="Mirrored rounds (F Q Q F, Q F F Q, ...) per block; cooldown and preroll are paid once per block.",
)
@click.option(
    "--allocation",
    type=click.Choice(["target", "even"]),
    default="target",
    show_default=True,
    help="Duration-bounded paired runs: after 5 blocks each, give each block to the quantized arm whose "
    "dE% interval is furthest from its target (target), or let the arms take turns (even).",
)
@click.option(
    "--pin-cpu/--no-pin-cpu",
    default=False,
    show_default=True,
    help="Pin the decode to one CPU and the power sampler to a CPU of another core (Linux).",
)
@click.option("--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False))
def run(
    model,
    synthetic,
    precisions,
    tokens,
    block_tokens,
    trials,
    duration_s,
    backend,
    batch_size,
    int8_threshold,
    seed,
    gpu_arch,
    device,
    sample_rate_hz,
    warmup,
    direct_check,
    pairing,
    window_reps,
    rounds_per_block,
    allocation,
    pin_cpu,
    out_dir,
) -> None:
    """Measure FP16 against NF4/INT8 and write energy-<precision>.json (energy.json for one).

    Also writes energy-raw.json.gz, every power sample and window of the run, from which
    `measure replay` rebuilds the same reports."""
    from measure.cli_run import execute

    if bool(model) == bool(synthetic):
        raise click.UsageError("QJ409: pass exactly one of --model or --synthetic")
    static = backend == "static"
    # Whole --tokens generations by default: the curves grade what their anchors measured (QJ309 otherwise).
    block_tokens = min(block_tokens or tokens, tokens)
    window_reps = window_reps or (2 if static else 1)
    code = execute(
        model=model,
        synthetic=synthetic,
        precisions=_precisions(precisions),
        tokens=tokens,
        block_tokens=block_tokens,
        trials=trials,
        duration_s=duration_s if (duration_s or trials) else 300.0,
        backend=backend,
        batch_size=batch_size,
        int8_threshold=int8_threshold,
        seed=seed,
        gpu_arch=gpu_arch,
        device=device,
        sample_rate_hz=sample_rate_hz,
        warmup=warmup,
        direct_check=direct_check,
        pairing=pairing,
        window_reps=window_reps,
        block_rounds=rounds_per_block,
        allocation=allocation,
        pin_cpu=pin_cpu,
        out_dir=Path(out_dir),
        argv=sys.argv[2:],
    )
    sys.exit(code)


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@main.command(context_settings={"ignore_unknown_options": True})
@click.option("--synthetic", "synthetic_sizes", help="Sizes: synthetic model names, comma-separated.")
@click.option("--model", "model_ids", help="Sizes: Hugging Face ids or local paths, comma-separated.")
@click.option(
    "--precisions",
    multiple=True,
    default=("nf4,int8",),
    show_default=True,
    help="A precision group per cell (repeat for several): nf4, int8, or nf4,int8 for one run of both.",
)
@click.option("--backends", default="eager", show_default=True, help="eager, static or eager,static.")
@click.option("--batch-sizes", default="1", show_default=True, help="Comma-separated, e.g. 1,8,32.")
@click.option("--cell-duration", "duration_s", type=click.FloatRange(1, 36000), help="Each run's --duration.")
@click.option("--trials", type=click.IntRange(1, 5000), help="--trials of each run (instead of a duration).")
@click.option(
    "--cell-need-s",
    type=click.FloatRange(1, 86400),
    help="Seconds one cell is given [default: --cell-duration + --overhead-s].",
)
@click.option(
    "--overhead-s",
    default=60.0,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="A run's time beyond its blocks (load, warmup, idle, prefill, quality).",
)
@click.option("--budget", "budget_s", default=3600.0, show_default=True, type=click.FloatRange(1, 10**6))
@click.option("--seed", default=0, show_default=True, type=int, help="Base of the cells' own seeds.")
@click.option("--root", default="sweep", show_default=True, type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Print the plan (done, to run, later) and run nothing.")
@click.argument("run_args", nargs=-1, type=click.UNPROCESSED)
def sweep(synthetic_sizes, model_ids, precisions, backends, batch_sizes, duration_s, trials, cell_need_s,
          overhead_s, budget_s, seed, root, dry_run, run_args) -> None:
    """Measure a grid (sizes x precisions x backends x batch sizes), one `measure run` and one raw record
    per cell under --root, within --budget seconds; run it again to resume. Arguments after `--` go to
    every `measure run` (e.g. -- --block-tokens 256 --tokens 256)."""
    from measure import sweep as plan
    from measure.cli_sweep import execute

    if bool(synthetic_sizes) == bool(model_ids):
        raise click.UsageError("QJ419: pass exactly one of --synthetic or --model")
    try:
        if synthetic_sizes:
            from measure.synthetic import UnknownSyntheticModel, get_spec

            try:
                sizes = [get_spec(name).name for name in _csv(synthetic_sizes)]
            except UnknownSyntheticModel as exc:
                raise plan.GridError(str(exc)) from exc
        else:
            sizes = _csv(model_ids)
        try:
            batches = [int(b) for b in _csv(batch_sizes)]
        except ValueError as exc:
            raise plan.GridError(f"batch sizes must be integers: {batch_sizes!r}") from exc
        cells = plan.grid(sizes, precisions, _csv(backends), batches, synthetic=bool(synthetic_sizes),
                          duration_s=duration_s, trials=trials, overhead_s=overhead_s, need_s=cell_need_s,
                          seed=seed, run_args=run_args)
    except plan.GridError as exc:
        click.echo(f"{MeasureError('QJ419', str(exc))}", err=True)
        sys.exit(2)
    sys.exit(execute(cells, Path(root), budget_s, dry_run=dry_run))


@main.command()
@click.argument("record", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False))
def replay(record, out_dir) -> None:
    """Rebuild the reports of a run from its raw record (energy-raw.json.gz), with no GPU."""
    from measure.cli_run import replay_record

    sys.exit(replay_record(Path(record), Path(out_dir)))


@main.command()
@click.option("--device", default=0, show_default=True, type=click.IntRange(0, 63))
@click.option("--gpu-arch", default=None, help="Architecture override to check.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON.")
def env(device, gpu_arch, as_json) -> None:
    """Show what NVML, torch, CUDA and bitsandbytes see, and whether a measurement is possible."""
    from measure.envinfo import probe

    info = probe(device, gpu_arch)
    if as_json:
        click.echo(json.dumps(info, indent=1, sort_keys=True))
        return
    for k, v in info["packages"].items():
        click.echo(f"{k:14s} {v or 'not installed'}")
    click.echo(f"{'CUDA (torch)':14s} {info.get('torch_cuda')}  available: {info['cuda_available']}")
    nv = info.get("nvml")
    if nv:
        click.echo(f"{'GPU':14s} {nv['name']}  arch: {nv['arch'] or 'unknown'} ({nv['arch_from']})")
        click.echo(
            f"{'power':14s} {nv['power_w']:.1f} W via {nv['power_field']}; limit {nv['power_limit_w']} W; "
            f"energy counter: {'yes' if nv['has_energy_counter'] else 'no'}"
        )
        click.echo(f"{'driver':14s} {nv['driver']}")
    else:
        click.echo(f"{'NVML':14s} unavailable: {info.get('nvml_error')}")
        click.echo(f"{'':14s} hint: {info.get('nvml_hint')}")
    verdict = "yes" if info["can_measure"] and not info["reasons"] else "no"
    click.echo(
        f"measurement possible: {verdict}" + (f" ({'; '.join(info['reasons'])})" if info["reasons"] else "")
    )


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--repo",
    default="quantjoule/quantjoule",
    show_default=True,
    envvar="QUANTJOULE_REPO",
    help="owner/name of the repository that receives replications.",
)
def submit(file, repo) -> None:
    """Print a prefilled new-issue URL for the replication form, only for a report the bot would accept.

    Exit status: 0 URL printed, 1 the bot would refuse the report (no URL; `measure check` says why),
    2 the file could not be read."""
    from measure.submit import issue_url, refusal

    try:
        text = Path(file).read_text(encoding="utf-8")
        refused = refusal(text)
        url, fits = issue_url(text, repo)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        click.echo(
            f"QJ409: cannot read {file} as a JSON report: {exc}\n  hint: pass an energy.json file", err=True
        )
        sys.exit(2)
    if refused:
        click.echo(f"{file}: the bot would refuse this report, so no issue URL is printed:", err=True)
        for line in refused:
            click.echo(f"  {line}", err=True)
        click.echo(f"  (python -m measure check {file} shows every problem and its hint)", err=True)
        sys.exit(1)
    click.echo(url)
    if not fits:
        click.echo(
            "The report is too long for a URL: open the link and paste the file's contents into the "
            "report field.",
            err=True,
        )


def _register() -> None:
    try:
        from measure.check import check
    except ImportError as exc:  # the validator needs jsonschema; `run` and `env` must still work without it
        missing = str(exc)

        @main.command("check")
        @click.argument("files", nargs=-1)
        def check(files) -> None:
            """Validate energy.json files (needs jsonschema)."""
            click.echo(
                f"QJ409: check is unavailable here ({missing})\n  hint: pip install jsonschema", err=True
            )
            sys.exit(2)

        return
    main.add_command(check)


_register()

__all__ = ["main", "MeasureError"]
