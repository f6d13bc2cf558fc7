"""`python -m measure` entry (guarded: the sampler's spawned process re-imports this module)."""

if __name__ == "__main__":
    from measure.packages import exit_if_shadowed

    exit_if_shadowed()  # before anything imports schema, curves or bot
    from measure.cli import main

    main()
