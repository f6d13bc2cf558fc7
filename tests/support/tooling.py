"""Finding the command-line tools the tests drive (zizmor, actionlint, node, chromedriver, chromium).

A tool installed by pip lives in the running interpreter's scripts folder, which is not on PATH in a venv
that was never activated (`venv/bin/python -m pytest`), so that folder is searched before PATH. A test
that needs a missing tool is skipped on a developer's machine but fails under CI=true, where a skip would
hide a missing install step.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest


def tool_dirs() -> list[Path]:
    """The running interpreter's own script folders: sysconfig's, then the interpreter's (venv/bin)."""
    found = []
    for d in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        if d and Path(d) not in found:
            found.append(Path(d))
    return found


def find_tool(name: str, *fallbacks: Path) -> str | None:
    """The path of executable `name`: the interpreter's environment first, then PATH, then `fallbacks`."""
    for folder in tool_dirs():
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    return next((str(p) for p in fallbacks if p.is_file() and os.access(p, os.X_OK)), None)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_tool(name: str, hint: str, *fallbacks: Path) -> str:
    """`find_tool(name)`, or skip the test (fail it under CI=true) saying how to install the tool."""
    path = find_tool(name, *fallbacks)
    if path:
        return path
    message = f"{name} is not installed ({hint})"
    if in_ci():
        pytest.fail(f"{message}; under CI=true a missing tool fails instead of skipping", pytrace=False)
    pytest.skip(message)
