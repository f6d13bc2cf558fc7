"""The GPU workload seam: loads one model as FP16 / NF4 / INT8 arms and greedy-decodes exact token counts.

This is the only module of ``measure`` that imports torch, transformers, bitsandbytes and accelerate
(its helpers ``measure.synthetic`` and ``measure.static_backend`` aside), and it imports them lazily, so
``import measure.workload`` works on a machine without them and ``load`` then raises ``DependencyMissing``.

Interface (what the protocol codes against)::

    wl = Workload(model_spec, backend="eager", device="cuda", seed=0, prompt_tokens=16, cache_dir=None,
                  batch_size=1, int8_threshold=None)
    arm = wl.load("NF4")        # -> Arm; several arms stay resident
    arm.generate(256)           # -> 256 × batch_size: 256 new tokens per prompt, greedy, synchronised
    arm.precision, arm.dtype, arm.params_b, arm.weight_bytes
    arm.perplexity()            # -> (ppl | None, reason)
    wl.unload(arm); wl.info()   # -> dict for the report's workload/software blocks

``model_spec`` is a ``ModelSpec`` or a string: ``"synthetic:<name>"`` for a synthetic model (see
``measure.synthetic``), otherwise a Hugging Face id or a local directory; ``ModelSpec(model_id, revision)``
pins a revision. The constructor only stores its arguments.

Precisions: FP16 = float16 weights; NF4 = ``BitsAndBytesConfig(load_in_4bit=True,
bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=float16)``; INT8 = LLM.int8() (``load_in_8bit=True``,
default outlier threshold 6.0; ``int8_threshold`` sets ``llm_int8_threshold``, and 0.0 turns the outlier
decomposition off, which makes the INT8 decode step capturable: see ``measure.static_backend``). Every
arm is loaded from the same source (a synthetic model's saved directory, or the same id and revision), so
the arms share one set of weights. On a CPU without float16
kernels the FP16 arm falls back to float32, and ``Arm.dtype`` says which was used.

Decoding: the prompts are fixed at load: ``batch_size`` prompts of ``prompt_tokens`` ids each, equal
length so no padding enters the batch (consecutive slices of the vendored text when the model has a
tokenizer, else seeded random ids); batch 1 is the first slice, as before batches existed.
``generate(n)`` forces exactly n new tokens by banning EOS for the whole generation
(``min_new_tokens = max_new_tokens = n``; random-init models otherwise stop at random), with a fresh
greedy ``GenerationConfig`` so no repetition penalty or sampling default of a hub config applies.
Backends: ``eager`` = plain ``model.generate`` (dynamic cache; what the reference curves used);
``static`` = ``measure.static_backend`` (StaticCache, CUDA-graph replay on CUDA).

``params_b`` is counted from the loaded model: bitsandbytes packs two 4-bit weights per uint8 element,
halving ``numel()``, so a ``Params4bit`` is counted by the original shape kept in its ``quant_state``;
int8 and float parameters by ``numel()``; tied weights once. ``weight_bytes`` is the bytes of every
parameter plus its quantization state (4-bit absmax, quant map, nested statistics; int8 row scales), as
stored on the device: what one decode step reads, taken after one forward pass because bitsandbytes
settles some layouts lazily. Buffers (rotary frequencies) are not counted.

Failures raise ``WorkloadError`` subclasses carrying ``kind`` and ``hint``: out of memory, load failure,
unavailable device, missing dependency, static capture refused (expected for LLM.int8(); see
``measure.static_backend``). No traceback is meant to reach the user.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.metadata
import math
from dataclasses import dataclass
from pathlib import Path

from measure import synthetic

PRECISIONS = ("FP16", "NF4", "INT8")
BACKENDS = ("eager", "static")
QUALITY_TEXT = Path(__file__).with_name("data") / "declaration-of-independence.txt"
PERPLEXITY_WINDOW_TOKENS = 128
PERPLEXITY_MAX_WINDOWS = 16
SYNTHETIC_PREFIX = "synthetic:"


class WorkloadError(Exception):
    """A workload failure the protocol reports (arm marked unavailable) instead of crashing."""

    kind = "workload-error"
    hint = "see the message"

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class BadArgument(WorkloadError):
    kind = "bad-argument"
    hint = f"precision is one of {', '.join(PRECISIONS)}; backend one of {', '.join(BACKENDS)}"


class DependencyMissing(WorkloadError):
    kind = "dependency-missing"
    hint = "install the measurement extras: pip install 'quantjoule[measure]'"


class DeviceUnavailable(WorkloadError):
    kind = "device-unavailable"
    hint = "check `python -m measure env`; use --device cpu only for a dry run"


class ModelLoadFailed(WorkloadError):
    kind = "load-failed"
    hint = "check the model id / path and revision, and that it is cached locally if offline"


class ArmOutOfMemory(WorkloadError):
    kind = "out-of-memory"
    hint = "measure fewer precisions at once or a smaller model; other arms keep their data"


class StaticBackendUnavailable(WorkloadError):
    kind = "static-unavailable"
    hint = "use --backend eager for this precision (LLM.int8()'s outlier split syncs with the host mid-step)"


class GenerationFailed(WorkloadError):
    kind = "generation-failed"
    hint = "re-run; if it persists, report the message"


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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"


class Workload:
    """One model on one device; loads arms on request (constructor does no work)."""

    def __init__(self, model_spec: ModelSpec | str, backend: str = "eager", device: str = "cuda",
                 seed: int = 0, prompt_tokens: int = 16, cache_dir: str | Path | None = None,
                 batch_size: int = 1, int8_threshold: float | None = None):
        self.spec = ModelSpec.parse(model_spec)
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
                self._source = str(synthetic.materialize(spec, self.seed, self.cache_dir, device=init_on))
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
            if _is_oom(exc):
                raise ArmOutOfMemory(f"{precision}: out of memory while loading "
                                     f"({_first_line(exc)})") from exc
            raise ModelLoadFailed(f"{precision}: could not load {self.spec.canonical_id}: "
                                  f"{_first_line(exc)}") from exc
        self._commit_hash = getattr(model.config, "_commit_hash", None) or self._commit_hash
        arm = Arm(self, precision, model, tokenizer, torch, dtype)
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


class Arm:
    """One loaded precision of the workload's model, ready to decode."""

    def __init__(self, workload: Workload, precision: str, model, tokenizer, torch, dtype):
        self.precision = precision
        self.backend = workload.backend
        self.weights = "random-init" if workload.spec.synthetic else "pretrained"
        self._torch = torch
        self._model = model
        self._tokenizer = tokenizer
        self.device = str(model.device)
        self.dtype = str(dtype).replace("torch.", "")
        self.params = _count_params(model)
        self.params_b = self.params / 1e9
        self.weight_bytes = _weight_bytes(model)
        self._eos_ids = _eos_ids(model)
        self.batch_size = workload.batch_size
        self._prompt = _prompt_ids(torch, tokenizer, model, workload.prompt_tokens, workload.seed,
                                   self._eos_ids, workload.batch_size).to(model.device)
        self._attention = torch.ones_like(self._prompt)
        pad = tokenizer.pad_token_id if tokenizer is not None else None
        from transformers import GenerationConfig

        self._gen_config = GenerationConfig(
            do_sample=False, num_beams=1, use_cache=True, eos_token_id=self._eos_ids or None,
            pad_token_id=pad if pad is not None else (self._eos_ids[0] if self._eos_ids else 0))
        model.generation_config = self._gen_config
        self._decoder = None
        self._last = None
        if self.backend == "static":
            from measure.static_backend import StaticDecoder

            self._decoder = StaticDecoder(model, self._prompt, self._eos_ids)

    @property
    def prompt_ids(self) -> list[int]:
        return self._prompt[0].tolist()

    def check_static(self) -> None:
        """Capture a 2-token plan now so an uncapturable precision fails at load, not mid-measurement."""
        from measure.static_backend import StaticCaptureFailed

        try:
            self._decoder.prepare(2)
        except StaticCaptureFailed as exc:
            raise StaticBackendUnavailable(f"{self.precision}: static backend capture failed: {exc}") from exc
        except Exception as exc:
            if _is_oom(exc):
                raise ArmOutOfMemory(f"{self.precision}: out of memory capturing the decode step") from exc
            raise StaticBackendUnavailable(
                f"{self.precision}: static backend failed: {_first_line(exc)}") from exc

    def prepare(self, new_tokens: int) -> None:
        """Build (on CUDA, capture) the static plan for this length ahead of time; no-op for eager."""
        if self._decoder is not None:
            try:
                self._decoder.prepare(new_tokens)
            except Exception as exc:
                raise StaticBackendUnavailable(f"{self.precision}: {_first_line(exc)}") from exc

    def generate(self, new_tokens: int) -> int:
        """Greedy-decode exactly NEW_TOKENS tokens after each fixed prompt, all prompts together; returns
        the tokens generated (NEW_TOKENS × batch size), synchronised."""
        if not isinstance(new_tokens, int) or isinstance(new_tokens, bool) or new_tokens < 1:
            raise BadArgument(f"new_tokens must be a positive integer, got {new_tokens!r}",
                              hint="use --tokens 256")
        try:
            if self._decoder is not None:
                count = self._decoder.generate(new_tokens)
            else:
                count = self._eager(new_tokens)
        except WorkloadError:
            raise
        except Exception as exc:
            if _is_oom(exc):
                raise ArmOutOfMemory(f"{self.precision}: out of memory while generating") from exc
            raise GenerationFailed(f"{self.precision}: generation failed: {_first_line(exc)}") from exc
        if count != new_tokens:
            raise GenerationFailed(f"{self.precision}: asked for {new_tokens} tokens, got {count}")
        return count * self.batch_size

    def _eager(self, new_tokens: int) -> int:
        torch = self._torch
        with torch.inference_mode():
            out = self._model.generate(input_ids=self._prompt, attention_mask=self._attention,
                                       max_new_tokens=new_tokens, min_new_tokens=new_tokens)
        if out.is_cuda:
            torch.cuda.synchronize()
        self._last = out
        return out.shape[1] - self._prompt.shape[1]

    def last_token_ids(self, row: int = 0) -> list[int]:
        """The tokens of the last generate() for prompt ROW (copied to the host on request only)."""
        if self._decoder is not None:
            return self._decoder.last_token_ids(row)
        return [] if self._last is None else self._last[row, self._prompt.shape[1]:].tolist()

    def eager_token_ids(self, new_tokens: int, row: int = 0) -> list[int]:
        """Tokens of a plain `generate` of NEW_TOKENS, whatever the backend: the reference for static."""
        self._eager(new_tokens)
        return self._last[row, self._prompt.shape[1]:].tolist()

    def int8_thresholds(self) -> list[float]:
        """The outlier threshold of every LLM.int8() layer as loaded (empty for FP16 and NF4)."""
        return sorted({float(m.state.threshold) for m in self._model.modules()
                       if type(m).__name__ == "Linear8bitLt"})

    def perplexity(self, text: str | None = None) -> tuple[float | None, str]:
        """Teacher-forced perplexity on the vendored text (or TEXT), fixed windows; (None, reason) if not."""
        if self.weights == "random-init":
            return None, "random-init weights: perplexity says nothing about quantization quality"
        if self._tokenizer is None:
            return None, "no tokenizer for this model"
        if text is None:
            raw = QUALITY_TEXT.read_bytes()
            text = raw.decode("utf-8")
            label = f"{QUALITY_TEXT.name} sha256:{hashlib.sha256(raw).hexdigest()[:16]}"
        else:
            label = "supplied text"
        torch = self._torch
        ids = self._tokenizer(text, return_tensors="pt").input_ids[0]
        w = PERPLEXITY_WINDOW_TOKENS
        windows = [ids[i:i + w] for i in range(0, len(ids) - 1, w)][:PERPLEXITY_MAX_WINDOWS]
        windows = [win for win in windows if len(win) >= 2]
        if not windows:
            return None, "text too short for a perplexity window"
        nll, count = 0.0, 0
        with torch.inference_mode():
            for win in windows:
                batch = win.unsqueeze(0).to(self._model.device)
                logits = self._model(input_ids=batch).logits.float()
                nll += torch.nn.functional.cross_entropy(logits[0, :-1], batch[0, 1:], reduction="sum").item()
                count += batch.shape[1] - 1
        ppl = math.exp(nll / count)
        return ppl, f"teacher-forced, {len(windows)} window(s) of <= {w} tokens, {count} predictions, {label}"

    def release(self) -> None:
        if self._decoder is not None:
            self._decoder.release()
        self._decoder = None
        self._model = None
        self._last = None


