"""What `measure run` was asked (RunOptions), what it gives back (RunResult), and its exit statuses."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from measure.core.design import QUANTIZED, ProtocolConfig
from measure.gpu.outliers import DEFAULT_OUTLIER_SCALE
from schema.problem import Problem

EXIT_OK, EXIT_USAGE, EXIT_NO_GPU, EXIT_PARTIAL = 0, 2, 3, 4


@dataclass
class RunOptions:
    model: str | None = None
    synthetic: str | None = None
    precisions: tuple[str, ...] = QUANTIZED
    backend: str = "eager"
    device: int = 0
    gpu_arch: str | None = None
    out_dir: Path = Path(".")
    sample_rate_hz: float = 100.0
    pin_cpu: bool = False  # decode on one CPU, sampler on another core (measure.power.pinning)
    # bitsandbytes llm_int8_threshold for the INT8 arm; None = LLM.int8()'s default (6.0). 0.0 drops the
    # outlier decomposition, which changes what INT8 measures (recorded as workload.int8_outlier_threshold)
    int8_threshold: float | None = None
    # outlier features planted in a synthetic model's random init (measure.gpu.outliers): K hidden dims of
    # every layer's two norms set to the scale; 0 = the plain init. A sensitivity condition, never graded
    outlier_dims: int = 0
    outlier_scale: float = DEFAULT_OUTLIER_SCALE
    argv: list[str] = field(default_factory=list)
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)

    @property
    def model_spec(self) -> str:
        """What the workload loads: a Hugging Face id or path, or `synthetic:NAME`."""
        return f"synthetic:{self.synthetic}" if self.synthetic else self.model

    def names(self) -> tuple[str, str, str, float | None]:
        """(model_name, model_id, weights, params_b if known without loading)."""
        if self.synthetic:
            from measure.gpu.synthetic import get_spec

            spec = get_spec(self.synthetic)
            return spec.model_name, f"synthetic:{spec.name}", "random-init", spec.published_params_b
        return self.model.rstrip("/").split("/")[-1], self.model, "pretrained", None


@dataclass
class RunResult:
    exit_code: int
    paths: list[Path]
    rows: list[dict]
    warnings: list[Problem]  # what the run found (QJ4xx), and any problem of a report it wrote
    record: Path | None = None  # the raw record the reports were computed from


def out_paths(out_dir: Path, precisions: list[str]) -> dict[str, Path]:
    """energy.json for one precision, energy-<precision>.json for several."""
    if len(precisions) == 1:
        return {precisions[0]: out_dir / "energy.json"}
    return {p: out_dir / f"energy-{p.lower()}.json" for p in precisions}
