"""One loaded arm: greedy decode of exact token counts over fixed prompts, eager or static, and its probes."""

from __future__ import annotations

from measure.gpu.errors import (
    ArmOutOfMemory,
    BadArgument,
    GenerationFailed,
    StaticBackendUnavailable,
    WorkloadError,
    first_line,
    is_oom,
)
from measure.gpu.quality import QUALITY_TEXT, perplexity
from measure.gpu.weights import count_params, weight_bytes


class Arm:
    """One loaded precision of the workload's model, ready to decode."""

    def __init__(self, precision: str, backend: str, weights: str, torch, model, tokenizer, dtype: str,
                 prompt, eos_ids: list[int], batch_size: int, params: int, weight_bytes: int, decoder=None):
        self.precision, self.backend, self.weights = precision, backend, weights
        self._torch, self._model, self._tokenizer = torch, model, tokenizer
        self.device = str(model.device)
        self.dtype = dtype
        self._prompt = prompt
        self._attention = torch.ones_like(prompt)
        self._eos_ids = eos_ids
        self.batch_size = batch_size
        self.params = params
        self.params_b = params / 1e9
        self.weight_bytes = weight_bytes
        self._decoder = decoder  # the static backend's StaticDecoder; None for eager
        self._last = None
        self._streams: dict[int, tuple] = {}  # generate_chunk's (sequence so far, cache) per stream

    @classmethod
    def of(cls, workload, precision: str, model, tokenizer, torch, dtype) -> Arm:
        """The arm of a model just loaded: counts it, fixes its prompts and greedy config, and on the static
        backend gives it a StaticDecoder."""
        eos_ids = _eos_ids(model)
        prompt = _prompt_ids(torch, tokenizer, model, workload.prompt_tokens, workload.seed, eos_ids,
                             workload.batch_size).to(model.device)
        pad = tokenizer.pad_token_id if tokenizer is not None else None
        from transformers import GenerationConfig

        model.generation_config = GenerationConfig(
            do_sample=False, num_beams=1, use_cache=True, eos_token_id=eos_ids or None,
            pad_token_id=pad if pad is not None else (eos_ids[0] if eos_ids else 0))
        decoder = None
        if workload.backend == "static":
            from measure.gpu.static import StaticDecoder

            decoder = StaticDecoder(model, prompt, eos_ids)
        weights = "random-init" if workload.spec.synthetic else "pretrained"
        return cls(precision, workload.backend, weights, torch, model, tokenizer,
                   str(dtype).replace("torch.", ""), prompt, eos_ids, workload.batch_size,
                   count_params(model), weight_bytes(model), decoder)

    @property
    def prompt_ids(self) -> list[int]:
        return self._prompt[0].tolist()

    def check_static(self) -> None:
        """Capture a 2-token plan now so an uncapturable precision fails at load, not mid-measurement."""
        from measure.gpu.static import StaticCaptureFailed

        try:
            self._decoder.prepare(2)
        except StaticCaptureFailed as exc:
            raise StaticBackendUnavailable(f"{self.precision}: static backend capture failed: {exc}") from exc
        except Exception as exc:
            if is_oom(exc):
                raise ArmOutOfMemory(f"{self.precision}: out of memory capturing the decode step") from exc
            raise StaticBackendUnavailable(
                f"{self.precision}: static backend failed: {first_line(exc)}") from exc

    def prepare(self, new_tokens: int) -> None:
        """Build (on CUDA, capture) the static plan for this length ahead of time; no-op for eager."""
        if self._decoder is not None:
            try:
                self._decoder.prepare(new_tokens)
            except Exception as exc:
                raise StaticBackendUnavailable(f"{self.precision}: {first_line(exc)}") from exc

    def generate(self, new_tokens: int) -> int:
        """Greedy-decode exactly NEW_TOKENS tokens after each fixed prompt, all prompts together; returns
        the tokens generated (NEW_TOKENS × batch size), synchronised."""
        decode = self._decoder.generate if self._decoder is not None else self._eager
        return self._decoded(new_tokens, "use --tokens 256", lambda: decode(new_tokens))

    def generate_chunk(self, new_tokens: int, stream: int, restart: bool) -> int:
        """Continue generation STREAM by exactly NEW_TOKENS tokens per prompt (from the fixed prompts when
        RESTART), greedy, on the stream's own KV cache, synchronised; the tokens generated. Eager only.

        The cache `generate` returns holds every token but the last, so the next chunk forwards that one
        token alone: a generation made in chunks does the work of one made whole, plus one `generate`
        set-up per chunk."""
        if self._decoder is not None:
            raise BadArgument(f"{self.precision}: chunked generations run on the eager backend only",
                              hint="drop --chunk-tokens, or use --backend eager")
        if not restart and stream not in self._streams:
            raise GenerationFailed(f"{self.precision}: stream {stream} continued before it was started")
        return self._decoded(new_tokens, "use --chunk-tokens 32",
                             lambda: self._eager_chunk(new_tokens, stream, restart))

    def _decoded(self, new_tokens: int, hint: str, decode) -> int:
        """DECODE() (which returns the tokens it made per prompt) with the checks and error mapping every
        decode shares; the tokens generated over all prompts."""
        if not isinstance(new_tokens, int) or isinstance(new_tokens, bool) or new_tokens < 1:
            raise BadArgument(f"new_tokens must be a positive integer, got {new_tokens!r}", hint=hint)
        try:
            count = decode()
        except WorkloadError:
            raise
        except Exception as exc:
            if is_oom(exc):
                raise ArmOutOfMemory(f"{self.precision}: out of memory while generating") from exc
            raise GenerationFailed(f"{self.precision}: generation failed: {first_line(exc)}") from exc
        if count != new_tokens:
            raise GenerationFailed(f"{self.precision}: asked for {new_tokens} tokens, got {count}")
        return count * self.batch_size

    def _eager_chunk(self, new_tokens: int, stream: int, restart: bool) -> int:
        torch, key = self._torch, cache_keyword()
        seq, cache = (self._prompt, None) if restart else self._streams[stream]
        kw = {key: cache} if cache is not None else {}
        with torch.inference_mode():
            out = self._model.generate(input_ids=seq, attention_mask=torch.ones_like(seq),
                                       max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                       return_dict_in_generate=True, **kw)
        if out.sequences.is_cuda:
            torch.cuda.synchronize()
        self._streams[stream] = (out.sequences, getattr(out, key))
        self._last = out.sequences
        return out.sequences.shape[1] - seq.shape[1]

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

    def int8_outliers(self) -> dict | None:
        """Share of the int8 layers' input columns at or over their threshold over a few decode steps of
        the fixed prompts (``measure.gpu.outliers``); None unless this is LLM.int8() with a threshold > 0.
        Its hooks sync, so it runs only after the measurement, like ``perplexity``."""
        from measure.gpu.outliers import probe_int8_outliers

        return probe_int8_outliers(self._torch, self._model, self._eager)

    def perplexity(self, text: str | None = None) -> tuple[float | None, str]:
        """Teacher-forced perplexity on the vendored text (or TEXT), fixed windows; (None, reason) if not."""
        if self.weights == "random-init":
            return None, "random-init weights: perplexity says nothing about quantization quality"
        if self._tokenizer is None:
            return None, "no tokenizer for this model"
        return perplexity(self._torch, self._model, self._tokenizer, text)

    def release(self) -> None:
        if self._decoder is not None:
            self._decoder.release()
        self._decoder = None
        self._model = None
        self._last = None
        self._streams = {}


def cache_keyword() -> str:
    """The keyword (and output field) `generate` uses for its KV cache: `cache` from transformers 5.25,
    where `past_key_values` became a deprecated alias, else `past_key_values`."""
    from transformers.generation.utils import GenerateDecoderOnlyOutput

    return "cache" if "cache" in GenerateDecoderOnlyOutput.__dataclass_fields__ else "past_key_values"


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
