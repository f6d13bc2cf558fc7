"""NVML power source: the only module that imports pynvml; converts units once (W, J, degC)."""

from __future__ import annotations

import hashlib

from measure.codes import MeasureError

POWER_FIELD_INSTANT = "NVML_FI_DEV_POWER_INSTANT"
POWER_FIELD_USAGE = "nvmlDeviceGetPowerUsage"


def _nvml():
    try:
        import pynvml
    except ImportError as exc:  # the measure extra is not installed
        raise MeasureError("QJ402", "the nvidia-ml-py package is not installed") from exc
    return pynvml


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class NvmlPowerSource:
    """Read-only NVML access to one GPU. Call open() before reading; close() when done."""

    measurement_source = "nvml-energy-counter"

    def __init__(self, index: int = 0):
        self._index = index
        self._nv = None
        self._h = None
        self.power_field = POWER_FIELD_INSTANT
        self.has_energy_counter = True

    def open(self) -> NvmlPowerSource:
        nv = _nvml()
        try:
            nv.nvmlInit()
            self._h = nv.nvmlDeviceGetHandleByIndex(self._index)
        except nv.NVMLError as exc:
            raise MeasureError("QJ402", f"NVML could not open GPU {self._index}: {exc}") from exc
        self._nv = nv
        try:
            self._instant_mw()
        except (nv.NVMLError, RuntimeError):
            self.power_field = POWER_FIELD_USAGE
        try:
            nv.nvmlDeviceGetTotalEnergyConsumption(self._h)
        except nv.NVMLError:
            self.has_energy_counter = False
            self.measurement_source = "nvml-power-trace"
        return self

    def close(self) -> None:
        if self._nv is not None:
            try:
                self._nv.nvmlShutdown()
            finally:
                self._nv = None

    def _instant_mw(self) -> float:
        nv = self._nv
        (val,) = nv.nvmlDeviceGetFieldValues(self._h, [nv.NVML_FI_DEV_POWER_INSTANT])
        if val.nvmlReturn != nv.NVML_SUCCESS:
            raise RuntimeError("instant power field not supported")
        kinds = {
            nv.NVML_VALUE_TYPE_DOUBLE: "dVal",
            nv.NVML_VALUE_TYPE_UNSIGNED_INT: "uiVal",
            nv.NVML_VALUE_TYPE_UNSIGNED_LONG: "ulVal",
            nv.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: "ullVal",
            nv.NVML_VALUE_TYPE_SIGNED_LONG_LONG: "sllVal",
        }
        return float(getattr(val.value, kinds.get(val.valueType, "uiVal")))

    def power_w(self) -> float:
        if self.power_field == POWER_FIELD_INSTANT:
            return self._instant_mw() / 1000.0
        return self._nv.nvmlDeviceGetPowerUsage(self._h) / 1000.0

    def energy_j(self) -> float:
        """NVML total energy since driver load (mJ -> J); None-safe callers check has_energy_counter."""
        return self._nv.nvmlDeviceGetTotalEnergyConsumption(self._h) / 1000.0

    def temperature_c(self) -> float:
        return float(self._nv.nvmlDeviceGetTemperature(self._h, self._nv.NVML_TEMPERATURE_GPU))

    def power_limit_w(self) -> float:
        return self._nv.nvmlDeviceGetEnforcedPowerLimit(self._h) / 1000.0

    def _persistence(self) -> bool | None:
        try:
            return bool(self._nv.nvmlDeviceGetPersistenceMode(self._h))
        except Exception:  # noqa: BLE001 - not supported on every platform (Windows, some VMs)
            return None

    def clocks_mhz(self) -> dict:
        nv = self._nv
        return {
            "sm_mhz": nv.nvmlDeviceGetClockInfo(self._h, nv.NVML_CLOCK_SM),
            "mem_mhz": nv.nvmlDeviceGetClockInfo(self._h, nv.NVML_CLOCK_MEM),
        }

    def device_info(self) -> dict:
        nv = self._nv
        mem = nv.nvmlDeviceGetMemoryInfo(self._h)
        uuid = _text(nv.nvmlDeviceGetUUID(self._h))
        return {
            "name": _text(nv.nvmlDeviceGetName(self._h)),
            "memory_total_gb": round(mem.total / 1e9, 1),
            "power_limit_w": self.power_limit_w(),
            "persistence_mode": self._persistence(),
            "gpu_uuid_sha256": hashlib.sha256(uuid.encode()).hexdigest(),
            "driver": _text(nv.nvmlSystemGetDriverVersion()),
            "power_field": self.power_field,
            "has_energy_counter": self.has_energy_counter,
            **self.clocks_mhz(),
        }


def open_nvml(index: int = 0) -> NvmlPowerSource:
    """Factory used by the sampler process (top-level so it pickles)."""
    return NvmlPowerSource(index).open()
