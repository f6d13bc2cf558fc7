"""Fixtures of the bot tests: curves, a base gallery, a checkout directory, the fake GitHub server."""

import pytest

from bot.forge import Retrier
from bot.forge_github import GitHubForge
from tests.support.fake_github import FakeGitHub
from tests.support.session import base_gallery, curves_data, write_tree


@pytest.fixture
def checkout(tmp_path, base_gallery):
    """A base-branch checkout: the committed gallery, no records yet."""
    return write_tree(tmp_path / "checkout", base_gallery)


@pytest.fixture
def fake_gh(base_gallery):
    with FakeGitHub() as fake:
        fake.state.commit_files(dict(base_gallery), "gallery", "main")
        yield fake


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def retrier(sleeps):
    return Retrier(attempts=6, sleep=sleeps.append)


@pytest.fixture
def forge(fake_gh):
    return GitHubForge(
        fake_gh.slug,
        "write-token",
        api_url=fake_gh.base_url,
        throttle=False,
        timeout_s=2,
        backoff_s=0.5,
        clock=lambda: 1_800_000_000.0,
    )
