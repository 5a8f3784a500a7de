"""The limitation diagnosis (tcpmodels.traces.limits): known answers on synthetic transfers, the testbed's labelled
captures, every shipped and third-party capture, bad input, the summary sentences and the band."""

from __future__ import annotations

import json
import re
import struct
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from limits_synth import transfer

from tcpmodels.traces import TraceWarning, annotate, read_pcap
from tcpmodels.traces.limits import (
    CLASSES,
    NETWORK_CLASSES,
    capture_position,
    congestion_signature,
    diagnose,
    limit_intervals,
    limit_summary,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "limits"
SHIPPED = sorted((ROOT / "data" / "captures").glob("*.pcap*"))
EXTERNAL = sorted(p for d in sorted((ROOT.parent / "shared" / "data").glob("external_captures*")) if d.is_dir()
                  for p in d.iterdir() if ".pcap" in p.name)
FIXTURE_INFO = {f["scenario"]: f for f in json.loads((FIXTURES / "limits_fixtures.json").read_text())}


def _shares(iv: pd.DataFrame) -> pd.Series:
    return iv["limit"].value_counts(normalize=True)


# ------------------------------------------------------------------ known answers on synthetic transfers
@pytest.mark.parametrize("view", ["sender", "middle", "receiver"])
@pytest.mark.parametrize("kw, expected", [
    (dict(window_bytes=10_000), "receiver_window"),
    (dict(burst=5, every_s=0.3), "application"),
    (dict(cwnd=20, rtx_every=40), "congestion"),
    (dict(gap_s=1e-3, cwnd=200), "bandwidth"),
], ids=["receiver_window", "application", "congestion", "bandwidth"])
def test_synthetic_transfer_gets_its_class(view, kw, expected):
    packets = transfer(view=0.5 if view == "middle" else view, **kw)
    assert capture_position(packets).loc[0, "position"] == view
    iv = limit_intervals(packets)
    assert set(iv["flow_id"]) == {0}
    assert _shares(iv).get(expected, 0) >= 0.9, _shares(iv)


@pytest.mark.parametrize("view", ["sender", "receiver"])
def test_a_download_is_diagnosed_in_the_responders_direction(view):
    # B opened the connection, A (the responder) sends: flow 1 carries the data
    packets = transfer(view=view, sender_opens=False, window_bytes=10_000, duration_s=1.5)
    where = capture_position(packets)
    assert where.loc[1, "position"] == view and where.loc[1, "window_scale"] == 7
    iv = limit_intervals(packets)
    assert set(iv["flow_id"]) == {1} and _shares(iv).get("receiver_window", 0) >= 0.9


def test_receiver_window_sentence_names_the_window_rtt_and_cap():
    # 10 000 B window (9.8 KiB) at 50 ms: 8 * 10 000 / 0.05 = 1.6 Mbit/s
    iv = limit_intervals(transfer(window_bytes=10_000))
    row = limit_summary(iv).loc[0]
    assert row["limit"] == "receiver_window" and row["share_receiver_window"] > 0.9
    m = re.search(r"(\d+) KiB advertised at ([\d.]+) ms RTT caps it at ([\d.]+) Mbit/s", row["sentence"])
    assert m, row["sentence"]
    # the RTT sample includes the 0.1 ms the bottleneck spends per segment of the window: within 3 %
    assert int(m[1]) == 10 and float(m[2]) == pytest.approx(50, rel=0.03) and float(m[3]) == pytest.approx(1.6, rel=0.03)
    assert not row["mathis_meaningful"] and "do not apply" in row["model"]


def test_congestion_limited_flow_is_where_mathis_applies():
    row = limit_summary(limit_intervals(transfer(cwnd=20, rtx_every=40))).loc[0]
    assert row["limit"] == "congestion" and row["mathis_meaningful"]
    assert "Mathis/PFTK apply" in row["sentence"]


def test_diagnose_gives_the_three_tables_for_analyze():
    d = diagnose(transfer(cwnd=20, rtx_every=40, duration_s=1.0))
    assert set(d.to_dict()) == {"intervals", "signature", "summary"}
    row = d.summary.loc[0]
    assert row["position"] == "sender" and row["limit"] == "congestion" and row["congestion"] in (
        "self-induced", "external", "undecided")
    assert row["congestion"] in row["sentence"] or row["congestion"] == "undecided"


def test_shares_sum_to_one_and_cover_every_class():
    s = limit_summary(limit_intervals(transfer(burst=5, every_s=0.3)))
    shares = s[[f"share_{c}" for c in CLASSES]]
    assert np.allclose(shares.sum(axis=1), 1.0)


def test_interval_length_and_origin():
    packets = transfer(window_bytes=10_000, duration_s=2.0)
    iv = limit_intervals(packets, interval_s=0.25, origin_s=float(packets["timestamp_s"].iloc[0]))
    assert np.allclose(iv["end_s"] - iv["start_s"], 0.25)
    default = limit_intervals(packets)  # max(0.1 s, 2 x 50 ms)
    assert np.allclose(default["end_s"] - default["start_s"], 0.1)


def test_self_induced_and_external_signatures():
    # the queue builds during slow start (RTT 50 -> 200 ms) versus a flat RTT
    grows = congestion_signature(transfer(gap_s=1e-3, cwnd=200, rtx_every=2000)).loc[0]
    flat = congestion_signature(transfer(rtt_s=0.2, cwnd=20, rtx_every=400)).loc[0]
    assert grows["congestion"] == "self-induced" and grows["norm_diff"] > 0.61
    assert flat["congestion"] == "external" and flat["norm_diff"] < 0.1


# ------------------------------------------------------------------ bad input: undecided with the reason
def _only(iv):
    assert len(iv) == 1 and iv["limit"].iat[0] == "undecided"
    return iv["reason"].iat[0]


SMALL = dict(duration_s=0.5, cwnd=20)


def test_one_direction_missing_is_undecided():
    assert "one direction missing" in _only(limit_intervals(transfer(acks=False, **SMALL)))


def test_too_short_is_undecided():
    packets = transfer(window_bytes=10_000)
    first_data = int(np.flatnonzero(packets["payload_bytes"].to_numpy() > 0)[0])
    assert "too short" in _only(limit_intervals(packets.iloc[:first_data + 1]))


def test_no_handshake_is_undecided():
    reason = _only(limit_intervals(transfer(handshake=False, **SMALL)))
    assert "capture point unknown" in reason
    sig = congestion_signature(transfer(handshake=False, **SMALL))
    assert sig["congestion"].iat[0] == "undecided" and "capture point unknown" in sig["reason"].iat[0]


def test_empty_table_and_bad_parameters():
    packets = transfer(**SMALL)
    assert limit_intervals(packets.iloc[:0]).empty
    assert limit_summary(limit_intervals(packets.iloc[:0])).empty
    with pytest.raises(ValueError, match="interval_s"):
        limit_intervals(packets, interval_s=0.0)
    with pytest.raises(ValueError, match="min_data_packets"):
        limit_intervals(packets, min_data_packets=0)


# ------------------------------------------------------------------ the testbed's labelled captures (tuning seed 0)
def _fixture(scenario):
    info = FIXTURE_INFO[scenario]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(FIXTURES / info["file"])
    an = annotate(packets)
    ports = packets["src_port"].to_numpy()
    data = packets["payload_bytes"].to_numpy() > 0
    fids = sorted({int(an["flow_id"].to_numpy()[(ports == p) & data][0]) for p in info["ports"]})
    return packets, an, fids, info


@pytest.mark.parametrize("scenario, expected", [
    ("rwnd", "receiver_window"), ("app", "application"), ("self", "bandwidth"), ("loss", "congestion"),
    ("cross", "congestion"),
])
def test_testbed_capture_gets_its_class(scenario, expected):
    packets, an, fids, info = _fixture(scenario)
    iv = limit_intervals(packets, an, flow_ids=fids)
    assert (iv["position"] == "sender").all()
    assert _shares(iv).idxmax() == expected, _shares(iv)
    # and what the kernel said most over the same time is the matching class of its own
    kernel = max(info["kernel_labels"], key=info["kernel_labels"].get)
    assert kernel == {"receiver_window": "receiver_window", "application": "application"}.get(expected, "network")


def test_testbed_receiver_window_flow_sentence():
    packets, an, fids, info = _fixture("rwnd")
    row = limit_summary(limit_intervals(packets, an, flow_ids=fids)).loc[fids[0]]
    assert row["share_receiver_window"] >= 0.9
    assert "limited by the receiver's window" in row["sentence"]


def test_testbed_short_transfers_are_opportunity_limited():
    packets, an, fids, _ = _fixture("short")
    assert len(fids) == 8
    s = limit_summary(limit_intervals(packets, an, flow_ids=fids))
    assert (s["limit"] == "opportunity").all()


def test_testbed_send_buffer_run_is_network_limited_as_the_kernel_says():
    # SO_SNDBUF 8 kB on a 25 kB path: the kernel counted busy (network) time, and so does the diagnosis
    packets, an, fids, info = _fixture("sndbuf")
    assert max(info["kernel_labels"], key=info["kernel_labels"].get) == "network"
    assert _shares(limit_intervals(packets, an, flow_ids=fids)).reindex(list(NETWORK_CLASSES)).sum() >= 0.8


@pytest.mark.parametrize("scenario, expected", [("self", "self-induced"), ("cross", "external")])
def test_testbed_congestion_signature(scenario, expected):
    packets, an, fids, _ = _fixture(scenario)
    sig = congestion_signature(packets, an, flow_ids=fids)
    decided = sig[sig["congestion"] != "undecided"]
    assert len(decided) and (decided["congestion"] == expected).all(), sig


# ------------------------------------------------------------------ every shipped and third-party capture
def _check_capture(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        packets = read_pcap(path)
    an = annotate(packets)
    iv = limit_intervals(packets, an)
    sig = congestion_signature(packets, an)
    summary = limit_summary(iv, sig)
    with_data = set(np.unique(an["flow_id"].to_numpy()[packets["payload_bytes"].to_numpy() > 0]).tolist())
    assert set(iv["flow_id"]) == with_data, "every flow with payload is classified or undecided"
    assert iv["limit"].isin(CLASSES).all()
    undecided = iv[iv["limit"] == "undecided"]
    assert undecided["reason"].str.len().gt(0).all(), "an undecided interval without a reason"
    assert set(summary.index) == with_data and summary["sentence"].str.len().gt(0).all()
    assert set(sig.index) == with_data and sig["congestion"].isin(["self-induced", "external", "undecided"]).all()


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_capture(path):
    _check_capture(path)


@pytest.mark.skipif(not EXTERNAL, reason="third-party corpus ../shared/data/external_captures* absent")
@pytest.mark.parametrize("path", EXTERNAL, ids=[p.name for p in EXTERNAL])
def test_every_third_party_capture(path):
    _check_capture(path)


# ------------------------------------------------------------------ the band
def test_band_under_time_sequence(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from tcpmodels.traces.limits_plot import CLASS_COLOURS, plot_limit_band, plot_time_sequence_with_limits

    packets = transfer(burst=5, every_s=0.3)
    fig = plot_time_sequence_with_limits(packets, 0)
    top, band = fig.axes[:2]
    assert band.get_legend().get_texts()[0].get_text().startswith("application")
    assert set(CLASS_COLOURS) == set(CLASSES)
    with pytest.raises(ValueError, match="flow_id 7"):
        plot_limit_band(limit_intervals(packets), 7)
    import matplotlib.pyplot as plt

    plt.close(fig)  # pyplot's figure, not left open for the tests that check nothing is


# ------------------------------------------------------------------ the campaign's ground truth
def test_tcp_info_chrono_fields_parse():
    from tcpmodels.experiments.limits.endpoint import _TCP_INFO, parse_tcp_info_chrono

    raw = bytearray(_TCP_INFO.size)
    # include/uapi/linux/tcp.h: tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited follow tcpi_delivery_rate
    offset = struct.calcsize("=8B24I4Q6IQ")
    assert offset == 168
    struct.pack_into("=QQQ", raw, offset, 2_000_000, 500_000, 250_000)
    raw[7] = 1  # tcpi_delivery_rate_app_limited, bit 0 of the byte after tcpi_snd/rcv_wscale
    info = parse_tcp_info_chrono(bytes(raw))
    assert info["busy_s"] == 2.0 and info["rwnd_limited_s"] == 0.5 and info["sndbuf_limited_s"] == 0.25
    assert info["app_limited"] is True


def test_kernel_labels_of_known_counters():
    from tcpmodels.experiments.limits.score import kernel_intervals

    t = 1_000.0 + 0.01 * np.arange(41)
    # 0-0.2 s window-limited, 0.2-0.3 s busy (network), 0.3-0.4 s idle
    busy = np.interp(t - 1000, [0, 0.3, 0.4], [0, 0.3, 0.3])
    rwnd = np.interp(t - 1000, [0, 0.2, 0.4], [0, 0.2, 0.2])
    s = pd.DataFrame({"t_unix_s": t, "busy_s": busy, "rwnd_limited_s": rwnd, "sndbuf_limited_s": 0.0,
                      "app_limited": False, "delivery_rate_bps": 1e6, "app_in_send_s": 0.0})
    k = kernel_intervals(s)
    assert k["kernel"].tolist() == ["receiver_window", "receiver_window", "network", "application"]
    assert np.allclose(k["rwnd_s"], [0.1, 0.1, 0, 0])
