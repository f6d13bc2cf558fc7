"""`python -m measure` entry (guarded: the sampler's spawned process re-imports this module)."""

if __name__ == "__main__":
    import sys

    from measure.codes import get
    from measure.packages import shadowed

    clash = shadowed()
    if clash:
        print(f"{clash}\n  hint: {get('QJ418').hint}", file=sys.stderr)
        sys.exit(2)
    from measure.cli import main

    main()
