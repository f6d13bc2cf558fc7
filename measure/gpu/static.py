"""The `static` backend: greedy decode over a StaticCache, one step captured as a CUDA graph and replayed.

Why: batch-1 eager decode is bound by the CPU launching kernels, so its energy per token partly measures
the host. Here every buffer has a fixed address and shape, so one decode step (embedding → layers →
logits → EOS ban → argmax → feed back) is captured once with ``torch.cuda.CUDAGraph`` and replayed per
token with no Python work in between. (``torch.compile(mode="reduce-overhead")`` on ``generate`` failed on
an H200 with "accessing tensor output of CUDAGraphs that has been overwritten", hence the hand capture.)

Fixed buffers, per generation length ``n`` and batch ``B`` (the prompt's rows, all of one length, so
every row sits at the same position; capacity = prompt + n, so attention spans what eager spans):
- ``cache``: transformers' ``StaticCache``; its layers advance their own device-side length counter in
  place, so a replay needs no host-side position;
- ``ids`` (B, 1): the tokens fed to the step; ``pos`` (B, 1): their position id;
- ``step_mask`` (B, 1, 1, capacity): boolean 4-D attention mask passed as-is to the model (transformers
  returns a 4-D mask unchanged), opened one column per step inside the graph;
- ``out`` (B, n): the generated tokens, written in the graph at ``step`` (a device counter).

Prefill (prompt → first token, with the length counters and masks reset) is captured as a second graph,
so a whole generation is ``prefill.replay()`` then ``n - 1`` × ``step.replay()``.

Greedy rule, identical to the eager backend's ``generate(min_new_tokens = max_new_tokens = n)``: EOS
logits are set to −inf before the argmax at every step (that is what min_new_tokens does), and only the
last prompt position's logits are computed at prefill (``logits_to_keep=1``, as generate does).

On CPU there are no CUDA graphs: the same two functions run uncaptured, which is how tests check the
static loop (against transformers' own generate over a StaticCache, token for token, and against eager).

Eager and static decode the same greedy rule, but eager attends over a growing dynamic cache and static
over a fixed-length masked one, so logits can differ in the last float16 bit and a greedy choice between
two tied logits can go either way; from there the two sequences part. Tests require equality or a
parting at a float16 tie.

Capture fails where a kernel needs the host mid-step; the warmup runs prefill and one decode step under
``measure.gpu.capture_audit`` first, so a refusal is reported as ``StaticCaptureFailed`` with CUDA's message
and the operations that needed the host. LLM.int8() at its default outlier threshold (6.0) is one: its
activation quantization finds outlier columns with a host sync and a data-dependent size (see
``measure/README.md``, "INT8 under CUDA graphs"), and a graph would in any case freeze one step's outlier
columns, which would no longer be LLM.int8(). With ``llm_int8_threshold=0`` (``--int8-threshold 0``)
bitsandbytes skips the outlier split entirely and the INT8 step is fixed-shape kernels on the current
stream (a different INT8, recorded in the report). NF4 (``gemv_4bit`` at batch 1) has no such step.
"""

from __future__ import annotations

import contextlib
import inspect

import torch

from measure.gpu.capture_audit import audit


class StaticCaptureFailed(RuntimeError):
    """Capturing the decode step as a CUDA graph failed (the message says which operation refused)."""


