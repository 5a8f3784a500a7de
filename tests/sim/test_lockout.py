"""Regression guard for the ns-3 RTO lock-out (see :mod:`tcpmodels.sim`, "Known artifact").

Reno and CUBIC start together into a 10 Mbit/s, 50-packet drop-tail bottleneck.
With ns-3's default delayed ACKs (2 segments) the CUBIC flow measured 0.04 Mbit/s
with 36 RTOs in 10 s; with this package's default (1) neither flow may cycle
through RTOs, and each must get a real share of the link.
"""

from __future__ import annotations

import pytest

from tcpmodels.sim.config import Dumbbell, Link, Sender
from tcpmodels.sim.run import run_config

pytestmark = pytest.mark.sim

CONFIG = Dumbbell(
    senders=[
        Sender(access=Link(rate_bps=1e9, delay_s=0.001), variant="TcpLinuxReno"),
        Sender(access=Link(rate_bps=1e9, delay_s=0.005), variant="TcpCubic"),
    ],
    bottleneck=Link(rate_bps=10e6, delay_s=0.01, queue_packets=50),
    duration_s=10.0,
    trace_cwnd=True,
)


def test_no_flow_is_locked_out(tmp_path):
    r = run_config(CONFIG, tmp_path, timeout_s=600)
    c = r.cwnd
    rtos = c[(c["what"] == "cong_state") & (c["value"] == 4)].groupby("flow_index").size()
    assert rtos.reindex([0, 1], fill_value=0).max() <= 3, rtos.to_dict()
    thr = r.throughput_bps(2.0)
    assert thr.min() >= 0.1 * 10e6, thr.to_dict()
    assert thr.sum() >= 0.9 * 10e6 * 1448 / 1500
