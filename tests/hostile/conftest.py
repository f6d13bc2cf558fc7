"""Fixtures of the hostile tests: curves and the empty-gallery base, rendered once per session."""

import pytest

import curves
import gallery


@pytest.fixture(scope="session")
def curves_data():
    return curves.load_curves()


@pytest.fixture(scope="session")
def base_gallery(curves_data):
    return gallery.render_files([], curves_data)
