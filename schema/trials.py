"""v2 internal consistency: per-trial records against results, statistics, agreement and arms."""

from __future__ import annotations

from schema import limits
from schema.problem import Problem, problem
from schema.recompute import recomputed_problems
from schema.semantic import num, obj, power_cap_w, text


def _energy(trial: dict) -> tuple[float | None, str]:
    counter = num(trial, "counter_energy_j")
    if counter is not None:
        return counter, "counter_energy_j"
    return num(trial, "trace_energy_j"), "trace_energy_j"


def _ok_trials(report: dict) -> list[tuple[int, dict]]:
    trials = report.get("trials")
    if not isinstance(trials, list):
        return []
    return [(i, t) for i, t in enumerate(trials) if isinstance(t, dict) and t.get("status") == "ok"]


def _worst(problems_by_size: list[tuple[float, Problem]]) -> list[Problem]:
    """The single worst offender, saying how many trials share the problem, so 60 trials give one line."""
    if not problems_by_size:
        return []
    size, worst = max(problems_by_size, key=lambda item: item[0])
    if len(problems_by_size) > 1:
        more = len(problems_by_size) - 1
        worst = problem(worst.code, f"{worst.message} (and {more} more trials)", worst.path)
    return [worst]


def per_trial_problems(report: dict) -> list[Problem]:
    """Each ok trial: some energy, power x time agrees with its energy, plausible power, counter vs trace."""
    found: list[Problem] = []
    time_bad, power_bad, disagree, broken = [], [], [], []
    measured = obj(report, "results").get("basis") == "measured"
    cap = power_cap_w(report)
    agreement = report.get("agreement") if isinstance(report.get("agreement"), dict) else {}
    threshold = num(agreement, "threshold_pct") or limits.COUNTER_TRACE_DEFAULT_PCT
    for i, trial in _ok_trials(report):
        energy, field = _energy(trial)
        if energy is None:
            found.append(problem("QJ215", "an ok trial has neither counter_energy_j nor "
                                          "trace_energy_j",
                                          f"/trials/{i}"))
            continue
        power, duration = num(trial, "mean_power_w"), num(trial, "duration_s")
        if power and duration and abs(power * duration - energy) > limits.POWER_TIME_REL * energy:
            off = abs(power * duration - energy) / energy
            time_bad.append((off, problem("QJ205",
                                          f"trial {i}: mean_power_w x duration_s is {power * duration:.4g} J "
                                          f"but {field} is {energy:g} J",
                                          f"/trials/{i}/mean_power_w")))
        if power and power > cap:
            power_bad.append((power, problem("QJ208",
                                             f"trial {i}: mean_power_w is {power:g} W, above the plausible "
                                             f"{cap:g} W for this GPU",
                                             f"/trials/{i}/mean_power_w")))
        counter, trace = num(trial, "counter_energy_j"), num(trial, "trace_energy_j")
        if counter and trace:
            gap_pct = abs(counter - trace) / counter * 100
            if measured and gap_pct > limits.COUNTER_TRACE_MAX_PCT:
                # Whatever threshold the report states, two NVML readings this far apart are no measurement.
                message = (f"trial {i}: counter {counter:g} J and trace {trace:g} J differ by "
                           f"{gap_pct:.2f} %, over {limits.COUNTER_TRACE_MAX_PCT:g} %")
                broken.append((gap_pct, problem("QJ222", message, f"/trials/{i}/trace_energy_j")))
            elif gap_pct > threshold:
                disagree.append((gap_pct, problem("QJ210",
                                                  f"trial {i}: counter {counter:g} J and trace {trace:g} J "
                                                  f"differ by {gap_pct:.2f} %, over {threshold:g} %",
                                                  f"/trials/{i}/trace_energy_j")))
    found += _worst(time_bad) + _worst(power_bad) + _worst(disagree) + _worst(broken)
    worst_reported = num(agreement, "counter_vs_trace_max_pct")
    if not disagree and not broken and worst_reported is not None and worst_reported > threshold:
        found.append(problem("QJ210",
                             f"counter and trace differ by up to {worst_reported:g} %, over {threshold:g} %",
                             "/agreement/counter_vs_trace_max_pct"))
    return found


