"""Every summary figure a verdict may use, recomputed from the report's own trial records (QJ213).

A stored figure is trusted only as far as the trials reproduce it: `statistics.delta_e_pct` (and the
dynamic one), `phases.reconstructed_delta_e_pct` with its per-block list (the 256-token figure rebuilt from
each block's energy and the measured prefill energy), and `phases.direct_check_delta_e_pct`. The tolerance
is what rounding can explain and nothing more: each trial energy may be off by half a unit of its last
printed digit, so each block's ΔE% lies between the values at the corners of that box; the mean may move by
the mean of those spreads, the median by the largest, the sd by their root sum of squares over sqrt(n - 1)
(the triangle inequality for the centred vector), the CI by the mean's and the sd's moves; then the stored
figure's own rounding and a relative STATS_SLACK_REL. A report that stores sd 50 where its trials give 3 is
refused, as is one that leaves a figure out (null) that its trials determine.
"""

from __future__ import annotations

import itertools
import math
import statistics as st

from schema import limits
from schema.problem import Problem, problem
from schema.semantic import num, obj, text

# Student t quantile t(0.975, dof) for dof 1..30 (scipy.stats.t.ppf, 9 decimals); beyond, the
# Cornish-Fisher expansion below agrees with it to 2e-8.
T975 = (12.706204736, 4.30265273, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252,
        2.306004135, 2.262157163, 2.228138852, 2.20098516, 2.17881283, 2.160368656, 2.144786688,
        2.131449546, 2.119905299, 2.109815578, 2.10092204, 2.093024054, 2.085963447, 2.079613845,
        2.073873068, 2.06865761, 2.063898562, 2.059538553, 2.055529439, 2.051830516, 2.048407142,
        2.045229642, 2.042272456)
_Z975 = 1.959963984540054


def t975(dof: int) -> float:
    """The two-sided 95 % Student t quantile for `dof` degrees of freedom (dof >= 1)."""
    if dof <= len(T975):
        return T975[dof - 1]
    z, v = _Z975, float(dof)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4))


def _energy(trial: dict, dynamic: bool) -> tuple[float | None, float]:
    """(energy J, its rounding) of one trial: counter, else trace (as `measure` picks), or the dynamic one."""
    key = "dynamic_energy_j" if dynamic else (
        "counter_energy_j" if num(trial, "counter_energy_j") is not None else "trace_energy_j")
    value = num(trial, key)
    return value, (limits.half_unit(trial.get(key)) if value is not None else 0.0)


def _per_token(energy: float, tokens: float, shape: tuple | None, prefill: float) -> float:
    """Energy per token of the block's own generations, or (with `shape` = (block_tokens, tokens, batch))
    of a `tokens`-long generation rebuilt from it: P + (tokens - 1) * (E_gen - P) / (block_tokens - 1), a
    generation decoding `batch` sequences at once (its tokens are block_tokens x batch)."""
    if shape is None:
        return energy / tokens
    block_tokens, long_tokens, batch = shape
    per_gen = energy / (tokens / (block_tokens * batch))
    if block_tokens == long_tokens:
        return per_gen / long_tokens
    decode = (per_gen - prefill) / (block_tokens - 1)
    return (prefill + (long_tokens - 1) * decode) / long_tokens


