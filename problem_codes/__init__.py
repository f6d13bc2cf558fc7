"""The one problem-code table: every package's registry gathered, above all five (none of them imports it)."""

from __future__ import annotations

from assess import codes as assess_codes
from bot import codes as bot_codes
from curves import codes as curves_codes
from gallery import codes as gallery_codes
from measure import codes as measure_codes
from schema import codes as schema_codes
from schema import records as record_codes
from schema.codes import Code

# Each package owns one range of codes in its own `codes` module (docs/CONTRACTS.md, problem codes).
REGISTRIES = {
    "schema.codes": schema_codes,
    "schema.records": record_codes,
    "curves.codes": curves_codes,
    "measure.codes": measure_codes,
    "bot.codes": bot_codes,
    "assess.codes": assess_codes,
    "gallery.codes": gallery_codes,
}


def all_codes() -> tuple[Code, ...]:
    """Every registered code of the project, sorted by code, each as a schema.codes.Code."""
    gathered = [Code(c.code, c.severity, c.title, c.hint)
                for module in REGISTRIES.values() for c in module.codes()]
    return tuple(sorted(gathered, key=lambda c: c.code))
