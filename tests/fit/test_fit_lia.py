"""LIA counterfactual: known equilibria and the committed two-path MPTCP capture."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.fit import flow_estimates
from tcpmodels.fit.lia import lia_counterfactual, lia_series
from tcpmodels.traces import TraceWarning, annotate, mptcp_subflows, read_pcap

CAPTURES = Path(__file__).resolve().parents[2] / "data" / "captures"


def _subflows(p, rtt, rate=(5e6, 5e6)):
    return pd.DataFrame({"loss_event_rate": p, "rtt_mean_s": rtt, "throughput_bps": rate, "mss_bytes": 1448.0})


def test_identical_paths_split_one_tcp_share():
    out = lia_counterfactual(_subflows([0.01, 0.01], [0.05, 0.05]))
    paths = out.iloc[:2]
    # each subflow gets half of one TCP's window; the total equals one TCP on one path
    assert np.allclose(paths["lia_window_segments"], paths["uncoupled_window_segments"] / 2)
    assert out.loc["total", "lia_rate_bps"] == pytest.approx(out.loc["total", "best_single_path_rate_bps"])
    assert out.loc["total", "lia_alpha"] == pytest.approx(0.5)
    assert out.loc["total", "uncoupled_rate_bps"] == pytest.approx(2 * out.loc["total", "lia_rate_bps"])
    assert out.loc["total", "throughput_bps"] == 10e6


def test_lia_moves_traffic_to_the_less_lossy_path():
    out = lia_counterfactual(_subflows([0.005, 0.02], [0.02, 0.06]))
    w = out["lia_window_segments"].iloc[:2].to_numpy()
    assert w[0] / w[1] == pytest.approx(4.0)  # w_r proportional to 1/p_r while both are coupled
    assert out.loc["total", "lia_rate_bps"] == pytest.approx(out.loc["total", "best_single_path_rate_bps"])
    assert (out["lia_rate_bps"].iloc[:2] <= out["uncoupled_rate_bps"].iloc[:2] * (1 + 1e-9)).all()


def test_bad_input():
    with pytest.raises(ValueError, match="loss_event_rate > 0"):
        lia_counterfactual(_subflows([0.0, 0.01], [0.05, 0.05]))


def test_lia_series_alpha():
    s = pd.DataFrame({"t_s": [0, 0, 1, 1], "subflow": [0, 1, 0, 1], "cwnd_segments": [10, 10, 20, 10],
                      "srtt_s": [0.05, 0.05, 0.05, 0.1]})
    out = lia_series(s)
    assert out["alpha"].iloc[0] == pytest.approx(0.5)  # two identical subflows
    # alpha = w_total * max(w/rtt^2) / (sum w/rtt)^2 = 30 * 8000 / 500^2
    assert out["alpha"].iloc[1] == pytest.approx(30 * 20 / 0.05**2 / (20 / 0.05 + 10 / 0.1) ** 2)
    assert (out["lia_increase_0"] <= out["reno_increase_0"]).all()


def test_committed_mptcp_capture_subflow_estimates():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(CAPTURES / "mptcp_2path.pcapng.gz")
    an = annotate(packets)
    subs = mptcp_subflows(packets, annotated=an)
    assert len(subs) >= 2
    ests = []
    for iface in (0, 1):
        sel = (packets["interface_id"] == iface).to_numpy()
        est = flow_estimates(packets[sel].reset_index(drop=True))
        assert est.loss_events <= est.retransmissions
        assert 0 < est.rtt_mean_s < 0.1 and est.mss_bytes > 1000
        ests.append(est)
    # each path is a 10 Mbit/s tbf: neither subflow can exceed it
    assert all(e.throughput_bps < 10e6 for e in ests)
