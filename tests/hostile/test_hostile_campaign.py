"""A fast slice of the randomized fault campaign (benchmarks/fault_campaign.py runs the full one)."""

from tests.support.hostile import campaign


def test_campaign_slice_every_submission_in_one_state_and_reruns_converge(
    curves_data, base_gallery, monkeypatch
):
    # Timeouts cost a real second each; they are covered call by call in test_hostile_github.
    monkeypatch.setattr(campaign, "KINDS", tuple(k for k in campaign.KINDS if k != "timeout"))
    out = campaign.run(16, 0.2, 3, curves_data, base_gallery)
    assert out["failed_share"] > 0.12 and len(out["faults"]) >= 5
    for tally in out["passes"]:
        assert tally["none"] == 0 and tally["several"] == 0, tally
        assert sum(tally[s] for s in campaign.STATES) == 16
    last = out["passes"][-1]
    assert last["retry"] == 0 and last["pr-open"] == out["expected"]["pr-open"]
    assert last["refused"] == out["expected"]["refused"] and out["expected"]["refused"] > 0