def _sum_check(label: str, path: str, reported, trials: list[dict], key: str, found: list[Problem]) -> None:
    values = [num(t, key) if key != "energy" else _energy(t)[0] for t in trials]
    if reported is None or not values or any(v is None for v in values):
        return
    total = sum(values)
    raw = [t.get(key) if key != "energy" else t.get(_energy(t)[1]) for t in trials]
    slack = limits.RATIO_SLACK * abs(total) + sum(limits.half_unit(v) for v in raw)
    if key == "tokens":
        slack = 0.0
    if abs(float(reported) - total) > slack + limits.half_unit(reported):
        found.append(problem("QJ215", f"{label} is {reported:g} but the ok trials sum to {total:.6g}", path))


def totals_problems(report: dict) -> list[Problem]:
    """results totals are sums over the ok trials of the report's precision; the FP16 baseline likewise."""
    results, found = obj(report, "results"), []
    precision = text(obj(report, "workload"), "precision")
    ok = [t for _, t in _ok_trials(report)]
    own = [t for t in ok if t.get("arm") == precision]
    if results.get("basis") == "measured" and not own:
        return [problem("QJ215", f"a measured report has no ok {precision} trial", "/trials")]
    if not own:
        return []
    _sum_check("total_energy_joules", "/results/total_energy_joules", num(results, "total_energy_joules"),
               own, "energy", found)
    _sum_check("tokens_generated", "/results/tokens_generated", num(results, "tokens_generated"), own,
               "tokens", found)
    _sum_check("duration_s", "/results/duration_s", num(results, "duration_s"), own, "duration_s", found)
    baseline = [t for t in ok if t.get("arm") == "FP16"]
    reported = num(results, "fp16_energy_per_token_mj")
    if precision != "FP16" and baseline and reported:
        energies = [_energy(t)[0] for t in baseline]
        tokens = [num(t, "tokens") for t in baseline]
        if None not in energies and None not in tokens and sum(tokens) > 0:
            computed = sum(energies) / sum(tokens) * 1000
            slack = limits.RATIO_SLACK * computed + limits.half_unit(results["fp16_energy_per_token_mj"])
            if abs(reported - computed) > slack:
                found.append(problem("QJ215",
                                     f"fp16_energy_per_token_mj is {reported:g} but the ok FP16 trials give "
                                     f"{computed:.5g}",
                                     "/results/fp16_energy_per_token_mj"))
    return found


def _block_deltas(report: dict, precision: str) -> list[float]:
    per_block: dict[int, dict[str, float]] = {}
    for _, t in _ok_trials(report):
        energy, tokens, block = _energy(t)[0], num(t, "tokens"), t.get("block")
        if energy and tokens and isinstance(block, int):
            per_block.setdefault(block, {})[t.get("arm")] = energy / tokens
    return [(arms[precision] / arms["FP16"] - 1) * 100 for _, arms in sorted(per_block.items())
            if precision in arms and "FP16" in arms]


def statistics_problems(report: dict) -> list[Problem]:
    """n_pairs against the complete blocks and the CI around the mean (schema.recompute recomputes every
    figure from the trials)."""
    stats, found = report.get("statistics"), []
    precision = text(obj(report, "workload"), "precision")
    measured = obj(report, "results").get("basis") == "measured"
    if precision == "FP16" or not isinstance(stats, dict):
        if precision != "FP16" and measured:
            found.append(problem("QJ213", f"a measured {precision} report needs its paired "
                                           "statistics",
                                          "/statistics"))
        return found
    n_pairs = stats.get("n_pairs")
    deltas = _block_deltas(report, precision)
    if isinstance(report.get("trials"), list) and report["trials"] and n_pairs != len(deltas):
        found.append(problem("QJ213",
                             f"n_pairs is {n_pairs} but the trials hold {len(deltas)} complete "
                             f"FP16/{precision} blocks", "/statistics/n_pairs"))
    if measured and n_pairs == 0:
        found.append(problem("QJ213", "a measured report needs at least one pair", "/statistics/n_pairs"))
    planned = obj(report, "protocol").get("trials")
    if isinstance(planned, int) and isinstance(n_pairs, int) and n_pairs > planned:
        found.append(problem("QJ213", f"n_pairs {n_pairs} exceeds protocol.trials "
                                      f"{planned}",
                                      "/statistics/n_pairs"))
    summary = obj(stats, "delta_e_pct")
    low, mean, high = num(summary, "ci95_low"), num(summary, "mean"), num(summary, "ci95_high")
    if None not in (low, mean, high) and not low - 1e-9 <= mean <= high + 1e-9:
        found.append(problem("QJ213",
                             f"the CI [{low:g}, {high:g}] does not contain the mean {mean:g}",
                             "/statistics/delta_e_pct"))
    half = num(summary, "ci95_half_width_pp")
    if None not in (low, high, half):
        keys = ("ci95_low", "ci95_high", "ci95_half_width_pp")
        slack = 0.01 + sum(limits.half_unit(summary[k]) for k in keys)
        if abs((high - low) / 2 - half) > slack:
            found.append(problem("QJ213",
                                 f"ci95_half_width_pp is {half:g} but (ci95_high - ci95_low) / 2 is "
                                 f"{(high - low) / 2:.4g}",
                                 "/statistics/delta_e_pct/ci95_half_width_pp"))
    return found


