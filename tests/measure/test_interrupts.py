"""What Ctrl-C and SIGTERM do during `measure run` (measure.cli.progress.Interrupts), in this process."""

import signal

import pytest

from measure.cli.progress import STILL_WRITING, Interrupts


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_first_interrupts_the_second_is_noted_and_ignored_the_third_abandons(sig, capfd):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with Interrupts() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(sig)
        assert interrupts.count == 1 and not interrupts.abandoned
        signal.raise_signal(signal.SIGINT if sig == signal.SIGTERM else signal.SIGTERM)  # either kind counts
        assert interrupts.count == 2 and not interrupts.abandoned  # no exception: the writing goes on
        assert capfd.readouterr().err.encode() == STILL_WRITING
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(sig)
        assert interrupts.abandoned
    assert {s: signal.getsignal(s) for s in before} == before  # the handlers it replaced are back