def _eos_ids(model) -> list[int]:
    eos = getattr(model.generation_config, "eos_token_id", None)
    if eos is None:
        eos = getattr(model.config, "eos_token_id", None)
    if eos is None:
        return []
    return sorted({int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])})


def _prompt_ids(torch, tokenizer, model, prompt_tokens: int, seed: int, eos_ids: list[int],
                batch_size: int = 1):
    """The fixed prompts, (batch_size, prompt_tokens): consecutive slices of the vendored text, or seeded
    random ids (EOS avoided). Row 0 is the batch-1 prompt, so a batch extends it and never changes it."""
    if tokenizer is not None:
        ids = tokenizer(QUALITY_TEXT.read_text(encoding="utf-8"), return_tensors="pt").input_ids[0]
        if len(ids) >= prompt_tokens * batch_size:
            return ids[: prompt_tokens * batch_size].view(batch_size, prompt_tokens)
    vocab = model.get_input_embeddings().weight.shape[0]
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch_size, prompt_tokens), generator=gen)
    for eos in eos_ids:
        ids[ids == eos] = (eos + 1) % vocab
    return ids


def _unique_params(model):
    seen: set[int] = set()
    for param in model.parameters():
        if id(param) not in seen:
            seen.add(id(param))
            yield param


def _count_params(model) -> int:
    total = 0
    for param in _unique_params(model):
        state = getattr(param, "quant_state", None)
        total += math.prod(state.shape) if state is not None else param.numel()
    return total


def _quant_tensors(module, param):
    state = getattr(param, "quant_state", None)
    if state is not None:
        yield from (state.absmax, state.code, getattr(state, "offset", None))
        nested = getattr(state, "state2", None)
        if nested is not None:
            yield from (nested.absmax, nested.code)
    # LLM.int8() row scales start on the weight and move to the module's state at the first forward.
    yield getattr(param, "SCB", None)
    yield getattr(getattr(module, "state", None), "SCB", None)


def _weight_bytes(model) -> int:
    import torch

    seen: set[tuple[int, int]] = set()
    total = 0
    for module in model.modules():
        for param in module.parameters(recurse=False):
            for tensor in (param, *_quant_tensors(module, param)):
                if not isinstance(tensor, torch.Tensor):
                    continue
                key = (tensor.data_ptr(), tensor.numel())
                if key not in seen:
                    seen.add(key)
                    total += tensor.numel() * tensor.element_size()
    return total
