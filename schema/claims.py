"""Checks that a report's claims can be held to: stated precision, a measurement's evidence, a real time.

- QJ219: the ΔE% the grader uses is checked against the two energies within their rounding; energies
  printed so coarsely that their rounding leaves more than MAX_DELTA_E_ROUNDING_PP of freedom are refused,
  so the stated ΔE% cannot be chosen (e.g. `3` and `2` mJ allow anything from 0 % to 133 %).
- QJ220 and a legacy QJ205: a legacy report that says `measured` must carry what a measurement has: a
  power sample rate, the software it ran on, and an average power and throughput that agree with its
  total energy. Words alone (the source and note) are matched too, but are never the only defence.
- QJ221: `timestamp_utc` is a real UTC date and time, and (when the submission time is known) not later
  than it.
"""

from __future__ import annotations

import datetime as dt
import re

from schema import limits
from schema.parse import SCHEMA_V2
from schema.problem import Problem, problem
from schema.semantic import NVML_SOURCE_LEGACY, num, obj, text

_STAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z")
_TRIPLES = (
    ("energy_per_token_mj", "fp16_energy_per_token_mj", "vs_fp16_energy_pct"),
    ("dynamic_energy_per_token_mj", "fp16_dynamic_energy_per_token_mj", "vs_fp16_dynamic_energy_pct"),
)


def delta_window(q: float, f: float, dq: float, df: float) -> tuple[float, float]:
    """The ΔE% interval two energies allow when each may be off by half a unit of its last digit."""
    low = ((q - dq) / (f + df) - 1) * 100
    high = ((q + dq) / max(f - df, 1e-300) - 1) * 100
    return low, high


def coarse_energy_problems(report: dict) -> list[Problem]:
    """QJ219 for an energy pair whose rounding leaves the ΔE% open by more than the limit."""
    results, found = obj(report, "results"), []
    v2 = report.get("schema_version") == SCHEMA_V2
    for energy, baseline, delta in _TRIPLES:
        q, f = num(results, energy), num(results, baseline)
        if q is None or f is None or q <= 0 or f <= 0 or num(results, delta) is None:
            continue
        dq, df = (limits.written_half_unit(results[k], v2) for k in (energy, baseline))
        low, high = delta_window(q, f, dq, df)
        if high - low > limits.MAX_DELTA_E_ROUNDING_PP:
            found.append(problem("QJ219",
                                 f"{energy} {results[energy]!r} and {baseline} {results[baseline]!r} "
                                 f"allow {delta} anywhere from {low:.2f} % to {high:.2f} %; at most "
                                 f"{limits.MAX_DELTA_E_ROUNDING_PP:g} pp of rounding is accepted",
                                 f"/results/{delta}"))
    return found


def legacy_evidence_problems(report: dict) -> list[Problem]:
    """A legacy report claiming a direct NVML measurement carries a sample rate, its software, and an
    average power and throughput consistent with its total energy (QJ205 when they disagree)."""
    results = obj(report, "results")
    if (report.get("schema_version") == SCHEMA_V2 or text(results, "basis") != "measured"
            or text(report, "measurement_source") != NVML_SOURCE_LEGACY):
        return []
    found = []
    rate = num(obj(report, "measurement"), "sample_rate_hz")
    if rate is None or rate <= 0:
        found.append(problem("QJ220",
                             "a measured report sampled the power: measurement.sample_rate_hz must be "
                             "above 0", "/measurement/sample_rate_hz"))
    software = obj(report, "software")
    torch = text(obj(software, "packages"), "torch").strip()
    driver = text(software, "nvidia_driver").strip()
    if not torch or not driver:
        found.append(problem("QJ220",
                             "a measured report names the software it ran on: software.packages.torch and "
                             "software.nvidia_driver", "/software"))
    power, tput = num(results, "avg_power_watts"), num(results, "throughput_tokens_per_s")
    total, tokens = num(results, "total_energy_joules"), num(results, "tokens_generated")
    if power and tput and total and tokens and min(power, tput, total, tokens) > 0:
        implied = power * tokens / tput  # the run lasted tokens / throughput seconds at this power
        if abs(implied - total) > limits.POWER_TIME_REL * total:
            found.append(problem("QJ205",
                                 f"avg_power_watts x tokens_generated / throughput_tokens_per_s is "
                                 f"{implied:.4g} J but total_energy_joules is {total:g} J",
                                 "/results/avg_power_watts"))
    return found


def parse_timestamp(value: str) -> dt.datetime | None:
    """A `YYYY-MM-DDThh:mm:ss[.fraction]Z` string as an aware UTC datetime, or None when it is not one
    (a wrong shape, or a date or time that does not exist, e.g. 2026-02-30 or 25:00)."""
    match = _STAMP.fullmatch(value)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        return dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    except ValueError:
        return None


def timestamp_problems(report: dict, now: str | None = None) -> list[Problem]:
    """QJ221 when timestamp_utc is not a real UTC time, or is more than FUTURE_SKEW_S after `now` (the
    submission's time, an ISO string; None skips that comparison)."""
    value = report.get("timestamp_utc")
    if not isinstance(value, str):
        return []
    stamp = parse_timestamp(value)
    shown = value if len(value) <= 40 else value[:37] + "..."
    if stamp is None:
        return [problem("QJ221", f"timestamp_utc {shown!r} is not a valid UTC date and "
                                 "time", "/timestamp_utc")]
    when = parse_timestamp(now) if isinstance(now, str) else None
    if when is not None and (stamp - when).total_seconds() > limits.FUTURE_SKEW_S:
        return [problem("QJ221", f"timestamp_utc {shown} is after the submission "
                                 f"({now}); a run cannot finish after it is submitted",
                                 "/timestamp_utc")]
    return []
