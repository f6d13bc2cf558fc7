"""Tools are found in the running interpreter's environment without PATH, and a missing one fails under CI."""

import os
import subprocess
import sys

import pytest

from tests.support.tooling import find_tool, require_tool, tool_dirs


def test_pip_installed_tools_are_found_without_path(monkeypatch):
    monkeypatch.setenv("PATH", "")
    for name in ("zizmor", "actionlint"):
        path = find_tool(name)
        assert path is not None, f"{name} should be in {tool_dirs()}"
        assert subprocess.run([path, "--version"], capture_output=True, timeout=60).returncode == 0


def test_a_missing_tool_skips_locally(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        require_tool("quantjoule-no-such-tool", "nothing installs it")


def test_a_missing_tool_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_tool("quantjoule-no-such-tool", "nothing installs it")


def test_under_ci_a_skip_for_a_missing_tool_fails_the_run(tmp_path):
    # the real thing, end to end: a pytest run whose one test needs a missing tool
    (tmp_path / "test_needs_tool.py").write_text(
        "from tests.support.tooling import require_tool\n\n"
        "def test_it():\n    require_tool('quantjoule-no-such-tool', 'nothing installs it')\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root}
    for ci, want in (("true", 1), ("", 0)):
        env["CI"] = ci
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
        )
        assert done.returncode == want, done.stdout[-2000:]