class _Plan:
    """Buffers, cache and (on CUDA) the two captured graphs for one generation length."""

    def __init__(self, model, prompt_ids: torch.Tensor, eos_ids: list[int], new_tokens: int):
        from transformers import StaticCache

        device = prompt_ids.device
        batch, prompt_len = prompt_ids.shape
        capacity = prompt_len + new_tokens
        self.model = model
        # transformers renamed forward's `past_key_values` to `cache` (the old name warns, and goes in 5.40)
        params = inspect.signature(model.forward).parameters
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        self.new_tokens = new_tokens
        self.prompt_ids = prompt_ids
        self.cache = StaticCache(config=model.config, max_cache_len=capacity)
        self.prefill_pos = torch.arange(prompt_len, device=device).unsqueeze(0)
        causal = torch.ones(prompt_len, capacity, dtype=torch.bool, device=device).tril()
        self.prefill_pos = self.prefill_pos.expand(batch, prompt_len).contiguous()
        self.prefill_mask = causal.view(1, 1, prompt_len, capacity).expand(batch, 1, prompt_len, capacity)
        self.prefill_mask = self.prefill_mask.contiguous()
        self.step_mask = torch.zeros(batch, 1, 1, capacity, dtype=torch.bool, device=device)
        self.ids = torch.zeros(batch, 1, dtype=torch.long, device=device)
        self.pos = torch.zeros(batch, 1, dtype=torch.long, device=device)
        self.step = torch.zeros(1, dtype=torch.long, device=device)
        self.out = torch.zeros(batch, new_tokens, dtype=torch.long, device=device)
        self.eos = torch.tensor(sorted(set(eos_ids)), dtype=torch.long, device=device)
        self.prompt_len = prompt_len
        self.graphs: tuple | None = None
        self.host_needs: list[str] = []  # what the uncaptured warmup saw needing the host (capture_audit)

    def _pick(self, logits: torch.Tensor) -> torch.Tensor:
        last = logits[:, -1, :]
        if self.eos.numel():
            last = last.index_fill(-1, self.eos, float("-inf"))
        return last.argmax(dim=-1, keepdim=True)

    def prefill(self) -> None:
        for layer in self.cache.layers:
            if getattr(layer, "is_initialized", False):
                layer.cumulative_length.zero_()
        self.step_mask.zero_()
        self.step_mask[..., : self.prompt_len] = True
        self.pos.fill_(self.prompt_len)
        self.step.fill_(1)
        out = self.model(input_ids=self.prompt_ids, position_ids=self.prefill_pos,
                         attention_mask=self.prefill_mask, **{self.cache_arg: self.cache},
                         use_cache=True, logits_to_keep=1)
        token = self._pick(out.logits)
        self.ids.copy_(token)
        self.out[:, :1].copy_(token)

    def decode_step(self) -> None:
        self.step_mask.index_fill_(-1, self.pos[0], True)  # every row is at the same position
        out = self.model(input_ids=self.ids, position_ids=self.pos, attention_mask=self.step_mask,
                         **{self.cache_arg: self.cache}, use_cache=True, logits_to_keep=1)
        token = self._pick(out.logits)
        self.ids.copy_(token)
        self.out.index_copy_(1, self.step, token)
        self.pos.add_(1)
        self.step.add_(1)

    def warmup(self) -> None:
        """Prefill and up to two decode steps, uncaptured: allocates the (lazy) cache, warms the kernels.

        Never more steps than the plan holds: a step past ``new_tokens`` would index past ``out`` and the
        cache (on CUDA a device-side assert that poisons the context), so n = 1 warms the prefill only.
        """
        self.host_needs = audit(self.prefill)
        for k in range(min(2, self.new_tokens - 1)):
            if k == 0:
                self.host_needs += [f for f in audit(self.decode_step) if f not in self.host_needs]
            else:
                self.decode_step()

    def capture(self) -> None:
        """Warm up on a side stream, then capture prefill and (for n > 1) one decode step (CUDA only)."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        try:
            with torch.cuda.stream(side):
                self.warmup()
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            pool = torch.cuda.graph_pool_handle()
            g_prefill, g_step = torch.cuda.CUDAGraph(), None
            with torch.cuda.graph(g_prefill, pool=pool, capture_error_mode="thread_local"):
                self.prefill()
            if self.new_tokens > 1:
                g_step = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g_step, pool=pool, capture_error_mode="thread_local"):
                    self.decode_step()
            torch.cuda.synchronize()
        except Exception as exc:  # any refusal during capture is reported, the arm stays usable for eager
            # a capture error can surface again at this sync; the first message is the useful one
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            why = f"; the step needs the host: {'; '.join(self.host_needs)}" if self.host_needs else ""
            raise StaticCaptureFailed(f"{type(exc).__name__}: {first_line}{why}") from exc
        self.graphs = (g_prefill, g_step)

    def run(self) -> None:
        if self.graphs is not None:
            g_prefill, g_step = self.graphs
            g_prefill.replay()
            for _ in range(self.new_tokens - 1):
                g_step.replay()
        else:
            self.prefill()
            for _ in range(self.new_tokens - 1):
                self.decode_step()


class StaticDecoder:
    """Greedy static-cache decode for one loaded model; CUDA-graph replay on CUDA, plain loop elsewhere.

    ``prepare(n)`` builds (and on CUDA captures) the plan for length n ahead of measurement;
    ``generate(n)`` runs it. Plans are kept per length (a protocol uses one or two lengths).
    """

    def __init__(self, model, prompt_ids: torch.Tensor, eos_ids: list[int], max_plans: int = 4,
                 capture: bool | None = None):
        self._model = model
        # capture=False on CUDA runs the same step loop uncaptured: the check that capture changes nothing.
        self._capture = prompt_ids.device.type == "cuda" if capture is None else capture
        self._prompt_ids = prompt_ids
        self._eos_ids = list(eos_ids)
        self._max_plans = max_plans
        self._plans: dict[int, _Plan] = {}
        self._last: _Plan | None = None

    @property
    def captured(self) -> bool:
        return self._capture

    def prepare(self, new_tokens: int) -> None:
        if new_tokens in self._plans:
            return
        if len(self._plans) >= self._max_plans:
            self._plans.pop(next(iter(self._plans)))
        plan = _Plan(self._model, self._prompt_ids, self._eos_ids, new_tokens)
        with torch.inference_mode():
            if self.captured:
                plan.capture()
            else:
                plan.warmup()
        self._plans[new_tokens] = plan

    def host_needs(self, new_tokens: int) -> list[str]:
        """What the warmup of this length's plan saw needing the host (empty: capturable as far as seen)."""
        self.prepare(new_tokens)
        return list(self._plans[new_tokens].host_needs)

    def generate(self, new_tokens: int) -> int:
        self.prepare(new_tokens)
        plan = self._plans[new_tokens]
        with torch.inference_mode():
            plan.run()
        if self._prompt_ids.is_cuda:
            torch.cuda.synchronize()
        self._last = plan
        return new_tokens

    def last_token_ids(self, row: int = 0) -> list[int]:
        return [] if self._last is None else self._last.out[row].tolist()

    def release(self) -> None:
        self._plans.clear()
        self._last = None
