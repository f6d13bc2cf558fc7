"""benchmarks.cells: the README tables' figures, read from committed campaign cells."""

import json
import shutil
from pathlib import Path

from benchmarks.cells import collect, main, sm_median_mhz

ROOT = Path(__file__).resolve().parents[2]
BATCH = ROOT / "measurements" / "hopper-batch"
CAMPAIGN = ROOT / "measurements" / "hopper-campaign"
HEADER = ("timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz], power.draw [W], temperature.gpu, "
          "clocks_event_reasons.active\n")


def _clocks(rows: list[tuple[str, str]]) -> str:
    return HEADER + "".join(f"2026/12/06 05:33:{i:02d}.000, {sm}, 2619 MHz, {w}, 40, 0x0\n"
                            for i, (sm, w) in enumerate(rows))


def test_the_sm_clock_is_the_median_over_loaded_samples_only(tmp_path):
    path = tmp_path / "clocks.csv"
    # idle samples at 345 MHz and 121 W must not pull the median down; [N/A] is skipped
    path.write_text(_clocks([("345 MHz", "121.4 W"), ("1980 MHz", "300.0 W"), ("1755 MHz", "420.5 W"),
                             ("1980 MHz", "410.0 W"), ("[N/A]", "400.0 W"), ("345 MHz", "122.0 W")]))
    assert sm_median_mhz(path) == 1980.0
    path.write_text(_clocks([("1980 MHz", "125.0 W"), ("1980 MHz", "130.0 W")]))
    assert sm_median_mhz(path) is None  # an eager batch-1 cell near its floor: no loaded sample
    assert sm_median_mhz(tmp_path / "missing.csv") is None


def test_a_cell_gives_one_row_per_report_with_its_wall_and_clocks(tmp_path):
    camp = tmp_path / "camp"
    both = camp / "two-arms"
    shutil.copytree(CAMPAIGN / "qwen2-0.5b-d1", both)  # energy-nf4.json and energy-int8.json
    one = camp / "int8t0"
    shutil.copytree(BATCH / "qwen2-7b-b32-s-int8t0", one)
    (one / "clocks.csv").write_text(_clocks([("1755 MHz", "400.0 W"), ("1755 MHz", "410.0 W")]))
    (one / "cell.json").write_text(json.dumps({"wall_s": 123.4}))
    rows = {(r["run"], r["report"]): r for r in collect([camp])}
    assert set(rows) == {("camp/int8t0", "energy.json"), ("camp/two-arms", "energy-int8.json"),
                         ("camp/two-arms", "energy-nf4.json")}
    r = rows[("camp/int8t0", "energy.json")]
    rep = json.loads((one / "energy.json").read_text())
    assert r["delta_e_pct"] == rep["results"]["vs_fp16_energy_pct"]
    assert r["ci95_pp"] == rep["statistics"]["delta_e_pct"]["ci95_half_width_pp"]
    assert (r["precision"], r["int8_threshold"], r["backend"], r["batch"]) == ("INT8", 0.0, "static", 32)
    assert r["wall_s"] == 123.4 and r["sm_mhz_loaded"] == 1755.0
    assert r["card"] == rep["system_under_test"]["gpu_uuid_sha256"][:8]
    assert r["quant_tok_s"] == rep["arms"]["INT8"]["throughput_tokens_per_s"]
    nf4 = rows[("camp/two-arms", "energy-nf4.json")]
    assert nf4["precision"] == "NF4" and nf4["blocks"] == 4 and nf4["chunk_tokens"] is None
    assert r["chunk_tokens"] is None


def test_a_chunked_run_says_so_in_its_condition(tmp_path, capsys):
    cell = tmp_path / "camp" / "c1"
    shutil.copytree(CAMPAIGN / "qwen2-0.5b-d1", cell)
    for name in ("energy-nf4.json", "energy-int8.json"):
        rep = json.loads((cell / name).read_text())
        rep["protocol"]["chunk_tokens"] = 32
        (cell / name).write_text(json.dumps(rep))
    assert main([str(tmp_path / "camp")]) == 0
    out = capsys.readouterr().out
    assert "| camp/c1 | NF4 eager b1 chunks of 32 |" in out
    assert "| camp/c1 | INT8 eager b1 chunks of 32 |" in out


def test_the_committed_grid_prints_the_figures_its_readme_quotes(capsys):
    assert main([str(BATCH)]) == 0
    out = capsys.readouterr().out
    # calls 31-32, as measurements/hopper-batch/README.md quotes them
    assert ("| hopper-batch/qwen2-7b-b32-s-int8t0 | INT8 t0 static b32 | b1c9098b | 238 | -11.6 ± 0.3 (5) |"
            in out)
    assert "| hopper-batch/qwen2.5-3b-b8-e-nf4 | NF4 eager b8 | b1c9098b | 306 | +61.7 ± 14.8 (4) |" in out
    readme = (BATCH / "README.md").read_text()
    assert "**−11.6 ± 0.3 (5)**" in readme and "**+61.7 ± 14.8 (4)**" in readme
