"""Shared fixtures: the real fit of the committed anchors, computed once per session."""

from __future__ import annotations

import copy

import pytest

from curves.anchors import read_anchors
from curves.fit import dumps, fit
from tests.curves.helpers import ANCHORS


@pytest.fixture(scope="session")
def fitted() -> dict:
    return fit(read_anchors(ANCHORS))


@pytest.fixture(scope="session")
def fitted_text(fitted) -> str:
    return dumps(fitted)


@pytest.fixture()
def curves(fitted) -> dict:
    return copy.deepcopy(fitted)
