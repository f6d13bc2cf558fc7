"""Energy math on synthetic traces with known integrals."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from measure.core.energy import disagreement_pct, dynamic_j, integrate_j, power_at, reconstruct_per_token_j


def test_constant_power_window_inside_samples():
    t = [0.0, 0.01 * 1, 0.02, 0.03, 0.04]
    p = [100.0] * 5
    assert integrate_j(t, p, 0.005, 0.035) == pytest.approx(3.0)


def test_linear_ramp_is_exact_with_interpolated_edges():
    # P(t) = 100 + 50 t sampled every 0.1 s; the integral over [0.05, 0.93] is exact for a linear trace.
    t = [i / 10 for i in range(11)]
    p = [100 + 50 * x for x in t]
    a, b = 0.05, 0.93
    exact = 100 * (b - a) + 25 * (b * b - a * a)
    assert integrate_j(t, p, a, b) == pytest.approx(exact, rel=1e-12)


def test_window_between_two_samples():
    t, p = [0.0, 1.0], [100.0, 200.0]
    # inside one interval: trapezoid of the interpolated edges, 0.2 s around P = 150 W
    assert integrate_j(t, p, 0.4, 0.6) == pytest.approx(30.0)


def test_window_edges_clip_not_whole_intervals():
    t, p = [0.0, 1.0, 2.0], [0.0, 100.0, 0.0]
    # a naive sum of whole intervals touching [0.5, 1.5] would give 100 J; the clipped integral is 75 J
    assert integrate_j(t, p, 0.5, 1.5) == pytest.approx(75.0)


def test_beyond_trace_holds_edge_value():
    t, p = [1.0, 2.0], [100.0, 100.0]
    assert integrate_j(t, p, 0.5, 2.5) == pytest.approx(200.0)
    assert power_at(t, p, 5.0) == 100.0


def test_bad_windows_raise():
    with pytest.raises(ValueError):
        integrate_j([0.0, 1.0], [1.0, 1.0], 1.0, 0.5)
    with pytest.raises(ValueError):
        integrate_j([0.0, 1.0], [1.0], 0.0, 0.5)
    assert integrate_j([0.0, 1.0], [1.0, 1.0], 0.3, 0.3) == 0.0


@given(hs.floats(0.0, 0.98), hs.floats(0.001, 0.5), hs.floats(50, 700), hs.floats(-100, 100))
def test_any_window_of_a_linear_trace(a, width, p0, slope):
    t = [i / 100 for i in range(201)]
    p = [p0 + slope * x for x in t]
    b = a + width
    exact = p0 * (b - a) + slope / 2 * (b * b - a * a)
    assert math.isclose(integrate_j(t, p, a, b), exact, rel_tol=1e-9, abs_tol=1e-9)


def test_sine_trace_converges_at_100_hz():
    f = 3.0
    t = [i / 100 for i in range(501)]
    p = [150 + 20 * math.sin(2 * math.pi * f * x) for x in t]
    a, b = 0.123, 4.567
    exact = 150 * (b - a) - 20 / (2 * math.pi * f) * (
        math.cos(2 * math.pi * f * b) - math.cos(2 * math.pi * f * a)
    )
    assert integrate_j(t, p, a, b) == pytest.approx(exact, rel=1e-4)


def test_disagreement_and_dynamic():
    assert disagreement_pct(100.0, 101.0) == pytest.approx(1.0)
    assert disagreement_pct(0.0, 1.0) == math.inf
    assert dynamic_j(130.0, 122.0, 1.0) == pytest.approx(8.0)


def test_reconstruction_recovers_a_long_generation():
    prefill, step = 0.5, 0.2
    e32 = prefill + 31 * step
    e256 = prefill + 255 * step
    assert reconstruct_per_token_j(e32, 32, prefill, 256) == pytest.approx(e256 / 256)
    assert reconstruct_per_token_j(e256, 256, 99.0, 256) == pytest.approx(e256 / 256)
    with pytest.raises(ValueError):
        reconstruct_per_token_j(1.0, 1, 0.1, 256)


def test_stepped_counter_is_interpolated_onto_short_windows():
    from measure.core.energy import counter_steps, counter_window_j

    # an NVML-like counter: 130 W, updated every 100 ms, read every 50 ms (NaN on the other ticks)
    times = [i / 100 for i in range(301)]
    counter = [130.0 * (int(t * 10 + 1e-9) / 10) if i % 5 == 0 else float("nan") for i, t in enumerate(times)]
    steps = counter_steps(times, counter)
    # naive edge reads would be off by up to one 13 J step on each edge of this 0.54 s window
    got = counter_window_j(steps, 0.33, 0.87)
    assert got == pytest.approx(130.0 * 0.54, rel=0.01)
    assert counter_window_j(steps, -1.0, 0.5) is None  # outside the readings: no guess


def test_power_steps_place_each_refreshed_value_where_it_changed():
    from measure.core.energy import power_steps

    times = [i / 100 + 0.003 for i in range(200)]  # read every 10 ms, 3 ms after the refresh grid
    power = [100.0 if t < 1.0 else 150.0 for t in times]
    ts, ps = power_steps(times, power)
    assert ts[0] == times[0] and ts[-1] == times[-1]  # the trace still spans the record
    assert ps == [100.0, 150.0, 150.0]
    assert ts[1] == pytest.approx(0.5 * (times[99] + times[100]))
    # a source that changes on every reading keeps every sample, moved to the middle of its bracket
    ramp = [float(i) for i in range(10)]
    rts, rps = power_steps(times[:10], ramp)
    assert rps[:-1] == ramp and len(rts) == 11
    # NaN readings are skipped, never integrated
    assert power_steps([0.0, 0.01, 0.02], [5.0, float("nan"), 6.0])[1] == [5.0, 6.0, 6.0]
    assert power_steps([], []) == ([], [])
