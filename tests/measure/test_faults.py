"""Measurement faults over the fake power source: each run leaves valid reports, broken parts
`unavailable`/`failed` with the reason, good arms intact, and the documented exit status."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from measure.cli.check import check_data
from measure.power.fake import FakeClock
from measure.run.options import EXIT_OK, EXIT_PARTIAL
from measure.run.runner import run
from schema import validate
from tests.measure.test_runner import _arms, _env, _opts
from tests.support.measure_fakes import FakeWorkload

ROOT = Path(__file__).resolve().parents[2]


def _reports(res) -> dict:
    return {p.name: json.loads(p.read_text()) for p in res.paths}


def _sound(rep: dict) -> None:
    """Schema-valid, never a measurement, no ok trial without a positive energy."""
    assert [p for p in validate(rep) if p.severity == "error"] == []
    assert not check_data("r.json", json.dumps(rep).encode(), [], {"groups": {}}).is_measurement
    for t in rep["trials"]:
        if t["status"] == "ok":
            assert (t["counter_energy_j"] or t["trace_energy_j"] or 0) > 0
        else:
            assert t["reason"]


def _at_block(n: int, action):
    """A progress callback that fires `action` once, after block n."""

    def progress(kind, **kw):
        if kind == "block" and kw["block"] == n:
            action()

    return progress


def test_nvml_error_mid_trial_keeps_completed_blocks_and_exits_4(tmp_path):
    clock = FakeClock(50.0)
    env = _env(clock, FakeWorkload(_arms(clock)))
    # the GPU is lost 0.5 s into block 4 (after its cooldown and preroll, during its generations);
    # blocks of every arm, so that block is in both reports
    fire = _at_block(3, lambda: setattr(env.power, "error_after_s", clock() + 0.5))
    res = run(_opts(tmp_path, trials=8, pairing="all"), env, fire)
    assert res.exit_code == EXIT_PARTIAL and any(w.code == "QJ414" for w in res.warnings)
    for rep in _reports(res).values():
        _sound(rep)
        assert rep["results"]["basis"] == "unavailable" and "NVML_ERROR_GPU_IS_LOST" in rep["results"]["note"]
        failed = [t for t in rep["trials"] if t["status"] == "failed"]
        assert failed and all("no power samples" in t["reason"] for t in failed)
        assert {t["block"] for t in failed} == {3}
        assert all(a["status"] == "ok" for a in rep["arms"].values())  # the good arms are intact
        assert rep["statistics"]["n_pairs"] == 3 and rep["protocol"]["trials"] == 4
        assert rep["phases"]["faults"]["power_source_error"].startswith("power source error: FakeNvmlError")


def test_nvml_error_in_the_cooldown_read_stops_cleanly(tmp_path):
    clock = FakeClock(50.0)
    env = _env(clock, FakeWorkload(_arms(clock)))
    # fails between blocks: the measuring process's own cooldown reading raises first
    fire = _at_block(2, lambda: setattr(env.power, "error_after_s", clock() + 0.01))
    res = run(_opts(tmp_path, trials=8, pairing="all"), env, fire)
    assert res.exit_code == EXIT_PARTIAL
    rep = _reports(res)["energy-nf4.json"]
    _sound(rep)
    assert rep["statistics"]["n_pairs"] == 2 and all(t["status"] == "ok" for t in rep["trials"])
    assert "FakeNvmlError" in rep["phases"]["faults"]["power_source_error"]


def test_oom_during_generate_marks_that_arm_unavailable_and_keeps_the_others(tmp_path):
    clock = FakeClock(50.0)
    res = run(_opts(tmp_path, trials=6), _env(clock, FakeWorkload(_arms(clock, INT8={"fail_after": 9}))))
    assert res.exit_code == EXIT_PARTIAL
    assert any(w.code == "QJ403" and w.message.startswith("INT8") for w in res.warnings)
    reps = _reports(res)
    int8, nf4 = reps["energy-int8.json"], reps["energy-nf4.json"]
    for rep in reps.values():
        _sound(rep)
    arm = int8["arms"]["INT8"]
    assert arm["status"] == "unavailable" and "out of memory" in arm["reason"]
    assert int8["results"]["basis"] == "unavailable" and "INT8 arm failed" in int8["results"]["note"]
    assert any(t["status"] == "failed" and "out of memory" in t["reason"] for t in int8["trials"])
    assert nf4["statistics"]["n_pairs"] == 6 and nf4["arms"]["NF4"]["status"] == "ok"
    assert all(t["status"] == "ok" for t in nf4["trials"])


def test_oom_at_load_keeps_the_others(tmp_path):
    clock = FakeClock(50.0)
    wl = FakeWorkload(_arms(clock), fail_load={"NF4": RuntimeError("CUDA out of memory. Tried 2 GiB")})
    res = run(_opts(tmp_path, trials=4), _env(clock, wl))
    assert res.exit_code == EXIT_PARTIAL
    reps = _reports(res)
    nf4 = reps["energy-nf4.json"]
    _sound(nf4)
    assert nf4["arms"]["NF4"]["status"] == "unavailable" and "load failed" in nf4["arms"]["NF4"]["reason"]
    assert reps["energy-int8.json"]["statistics"]["n_pairs"] == 4


def test_stuck_counter_falls_back_to_the_trace_with_a_reason(tmp_path):
    clock = FakeClock(50.0)
    env = _env(clock, FakeWorkload(_arms(clock)))
    fire = _at_block(2, lambda: setattr(env.power, "counter_stuck_after_s", clock()))
    res = run(_opts(tmp_path, trials=6), env, fire)
    assert res.exit_code == EXIT_OK and any(w.code == "QJ415" for w in res.warnings)
    rep = _reports(res)["energy-nf4.json"]
    _sound(rep)
    stuck = [t for t in rep["trials"] if t["block"] >= 3]
    assert stuck and all(t["status"] == "ok" and t["counter_energy_j"] is None for t in stuck)
    assert all("did not advance" in t["reason"] and "power trace" in t["reason"] for t in stuck)
    assert all(t["trace_energy_j"] > 10 for t in stuck)  # real energy, not the stuck counter's zero
    # the block that ends as the counter stops may already be flagged (its last window ends within a tick)
    early = [t for t in rep["trials"] if t["block"] == 0]
    assert all(t["counter_energy_j"] and "reason" not in t for t in early)
    assert rep["statistics"]["n_pairs"] == 6
    assert rep["statistics"]["delta_e_pct"]["mean"] == pytest.approx(30.0, abs=1.0)


def test_trace_gap_is_recorded_energy_from_the_counter_and_agreement_flagged(tmp_path):
    clock = FakeClock(50.0)
    env = _env(clock, FakeWorkload(_arms(clock)))
    # the sampler stalls for 0.4 s inside block 3; the power trace spikes there, so the gap hides energy
    fire = _at_block(2, lambda: env.sampler.gaps.append((clock() + 0.45, clock() + 0.85)))
    res = run(_opts(tmp_path, trials=5, pairing="all"), env, fire)
    assert res.exit_code == EXIT_OK and any(
        w.code == "QJ406" and w.message.startswith("power trace gaps") for w in res.warnings
    )
    rep = _reports(res)["energy-int8.json"]
    _sound(rep)
    gapped = [t for t in rep["trials"] if "gap" in (t.get("reason") or "")]
    assert gapped and all(t["counter_energy_j"] and "energy from the counter" in t["reason"] for t in gapped)
    assert rep["protocol"]["dropped_samples"] >= 39
    assert rep["phases"]["faults"]["trace_gaps"] >= 1 and rep["phases"]["faults"]["max_trace_gap_s"] >= 0.4


def _children(pid: int) -> set[int]:
    """Live processes whose parent is `pid` (Linux /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_or_dump(proc, lines: queue.Queue, seen: list[bytes], timeout_s: float) -> int:
    """The run's exit status; a run still alive after timeout_s is aborted (SIGABRT, so the fault handler
    prints where each thread hangs) and the test fails with that dump rather than a bare timeout."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        proc.wait(timeout=30)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            seen.append(line)
        stacks = b"".join(seen).decode()[-6000:]
        raise AssertionError(f"no exit {timeout_s} s after the signal; stacks:\n{stacks}") from None


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "times"), [(signal.SIGINT, 1), (signal.SIGTERM, 1), (signal.SIGINT, 2)],
                         ids=["SIGINT", "SIGTERM", "SIGINT-twice"])
def test_a_signal_to_a_real_run_process_writes_partial_simulated_reports(tmp_path, sig, times):
    env = {
        **os.environ,
        "QUANTJOULE_SIMULATE_POWER": "1",
        "PYTHONPATH": str(ROOT),
        "QUANTJOULE_CACHE": str(tmp_path / "cache"),
        # a run that hangs after the signal is aborted below; this makes the abort print every thread's stack
        "PYTHONFAULTHANDLER": "1",
    }
    cmd = [
        sys.executable,
        "-m",
        "measure",
        "run",
        "--synthetic",
        "tiny-llama",
        "--gpu-arch",
        "hopper",
        "--tokens",
        "16",
        "--block-tokens",
        "6",
        "--trials",
        "5000",
        "--warmup",
        "1",
        "--out",
        str(tmp_path),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    lines: queue.Queue = queue.Queue()
    seen: list[bytes] = []

    def read() -> None:
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        # wait for the progress lines of each arm's first block (stderr is not a terminal: plain lines)
        deadline = time.monotonic() + 300

        def both_arms_ran() -> bool:
            done = [line for line in seen if b" done (" in line]
            return any(b"NF4" in line for line in done) and any(b"INT8" in line for line in done)

        while not both_arms_ran():
            assert time.monotonic() < deadline, b"".join(seen).decode()[-2000:]
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, b"".join(seen).decode()[-2000:]
            seen.append(line)
        children = _children(proc.pid)
        assert children, "the power sampler runs in a child process"
        proc.send_signal(sig)
        if times == 2:  # Ctrl-C pressed twice: the second lands while the partial report is written
            time.sleep(0.05)
            proc.send_signal(sig)
        assert _wait_or_dump(proc, lines, seen, 120) == EXIT_PARTIAL, b"".join(seen).decode()[-2000:]
        while (line := lines.get(timeout=30)) is not None:
            seen.append(line)
        err = b"".join(seen)
        assert b"QJ404" in err and b"Traceback" not in err
        assert (b"still writing the partial report" in err) == (times == 2)
        deadline = time.monotonic() + 10
        while any(map(_alive, children)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_alive, children)), "the sampler outlived the run"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    for name in ("energy-nf4.json", "energy-int8.json"):
        rep = json.loads((tmp_path / name).read_text())
        _sound(rep)
        assert rep["measurement_source"] == "simulated" and rep["results"]["basis"] == "unavailable"
        assert "interrupted" in rep["results"]["note"] and rep["protocol"]["trials"] >= 1
