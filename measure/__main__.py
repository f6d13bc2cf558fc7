"""`python -m measure` entry (guarded: the sampler's spawned process re-imports this module)."""

from measure.cli import main

if __name__ == "__main__":
    main()
