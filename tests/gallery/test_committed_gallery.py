"""The committed gallery is what `python -m gallery build` writes from the committed curves and
replications: a change to the plots' code or to the curves that was not rebuilt fails here."""

import shutil
from pathlib import Path

from gallery.builder import build

ROOT = Path(__file__).resolve().parents[2]


def test_a_rebuild_of_the_committed_inputs_leaves_no_diff(tmp_path):
    (tmp_path / "reference").mkdir()
    shutil.copy2(ROOT / "reference" / "curves.json", tmp_path / "reference" / "curves.json")
    if (ROOT / "replications").is_dir():
        shutil.copytree(ROOT / "replications", tmp_path / "replications")
    (tmp_path / "gallery").mkdir()
    build(tmp_path, out_site=tmp_path / "site")
    committed = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "gallery" / "plots").iterdir())
    rebuilt = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "gallery" / "plots").iterdir())
    assert rebuilt == committed
    stale = [rel for rel in [*committed, "gallery/README.md"]
             if (tmp_path / rel).read_bytes() != (ROOT / rel).read_bytes()]
    assert not stale, f"rebuild with `python -m gallery build` and commit: {stale}"
