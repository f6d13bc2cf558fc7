"""Near-duplicate reports (pure): the same measured content filed again under a new seed, note or date.

A report's measured content is what a GPU produced: for v2, the trials of the report's own precision
(tokens, energy and duration of each); for a legacy report, its totals (tokens, energy, average power,
throughput). The arm names are left out, so relabelling NF4 trials as INT8 does not hide a copy; the
FP16 trials are left out too, because the NF4 and INT8 reports of one session share them. Two reports are
near-duplicates when at least half of each one's own trials have a partner in the other with the same
tokens and energy and duration within REL_TOL (re-rounding a printed number moves it by less; two real
runs never repeat both to that precision, since host speed alone drifts by percents between trials).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from schema.semantic import num, obj, text

REL_TOL = 0.001
_LOG_STEP = math.log1p(REL_TOL)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def content(report: dict) -> tuple[str, list[tuple]] | None:
    """("trials", [(tokens, energy J, duration s)...]) or ("totals", [(tokens, J, W, tok/s)]), or None."""
    if report.get("schema_version") == "quantjoule-energy/2.0":
        precision = text(obj(report, "workload"), "precision")
        rows = []
        for trial in report.get("trials") if isinstance(report.get("trials"), list) else []:
            if not isinstance(trial, dict) or trial.get("status") != "ok" or trial.get("arm") != precision:
                continue
            energy = num(trial, "counter_energy_j")
            energy = energy if energy is not None else num(trial, "trace_energy_j")
            tokens, duration = num(trial, "tokens"), num(trial, "duration_s")
            if energy and tokens and duration and energy > 0:
                rows.append((tokens, energy, duration))
        return ("trials", rows) if rows else None
    results = obj(report, "results")
    values = [num(results, k) for k in ("tokens_generated", "total_energy_joules", "avg_power_watts",
                                        "throughput_tokens_per_s")]
    if any(v is None or v <= 0 for v in values):
        return None
    return "totals", [tuple(values)]


def _bucket(energy: float) -> int:
    return math.floor(math.log(energy) / _LOG_STEP)


@dataclass
class ContentIndex:
    """Measured content of reports on file, found again by any report whose content matches it."""

    _entries: list[tuple[object, str, list[tuple]]] = field(default_factory=list)
    _buckets: dict[tuple, list[tuple[int, int]]] = field(default_factory=dict)

    def add(self, report: dict, label: object) -> None:
        found = content(report)
        if found is None:
            return
        kind, rows = found
        entry = len(self._entries)
        self._entries.append((label, kind, rows))
        for i, row in enumerate(rows):
            self._buckets.setdefault((kind, row[0], _bucket(row[1])), []).append((entry, i))

    def find(self, report: dict) -> tuple[object, int, int] | None:
        """(label, matched trials, own trials) of the first report on file this one nearly duplicates."""
        found = content(report)
        if found is None:
            return None
        kind, rows = found
        mine: dict[int, set[int]] = {}  # entry -> my rows with a partner there
        theirs: dict[int, set[int]] = {}  # entry -> its rows with a partner among mine
        for j, row in enumerate(rows):
            b = _bucket(row[1])
            for key in ((kind, row[0], b - 1), (kind, row[0], b), (kind, row[0], b + 1)):
                for entry, i in self._buckets.get(key, ()):
                    other = self._entries[entry][2][i]
                    if all(_close(x, y) for x, y in zip(row[1:], other[1:], strict=True)):
                        mine.setdefault(entry, set()).add(j)
                        theirs.setdefault(entry, set()).add(i)
        for entry in sorted(mine):
            label, _kind, other_rows = self._entries[entry]
            if 2 * len(mine[entry]) >= len(rows) and 2 * len(theirs[entry]) >= len(other_rows):
                return label, len(mine[entry]), len(rows)
        return None
