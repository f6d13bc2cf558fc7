"""The contributor path as a new user meets it: the built wheel in a fresh venv, run outside any checkout.

One venv for the module. The wheel is built from the checkout's files (tracked and not ignored) copied to a
temporary folder, and installed with --no-deps into a venv made without pip; the heavy dependencies
(torch, transformers, bitsandbytes, scipy, ...) come from this interpreter's site-packages through one
plain path line in a .pth file, which adds that folder to sys.path without running its .pth files, so an
editable install of quantjoule there is never activated. Every command runs from an empty folder outside
the checkout with PYTHONPATH unset, and the test asserts that every quantjoule module is imported from
the venv: the wheel is the only source of quantjoule's code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = ("assess", "bot", "curves", "gallery", "measure", "problem_codes", "schema")
REAL_REPORT = ROOT / "measurements" / "h200" / "2026-12-02-tinyllama-1.1b-eager-nf4.json"

WHEEL = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]

pytestmark = pytest.mark.slow


def _sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _source_tree(dest: Path) -> Path:
    """The files a clone would have (tracked, plus new files git does not ignore), without build leftovers."""
    listed = _sh(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _lookalike(dest: Path) -> Path:
    """A stand-in for PyPI's `schema` 0.7.8 (keleshev/schema: one module schema.py), built as a wheel here
    so the test needs no network: same distribution name, same importable name, different code."""
    src = dest / "lookalike"
    src.mkdir()
    (src / "schema.py").write_text('"""Not quantjoule."""\n\nLOOKALIKE = True\n')
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "schema"\nversion = "0.7.8"\n[tool.setuptools]\npy-modules = ["schema"]\n'
    )
    _sh([*WHEEL, "-w", str(dest), str(src)])
    return next(dest.glob("schema-0.7.8-*.whl"))


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    src = _source_tree(base / "src")
    dist = base / "dist"
    _sh([*WHEEL, "-w", str(dist), str(src)])
    (wheel,) = dist.glob("quantjoule-*.whl")
    env_dir = base / "venv"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(env_dir)])
    python = env_dir / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(_sh([str(python), "-c", where]).stdout.strip())
    (site / "_outer_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index"]
    _sh([*pip, str(_lookalike(base))])  # the same-named PyPI package, installed first
    _sh([*pip, str(wheel)])
    work = base / "elsewhere"
    work.mkdir()
    return {"python": python, "site": site, "cwd": work, "wheel": wheel}


def _run(venv, *args: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update({"CUDA_VISIBLE_DEVICES": "", "PYTHONNOUSERSITE": "1", "HF_HUB_OFFLINE": "1"})
    env.update(extra_env or {})
    env["PATH"] = f"{venv['python'].parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(venv["python"]), *args], capture_output=True, text=True, cwd=venv["cwd"], env=env, timeout=600
    )


def test_the_wheel_ships_the_curves_and_the_anchors(venv):
    import zipfile

    from curves.store import DEFAULT_ANCHOR_PATHS

    names = set(zipfile.ZipFile(venv["wheel"]).namelist())
    for name in ("curves.json", "README.md", *(p.name for p in DEFAULT_ANCHOR_PATHS)):
        assert f"curves/reference/{name}" in names
    assert (venv["site"] / "curves" / "reference" / "curves.json").read_bytes() == (
        ROOT / "reference" / "curves.json"
    ).read_bytes()


def test_our_packages_are_imported_from_the_venv_and_win_over_a_same_named_pypi_package(venv):
    code = (
        "import json, importlib, curves.store as s; mods = {n: importlib.import_module(n).__file__ for n in "
        f"{TOP_LEVEL!r}}}; import schema; print(json.dumps({{'files': mods, 'parse': hasattr(schema, "
        "'parse_report'), 'lookalike': hasattr(schema, 'LOOKALIKE'), 'curves': str(s.DEFAULT_CURVES_PATH)}))"
    )
    done = _run(venv, "-c", code)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    site = venv["site"].resolve()
    for name, path in found["files"].items():
        assert Path(path).resolve().is_relative_to(site), (name, path)
    assert found["parse"] and not found["lookalike"]
    assert Path(found["curves"]).resolve().is_relative_to(site)
    assert (venv["site"] / "schema.py").is_file()  # the other package is still there, just not imported


def test_measure_check_gives_the_bots_verdict_outside_the_checkout(venv):
    report = venv["cwd"] / "energy-nf4.json"
    shutil.copy(REAL_REPORT, report)
    done = _run(venv, "-m", "measure", "check", "--json", report.name)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = json.loads(done.stdout)
    # the same acceptance and verdict as the bot's own code in this checkout gives
    from assess import assess
    from curves import load_curves

    expected = assess(REAL_REPORT.read_bytes(), load_curves())
    assert row["accepted"] is expected.accepted is True
    assert row["verdict"] == expected.verdict.to_dict()
    assert "Traceback" not in done.stderr


def test_measure_run_without_a_gpu_then_check_and_bot_grade(venv):
    out = venv["cwd"] / "run"
    args = ["-m", "measure", "run", "--synthetic", "qwen2-0.5b", "--gpu-arch", "hopper", "--out", str(out)]
    done = _run(venv, *args)
    assert done.returncode == 3, done.stdout + done.stderr  # no GPU: a reference report, exit 3
    assert "Traceback" not in done.stderr
    for name in ("energy-nf4.json", "energy-int8.json"):
        report = json.loads((out / name).read_text())
        assert report["measurement_source"] == "reference-dataset"
        assert report["results"]["fp16_energy_per_token_mj"] > 0
    checked = _run(venv, "-m", "measure", "check", "--json", str(out / "energy-nf4.json"))
    assert checked.returncode == 1  # schema-valid, and refused as the bot refuses it
    assert [p["code"] for p in json.loads(checked.stdout)[0]["problems"]] == ["QJ506"]
    graded = _run(venv, "-m", "bot", "grade", "--json", str(out / "energy-nf4.json"), str(REAL_REPORT))
    assert graded.returncode == 0, graded.stdout + graded.stderr
    from assess import assess
    from curves import load_curves

    lines = [json.loads(line) for line in graded.stdout.splitlines()]
    assert lines[1]["verdict"] == assess(REAL_REPORT.read_bytes(), load_curves()).verdict.to_dict()
    assert lines[0]["verdict"]["label"] == "ungraded"  # a reference value is never graded
    usage = _run(venv, "-m", "measure", "run", "--synthetic", "qwen2-0.5b", "--out", str(out / "x"))
    assert usage.returncode == 2 and "--gpu-arch" in usage.stderr and "Traceback" not in usage.stderr


def test_a_shadowing_package_first_on_the_path_is_a_clear_error(venv, tmp_path):
    (tmp_path / "schema.py").write_text("LOOKALIKE = True\n")
    for module in ("measure", "bot"):
        done = _run(venv, "-m", module, "--help", extra_env={"PYTHONPATH": str(tmp_path)})
        assert done.returncode == 2, done.stdout + done.stderr
        assert "QJ418" in done.stderr and "Traceback" not in done.stderr
