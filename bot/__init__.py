"""quantjoule bot: issue -> validate -> grade -> plan -> forge."""