def block_deltas(report: dict, precision: str, kind: str = "total") -> list[tuple[int, float, float]] | None:
    """(block, ΔE%, how far rounding can move it) per complete block, in block order; kind is "total",
    "dynamic" or "reconstructed". None when the report lacks what `kind` needs."""
    shape, prefill = None, {}
    if kind == "reconstructed":
        phases, protocol = obj(report, "phases"), obj(report, "protocol")
        block_tokens = num(phases, "block_tokens") or num(protocol, "block_tokens")
        long_tokens = num(phases, "tokens") or num(obj(report, "workload"), "new_tokens")
        if not block_tokens or not long_tokens or block_tokens < 1:
            return None
        if block_tokens != long_tokens:
            if block_tokens < 2:
                return None
            for arm in ("FP16", precision):
                value = num(obj(obj(report, "arms"), arm), "prefill_energy_j")
                if value is None:
                    return None
                prefill[arm] = (value, limits.half_unit(obj(obj(report, "arms"), arm)["prefill_energy_j"]))
        batch = num(obj(report, "workload"), "batch_size") or 1.0
        shape = (block_tokens, long_tokens, batch)
    per_block: dict[int, dict[str, tuple]] = {}
    trials = report.get("trials") if isinstance(report.get("trials"), list) else []
    for trial in trials:
        if not isinstance(trial, dict) or trial.get("status") != "ok" or trial.get("arm") not in ("FP16",
                                                                                                   precision):
            continue
        block, tokens = trial.get("block"), num(trial, "tokens")
        energy, half = _energy(trial, kind == "dynamic")
        if isinstance(block, int) and not isinstance(block, bool) and energy is not None and tokens:
            per_block.setdefault(block, {})[trial["arm"]] = (energy, half, tokens)
    out = []
    for block, arms in sorted(per_block.items()):
        if precision not in arms or "FP16" not in arms:
            continue
        spread = _corners(arms[precision], arms["FP16"], shape, prefill.get(precision, (0.0, 0.0)),
                          prefill.get("FP16", (0.0, 0.0)))
        if spread is None:
            return None
        out.append((block, *spread))
    return out


def _corners(quant: tuple, base: tuple, shape, pq: tuple, pf: tuple) -> tuple[float, float] | None:
    """(ΔE%, largest move) over the corners of the rounding box of the block's energies (and prefills);
    None when a denominator can reach zero inside the box (ΔE% is then unbounded)."""
    def delta(sq: int, sf: int, spq: int, spf: int) -> tuple[float, float]:
        eq = _per_token(quant[0] + sq * quant[1], quant[2], shape, pq[0] + spq * pq[1])
        ef = _per_token(base[0] + sf * base[1], base[2], shape, pf[0] + spf * pf[1])
        return (eq / ef - 1) * 100 if ef else math.inf, ef

    nominal, ef0 = delta(0, 0, 0, 0)
    if not math.isfinite(nominal):
        return None
    move = 0.0
    for corner in itertools.product((-1, 1), repeat=4):  # ΔE% is monotone in each input over the box
        value, ef = delta(*corner)
        if not math.isfinite(value) or (ef > 0) != (ef0 > 0):
            return None
        move = max(move, abs(value - nominal))
    return nominal, move


def summary_problems(path: str, summary, deltas: list[tuple[int, float, float]]) -> list[Problem]:
    """The summary block at `path` (median, mean, sd, cv, ci95_*) against the per-block ΔE% it summarises."""
    if not deltas:
        return []
    if not isinstance(summary, dict):
        return [problem("QJ213", f"{path.rsplit('/', 1)[-1]} is missing, but the trials give "
                                 f"{len(deltas)} paired blocks to summarise",
                                 path)]
    values = [d for _, d, _ in deltas]
    moves = [m for _, _, m in deltas]
    n = len(values)
    mean, mean_tol = st.fmean(values), st.fmean(moves)
    expected = {"mean": (mean, mean_tol), "median": (st.median(values), max(moves))}
    if n >= 2:
        sd = st.stdev(values)
        sd_tol = math.sqrt(sum(m * m for m in moves) / (n - 1))
        half = t975(n - 1) * sd / math.sqrt(n)
        half_tol = t975(n - 1) * sd_tol / math.sqrt(n)
        ci_tol = mean_tol + half_tol
        expected.update(sd=(sd, sd_tol), ci95_half_width_pp=(half, half_tol),
                        ci95_low=(mean - half, ci_tol), ci95_high=(mean + half, ci_tol))
        if abs(mean) > mean_tol:
            low = max(sd - sd_tol, 0.0) / (abs(mean) + mean_tol)
            high = (sd + sd_tol) / (abs(mean) - mean_tol)
            expected["cv"] = ((low + high) / 2, (high - low) / 2)
    found = []
    for key, (value, tol) in expected.items():
        reported = summary.get(key)
        where = f"{path}/{key}"
        if reported is None or num(summary, key) is None:
            found.append(problem("QJ213", f"{key} is missing, but the trials give {value:.4g}", where))
            continue
        slack = tol + limits.half_unit(reported) + limits.STATS_SLACK_REL * abs(value) + 1e-9
        if abs(num(summary, key) - value) > slack:
            found.append(problem("QJ213", f"{key} is {num(summary, key):g} but the paired trials give "
                                          f"{value:.4g} (rounding allows {slack:.2g})",
                                          where))
    return found


