"""flow_estimates on synthetic traces with known p, T0, b, RTT, W_max, and on the committed kernel captures."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from fit_synth import MSS, simulate

from tcpmodels.fit import flow_estimates, retransmissions
from tcpmodels.traces import TraceWarning, flows, read_pcap, rtt_samples

CAPTURES = Path(__file__).resolve().parents[2] / "data" / "captures"


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)  # the fixtures hold two ARP frames each
        return read_pcap(path)


@pytest.fixture(scope="module")
def timeout_trace(tmp_path_factory):
    """Loss of segment 5 (the 'slow-start' event), a fast retransmit at 100, a whole window lost at 200-209."""
    path = tmp_path_factory.mktemp("synth") / "timeout.pcap"
    known = simulate(path, drop=[5, 100] + list(range(200, 210)), n_segments=400, rto_s=0.4, rtt_s=0.05)
    return read_pcap(path), known


def test_synthetic_loss_events_timeouts_and_t0(timeout_trace):
    packets, known = timeout_trace
    assert known["fast_retransmits"] == 2 and known["timeouts"] == 1
    est = flow_estimates(packets)
    assert len(est.events) == 3  # 12 retransmissions, 3 congestion signals
    assert est.events["retransmissions"].tolist() == [1, 1, 10]
    assert est.events["is_timeout"].tolist() == [False, False, True]
    assert est.loss_events == 2 and est.timeouts == 1  # the first event opens the steady window
    assert est.t0_s == pytest.approx(0.4, abs=1e-3) and est.t0_observed == 1
    assert est.loss_event_rate == pytest.approx(2 / est.data_segments)
    assert est.retransmission_rate == pytest.approx(11 / est.data_segments)
    assert est.loss_event_rate < est.retransmission_rate
    assert est.mss_bytes == MSS
    assert est.rtt_median_s == pytest.approx(0.05, abs=1e-4)
    assert est.w_max_bytes == known["w_max_bytes"]
    assert est.w_max_segments == pytest.approx(known["w_max_bytes"] / MSS)
    # an ACK every second segment; delayed-ACK timer expiries (1 segment) pull below 2,
    # the cumulative jumps that end a recovery (many segments) push above
    assert 1.9 <= est.b <= 2.1
    assert est.flight_mean_segments == pytest.approx(10, abs=1.0)  # the fixed window


def test_failed_fast_recovery_is_a_timeout_event(tmp_path):
    # 200 and 201 lost: fast retransmit of 200, then 201 times out (go-back-N) - one event, a timeout
    known = simulate(tmp_path / "t.pcap", drop=[5, 200, 201], n_segments=400, rto_s=0.3)
    est = flow_estimates(read_pcap(tmp_path / "t.pcap"))
    assert known["timeouts"] == 1
    assert est.loss_events == 1 and est.timeouts == 1
    assert est.t0_s == pytest.approx(0.3, abs=2e-3)


def test_no_loss_gives_zero_rate(tmp_path):
    simulate(tmp_path / "clean.pcap", n_segments=200)
    est = flow_estimates(read_pcap(tmp_path / "clean.pcap"))
    assert est.loss_events == 0 and est.loss_event_rate == 0 and np.isnan(est.t0_s)
    assert est.window_start_s == 0.0
    assert est.t0_fallback_s == pytest.approx(est.rtt_median_s + 0.2)


def test_bad_input():
    with pytest.raises(ValueError, match="empty"):
        flow_estimates(read_pcap_empty())
    packets = _read(CAPTURES / "reno_bulk.pcap.gz")
    with pytest.raises(ValueError, match="flow_id 99 has no packets"):
        flow_estimates(packets, flow_id=99)


def read_pcap_empty():
    import pandas as pd

    from tcpmodels.traces import COLUMNS

    return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})


@pytest.mark.parametrize("name", ["reno_bulk", "cubic_bulk"])
def test_committed_kernel_captures(name):
    packets = _read(CAPTURES / f"{name}.pcap.gz")
    prov = json.loads((CAPTURES / f"{name}.json").read_text())
    fl = flows(packets)
    est = flow_estimates(packets)
    row = fl.loc[est.flow_id]
    # loss events group retransmissions: never more events than retransmitted segments
    assert 1 <= est.loss_events <= est.retransmissions <= row["retransmitted_packets"]
    assert len(est.events) <= row["retransmitted_packets"]
    assert est.loss_event_rate <= est.retransmission_rate
    # the kernel counted this many retransmitted segments; the capture sees them all (captured before the tbf)
    assert row["retransmitted_packets"] == prov["sender"]["tcp_info"]["total_retrans"]
    # RTT within the range of the flow's own samples
    rs = rtt_samples(packets)
    rs = rs[(rs["flow_id"] == est.flow_id) & (rs["method"] == "seq")]["rtt_s"]
    assert rs.min() <= est.rtt_median_s <= est.rtt_mean_s * 3 and est.rtt_mean_s <= rs.max()
    assert est.mss_bytes == prov["sender"]["tcp_info"]["snd_mss"] == 1448
    assert 1.0 <= est.b <= 3.0
    assert est.w_max_segments >= est.flight_mean_segments > 1
    # goodput below the 20 Mbit/s tbf's payload share, and close to it (bulk flow through a bottleneck)
    assert 0.8 * 20e6 * 1448 / 1514 <= est.throughput_bps <= 1.02 * 20e6 * 1448 / 1514
    assert est.timeouts == 0 and np.isnan(est.t0_s)


def test_retransmission_table_marks_heads_and_groups(timeout_trace):
    packets, _ = timeout_trace
    rt = retransmissions(packets)
    assert len(rt) == 12
    assert rt["event"].tolist() == [0, 1] + [2] * 10
    assert rt["is_timeout"].sum() == 1 and rt.loc[rt["is_timeout"], "gap_s"].iloc[0] == pytest.approx(0.4, abs=1e-3)
    assert rt["is_head"].iloc[:3].all() and not rt["is_head"].iloc[3:].any()


def test_trim_capture_keeps_the_first_seconds(tmp_path):
    from tcpmodels.traces.trim import trim_capture

    simulate(tmp_path / "full.pcap", n_segments=400)
    info = trim_capture(tmp_path / "full.pcap", tmp_path / "cut.pcap.gz", seconds=1.0)
    full, cut = read_pcap(tmp_path / "full.pcap"), read_pcap(tmp_path / "cut.pcap.gz")
    assert info["packets_in_source"] == len(full) and info["packets_kept"] == len(cut) < len(full)
    assert cut["timestamp_ns"].max() - cut["timestamp_ns"].min() <= 1_000_000_000
    # nanosecond timestamps survive the rewrite
    assert (cut["timestamp_ns"].to_numpy() == full["timestamp_ns"].to_numpy()[: len(cut)]).all()
