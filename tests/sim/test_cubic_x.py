"""TcpCubicX (CUBIC with P3's x(RTT)-scaled K, compiled at run time) against ns-3's own TcpCubic."""

from __future__ import annotations

import pytest

from tcpmodels.sim.cc import check_cubic_x_params
from tcpmodels.sim.config import Dumbbell, Link, Sender, TcpOptions
from tcpmodels.sweep import run_sim, sweep


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"reading": "square"}, "reading must be one of"),
        ({"x_table": [[0.01, 0]]}, r"x_table rows must be \[rtt_s, x\] with both > 0"),
        ({"x_table": [[0.01, 2]], "x_power_law": {}}, "not both"),
        ({"x_power_law": {"k": 1}}, "x_power_law keys are"),
        ({"beta_cubic": 1.0}, r"beta_cubic \[-\] must be in \(0, 1\)"),
        ({"gamma": 1}, "unknown TcpCubicX cc_params"),
    ],
)
def test_bad_params(params, match):
    with pytest.raises(ValueError, match=match):
        check_cubic_x_params(params)


def test_cc_params_only_for_cubic_x():
    with pytest.raises(ValueError, match="cc_params apply only to variant 'TcpCubicX'"):
        Sender(access=Link(rate_bps=1e9, delay_s=0), variant="TcpCubic", cc_params={"reading": "divide"})


LOSS = 0.002


def config(variant: str, params: dict | None = None) -> Dumbbell:
    return Dumbbell(
        senders=[Sender(access=Link(rate_bps=1e9, delay_s=0.001), variant=variant, cc_params=params or {})],
        bottleneck=Link(rate_bps=100e6, delay_s=0.019, queue_packets=1000),
        duration_s=20.0,
        loss_rate=LOSS,
        seed=1,
        tcp=TcpOptions(cubic_hystart=False),
        queue_bin_s=0.5,
        trace_cwnd=True,
    )


CASES = {
    "ns3_cubic": config("TcpCubic"),
    "x_none": config("TcpCubicX"),
    "x_multiply": config("TcpCubicX", {"reading": "multiply"}),
    "x_divide": config("TcpCubicX", {"reading": "divide"}),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    res = sweep(
        list(CASES.values()),
        run_sim,
        cache_dir=tmp_path_factory.mktemp("cubicx"),
        n_workers=2,
        processes=False,
        progress=False,
    )
    return dict(zip(CASES, res.values))


def _recoveries(r) -> int:
    c = r.cwnd
    return int(((c["what"] == "cong_state") & (c["value"] == 3)).sum())


@pytest.mark.sim
def test_x_equal_one_matches_ns3_cubic(runs):
    """Same loss pattern (seed), same algorithm: throughput within 10 %, loss-recovery count within 15 %."""
    a = runs["ns3_cubic"].throughput_bps(5.0).iloc[0]
    b = runs["x_none"].throughput_bps(5.0).iloc[0]
    assert abs(b / a - 1) <= 0.10, (a, b)
    ra, rb = _recoveries(runs["ns3_cubic"]), _recoveries(runs["x_none"])
    assert abs(rb / ra - 1) <= 0.15, (ra, rb)


@pytest.mark.sim
def test_readings_move_throughput_in_opposite_directions(runs):
    """At 40 ms, x = 10 (40)^(-1/3) = 2.9: dividing shortens K (faster recovery), multiplying lengthens it."""
    thr = {k: r.throughput_bps(5.0).iloc[0] for k, r in runs.items()}
    assert thr["x_divide"] > thr["x_none"] * 1.02, thr
    assert thr["x_multiply"] < thr["x_none"] * 1.01, thr