def recomputed_problems(report: dict) -> list[Problem]:
    """QJ213 for each stored summary figure the trials do not reproduce (v2 quantized reports)."""
    precision = text(obj(report, "workload"), "precision")
    stats = report.get("statistics")
    if precision in ("", "FP16") or not isinstance(stats, dict):
        return []
    found = summary_problems("/statistics/delta_e_pct", stats.get("delta_e_pct"),
                             block_deltas(report, precision) or [])
    dynamic = block_deltas(report, precision, "dynamic")
    if stats.get("dynamic_delta_e_pct") is not None and dynamic:
        found += summary_problems("/statistics/dynamic_delta_e_pct", stats["dynamic_delta_e_pct"], dynamic)
    found += _phases_problems(report, precision)
    return found


def _phases_problems(report: dict, precision: str) -> list[Problem]:
    phases = obj(report, "phases")
    found = []
    stored = phases.get("reconstructed_delta_e_pct")
    listed = phases.get("per_block_reconstructed_delta_e_pct")
    if stored is not None or listed is not None:
        deltas = block_deltas(report, precision, "reconstructed")
        if deltas is None:
            return [problem("QJ213",
                            "the reconstructed dE% cannot be recomputed: the report lacks the block and "
                            "generation lengths or the arms' prefill_energy_j",
                            "/phases/reconstructed_delta_e_pct")]
        if stored is not None:
            found += summary_problems("/phases/reconstructed_delta_e_pct", stored, deltas)
        if isinstance(listed, list):
            if len(listed) != len(deltas):
                found.append(problem("QJ213",
                                     f"{len(listed)} values but the trials hold {len(deltas)} paired blocks",
                                     "/phases/per_block_reconstructed_delta_e_pct"))
            else:
                for i, (value, (_, nominal, move)) in enumerate(zip(listed, deltas, strict=True)):
                    if not isinstance(value, (int, float)) or isinstance(value, bool) or abs(
                            value - nominal) > move + limits.half_unit(value) + limits.STATS_SLACK_REL * abs(
                            nominal) + 1e-9:
                        found.append(problem("QJ213",
                                             f"block value {value!r} but the trials give {nominal:.4g}",
                                             f"/phases/per_block_reconstructed_delta_e_pct/{i}"))
                        break
    found += _direct_problems(phases, precision)
    return found


def _direct_problems(phases: dict, precision: str) -> list[Problem]:
    """phases.direct_check_delta_e_pct against the two direct per-token energies beside it."""
    stored = phases.get("direct_check_delta_e_pct")
    if stored is None:
        return []
    direct = obj(phases, "direct_check")
    q_block, f_block = obj(direct, precision), obj(direct, "FP16")
    q, f = num(q_block, "energy_per_token_mj"), num(f_block, "energy_per_token_mj")
    if q is None or f is None or f <= 0 or num(phases, "direct_check_delta_e_pct") is None:
        return [problem("QJ213",
                        "the direct-check dE% has no direct_check energies of both arms to check it by",
                        "/phases/direct_check_delta_e_pct")]
    dq = limits.half_unit(q_block["energy_per_token_mj"])
    df = limits.half_unit(f_block["energy_per_token_mj"])
    low, high = ((q - dq) / (f + df) - 1) * 100, ((q + dq) / max(f - df, 1e-300) - 1) * 100
    value = num(phases, "direct_check_delta_e_pct")
    slack = limits.half_unit(stored) + limits.STATS_SLACK_REL * abs(value) + 1e-9
    if not limits.intervals_meet(value, value, low, high, slack):
        return [problem("QJ213",
                        f"direct_check_delta_e_pct is {value:g} but the direct energies give "
                        f"{(q / f - 1) * 100:.4g}",
                        "/phases/direct_check_delta_e_pct")]
    return []
