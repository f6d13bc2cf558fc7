"""The workload's failures: each a WorkloadError with a kind and a hint, never a bare library exception."""

from __future__ import annotations

from measure.core.design import BACKENDS, PRECISIONS


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


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"
