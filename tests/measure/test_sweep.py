"""measure sweep: the pure grid plan (ids, seeds, budget, done rule, refusals) through the CLI, and the
executor over the fake GPU seam: a cell is done only once its raw record shows a finished protocol."""

import gzip
import json
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from measure.cli import main
from measure.core.design import ProtocolConfig
from measure.power.fake import FakeClock, FakePowerSource
from measure.run.env import Env
from measure.run.options import RunOptions
from measure.run.runner import run
from measure.sweep import plan as sw
from measure.sweep.execute import Hooks, record_state, sweep, time_limit_s
from tests.support.measure_fakes import ClockedSampler, FakeArm, FakeWorkload

GRID = ["--synthetic", "tiny-llama,qwen2-0.5b", "--precisions", "nf4", "--precisions", "nf4,int8",
        "--backends", "eager,static", "--batch-sizes", "1,8", "--cell-duration", "100"]


def _grid(**kw):
    args = {"duration_s": 100.0, **kw}
    return sw.grid(["tiny-llama", "qwen2-0.5b"], ["nf4", "nf4,int8"], ["eager", "static"], [1, 8], **args)


def test_the_grid_is_every_combination_sizes_outermost():
    cells = _grid()
    assert len(cells) == 16 and len({c.id for c in cells}) == 16
    assert [c.id for c in cells[:4]] == [
        "tiny-llama-nf4-eager-b1", "tiny-llama-nf4-eager-b8", "tiny-llama-nf4-static-b1",
        "tiny-llama-nf4-static-b8",
    ]
    cell = next(c for c in cells if c.id == "qwen2-0.5b-nf4+int8-static-b8")
    assert cell.argv[:8] == ("--synthetic", "qwen2-0.5b", "--precisions", "nf4,int8", "--backend", "static",
                             "--batch-size", "8")
    assert cell.argv[-2:] == ("--duration", "100") and cell.need_s == 160.0  # + the default overhead


def test_a_cell_keeps_its_id_and_seed_whatever_grid_holds_it():
    small = sw.grid(["qwen2-0.5b"], ["nf4"], ["static"], [8], duration_s=100.0)
    same = next(c for c in _grid() if c.id == small[0].id)
    assert same.argv == small[0].argv
    assert sw.cell_seed(small[0].id) != sw.cell_seed("qwen2-0.5b-nf4-static-b1")
    assert sw.cell_seed(small[0].id, base=5) == sw.cell_seed(small[0].id) + 5


def test_the_plan_skips_done_cells_and_keeps_grid_order_within_the_budget(tmp_path):
    cells = _grid()
    (tmp_path / cells[1].id).mkdir()
    (tmp_path / cells[1].id / "energy-raw.json.gz").write_bytes(b"")  # existence is the rule
    (tmp_path / f"{cells[2].id}.incomplete").mkdir()  # a cut-short run is not done
    plan = sw.plan(cells, tmp_path, budget_s=500)
    assert [c.id for c in plan.done] == [cells[1].id]
    assert [c.id for c in plan.run] == [cells[0].id, cells[2].id, cells[3].id]  # 3 x 160 s fit in 500
    assert len(plan.later) == 12 and plan.later[0][1] == "needs 160 s, 20.0 s of the budget left"


