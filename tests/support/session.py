"""Session fixtures shared by the bot and hostile tests (the curves, the empty-replications gallery) and
the writer of their checkouts.

Imported by each directory's conftest (pytest registers fixtures a conftest imports), rendered once per
session per directory: every plot takes matplotlib time."""

from pathlib import Path

import pytest

import curves
import gallery


@pytest.fixture(scope="session")
def curves_data():
    return curves.load_curves()


@pytest.fixture(scope="session")
def base_gallery(curves_data):
    """The gallery of an empty replications/."""
    return gallery.render_files([], curves_data)


def write_tree(root: Path, files: dict[str, bytes], replications: bool = True) -> Path:
    """Write `files` (path -> bytes) under `root`, with an empty replications/ unless told otherwise."""
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    if replications:
        (root / "replications").mkdir(parents=True, exist_ok=True)
    return root
