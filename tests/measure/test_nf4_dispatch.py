"""benchmarks.nf4_dispatch: bitsandbytes' own gemm_4bit rule, read from the installed package's source."""

import json
from importlib.metadata import version
from pathlib import Path

import pytest

from benchmarks.nf4_dispatch import DEFAULT_MODELS, dispatch, load_rule, main, ops_source
from measure.gpu.synthetic import SYNTHETIC_MODELS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hopper():
    source, where = ops_source(None)
    assert where.endswith("backends/cuda/ops.py")
    return load_rule(source, 132, (9, 0))


def test_up_to_four_rows_every_layer_runs_the_fused_kernel_and_past_1536_none_does(hopper):
    for name in DEFAULT_MODELS:
        spec = SYNTHETIC_MODELS[name]
        for batch in (1, 2, 4):
            d = dispatch(spec, batch, hopper)
            assert d["fallback_layers"] == [] and d["bytes_vs_fp16_pct"] == pytest.approx(-75.0)
        d = dispatch(spec, 2048, hopper)
        assert d["fallback_share"] == 1.0 and d["bytes_vs_fp16_pct"] == pytest.approx(125.0)


def test_the_rule_depends_on_the_card():
    source, _ = ops_source(None)
    spec = SYNTHETIC_MODELS["qwen2-7b"]
    hopper, pre_turing = load_rule(source, 132, (9, 0)), load_rule(source, 80, (7, 0))
    # without an MMA kernel the fused path only wins below 8 rows: at 8 rows every layer falls back
    assert dispatch(spec, 8, pre_turing)["fallback_share"] == 1.0
    assert dispatch(spec, 8, hopper)["fallback_share"] < 1.0


def test_on_hopper_at_batch_8_the_layers_whose_output_is_the_hidden_size_fall_back(hopper):
    # The measured sign flip of static NF4 between batch 1 and 8 (measurements/hopper-batch/) follows
    # from this rule in the bitsandbytes those cells ran (0.50.2): q, o and down have N = hidden size,
    # under half a wave of 64-column blocks on 132 SMs, so they dequantize the whole weight each step.
    if version("bitsandbytes") != "0.50.2":
        assert dispatch(SYNTHETIC_MODELS["qwen2-7b"], 1, hopper)["fallback_layers"] == []
        return
    for name in ("tinyllama-1.1b", "qwen2.5-3b", "qwen2-7b"):
        d = dispatch(SYNTHETIC_MODELS[name], 8, hopper)
        assert d["fallback_layers"] == ["q", "o", "down"] and d["bytes_vs_fp16_pct"] > 0
    measured = [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((ROOT / "measurements" / "hopper-batch").glob("*-b8-s/energy.json"))]
    assert measured and all(r["results"]["vs_fp16_energy_pct"] > 0 for r in measured)


def test_the_command_prints_one_row_per_model_and_batch(capsys):
    assert main(["--batch", "1", "--batch", "8", "--model", "tinyllama-1.1b"]) == 0
    out = capsys.readouterr().out
    assert "sm90" in out and out.count("| TinyLlama-1.1B |") == 2