def arms_problems(report: dict) -> list[Problem]:
    """arms.<precision> and arms.FP16 agree with the results; a measured report's arms are available."""
    arms, results, found = report.get("arms"), obj(report, "results"), []
    if not isinstance(arms, dict):
        return found
    precision = text(obj(report, "workload"), "precision")
    measured = results.get("basis") == "measured"
    pairs = [(precision, "energy_per_token_mj")]
    if precision != "FP16":
        pairs.append(("FP16", "fp16_energy_per_token_mj"))
    for arm_name, field in pairs:
        arm = arms.get(arm_name)
        if not isinstance(arm, dict):
            if measured:
                found.append(problem("QJ216", f"arms.{arm_name} is missing", f"/arms/{arm_name}"))
            continue
        if measured and arm.get("status") != "ok":
            found.append(problem("QJ216",
                                 f"arms.{arm_name} is {arm.get('status')!r} but results.basis is 'measured'",
                                 f"/arms/{arm_name}/status"))
        mine, theirs = num(arm, "energy_per_token_mj"), num(results, field)
        if mine is not None and theirs is not None:
            slack = (limits.RATIO_SLACK * theirs + limits.half_unit(arm["energy_per_token_mj"])
                     + limits.half_unit(results[field]))
            if abs(mine - theirs) > slack:
                found.append(problem("QJ216",
                                     f"arms.{arm_name}.energy_per_token_mj is {mine:g} but results.{field} "
                                     f"is {theirs:g}",
                                     f"/arms/{arm_name}/energy_per_token_mj"))
    return found


def condition_problems(report: dict) -> list[Problem]:
    """The generation length the grader's condition reads (`measurement.tokens_per_run`) is the one the
    trials ran: it equals `protocol.block_tokens`, and each ok trial holds iterations_per_trial x
    block_tokens x batch_size tokens (a 32-token run cannot pass as whole 256-token generations)."""
    protocol, found = obj(report, "protocol"), []
    block = protocol.get("block_tokens")
    stated = obj(report, "measurement").get("tokens_per_run")
    ints = [v for v in (block, stated) if isinstance(v, int) and not isinstance(v, bool)]
    if len(ints) == 2 and block != stated:
        found.append(problem("QJ215",
                             f"measurement.tokens_per_run is {stated} but protocol.block_tokens is {block}",
                             "/measurement/tokens_per_run"))
    reps = protocol.get("iterations_per_trial")
    batch = obj(report, "workload").get("batch_size", 1)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (block, reps, batch)):
        return found
    expected, wrong = reps * block * batch, []
    for i, trial in _ok_trials(report):
        tokens = trial.get("tokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens != expected:
            wrong.append((abs(tokens - expected), problem(
                "QJ215", f"trial {i} holds {tokens} tokens but {reps} generations of "
                         f"{block} tokens x batch {batch} make {expected}",
                         f"/trials/{i}/tokens")))
    return found + _worst(wrong)


def v2_problems(report: dict) -> list[Problem]:
    """Every v2-only consistency check."""
    return (per_trial_problems(report) + totals_problems(report) + statistics_problems(report)
            + recomputed_problems(report) + arms_problems(report) + condition_problems(report))
