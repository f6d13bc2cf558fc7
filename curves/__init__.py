"""Reference crossover curves: fit, grade, render."""
