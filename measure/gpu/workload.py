"""The GPU workload: loads one model as FP16 / NF4 / INT8 arms (``measure.gpu.arm``), all resident.

torch, transformers, bitsandbytes and accelerate are imported lazily, so ``import measure.gpu.workload``
works on a machine without them and ``load`` then raises ``DependencyMissing``. It implements the
``Workload`` seam of ``measure.core.seams``::

    wl = Workload(model_spec, backend="eager", device="cuda", seed=0, prompt_tokens=16, cache_dir=None,
                  batch_size=1, int8_threshold=None, outlier_dims=0, outlier_scale=20.0)
    arm = wl.load("NF4")        # -> Arm; several arms stay resident
    arm.generate(256)           # -> 256 × batch_size: 256 new tokens per prompt, greedy, synchronised
    arm.precision, arm.dtype, arm.params_b, arm.weight_bytes
    arm.perplexity()            # -> (ppl | None, reason)
    wl.unload(arm); wl.info()   # -> dict for the report's workload/software blocks

``model_spec`` is a ``ModelSpec`` or a string: ``"synthetic:<name>"`` for a synthetic model (see
``measure.gpu.synthetic``), otherwise a Hugging Face id or a local directory;
``ModelSpec(model_id, revision)`` pins a revision. The constructor only stores its arguments.

Precisions: FP16 = float16 weights; NF4 = ``BitsAndBytesConfig(load_in_4bit=True,
bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=float16)``; INT8 = LLM.int8() (``load_in_8bit=True``,
default outlier threshold 6.0; ``int8_threshold`` sets ``llm_int8_threshold``, and 0.0 turns the outlier
decomposition off, which makes the INT8 decode step capturable: see ``measure.gpu.static``).
``outlier_dims`` K > 0 (synthetic models only) plants K outlier features of ``outlier_scale`` into the
weights every arm loads (``measure.gpu.outliers``); ``Arm.int8_outliers()`` measures the share of int8
input columns that reach the threshold, after the measurement. Every
arm is loaded from the same source (a synthetic model's saved directory, or the same id and revision), so
the arms share one set of weights. On a CPU without float16 kernels the FP16 arm falls back to float32,
and ``Arm.dtype`` says which was used.

Decoding: the prompts are fixed at load: ``batch_size`` prompts of ``prompt_tokens`` ids each, equal
length so no padding enters the batch (consecutive slices of the vendored text when the model has a
tokenizer, else seeded random ids); batch 1 is the first slice, as before batches existed.
``generate(n)`` forces exactly n new tokens by banning EOS for the whole generation
(``min_new_tokens = max_new_tokens = n``; random-init models otherwise stop at random), with a fresh
greedy ``GenerationConfig`` so no repetition penalty or sampling default of a hub config applies.
Backends: ``eager`` = plain ``model.generate`` (dynamic cache; what the reference curves used);
``static`` = ``measure.gpu.static`` (StaticCache, CUDA-graph replay on CUDA). ``params_b`` and
``weight_bytes`` are counted from the loaded model (``measure.gpu.weights``).

Failures raise ``WorkloadError`` subclasses carrying ``kind`` and ``hint`` (``measure.gpu.errors``): out of
memory, load failure, unavailable device, missing dependency, static capture refused (expected for
LLM.int8(); see ``measure.gpu.static``). No traceback is meant to reach the user.
"""

from __future__ import annotations

import gc
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

from measure.core.design import BACKENDS, PRECISIONS
from measure.gpu import synthetic
from measure.gpu.arm import Arm
from measure.gpu.errors import (
    ArmOutOfMemory,
    BadArgument,
    DependencyMissing,
    DeviceUnavailable,
    ModelLoadFailed,
    WorkloadError,
    first_line,
    is_oom,
)
from measure.gpu.outliers import DEFAULT_OUTLIER_SCALE, OutlierPlant, plant_problem

SYNTHETIC_PREFIX = "synthetic:"


@dataclass(frozen=True)
class ModelSpec:
    """Which model: a Hugging Face id / local path (+ revision), or a synthetic architecture name."""

    model_id: str | None = None
    revision: str | None = None
    synthetic: str | None = None

    @classmethod
    def parse(cls, value: ModelSpec | str, revision: str | None = None) -> ModelSpec:
        if isinstance(value, ModelSpec):
            return value
        text = str(value).strip()
        if text.lower().startswith(SYNTHETIC_PREFIX):
            return cls(synthetic=text[len(SYNTHETIC_PREFIX):].strip().lower())
        if not text:
            raise BadArgument("empty model id",
                              hint="pass a Hugging Face id, a local path, or synthetic:NAME")
        return cls(model_id=text, revision=revision)

    @property
    def canonical_id(self) -> str:
        return f"{SYNTHETIC_PREFIX}{self.synthetic}" if self.synthetic else str(self.model_id)


