"""Property-based fuzzing of intake + validate + plan: no exception, coded problems, nothing that pings.

CI runs a modest number of examples; benchmarks/stress_fuzz.py runs 10,000 and more.
"""

from hypothesis import HealthCheck, given, settings

from tests.support.hostile.fuzz import check_one, issue_payload

SETTINGS = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(payload=issue_payload())
def test_fuzzed_issue_events_never_crash_intake_validate_or_plan(payload, curves_data, base_gallery):
    assert check_one(payload, curves_data, base_gallery) in ("ignored", "accepted", "partial", "refused")
