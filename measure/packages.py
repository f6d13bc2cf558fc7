"""Which copy of quantjoule's top-level packages Python imports: a same-named package earlier on sys.path
(PyPI has `schema`, `curves`, `gallery` and `measure`) would be imported instead of ours; say so (QJ418)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOP_LEVEL = ("assess", "bot", "curves", "gallery", "measure", "problem_codes", "schema")
# QJ418's hint (measure/codes.py registers it): here, so it is printed before any package is imported
SHADOWED_HINT = (
    "Install quantjoule in its own virtual environment (python -m venv), or remove the other package or "
    f"PYTHONPATH entry of that name; quantjoule's top-level packages are {', '.join(TOP_LEVEL[:-1])} and "
    f"{TOP_LEVEL[-1]}."
)


def _home(name: str) -> Path | None:
    """The folder that holds package `name` as Python would import it (None when it cannot be found)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin).resolve()
    # ours are regular packages (name/__init__.py); a lone module name.py is someone else's
    return origin.parent.parent if origin.name == "__init__.py" else origin.parent / f"({origin.name})"


def shadowed() -> str | None:
    """A one-line QJ418 message naming the first top-level package that is not quantjoule's, else None."""
    ours = Path(__file__).resolve().parent.parent
    for name in TOP_LEVEL:
        home = _home(name)
        if home != ours:
            where = "nowhere" if home is None else str(home)
            return (f"QJ418: `import {name}` finds {where}, not quantjoule's copy in {ours}: a package "
                    "of the same name comes first on sys.path")
    return None


def exit_if_shadowed() -> None:
    """Exit 2 with QJ418 and its hint when a top-level package is not quantjoule's. Called first by the
    entry points: past it, importing across packages would end in a traceback instead."""
    clash = shadowed()
    if clash:
        print(f"{clash}\n  hint: {SHADOWED_HINT}", file=sys.stderr)
        sys.exit(2)
