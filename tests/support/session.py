"""Session fixtures shared by the bot and hostile tests: the curves and the empty-replications gallery.

Imported by each directory's conftest (pytest registers fixtures a conftest imports), rendered once per
session per directory: every plot takes matplotlib time."""

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
