"""Fixtures of the hostile tests: curves and the empty-gallery base, rendered once per session."""

import pytest

from tests.support.session import base_gallery, curves_data


@pytest.fixture(scope="session")
def checkout(tmp_path_factory, base_gallery):
    """A base-branch checkout for planning: the committed empty gallery, no records."""
    root = tmp_path_factory.mktemp("checkout")
    for path, content in base_gallery.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    (root / "replications").mkdir()
    return root
