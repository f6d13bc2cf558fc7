from measure.packages import exit_if_shadowed

exit_if_shadowed()

from bot.cli import main  # noqa: E402  (after the check: a shadowed package would fail to import)

main()