def _stack():
    """Import the heavy stack once per call site; a clear error instead of ImportError."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise DependencyMissing(f"the measurement stack is not installed ({exc})") from exc
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def package_versions() -> dict[str, str | None]:
    """Installed versions of the stack (None when absent), without importing it."""
    out: dict[str, str | None] = {}
    for name in ("torch", "transformers", "bitsandbytes", "accelerate"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


class Workload:
    """One model on one device; loads arms on request (constructor does no work)."""

    def __init__(self, model_spec: ModelSpec | str, backend: str = "eager", device: str = "cuda",
                 seed: int = 0, prompt_tokens: int = 16, cache_dir: str | Path | None = None,
                 batch_size: int = 1, int8_threshold: float | None = None, outlier_dims: int = 0,
                 outlier_scale: float = DEFAULT_OUTLIER_SCALE):
        self.spec = ModelSpec.parse(model_spec)
        self.plant = OutlierPlant(outlier_dims, outlier_scale)  # dims 0: the plain random init
        self.backend = backend
        self.batch_size = batch_size
        self.int8_threshold = int8_threshold  # None: bitsandbytes' LLM.int8() default (6.0)
        self.device = device
        self.seed = seed
        self.prompt_tokens = prompt_tokens
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._source: str | None = None
        self._tokenizer = None
        self._tokenizer_checked = False
        self._commit_hash: str | None = None
        self._arms: list[Arm] = []

    # -- what the report needs -------------------------------------------------------------------
    def info(self) -> dict:
        versions = package_versions()
        torch_cuda = None
        if versions["torch"] is not None:
            try:
                import torch

                torch_cuda = torch.version.cuda
            except ImportError:
                pass
        if self.spec.synthetic:
            spec = synthetic.SYNTHETIC_MODELS.get(self.spec.synthetic)
            model_name = spec.model_name if spec else self.spec.synthetic
        else:
            model_name = Path(str(self.spec.model_id).rstrip("/")).name
        return {
            "model_name": model_name,
            "model_id": self.spec.canonical_id,
            "model_revision": None if self.spec.synthetic else (self._commit_hash or self.spec.revision),
            "weights": "random-init" if self.spec.synthetic else "pretrained",
            "backend": self.backend,
            "device": self.device,
            "seed": self.seed,
            "prompt_tokens": self.prompt_tokens,
            "batch_size": self.batch_size,
            "decoding": "greedy",
            **({"outlier_plant": self.plant.as_dict()} if self.plant.planted else {}),
            "versions": versions,
            "torch_cuda": torch_cuda,
        }

    # -- loading ---------------------------------------------------------------------------------
    def _check_args(self, precision: str) -> None:
        if precision not in PRECISIONS:
            raise BadArgument(f"unknown precision {precision!r}")
        if self.backend not in BACKENDS:
            raise BadArgument(f"unknown backend {self.backend!r}")
        if not isinstance(self.prompt_tokens, int) or self.prompt_tokens < 1:
            raise BadArgument(f"prompt_tokens must be a positive integer, got {self.prompt_tokens!r}",
                              hint="use --prompt-tokens 16 (the default)")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise BadArgument(f"batch_size must be a positive integer, got {self.batch_size!r}",
                              hint="use --batch-size 1 (the default)")
        t = self.int8_threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not t >= 0.0
                              or t == float("inf")):
            raise BadArgument(f"int8_threshold must be a finite number >= 0, got {t!r}",
                              hint="leave it unset for LLM.int8() (6.0), or 0 for no outlier decomposition")
        why = plant_problem(self.plant.dims, self.plant.scale)
        if why is None and self.plant.planted and not self.spec.synthetic:
            why = "outlier features can only be planted in a synthetic model's random init"
        if why is not None:
            raise BadArgument(why, hint="use --outlier-dims 0 (the default) or a small K with --synthetic")

    def _device_str(self, torch) -> str:
        dev = torch.device(self.device)
        if dev.type == "cuda":
            if not torch.cuda.is_available():
                raise DeviceUnavailable(f"device {self.device!r} requested but torch sees no CUDA GPU")
            return f"cuda:{dev.index if dev.index is not None else torch.cuda.current_device()}"
        return str(dev)

    def source(self) -> str:
        """Where the weights load from: the synthetic model's directory (built on first call) or the id."""
        if self._source is None:
            if self.spec.synthetic:
                try:
                    spec = synthetic.get_spec(self.spec.synthetic)
                except synthetic.UnknownSyntheticModel as exc:
                    raise ModelLoadFailed(str(exc), hint="pick a name from the list") from exc
                torch, _ = _stack()
                init_on = self._device_str(torch)
                self._source = str(synthetic.materialize(spec, self.seed, self.cache_dir, device=init_on,
                                                         plant=self.plant))
            else:
                self._source = str(self.spec.model_id)
        return self._source

    def _load_tokenizer(self, transformers):
        if not self._tokenizer_checked:
            self._tokenizer_checked = True
            if not self.spec.synthetic:
                try:
                    self._tokenizer = transformers.AutoTokenizer.from_pretrained(
                        self.source(), revision=self.spec.revision)
                except Exception:  # a model without a tokenizer is allowed: seeded prompt, no perplexity
                    self._tokenizer = None
        return self._tokenizer

    def _from_pretrained(self, transformers, torch, precision: str, device: str, dtype):
        kwargs: dict = {"dtype": dtype, "device_map": {"": device}}
        if precision != "FP16":
            try:
                import bitsandbytes  # noqa: F401
            except ImportError as exc:
                raise DependencyMissing(f"{precision} needs bitsandbytes ({exc})") from exc
            if precision == "NF4":
                kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
                    load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16)
            elif self.int8_threshold is None:
                kwargs["quantization_config"] = transformers.BitsAndBytesConfig(load_in_8bit=True)
            else:
                kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
                    load_in_8bit=True, llm_int8_threshold=float(self.int8_threshold))
        if self.spec.revision and not self.spec.synthetic:
            kwargs["revision"] = self.spec.revision
        model = transformers.AutoModelForCausalLM.from_pretrained(self.source(), **kwargs)
        return model.eval()

    def load(self, precision: str) -> Arm:
        """Load one arm; raises a WorkloadError subclass (never a bare library exception)."""
        self._check_args(precision)
        torch, transformers = _stack()
        device = self._device_str(torch)
        tokenizer = self._load_tokenizer(transformers)
        try:
            model = self._from_pretrained(transformers, torch, precision, device, torch.float16)
            dtype = torch.float16
            # One forward always: it detects a CPU without float16 kernels, and lets bitsandbytes settle
            # its lazy layouts (int8 scales move to the module state; CPU 4-bit weights are repacked)
            # before weight_bytes is read.
            if not _runs(torch, model):
                if not (precision == "FP16" and device == "cpu"):
                    _runs(torch, model, strict=True)
                del model
                model = self._from_pretrained(transformers, torch, precision, device, torch.float32)
                dtype = torch.float32
                _runs(torch, model, strict=True)
        except WorkloadError:
            raise
        except Exception as exc:
            _free(torch)
            if is_oom(exc):
                raise ArmOutOfMemory(f"{precision}: out of memory while loading "
                                     f"({first_line(exc)})") from exc
            raise ModelLoadFailed(f"{precision}: could not load {self.spec.canonical_id}: "
                                  f"{first_line(exc)}") from exc
        self._commit_hash = getattr(model.config, "_commit_hash", None) or self._commit_hash
        arm = Arm.of(self, precision, model, tokenizer, torch, dtype)
        if self.backend == "static":
            try:
                arm.check_static()
            except WorkloadError:
                arm.release()
                _free(torch)
                raise
        self._arms.append(arm)
        return arm

    def unload(self, arm: Arm) -> None:
        """Free an arm's weights and graphs (idempotent)."""
        if arm in self._arms:
            self._arms.remove(arm)
        arm.release()
        torch, _ = _stack()
        _free(torch)


def _runs(torch, model, strict: bool = False) -> bool:
    """True when a one-token forward works (CPU builds without float16 kernels fail here)."""
    try:
        with torch.inference_mode():
            model(input_ids=torch.zeros(1, 1, dtype=torch.long, device=model.device))
        return True
    except RuntimeError:
        if strict:
            raise
        return False


def _free(torch) -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
