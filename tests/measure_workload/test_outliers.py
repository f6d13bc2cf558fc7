"""Planted outlier features and the LLM.int8() outlier-column probe, on the real tiny model and stack."""

import hashlib

import pytest
import torch

from measure.gpu.outliers import OutlierPlant, outlier_dims, plant_problem
from measure.gpu.synthetic import get_spec, materialize
from measure.gpu.workload import Workload

NORMS = ("input_layernorm.weight", "post_attention_layernorm.weight")


def _tensors(directory):
    from safetensors.torch import load_file

    return load_file(str(directory / "model.safetensors"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache = tmp_path_factory.mktemp("outlier-cache")
    spec = get_spec("tiny-llama")
    plain = materialize(spec, seed=0, cache_dir=cache)
    zero = materialize(spec, seed=0, cache_dir=cache, plant=OutlierPlant(0))
    four = materialize(spec, seed=0, cache_dir=cache, plant=OutlierPlant(4, 20.0))
    return cache, plain, zero, four


def test_no_plant_is_the_plain_init_and_cache(built):
    _, plain, zero, four = built
    assert zero == plain and "outliers" not in plain.name
    assert four != plain and "-outliers4x20-" in four.name
    digest = hashlib.sha256((plain / "model.safetensors").read_bytes()).hexdigest()
    assert hashlib.sha256((zero / "model.safetensors").read_bytes()).hexdigest() == digest
    assert "outlier_plant" not in (plain / "quantjoule-synthetic.json").read_text()
    assert '"outlier_plant"' in (four / "quantjoule-synthetic.json").read_text()


def test_plant_sets_exactly_k_dims_in_every_layers_two_norms(built):
    _, plain, _, four = built
    base, planted = _tensors(plain), _tensors(four)
    dims = outlier_dims(0, 128, 4)
    assert len(set(dims)) == 4 and dims == outlier_dims(0, 128, 4) and dims != outlier_dims(1, 128, 4)
    norms = [n for n in planted if n.endswith(NORMS)]
    assert len(norms) == 2 * get_spec("tiny-llama").num_hidden_layers
    for name, tensor in planted.items():
        if name in norms:
            assert torch.nonzero(tensor != 1).flatten().tolist() == dims
            assert torch.all(tensor[dims] == 20.0)
        else:  # every other weight is the unplanted model's
            assert torch.equal(tensor, base[name]), name


def test_bad_plants_are_named():
    assert plant_problem(0, 20.0) is None and plant_problem(4, 20.0, 128) is None
    assert "integer" in plant_problem(-1, 20.0) and "hidden" in plant_problem(200, 20.0, 128)
    assert "outlier-scale" in plant_problem(4, float("nan")) and "outlier-scale" in plant_problem(4, 0)


@pytest.fixture(scope="module")
def probes(built):
    cache = built[0]
    out = {}
    for k in (0, 4):
        wl = Workload("synthetic:tiny-llama", "eager", "cpu", cache_dir=cache, outlier_dims=k)
        arm = wl.load("INT8")
        seen = []
        # bitsandbytes' own split, for comparison: the outlier columns it sent to its FP16 product
        def count(mod, args, output, seen=seen):
            seen.append(int(mod.state.idx.numel()))

        layers = [m for m in arm._model.modules() if type(m).__name__ == "Linear8bitLt"]
        handles = [m.register_forward_hook(count) for m in layers]
        out[k] = (arm.int8_outliers(), seen, arm, wl)
        for h in handles:
            h.remove()
    return out


def test_probe_finds_no_outlier_columns_in_the_plain_random_init(probes):
    probe, seen, arm, _ = probes[0]
    assert probe["columns_fraction"] == 0.0 and probe["layers_with_outliers_fraction"] == 0.0
    assert probe["decode_steps"] == 8 and probe["int8_layers"] == 14 and probe["threshold"] == 6.0
    assert sum(seen) == 0


def test_probe_finds_the_planted_columns_and_agrees_with_bitsandbytes(probes):
    probe, seen, arm, _ = probes[4]
    assert probe["columns_fraction"] > 0 and probe["layers_with_outliers_fraction"] >= 5 / 7 - 1e-9
    # the hook's count (input, threshold) is the split bitsandbytes made on the same calls
    layers = probe["int8_layers"]
    decode = [n for i, n in enumerate(seen) if i >= layers]
    cols = sum(decode) / sum(128 if i % 7 != 6 else 384 for i in range(len(decode)))
    assert cols == pytest.approx(probe["columns_fraction"], rel=1e-9)
    # the hooks are gone: nothing of the probe runs during a timed block
    assert all(not m._forward_pre_hooks for m in arm._model.modules() if type(m).__name__ == "Linear8bitLt")


def test_probe_is_none_for_other_arms_and_the_plant_is_in_info(probes):
    _, _, _, wl = probes[4]
    assert wl.info()["outlier_plant"] == {"dims": 4, "scale": 20.0}
    assert "outlier_plant" not in probes[0][3].info()
    assert wl.load("NF4").int8_outliers() is None
