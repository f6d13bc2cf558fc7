"""The process sampler against the fake power source on the real clock."""

import contextlib
import functools
import time

import pytest

from measure.codes import MeasureError
from measure.core.energy import counter_steps, counter_window_j, integrate_j
from measure.power.fake import FakePowerSource, open_fake
from measure.power.sampler import ProcessSampler

TRACE = [(0.0, 100.0), (0.5, 200.0), (1.0, 100.0)]  # a triangle: 150 J per second on average


def _broken_factory():
    raise RuntimeError("no GPU")


def test_process_sampler_rate_and_energy():
    epoch = time.monotonic()
    truth = FakePowerSource(TRACE, epoch_s=epoch)
    sampler = ProcessSampler(functools.partial(open_fake, TRACE, epoch), rate_hz=100.0)
    sampler.start()
    try:
        time.sleep(0.3)
        t0, e0 = time.monotonic(), truth.energy_j()
        time.sleep(1.3)
        t1, e1 = time.monotonic(), truth.energy_j()
        sampler.wait_past(t1 + 0.2)
        t, p, e = sampler.trace()
    finally:
        sampler.stop()
    rate = sampler.achieved_rate_hz()
    assert 80.0 <= rate <= 101.0
    assert integrate_j(t, p, t0, t1) == pytest.approx(e1 - e0, rel=0.01)
    assert counter_window_j(counter_steps(t, e), t0, t1) == pytest.approx(e1 - e0, rel=0.01)


@contextlib.contextmanager
def _sampling():
    """A process sampler on the fake trace, started, and stopped however the test ends: (sampler, epoch)."""
    epoch = time.monotonic()
    sampler = ProcessSampler(functools.partial(open_fake, TRACE, epoch), rate_hz=100.0)
    sampler.start()
    try:
        yield sampler, epoch
    finally:
        sampler.stop()


def test_pause_stops_sampling_without_stopping_the_process():
    with _sampling() as (sampler, _epoch):
        time.sleep(0.2)
        sampler.pause()
        time.sleep(0.1)
        n = len(sampler.trace()[0])
        time.sleep(0.3)
        assert len(sampler.trace()[0]) == n
        sampler.resume()
        time.sleep(0.2)
        assert len(sampler.trace()[0]) > n


def test_a_source_that_cannot_open_is_a_coded_error():
    sampler = ProcessSampler(_broken_factory, rate_hz=50.0)
    with pytest.raises(MeasureError) as err:
        sampler.start()
    assert err.value.code == "QJ402"


def test_rate_must_be_positive():
    with pytest.raises(ValueError):
        ProcessSampler(_broken_factory, rate_hz=0)


class _TornColumn(list):
    """A cache column whose next extend raises as Ctrl-C would, after the column before it has grown."""

    armed = True

    def extend(self, values):
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        super().extend(values)


def test_a_pull_torn_by_an_interrupt_leaves_the_trace_aligned():
    with _sampling() as (sampler, epoch):
        time.sleep(0.2)
        sampler._cache_p = _TornColumn()
        with pytest.raises(KeyboardInterrupt):
            sampler.trace()
        assert len(sampler._cache_t) > len(sampler._cache_p)  # the tear this guards against
        time.sleep(0.2)
        t, p, e = sampler.trace()
    assert len(t) == len(p) == len(e) == sampler._count.value
    assert all(b > a for a, b in zip(t, t[1:], strict=False))
    # every power value still belongs to its own timestamp: the fake's power is a function of time
    def truth_w(ts: float) -> float:
        return FakePowerSource(TRACE, clock=lambda: ts, epoch_s=epoch).power_w()

    assert all(abs(pw - truth_w(ts)) < 5.0 for ts, pw in zip(t, p, strict=True))
