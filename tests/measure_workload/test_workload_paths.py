"""Real-id loading path (local directories), tokenizers, perplexity, EOS handling and failure modes."""

import json
import math
import subprocess
import sys

import pytest
import torch

from measure.gpu.errors import (
    ArmOutOfMemory,
    BadArgument,
    DeviceUnavailable,
    ModelLoadFailed,
    WorkloadError,
    is_oom,
)
from measure.gpu.quality import QUALITY_TEXT
from measure.gpu.workload import ModelSpec, Workload

pytestmark = pytest.mark.slow


def _train_tokenizer(directory):
    """A small byte-level BPE tokenizer trained on the vendored text, saved like a hub tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([QUALITY_TEXT.read_text(encoding="utf-8")], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(directory)
    return fast


@pytest.fixture(scope="module")
def local_with_tokenizer(tiny_model_dir, tmp_path_factory, copy_model):
    target = copy_model(tiny_model_dir, tmp_path_factory.mktemp("local") / "tiny-with-tokenizer",
                        eos_token_id=1, bos_token_id=0)
    _train_tokenizer(target)
    return target


def test_local_directory_loads_as_pretrained_with_tokenizer_prompt(local_with_tokenizer):
    wl = Workload(str(local_with_tokenizer), device="cpu")
    arm = wl.load("FP16")
    info = wl.info()
    assert info["weights"] == "pretrained" and info["model_id"] == str(local_with_tokenizer)
    assert info["model_name"] == "tiny-with-tokenizer"
    assert info["model_revision"] is None  # a local directory has no commit hash
    tok = wl._tokenizer
    expected = tok(QUALITY_TEXT.read_text(encoding="utf-8")).input_ids[:16]
    assert arm.prompt_ids == expected
    assert arm.generate(12) == 12


def test_perplexity_is_teacher_forced_on_the_vendored_text(local_with_tokenizer):
    wl = Workload(str(local_with_tokenizer), device="cpu")
    arm = wl.load("FP16")
    value, reason = arm.perplexity()
    assert value is not None and math.isfinite(value)
    assert "declaration-of-independence.txt" in reason and "sha256:" in reason
    # independent check on one window: transformers' own shifted-label loss
    ids = wl._tokenizer(QUALITY_TEXT.read_text(encoding="utf-8"), return_tensors="pt").input_ids[:, :128]
    with torch.inference_mode():
        loss = arm._model(input_ids=ids, labels=ids).loss.item()
    one_window, _ = arm.perplexity(wl._tokenizer.decode(ids[0]))
    assert one_window == pytest.approx(math.exp(loss), rel=1e-3)
    # random weights over a 600-token vocabulary: no better than uniform guessing, far from perfect
    assert 100 < value < 5000
    nf4_value, _ = wl.load("NF4").perplexity()
    assert nf4_value == pytest.approx(value, rel=0.2) and nf4_value != value


def test_no_tokenizer_means_seeded_prompt_and_no_perplexity(tiny_model_dir, tmp_path, copy_model):
    target = copy_model(tiny_model_dir, tmp_path / "no-tokenizer")
    arm = Workload(str(target), device="cpu", seed=3).load("NF4")
    value, reason = arm.perplexity()
    assert value is None and reason == "no tokenizer for this model"
    again = Workload(str(target), device="cpu", seed=3).load("NF4")
    assert arm.prompt_ids == again.prompt_ids and len(arm.prompt_ids) == 16


def test_eos_is_banned_until_the_requested_count(eager_arms, tiny_model_dir, tmp_path, copy_model):
    """A model whose EOS is its first greedy choice still yields exactly n tokens, in both backends."""
    eager_arms["FP16"].generate(4)
    first = eager_arms["FP16"].last_token_ids()[0]
    target = copy_model(tiny_model_dir, tmp_path / "eos-first", eos_token_id=first)
    assert json.loads((target / "config.json").read_text())["eos_token_id"] == first
    results = {}
    for backend in ("eager", "static"):
        arm = Workload(str(target), backend=backend, device="cpu", seed=0).load("FP16")
        assert arm.generate(24) == 24
        results[backend] = arm.last_token_ids()
        assert first not in results[backend]
    # with EOS banned the choice falls to the runner-up: same rule in both backends
    assert results["eager"][0] == results["static"][0] != first


def test_constructor_does_no_work(tmp_path):
    Workload("synthetic:tinyllama-1.1b", device="cuda:7", cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_model_spec_parsing():
    assert ModelSpec.parse("synthetic:Qwen2-0.5B").synthetic == "qwen2-0.5b"
    spec = ModelSpec.parse("org/model", revision="abc123")
    assert (spec.model_id, spec.revision, spec.canonical_id) == ("org/model", "abc123", "org/model")
    with pytest.raises(BadArgument):
        ModelSpec.parse("   ")


def test_bad_arguments_have_kind_and_hint(eager_arms, synthetic_cache):
    wl = Workload("synthetic:tiny-llama", device="cpu", cache_dir=synthetic_cache)
    with pytest.raises(BadArgument) as err:
        wl.load("FP8")
    assert err.value.kind == "bad-argument" and "NF4" in err.value.hint
    with pytest.raises(BadArgument):
        Workload("synthetic:tiny-llama", backend="compiled", device="cpu").load("FP16")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(BadArgument):
            eager_arms["FP16"].generate(bad)


def test_unknown_synthetic_and_missing_path_fail_cleanly(tmp_path):
    with pytest.raises(ModelLoadFailed, match="known: .*tinyllama-1.1b"):
        Workload("synthetic:gpt-17", device="cpu", cache_dir=tmp_path).load("FP16")
    with pytest.raises(ModelLoadFailed, match="could not load") as err:
        Workload(str(tmp_path / "nowhere"), device="cpu").load("INT8")
    assert isinstance(err.value, WorkloadError) and err.value.hint


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_cuda_requested_without_a_gpu(tmp_path):
    with pytest.raises(DeviceUnavailable, match="no CUDA GPU"):
        Workload("synthetic:tiny-llama", device="cuda", cache_dir=tmp_path).load("FP16")


def test_unloaded_arm_refuses_to_generate(synthetic_cache):
    wl = Workload("synthetic:tiny-llama", device="cpu", cache_dir=synthetic_cache)
    arm = wl.load("INT8")
    wl.unload(arm)
    wl.unload(arm)  # idempotent
    with pytest.raises(WorkloadError):
        arm.generate(3)


def test_out_of_memory_is_recognised():
    assert is_oom(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_oom(RuntimeError("CUDA error: out of memory"))
    assert not is_oom(RuntimeError("size mismatch"))
    assert issubclass(ArmOutOfMemory, WorkloadError) and ArmOutOfMemory.kind == "out-of-memory"


def test_missing_stack_is_a_clear_error():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from measure.gpu.workload import Workload, DependencyMissing\n"
        "try:\n"
        "    Workload('synthetic:tiny-llama', device='cpu').load('FP16')\n"
        "except DependencyMissing as exc:\n"
        "    print('OK', exc.kind, exc.hint)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OK dependency-missing") and "quantjoule[measure]" in out.stdout
