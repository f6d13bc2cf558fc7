"""`measure sweep`: the grid plan (pure) and its executor (one `measure run` process per cell)."""
