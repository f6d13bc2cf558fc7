"""Helpers of the gallery tests: the repository root, a hostile handle, a repository folder of records."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOSTILE = "Ada | <script>alert(1)</script> [x](javascript:alert(2)) `tick` @octocat #1 **b** _i_ ![i](x)"


def write_repo(root: Path, records: list[dict], curves: dict) -> Path:
    """A repository-shaped folder: reference/curves.json and one file per record under replications/."""
    from schema.records import record_id

    (root / "reference").mkdir(parents=True, exist_ok=True)
    (root / "reference" / "curves.json").write_text(
        json.dumps(curves, indent=1, sort_keys=True), encoding="utf-8"
    )
    for record in records:
        path = root / "replications" / f"{record_id(record)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return root
