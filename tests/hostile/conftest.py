"""Fixtures of the hostile tests: curves and the empty-gallery base, rendered once per session."""

import pytest

from tests.support.session import base_gallery, curves_data, write_tree


@pytest.fixture(scope="session")
def checkout(tmp_path_factory, base_gallery):
    """A base-branch checkout for planning: the committed empty gallery, no records."""
    return write_tree(tmp_path_factory.mktemp("checkout"), base_gallery)
