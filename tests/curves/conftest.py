"""Shared fixtures: the real fit of the committed anchors, computed once per session."""

from __future__ import annotations

import copy

import pytest

from curves.anchors import read_anchor_files, read_anchors
from curves.fit import dumps, fit
from tests.curves.helpers import ANCHOR_FILES, ANCHORS


@pytest.fixture(scope="session")
def fitted() -> dict:
    return fit(read_anchor_files(ANCHOR_FILES))


@pytest.fixture(scope="session")
def fitted_text(fitted) -> str:
    return dumps(fitted)


@pytest.fixture()
def curves(fitted) -> dict:
    return copy.deepcopy(fitted)


@pytest.fixture(scope="session")
def published_only() -> dict:
    """The fit of the published rows alone (what curves.json was before the project's own runs)."""
    return fit(read_anchors(ANCHORS))
