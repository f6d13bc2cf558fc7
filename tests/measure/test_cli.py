"""The thin CLI: help everywhere, usage errors, the no-GPU path, env, submit URLs."""

import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner

from measure.cli import main
from measure.cli.submit import MAX_URL_CHARS, issue_url


@pytest.mark.parametrize("cmd", [[], ["run"], ["env"], ["submit"], ["check"]])
def test_help_everywhere(cmd):
    res = CliRunner().invoke(main, [*cmd, "--help"])
    assert res.exit_code == 0 and "Usage" in res.output


def test_model_and_synthetic_are_exclusive():
    res = CliRunner().invoke(main, ["run", "--model", "x", "--synthetic", "tinyllama-1.1b"])
    assert res.exit_code == 2 and "QJ409" in res.output


def test_bad_precision_is_a_usage_error():
    res = CliRunner().invoke(main, ["run", "--synthetic", "tinyllama-1.1b", "--precisions", "fp8"])
    assert res.exit_code == 2 and "QJ409" in res.output


def test_unknown_synthetic_name(tmp_path):
    res = CliRunner().invoke(main, ["run", "--synthetic", "gpt-17", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "QJ410" in res.output and "tinyllama-1.1b" in res.output


def test_without_a_gpu_run_writes_a_reference_report_and_exits_3(tmp_path):
    res = CliRunner().invoke(
        main,
        [
            "run",
            "--synthetic",
            "tinyllama-1.1b",
            "--precisions",
            "nf4,int8",
            "--trials",
            "3",
            "--gpu-arch",
            "ada",
            "--out",
            str(tmp_path),
        ],
    )
    assert res.exit_code == 3, res.output
    assert "QJ401" in res.output
    rep = json.loads((tmp_path / "energy-nf4.json").read_text())
    assert rep["measurement_source"] == "reference-dataset" and rep["results"]["basis"] in (
        "interpolated",
        "extrapolated",
    )
    assert rep["results"]["fp16_energy_per_token_mj"] > 0 and rep["results"]["energy_per_token_mj"] > 0
    # schema-valid, and refused exactly as the bot refuses it: not a measurement (QJ506), exit 1
    check = CliRunner().invoke(main, ["check", "--json", str(tmp_path / "energy-nf4.json")])
    (row,) = json.loads(check.output)
    assert check.exit_code == 1 and [p["code"] for p in row["problems"]] == ["QJ506"]
    assert row["accepted"] is False and row["verdict"] is None


def test_env_reports_what_it_sees():
    res = CliRunner().invoke(main, ["env", "--json"])
    assert res.exit_code == 0
    info = json.loads(res.output)
    assert "packages" in info and info["can_measure"] in (True, False)
    if not info["cuda_available"]:
        assert "torch sees no CUDA GPU" in info["reasons"]
    text = CliRunner().invoke(main, ["env"]).output
    assert "measurement possible:" in text


ROOT = Path(__file__).resolve().parents[2]
LEGACY_MEASURED = ROOT / "tests" / "schema" / "examples" / "valid" / "legacy-1.1-measured-direct-nvml.json"


def _report(gpu="NVIDIA H200"):
    """A report the bot accepts (the schema example of a legacy NVML measurement), with URL-hostile text."""
    from schema.gpus import arch_for

    report = json.loads(LEGACY_MEASURED.read_text())
    report["system_under_test"]["gpu"] = gpu
    # the architecture is the GPU's (QJ218): an unknown name keeps the example's
    report["system_under_test"]["gpu_arch"] = arch_for(gpu) or report["system_under_test"]["gpu_arch"]
    report["results"]["note"] = "a & b #1 ?x=y"
    return json.dumps(report)


def test_submit_prints_an_encoded_prefilled_url(tmp_path):
    f = tmp_path / "energy.json"
    f.write_text(_report())
    res = CliRunner().invoke(main, ["submit", str(f), "--repo", "octo/qj"])
    assert res.exit_code == 0, res.output
    url = res.output.strip()
    parsed = urlparse(url)
    assert parsed.netloc == "github.com" and parsed.path == "/octo/qj/issues/new"
    q = parse_qs(parsed.query)
    assert q["template"] == ["replication.yml"]
    workload = json.loads(_report())["workload"]
    assert q["title"] == [f"Replication: {workload['model_name']} {workload['precision']} on NVIDIA H200"]
    assert json.loads(q["report"][0].removeprefix("```json\n").removesuffix("\n```")) == json.loads(_report())
    assert " " not in url and "&b" not in url


def test_submit_long_report_says_to_paste(tmp_path):
    # a real H200 report: accepted, and longer than a URL can carry
    real = ROOT / "measurements" / "h200" / "2026-12-02-tinyllama-1.1b-eager-nf4.json"
    res = CliRunner().invoke(main, ["submit", str(real)])
    assert res.exit_code == 0 and "paste" in res.output, res.output
    url = res.output.splitlines()[0]
    assert len(url) <= MAX_URL_CHARS and "report=" not in url
    assert issue_url(_report())[1] is True


@pytest.mark.parametrize(
    "name", ["v2-reference-interpolated.json", "legacy-1.0-interpolated.json", "v2-one-trial-failed.json"]
)
def test_submit_prints_no_url_for_a_report_the_bot_would_refuse(tmp_path, name):
    report = json.loads((LEGACY_MEASURED.parent / name).read_text())
    if name == "v2-one-trial-failed.json":  # as measure run writes a partial run: never basis measured
        report["results"]["basis"] = "unavailable"
    f = tmp_path / "energy.json"
    f.write_text(json.dumps(report))
    res = CliRunner().invoke(main, ["submit", str(f)])
    assert res.exit_code == 1, res.output
    assert "github.com" not in res.output and "QJ506" in res.output and "measure check" in res.output


def test_submit_unreadable_file(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{not json")
    res = CliRunner().invoke(main, ["submit", str(f)])
    assert res.exit_code == 2 and "QJ409" in res.output
    res = CliRunner().invoke(main, ["submit", str(tmp_path / "missing.json")])
    assert res.exit_code == 2 and "QJ409" in res.output


def _captured_run(monkeypatch, args):
    import measure.cli.run

    seen = []

    def fake_execute(opts):
        seen.append(opts)
        return 0

    monkeypatch.setattr(measure.cli.run, "execute", fake_execute)
    result = CliRunner().invoke(main, ["run", "--synthetic", "tinyllama-1.1b", *args])
    assert result.exit_code == 0, result.output
    return seen[0]


def test_run_defaults_depend_on_the_backend(monkeypatch):
    eager = _captured_run(monkeypatch, [])
    # whole --tokens generations by default: the quantity the curves grade
    cfg = eager.protocol
    assert (cfg.block_tokens, cfg.window_reps, cfg.pairing) == (256, 1, "paired")
    static = _captured_run(monkeypatch, ["--backend", "static", "--tokens", "128"]).protocol
    assert (static.block_tokens, static.window_reps) == (128, 2)
    chosen = _captured_run(monkeypatch, ["--backend", "static", "--block-tokens", "16", "--window-reps", "5"])
    assert (chosen.protocol.block_tokens, chosen.protocol.window_reps) == (16, 5)
    assert not eager.pin_cpu and _captured_run(monkeypatch, ["--pin-cpu"]).pin_cpu
    assert eager.protocol.allocation == "target"
    assert _captured_run(monkeypatch, ["--allocation", "even"]).protocol.allocation == "even"


def test_each_run_option_has_one_default_the_options_objects(monkeypatch):
    """What `measure run` runs with when nothing is given is RunOptions' and ProtocolConfig's own
    defaults, except the two that follow other options (block tokens = --tokens, window reps)."""
    from dataclasses import replace

    from measure.core.design import ProtocolConfig
    from measure.run.options import RunOptions

    got = _captured_run(monkeypatch, [])
    assert got.protocol == replace(ProtocolConfig(), block_tokens=ProtocolConfig().tokens)
    fields = ("precisions", "backend", "device", "gpu_arch", "sample_rate_hz", "pin_cpu", "int8_threshold",
              "outlier_dims", "outlier_scale")
    assert all(getattr(got, f) == getattr(RunOptions(), f) for f in fields)
    assert (got.synthetic, got.model, got.out_dir) == ("tinyllama-1.1b", None, Path("."))


def test_progress_bars_count_each_arms_blocks_and_the_budget():
    import io

    from rich.console import Console
    from rich.progress import Progress

    from measure.cli.progress import Bars

    progress = Progress(console=Console(file=io.StringIO()))
    bars = Bars(progress, ["FP16", "NF4", "INT8"], trials=None, duration_s=200.0)
    for arm in ("FP16", "NF4", "INT8"):
        bars("loaded", arm=arm)
    for b, q in enumerate(["NF4", "INT8", "NF4", "NF4"], start=1):
        bars("block", block=b, trials=None, elapsed_s=40.0 * b, duration_s=200.0, arms=["FP16", q])
    task = {t.description.split()[0]: t for t in progress.tasks}
    assert (task["FP16"].completed, task["NF4"].completed, task["INT8"].completed) == (4, 3, 1)
    assert task["FP16"].total is None  # with a budget, how many blocks an arm gets is not known ahead
    assert task["budget"].completed == 80.0 and task["budget"].total == 100
    fixed = Progress(console=Console(file=io.StringIO()))
    bars = Bars(fixed, ["FP16", "NF4", "INT8"], trials=3, duration_s=None)
    bars("loaded", arm="NF4")
    bars("loaded", arm="FP16")
    assert {t.description.split()[0]: t.total for t in fixed.tasks} == {
        "FP16": 6,
        "NF4": 3,
        "INT8": None,
        "blocks": 6,
    }


def test_env_does_not_ask_to_install_nvidia_ml_py_when_it_is_installed():
    from measure.run.provenance import package_version

    res = CliRunner().invoke(main, ["env"])
    info = json.loads(CliRunner().invoke(main, ["env", "--json"]).output)
    if "nvml" in info:
        pytest.skip("NVML works here: there is no NVML problem to explain")
    installed = package_version("nvidia-ml-py") is not None
    assert ("pip install nvidia-ml-py" in res.output) is not installed
    assert "Install nvidia-ml-py" not in res.output
    if installed:
        assert "NVIDIA driver and a GPU" in res.output


@pytest.mark.parametrize("args, words", [
    (["--synthetic", "tiny-llama", "--outlier-dims", "-1"], "integer >= 0"),
    (["--synthetic", "tiny-llama", "--outlier-dims", "four"], "integer >= 0"),
    (["--synthetic", "tiny-llama", "--outlier-dims", "4", "--outlier-scale", "nan"], "outlier-scale"),
    (["--synthetic", "tiny-llama", "--outlier-scale", "5"], "needs --outlier-dims"),
    (["--synthetic", "tiny-llama", "--outlier-dims", "129"], "128 hidden dimensions"),
    (["--model", "x", "--outlier-dims", "4"], "--synthetic"),
])
def test_bad_outlier_plants_are_coded_usage_errors(tmp_path, args, words):
    res = CliRunner().invoke(main, ["run", *args, "--out", str(tmp_path)])
    assert res.exit_code == 2 and "QJ409" in res.output and words in res.output
    assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)


def test_outlier_options_reach_run_options(monkeypatch):
    got = _captured_run(monkeypatch, ["--outlier-dims", "4", "--outlier-scale", "30"])
    assert (got.outlier_dims, got.outlier_scale) == (4, 30.0)
    plain = _captured_run(monkeypatch, [])
    assert (plain.outlier_dims, plain.outlier_scale) == (0, 20.0)


@pytest.mark.parametrize("args, words", [
    (["--chunk-tokens", "32", "--backend", "static"], "eager backend only"),
    (["--chunk-tokens", "32", "--block-tokens", "64"], "drop --block-tokens"),
    (["--chunk-tokens", "48"], "must divide --tokens 256"),
    (["--chunk-tokens", "256"], "two or more chunks"),
    (["--chunk-tokens", "32", "--rounds-per-block", "2"], "one round per block"),
    (["--chunk-tokens", "32", "--window-reps", "2"], "one generation per window"),
])
def test_bad_chunking_is_a_coded_usage_error(tmp_path, args, words):
    res = CliRunner().invoke(main, ["run", "--synthetic", "tiny-llama", *args, "--out", str(tmp_path)])
    assert res.exit_code == 2 and "QJ409" in res.output and words in res.output
    assert "Traceback" not in res.output


def test_chunk_tokens_reach_the_protocol(monkeypatch):
    assert _captured_run(monkeypatch, ["--chunk-tokens", "32"]).protocol.chunk_tokens == 32
    assert _captured_run(monkeypatch, []).protocol.chunk_tokens == 0
