"""benchmarks.host_load: steal and busy shares of a cell's host CPU time from the /proc/stat line that
benchmarks.campaign writes into each cell's context files before and after the run."""

from pathlib import Path

from benchmarks.campaign import context
from benchmarks.host_load import collect, cpu_counters, main, share

ROOT = Path(__file__).resolve().parents[2]


def _context(cpu_line: str, nproc: int = 4) -> str:
    return (f"$ lscpu\nModel name: x\n\n$ nproc\n{nproc}\n\n"
            f"$ head -1 /proc/stat\n{cpu_line}\n\n$ cat /proc/loadavg\n0.1\n")


def test_the_campaign_context_holds_a_line_the_reader_parses(tmp_path):
    path = tmp_path / "context-before.txt"
    context(path)  # the real /proc/stat of this machine (nvidia-smi missing is recorded as such)
    counters = cpu_counters(path.read_text())
    assert counters is not None and set(counters) >= {"user", "idle", "steal"}
    assert counters["idle"] > 0


def test_steal_is_a_share_of_all_cpu_time_between_the_snapshots():
    before = cpu_counters(_context("cpu  100 0 50 1000 10 0 0 0 0 0"))
    after = cpu_counters(_context("cpu  400 0 150 1700 10 0 0 200 0 0"))
    got = share(before, after, cpus=4)
    # deltas: user 300, system 100, idle 700, steal 200 -> total 1300 ticks
    assert got == {"steal_pct": round(100 * 200 / 1300, 2), "busy_pct": round(100 * 400 / 1300, 2),
                   "iowait_pct": 0.0, "elapsed_s": round(1300 / 100 / 4, 1)}


def test_counters_that_go_backwards_or_are_missing_give_nothing():
    before = cpu_counters(_context("cpu  500 0 50 1000 10 0 0 9 0 0"))
    after = cpu_counters(_context("cpu  400 0 150 1700 10 0 0 200 0 0"))
    assert share(before, after, cpus=4) is None
    assert cpu_counters("$ lscpu\nModel name: x\n") is None
    assert cpu_counters(_context("cpu  a b c")) is None


def test_cells_with_and_without_the_counters(tmp_path, capsys):
    new, old = tmp_path / "camp" / "new-cell", tmp_path / "camp" / "old-cell"
    new.mkdir(parents=True)
    old.mkdir()
    (new / "context-before.txt").write_text(_context("cpu  0 0 0 1000 0 0 0 0 0 0", nproc=2))
    (new / "context-after.txt").write_text(_context("cpu  300 0 0 1600 0 0 0 100 0 0", nproc=2))
    for name in ("context-before.txt", "context-after.txt"):
        (old / name).write_text("$ lscpu\nModel name: x\n\n$ nproc\n2\n")
    rows = {r["run"]: r for r in collect([tmp_path / "camp"])}
    assert rows["camp/new-cell"]["steal_pct"] == 10.0 and rows["camp/new-cell"]["elapsed_s"] == 5.0
    assert rows["camp/old-cell"]["not_recorded"] is True
    assert main([str(tmp_path / "camp")]) == 0
    out = capsys.readouterr().out
    assert "| camp/old-cell | not recorded |" in out
    assert "most steal: camp/new-cell 10.0 %" in out


def test_the_committed_cells_read_without_error(capsys):
    assert main([str(ROOT / "measurements" / "hopper-campaign")]) == 0
    out = capsys.readouterr().out
    assert "hopper-campaign/qwen2-0.5b-d4-nf4" in out
