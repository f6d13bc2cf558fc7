"""`measure run` put together: the live protocol loop, the run over its side effects, the reports."""
