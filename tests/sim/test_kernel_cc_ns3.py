"""The ns-3 counterpart of the kernel_cc shared-link experiment (ns-3 LIA beside kernel LIA):
one short simulation, both variants, rates read per connection."""

from __future__ import annotations

import pytest

from tcpmodels.experiments.kernel_coupled_cc import ns3_shared_link

pytestmark = pytest.mark.sim


def test_ns3_shared_link_one_simulation():
    """4 s at 0.5 % loss, 20 ms: every flow is loss-limited near Mathis' 1.22 MSS / (RTT sqrt(p))
    = 10 Mbit/s, far below the 200 Mbit/s link; two uncoupled subflows get more than the coupled pair."""
    rows = ns3_shared_link(reps=1, duration_s=4.0, warmup_s=1.0, log=lambda row: None)
    assert list(rows.variant) == ["ns3_lia", "ns3_uncoupled"] and set(rows.seed) == {1}
    assert rows.tcp_rate_bps.between(3e6, 30e6).all() and rows.rate_bps.between(3e6, 60e6).all()
    assert (rows.ratio_mptcp_tcp == rows.rate_bps / rows.tcp_rate_bps).all()
    by = rows.set_index("variant").rate_bps
    assert by["ns3_uncoupled"] > by["ns3_lia"]
