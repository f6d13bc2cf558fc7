"""The test suite. Every helper is imported by its full name from the repository root (`tests.support...`)."""
