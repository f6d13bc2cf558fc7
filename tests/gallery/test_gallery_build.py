"""`gallery build`: files on disk, determinism, incremental rebuilds, stale files, the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from gallery.builder import CACHE, MANIFEST, build, state_dir
from gallery.cli import main
from gallery.site import CHECKER_FILES
from tests.gallery.helpers import write_repo
from tests.support.gallery_records import make_record, make_report


def _tree(*folders: Path) -> dict[str, bytes]:
    """Every generated file; the record cache is left out: it holds file sizes, mtimes and inodes."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != CACHE:
                out[f"{folder.name}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    return out


def test_build_writes_the_committed_gallery_and_the_site(built, records, rendered):
    root, result = built
    for rel, content in rendered.items():
        assert (root / rel).read_bytes() == content, rel
    site = root / "gallery" / "site"
    assert (site / "index.html").is_file() and (site / "data" / "curves.js").is_file()
    for name in ("app.js", "style.css", *CHECKER_FILES):
        assert (site / "assets" / name).stat().st_size > 500
    pages = sorted(p.relative_to(site).as_posix() for p in (site / "r").rglob("*.html"))
    assert len(pages) == result.n_rows == len(records) - 1  # the simulated record has no page
    assert result.plots_rendered == len(list((root / "gallery" / "plots").glob("*.png")))
    assert {p.name for p in (site / "plots").iterdir()} == {
        p.name for p in (root / "gallery" / "plots").iterdir()
    }


def test_two_builds_of_the_same_input_are_byte_identical(tmp_path, small):
    records, curves = small
    first = write_repo(tmp_path / "a", records, curves)
    second = write_repo(tmp_path / "b", list(reversed(records)), curves)
    build(first)
    build(second)
    tree_a, tree_b = _tree(first / "gallery"), _tree(second / "gallery")
    assert [k for k in tree_a if tree_a[k] != tree_b.get(k)] == []
    assert tree_a == tree_b and len(tree_a) > 20


def test_incremental_build_renders_only_what_changed_and_matches_a_full_build(tmp_path, small):
    records, curves = small
    root = write_repo(tmp_path / "repo", records, curves)
    build(root)
    again = build(root, incremental=True)
    assert (again.plots_rendered, again.pages_rendered) == (0, 0)
    new = make_record(
        make_report(
            arch="ada", model="Qwen2-7B", params_b=7.616, precision="NF4", delta_pct=-15.0, seed=4242
        ),
        issue=4242,
        curves=curves,
        submitted_at="2027-02-02T02:02:02Z",
    )
    write_repo(root, [new], curves)
    step = build(root, incremental=True)
    assert step.plots_rendered == 1 and step.plots_reused == again.plots_reused - 1
    # Pages whose plot geometry moved (the y range can grow) re-render too; all others are reused.
    assert (
        1
        <= step.pages_rendered
        <= 1 + sum(r["report"]["system_under_test"]["gpu_arch"] == "ada" for r in records)
    )
    incremental_tree = _tree(root / "gallery")
    full = write_repo(tmp_path / "full", [*records, new], curves)
    build(full)
    assert _tree(full / "gallery") == incremental_tree


def test_removed_records_take_their_page_and_plot_with_them(tmp_path, small):
    records, curves = small
    only_volta = [r for r in records if r["report"]["system_under_test"]["gpu_arch"] == "volta"]
    root = write_repo(tmp_path / "repo", records, curves)
    build(root)
    assert (root / "gallery" / "plots" / "volta-NF4.png").exists()
    for path in (root / "replications" / "volta").glob("*.json"):
        path.unlink()
    (root / "gallery" / "site" / "keep-me.txt").write_text("not ours")
    result = build(root)
    assert not (root / "gallery" / "plots" / "volta-NF4.png").exists()
    assert not list((root / "gallery" / "site" / "r").glob("volta/*.html"))
    assert (root / "gallery" / "site" / "keep-me.txt").exists(), (
        "files the build did not write are left alone"
    )
    assert result.removed >= 2 + len(only_volta)
    assert json.loads((state_dir(root / "gallery" / "site") / MANIFEST).read_text())["files"]


def test_the_build_state_is_kept_out_of_the_published_site(tmp_path, small):
    """The site folder is what Pages publishes: the manifest and the record cache (file sizes, mtimes,
    inodes) live beside it; one left inside by an older build is moved out."""
    records, curves = small
    root = write_repo(tmp_path / "repo", records[:4], curves)
    site = tmp_path / "_site"
    site.mkdir()
    (site / MANIFEST).write_text('{"files": ["index.html"]}')
    (site / CACHE).write_text("{}")
    for incremental in (False, True):
        build(root, site, incremental=incremental)
        hidden = [p for p in site.rglob("*") if p.name.startswith(".")]
        assert hidden == [] and not list(site.rglob("*cache*"))
        assert (state_dir(site) / MANIFEST).is_file() and (state_dir(site) / CACHE).is_file()
        assert state_dir(site).parent == site.parent


def test_unreadable_records_are_reported_not_fatal(tmp_path, small):
    records, curves = small
    root = write_repo(tmp_path / "repo", records[:3], curves)
    (root / "replications" / "ada" / "bad.json").write_text("{not json")
    (root / "replications" / "ada" / "list.json").write_text("[1, 2]")
    result = build(root)
    assert sorted(p.path for p in result.unreadable) == [
        "replications/ada/bad.json",
        "replications/ada/list.json",
    ]
    assert {p.code for p in result.unreadable} == {"QJ013"}
    assert result.n_rows == 3


def test_cli_build_prints_counts_and_where_to_open_the_site(tmp_path, small):
    records, curves = small
    root = write_repo(tmp_path / "repo", records[:6], curves)
    site = tmp_path / "site-out"
    result = CliRunner().invoke(main, ["build", "--root", str(root), "--site-dir", str(site)])
    assert result.exit_code == 0, result.output
    assert "6 replication(s):" in result.output
    assert f"Open the site: {(site / 'index.html').resolve().as_uri()}" in result.output
    assert "python -m http.server --directory" in result.output
    again = CliRunner().invoke(main, ["build", "--root", str(root), "--site-dir", str(site), "--incremental"])
    assert "plots: 0 rendered" in again.output and "pages: 0 rendered, 6 unchanged" in again.output


def test_cli_without_curves_gives_a_coded_error_and_no_traceback(tmp_path):
    result = CliRunner().invoke(main, ["build", "--root", str(tmp_path)])
    assert result.exit_code == 1
    assert "QJ601" in result.output and "hint:" in result.output
    assert "Traceback" not in result.output


def test_cli_with_a_corrupt_curves_file_names_it(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "curves.json").write_text("{")
    result = CliRunner().invoke(main, ["build", "--root", str(tmp_path)])
    assert result.exit_code == 1 and "QJ601" in result.output and "curves.json" in result.output


def test_cli_with_a_site_dir_that_is_a_file_gives_a_coded_error(tmp_path, small):
    records, curves = small
    root = write_repo(tmp_path / "repo", records[:2], curves)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(main, ["build", "--root", str(root), "--site-dir", str(blocker)])
    assert result.exit_code == 1 and "QJ603" in result.output and "Traceback" not in result.output


def test_help_on_every_command():
    runner = CliRunner()
    for args in (["--help"], ["build", "--help"], ["merged-issues", "--help"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and "Usage:" in result.output


def test_the_empty_gallery_still_builds(tmp_path, small):
    curves = small[1]
    root = write_repo(tmp_path / "repo", [], curves)
    result = build(root)
    readme = (root / "gallery" / "README.md").read_text()
    assert result.n_rows == 0 and "| 0 | 0 | 0 |" in readme and "no replications yet" in readme
    assert len(list((root / "gallery" / "plots").glob("*.png"))) == len(curves["groups"])
    shutil.rmtree(root / "gallery")


def test_incremental_build_sees_a_record_edited_in_place(tmp_path, small):
    records, curves = small
    root = write_repo(tmp_path / "repo", records, curves)
    build(root)
    target = sorted((root / "replications" / "ada").glob("*.json"))[0]
    record = json.loads(target.read_text())
    record["credited_handle"] = "Renamed Contributor"
    target.write_text(json.dumps(record, indent=1))
    step = build(root, incremental=True)
    assert step.pages_rendered == 1 and step.plots_rendered == 0
    assert "Renamed Contributor" in (root / "gallery" / "README.md").read_text()
    full = write_repo(
        tmp_path / "full",
        [json.loads(p.read_text()) for p in (root / "replications").rglob("*.json")],
        curves,
    )
    build(full)
    assert _tree(full / "gallery") == _tree(root / "gallery")