def test_dry_run_prints_the_plan(tmp_path):
    result = CliRunner().invoke(main, ["sweep", *GRID, "--budget", "400", "--root", str(tmp_path),
                                       "--dry-run", "--", "--block-tokens", "256", "--tokens", "256"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "sweep plan: 0 of 16 cells done, 2 to run within 400 s, 14 for a later call" in lines
    first = next(line for line in lines if "tiny-llama-nf4-eager-b1" in line)
    assert first.startswith("to run") and first.endswith("--duration 100 --block-tokens 256 --tokens 256")
    # static INT8 at LLM.int8()'s threshold cannot be captured: said before anything runs
    assert "tiny-llama-nf4+int8-static-b1: LLM.int8() cannot be captured" in result.output.replace("\n", " ")
    assert not list(tmp_path.iterdir())  # nothing ran


@pytest.mark.parametrize(
    "args, said",
    [
        (["--precisions", "fp8"], "unknown precision 'FP8'"),
        (["--backends", "compiled"], "unknown backend 'compiled'"),
        (["--batch-sizes", "0"], "batch size must be a positive integer"),
        (["--batch-sizes", "a"], "batch sizes must be integers"),
        (["--trials", "3"], "exactly one of a cell duration or a number of trials"),
        (["--synthetic", "gpt-9"], "gpt-9"),
        (["--", "--batch-size", "4"], "--batch-size is set by the sweep"),
    ],
)
def test_a_bad_grid_is_a_coded_usage_error(tmp_path, args, said):
    base = ["sweep", "--synthetic", "tiny-llama", "--cell-duration", "60", "--root", str(tmp_path)]
    if args[0] == "--synthetic":
        base = ["sweep", "--cell-duration", "60", "--root", str(tmp_path)]
    result = CliRunner().invoke(main, [*base, *args])
    assert result.exit_code == 2 and "QJ419" in result.output and said in result.output, result.output
    assert "Traceback" not in result.output


def test_trials_need_an_explicit_cell_time():
    with pytest.raises(sw.GridError, match="--cell-need-s"):
        sw.grid(["tiny-llama"], ["nf4"], ["eager"], [1], trials=5)
    cells = sw.grid(["tiny-llama"], ["nf4"], ["eager"], [1], trials=5, need_s=90)
    assert cells[0].argv[-2:] == ("--trials", "5") and cells[0].need_s == 90


# -- the executor over the fake GPU seam ----------------------------------------------------------


class FakeCellRunner:
    """Runs a cell in-process: runner.run over fake arms on one fake clock (so the budget is exact);
    interrupt={cell id: calls} makes that cell's NF4 arm raise KeyboardInterrupt (a Ctrl-C) once."""

    def __init__(self, clock, interrupt=None):
        self.clock, self.interrupt, self.calls, self.limits_s = clock, dict(interrupt or {}), [], []

    def __call__(self, cell, out_dir, log, limit_s):
        self.calls.append(cell.id)
        self.limits_s.append(limit_s)
        stop = self.interrupt.pop(cell.id, None)
        batch = cell.labels.get("batch_size", 1)  # a campaign manifest's cells carry no labels
        arms = {a: FakeArm(self.clock, s, 1.5 * s, batch=batch) for a, s in (("FP16", 0.02), ("NF4", 0.026))}
        if stop is not None:
            arms["NF4"].interrupt_after = stop
        trace = [(0.0, 128.0), (0.3, 134.0), (0.6, 128.0)]
        src = FakePowerSource(trace, clock=self.clock, name="NVIDIA H200")
        env = Env(src, ClockedSampler(src, self.clock), lambda *a, **k: FakeWorkload(arms), clock=self.clock,
                  sleep=self.clock.sleep, now_utc=lambda: datetime(2026, 12, 3, tzinfo=timezone.utc),
                  device="cpu")
        cfg = ProtocolConfig(trials=2, duration_s=None, warmup_runs=1, prefill_reps=2, idle_window_s=1.0,
                             batch_size=batch)
        opts = RunOptions(synthetic="tinyllama-1.1b", precisions=("NF4",), out_dir=out_dir, protocol=cfg)
        log.write_text("fake run\n")
        return run(opts, env).exit_code


def _cells():
    return sw.grid(["tinyllama-1.1b"], ["nf4"], ["eager"], [1, 4], trials=2, need_s=30)


def test_cells_are_measured_renamed_and_resumed_within_the_budget(tmp_path):
    clock = FakeClock(10.0)
    runner = FakeCellRunner(clock)
    first = sweep(_cells(), tmp_path, budget_s=40, runner=runner, clock=clock)
    assert [(r.id, r.state) for r in first.rows] == [
        ("tinyllama-1.1b-nf4-eager-b1", "measured"), ("tinyllama-1.1b-nf4-eager-b4", "later")]
    assert not first.complete and "of the budget left" in first.rows[1].reason
    done = tmp_path / "tinyllama-1.1b-nf4-eager-b1"
    names = sorted(p.name for p in done.iterdir())
    assert names == ["cell.json", "energy-raw.json.gz", "energy.json", "log.txt"]
    meta = json.loads((done / "cell.json").read_text())
    assert meta["rc"] == 0 and meta["batch_size"] == 1
    assert meta["argv"][:4] == ["python", "-m", "measure", "run"]
    second = sweep(_cells(), tmp_path, budget_s=40, runner=runner, clock=clock)
    assert [(r.id, r.state) for r in second.rows] == [
        ("tinyllama-1.1b-nf4-eager-b1", "done"), ("tinyllama-1.1b-nf4-eager-b4", "measured")]
    assert second.complete and runner.calls == ["tinyllama-1.1b-nf4-eager-b1", "tinyllama-1.1b-nf4-eager-b4"]
    rep = json.loads((tmp_path / "tinyllama-1.1b-nf4-eager-b4" / "energy.json").read_text())
    assert rep["workload"]["batch_size"] == 4
    assert sweep(_cells(), tmp_path, budget_s=40, runner=runner, clock=clock).complete
    assert len(runner.calls) == 2  # nothing ran again


def test_an_interrupted_cell_is_kept_aside_and_measured_again(tmp_path):
    clock = FakeClock(10.0)
    runner = FakeCellRunner(clock, interrupt={"tinyllama-1.1b-nf4-eager-b1": 5})
    first = sweep(_cells()[:1], tmp_path, budget_s=100, runner=runner, clock=clock)
    assert first.rows[0].state == "incomplete" and first.rows[0].reason == "interrupted"
    work = tmp_path / "tinyllama-1.1b-nf4-eager-b1.incomplete"
    assert (work / "energy-raw.json.gz").exists() and not (tmp_path / "tinyllama-1.1b-nf4-eager-b1").exists()
    again = sweep(_cells()[:1], tmp_path, budget_s=100, runner=runner, clock=clock)
    assert again.rows[0].state == "measured"
    kept = tmp_path / "tinyllama-1.1b-nf4-eager-b1.interrupted-1"
    assert (kept / "energy-raw.json.gz").exists()  # the partial run is kept, never deleted
    assert record_state(kept / "energy-raw.json.gz") == "interrupted"
    assert record_state(tmp_path / "tinyllama-1.1b-nf4-eager-b1" / "energy-raw.json.gz") is None


def test_record_state_names_what_is_missing(tmp_path):
    assert record_state(tmp_path / "none.json.gz") == "no raw record (see log.txt)"
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    assert record_state(tmp_path / "bad.json.gz").startswith("raw record unreadable")
    with gzip.open(tmp_path / "lost.json.gz", "wt") as fh:
        json.dump({"outcome": {"interrupted": False, "power_error": "power source error: NVMLError"}}, fh)
    assert record_state(tmp_path / "lost.json.gz") == "power source failed: power source error: NVMLError"


def test_hooks_see_the_working_and_the_final_folder(tmp_path):
    seen = []

    class Record(Hooks):
        def before(self, cell, work):
            seen.append(("before", work.name))

        def after(self, cell, work, rc):
            seen.append(("after", work.name, rc))

        def finished(self, cell, final):
            seen.append(("finished", final.name))

    clock = FakeClock(10.0)
    sweep(_cells()[:1], tmp_path, 100, runner=FakeCellRunner(clock), hooks=Record(), clock=clock)
    cid = "tinyllama-1.1b-nf4-eager-b1"
    assert seen == [("before", f"{cid}.incomplete"), ("after", f"{cid}.incomplete", 0), ("finished", cid)]


def test_the_campaign_runner_reads_its_manifest_as_sweep_cells():
    """benchmarks/campaign.py keeps its manifest and uses the sweep's done rule and executor."""
    from pathlib import Path

    from benchmarks import campaign

    manifest_path = Path(__file__).resolve().parents[2] / "measurements" / "hopper-campaign" / "campaign.json"
    manifest = json.loads(manifest_path.read_text())
    cells = campaign.cells(manifest)
    assert [c.id for c in cells] == [c["id"] for c in manifest["cells"]]
    first = cells[0]
    assert first.argv[:4] == ("--synthetic", manifest["cells"][0]["synthetic"], "--seed",
                              str(manifest["cells"][0]["seed"]))
    plan = sw.plan(cells, manifest_path.parent, budget_s=0)
    raws = {p.parent.name for p in manifest_path.parent.glob("*/energy-raw.json.gz")}
    # a run stopped by its call's limit is kept as history under <id>.interrupted, never as a done cell
    committed = {name for name in raws if not name.endswith(".interrupted")}
    assert {c.id for c in plan.done} == committed and committed
    assert not {name.removesuffix(".interrupted") for name in raws - committed} & {c.id for c in plan.done}
    static = campaign.cells(manifest, ("static256",))
    assert [c.id for c in static] == [c["id"] for c in manifest["cells"] if c["protocol"] == "static256"]
    assert all("static" in c.argv for c in static) and len(static) < len(cells)
    with pytest.raises(SystemExit, match="unknown protocol"):
        campaign.cells(manifest, ("graph9000",))


def test_a_cell_may_run_until_the_budget_ends_never_past_it():
    cell = sw.grid(["tinyllama-1.1b"], ["nf4"], ["eager"], [1], trials=2, need_s=200)[0]
    # a slower host than need_s assumed: the cell keeps what is left of the budget
    assert time_limit_s(cell, left_s=545, grace_s=90) == 490  # 2 x need + grace caps a hung run
    assert time_limit_s(cell, left_s=300, grace_s=90) == 300  # never past the budget (the call's limit)
    assert time_limit_s(cell, left_s=-5, grace_s=90) == 0


def test_the_sweep_gives_each_cell_what_is_left_of_the_budget(tmp_path):
    clock = FakeClock(10.0)
    runner = FakeCellRunner(clock)
    sweep(_cells(), tmp_path, budget_s=70, runner=runner, clock=clock)
    assert len(runner.calls) == 2
    assert runner.limits_s[0] == pytest.approx(70)  # min(70 left, 2 x 30 + 90)
    assert runner.limits_s[1] < 70 and runner.limits_s[1] >= 30


@pytest.mark.parametrize("folder", ["hopper-campaign", "hopper-batch"])
def test_every_campaign_cell_is_a_command_measure_run_accepts(folder):
    """A manifest cell with a misspelt option would fail on the device, after its machine's start: parse each
    cell's argv with `measure run`'s own options here instead."""
    from pathlib import Path

    from benchmarks import campaign
    from measure.cli.run import run as run_command

    manifest = json.loads((Path(__file__).resolve().parents[2] / "measurements" / folder / "campaign.json")
                          .read_text())
    cells = campaign.cells(manifest)
    assert len({c.id for c in cells}) == len(cells)  # (the split -nf4 / -int8 halves of a run share its seed)
    for cell in cells:
        ctx = run_command.make_context("run", list(cell.argv))
        protocol = manifest["protocols"][next(c["protocol"] for c in manifest["cells"] if c["id"] == cell.id)]
        if "--batch-size" in protocol:
            assert ctx.params["batch_size"] == int(protocol[protocol.index("--batch-size") + 1])
        assert ctx.params["backend"] == ("static" if "static" in protocol else "eager")


def test_a_second_manifest_fills_what_the_first_leaves_of_one_budget(tmp_path):
    """benchmarks.campaign with two manifests: the first's cell that does not fit waits for the next call,
    the second's shorter cell runs in the time left, and both pack into the one OUT."""
    from benchmarks import campaign

    def manifest(name, cells):
        folder = tmp_path / name
        folder.mkdir()
        body = {"common_args": ["--precisions", "nf4"], "protocols": {"p": ["--trials", "2"]},
                "cells": [{"id": i, "synthetic": "tinyllama-1.1b", "protocol": "p", "seed": n, "need_s": need}
                          for n, (i, need) in enumerate(cells)]}
        (folder / "campaign.json").write_text(json.dumps(body))
        return folder / "campaign.json"

    first = manifest("first", [("a1", 30), ("a2", 500)])
    then = manifest("then", [("b1", 30)])
    clock = FakeClock(10.0)
    runner = FakeCellRunner(clock)
    out = tmp_path / "out"
    asked = []

    def fake_card():  # FAKE GPU seam: an H200's SM count and compute capability, no device touched
        asked.append(1)
        return 132, "9.0"

    results = campaign.run_manifests([first, then], 100, out, runner=runner, clock=clock,
                                     progress=lambda *a, **k: None, card=fake_card)
    assert [[(r.id, r.state) for r in res.rows] for res in results] == [
        [("a1", "measured"), ("a2", "later")], [("b1", "measured")]]
    # b1 may run only for what a1 left of the one budget, not for a fresh one
    assert runner.calls == ["a1", "b1"] and runner.limits_s[0] == 100 and 0 < runner.limits_s[1] < 100
    assert sorted(p.name for p in out.iterdir()) == ["a1.tar", "b1.tar"]
    assert (tmp_path / "then" / "b1" / "energy-raw.json.gz").is_file()
    # each NF4 cell keeps bitsandbytes' dispatch for its shape and batch on that card; the card is asked once
    assert asked == [1]
    table = (tmp_path / "first" / "a1" / "nf4-dispatch.txt").read_text()
    assert "--sms 132 --cc 9.0" in table and "| TinyLlama-1.1B | 1 | none | 0 % | -75 % |" in table
    with pytest.raises(SystemExit, match="unknown protocol"):
        campaign.run_manifests([first, then], 100, out, protocols=("q",))


def test_the_nf4_dispatch_table_follows_the_cells_last_options():
    from benchmarks import campaign
    from measure.sweep.plan import Cell

    base = ("--synthetic", "qwen2-7b", "--precisions", "nf4,int8", "--backend", "eager")
    int8_only = Cell("x", (*base, "--precisions", "int8"), 10.0)
    assert campaign.nf4_dispatch(int8_only, (132, "9.0")) is None
    batched = Cell("y", (*base, "--precisions", "nf4", "--batch-size", "8"), 10.0)
    assert campaign.nf4_dispatch(batched, None) is None  # no GPU: nothing to say
    table = campaign.nf4_dispatch(batched, (132, "9.0"))
    assert "--model qwen2-7b --batch 8" in table and "| Qwen2-7B | 8 |" in table
