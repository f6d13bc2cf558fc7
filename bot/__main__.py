import sys

from measure.codes import get
from measure.packages import shadowed

clash = shadowed()
if clash:
    print(f"{clash}\n  hint: {get('QJ418').hint}", file=sys.stderr)
    sys.exit(2)

from bot.cli import main  # noqa: E402  (after the check: a shadowed package would fail to import)

main()
