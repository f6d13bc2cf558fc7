"""Reference crossover curves: fit, grade, render."""

from curves.fit import fit
from curves.grade import Verdict, grade
from curves.render import render_markdown, render_text
from curves.store import load_curves, predict, resolve_curve

__all__ = [
    "Verdict",
    "fit",
    "grade",
    "load_curves",
    "predict",
    "render_markdown",
    "render_text",
    "resolve_curve",
]
