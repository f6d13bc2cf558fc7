"""Report builders and paths for the curves tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.reports import exact_deltas, paired_trials
from tests.support.reports import v2_report as factory_report

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
ANCHORS = ROOT / "reference" / "anchors.csv"
MEASURED_HOPPER = ROOT / "reference" / "anchors-quantjoule-hopper.csv"
ANCHOR_FILES = (ANCHORS, MEASURED_HOPPER)
CURVES = ROOT / "reference" / "curves.json"


def v2_report(
    arch: str = "ada",
    precision: str = "NF4",
    params_b: float = 2.0,
    obs: float = 10.0,
    n_pairs: int = 10,
    sd: float = 3.0,
    **over,
) -> dict:
    """A measured v2 report from the one factory (tests/support/reports.py): `n_pairs` paired blocks whose
    dE% has mean `obs` and sd `sd`, then dotted fields replaced (`workload__weights="random-init"`)."""
    fp16_mj = 30.0
    deltas = exact_deltas(obs, sd, n_pairs)
    per_token = [{"FP16": fp16_mj, precision: fp16_mj * (1 + d / 100)} for d in deltas]
    trials = paired_trials(per_token, [["FP16", precision]] * n_pairs, 256, 150.0)
    report = factory_report(trials, precision, gpu="test card", arch=arch, power_limit_w=None, model_name="m",
                            model_id="m", params_b=params_b, weights="pretrained")
    for dotted, value in over.items():
        *head, last = dotted.split("__")
        node = report
        for key in head:
            node = node.setdefault(key, {})
        node[last] = value
    return report


def load(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))
