"""Loss-event grouping (tcpmodels.fit.events) on synthetic retransmission patterns with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpmodels.fit import group_loss_events


def test_retransmissions_within_one_rtt_form_one_event():
    # three bursts: 3 retransmissions within 40 ms, 1 alone, 2 within 90 ms; RTT 100 ms
    t = [1.00, 1.01, 1.04, 2.00, 3.00, 3.09]
    assert group_loss_events(t, 0.1).tolist() == [0, 0, 0, 1, 2, 2]


def test_a_retransmission_one_rtt_later_opens_a_new_event():
    # the event covers [t0, t0 + RTT): at exactly t0 + RTT a new one begins
    assert group_loss_events([0.0, 0.1, 0.15], 0.1).tolist() == [0, 1, 1]


def test_recovery_point_extends_the_event():
    # a timeout's back-off retransmissions come 0.4 and 1.2 s later, before the recovery point is acked
    t = [0.0, 0.4, 1.2, 3.0]
    close = [1.5, 1.5, 1.5, 3.05]
    assert group_loss_events(t, 0.05, close_time_s=close).tolist() == [0, 0, 0, 1]
    assert group_loss_events(t, 0.05).tolist() == [0, 1, 2, 3]  # without it, every one counts


def test_per_retransmission_rtt_uses_the_opening_one():
    # the event opened at t=0 with RTT 0.5 absorbs t=0.3 even though that one's own RTT is short
    assert group_loss_events([0.0, 0.3, 0.6], [0.5, 0.01, 0.01]).tolist() == [0, 0, 1]


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match=r"rtt_s \[s\] must be in \(0, inf\]"):
        group_loss_events([0.0, 1.0], 0.0)
    with pytest.raises(ValueError, match="non-decreasing"):
        group_loss_events([1.0, 0.5], 0.1)
    with pytest.raises(ValueError, match="NaN"):
        group_loss_events([0.0, np.nan], 0.1)
    assert group_loss_events([], 0.1).tolist() == []


@settings(derandomize=True, max_examples=60, deadline=None)
@given(gaps=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=60), rtt=st.floats(0.001, 1.0))
def test_events_never_outnumber_retransmissions_and_match_a_direct_count(gaps, rtt):
    t = np.cumsum(gaps)
    ev = group_loss_events(t, rtt)
    assert ev[0] == 0 and np.all(np.diff(ev) >= 0) and np.all(np.diff(ev) <= 1)
    assert ev.max() + 1 <= len(t)
    # independent count: walk the times, opening an event whenever one RTT has passed since the last opening
    opened, starts = 0, []
    for x in t:
        if not starts or x >= starts[-1] + rtt:
            starts.append(x)
            opened += 1
    assert ev.max() + 1 == opened


@pytest.mark.parametrize("name", ["events", "trace", "cubic", "throughput", "lia"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"tcpmodels.fit.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
