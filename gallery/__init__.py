"""quantjoule gallery: deterministic plots, Markdown gallery and static site."""
