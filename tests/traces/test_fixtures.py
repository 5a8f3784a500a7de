"""Real captures made with the kernel's TCP (data/captures/): native vs tshark, and vs ground truth at capture time."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from trace_fixtures import CAPTURES, FIXTURES, load, needs_tshark, provenance

from tcpmodels.traces import COLUMNS
from tcpmodels.traces.annotation import annotate
from tcpmodels.traces.engines import run_tshark_fields
from tcpmodels.traces.flows import flows
from tcpmodels.traces.mptcp import mptcp_subflows, mptcp_token
from tcpmodels.traces.rtt import rtt_samples

ANALYSIS = ["tcp.analysis.retransmission", "tcp.analysis.out_of_order", "tcp.analysis.duplicate_ack",
            "tcp.analysis.ack_rtt", "tcp.srcport", "frame.number"]


def tshark_analysis(name: str) -> pd.DataFrame:
    raw = run_tshark_fields(CAPTURES / name, ANALYSIS, extra_prefs=["tcp.analyze_sequence_numbers:TRUE"])
    raw.columns = ["retrans", "ooo", "dupack", "ack_rtt", "srcport", "frame"]
    return raw[raw["srcport"] != ""]


def test_fixtures_are_small_and_documented():
    total = sum((CAPTURES / f).stat().st_size for f in FIXTURES)
    assert total < 3_000_000
    for f in FIXTURES:
        prov = provenance(f)
        assert prov["fixture"] == f
        assert prov["sha256"] == hashlib.sha256((CAPTURES / f).read_bytes()).hexdigest()
        assert "0 packets dropped by kernel" in prov["capture_messages"] or "/0 (" in prov["capture_messages"]


@needs_tshark
@pytest.mark.parametrize("name", FIXTURES)
def test_native_equals_tshark_exactly(name):
    nat, tsh = load(name), load(name, "tshark")
    assert [str(t) for t in nat.dtypes] == [str(t) for t in tsh.dtypes] == list(COLUMNS.values())
    assert len(nat) == len(tsh) > 1000
    a, b = nat.attrs["accounting"], tsh.attrs["accounting"]
    assert (a.records_read, a.tcp_parsed, a.skipped) == (b.records_read, b.tcp_parsed, b.skipped)
    assert a.records_read == a.tcp_parsed + sum(a.skipped.values())
    # every column, every row: timestamps to the nanosecond, payload sums, options, MPTCP fields
    for col in COLUMNS:
        x, y = nat[col], tsh[col]
        if col == "timestamp_s":
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-6)
        elif col.endswith("_addr"):
            assert (x.astype(str).to_numpy() == y.astype(str).to_numpy()).all(), col
        else:
            assert (x.to_numpy() == y.to_numpy()).all(), col
    assert nat["payload_bytes"].sum() == tsh["payload_bytes"].sum()


def test_nanosecond_fixture_keeps_nanoseconds():
    ts = load("reno_bulk.pcap.gz")["timestamp_ns"]
    assert (ts % 1000 != 0).mean() > 0.9  # a µs file would have all zeros here
    assert (load("cubic_bulk.pcap.gz")["timestamp_ns"] % 1000 == 0).all()


@pytest.mark.parametrize("name", ["cubic_bulk.pcap.gz", "reno_bulk.pcap.gz"])
def test_bulk_ground_truth(name):
    """Bytes and retransmissions against the sender's own record (application bytes, TCP_INFO)."""
    prov = provenance(name)
    ft = flows(load(name))
    fwd = ft[ft["is_initiator"] & (ft["data_packets"] > 100)].iloc[0]
    assert fwd["unique_payload_bytes"] == prov["sender"]["bytes_sent_by_application"]
    assert fwd["retransmitted_packets"] == prov["sender"]["tcp_info"]["total_retrans"]
    assert fwd["retransmitted_bytes"] == prov["sender"]["tcp_info"]["bytes_retrans"]
    assert fwd["payload_bytes"] == prov["sender"]["tcp_info"]["bytes_sent"]
    assert fwd["duplicate_packets"] == 0
    # FCT: SYN to the ACK of the last byte, inside the application's connect..echo interval
    assert 0.5 * prov["sender"]["duration_s"] < fwd["fct_s"] <= prov["sender"]["duration_s"]
    # wire bytes of the sender's direction against the interface counter (the rest is ARP)
    tx = prov["interface_counters_delta"]["client tmfx-c0"]["tx_bytes"]
    assert 0 <= tx - fwd["wire_bytes"] <= 2 * 60


def test_short_flows_ground_truth():
    prov = provenance("short_flows_any.pcap.gz")
    ft = flows(load("short_flows_any.pcap.gz"))
    fwd = ft[ft["is_initiator"]].set_index("src_port")
    assert len(fwd) == len(prov["flows"]) == 40
    for rec in prov["flows"]:
        row = fwd.loc[int(rec["local"].split(":")[1])]
        assert row["unique_payload_bytes"] == rec["bytes_sent_by_application"]
        assert row["retransmitted_packets"] == rec["tcp_info"]["total_retrans"], rec["local"]
    assert fwd["fct_s"].notna().all()


@needs_tshark
@pytest.mark.parametrize("name", FIXTURES)
def test_retransmissions_match_tshark(name):
    """Our retransmissions = tshark's tcp.analysis.retransmission + tcp.analysis.out_of_order.

    Documented difference: Wireshark calls a segment below the highest sequence
    number "out-of-order" instead of "retransmission" when it arrives within its
    out-of-order threshold (the first RTT, here ~0.1 ms) of the previous segment;
    captured at the sender there is no reordering, so these are retransmissions
    (the kernel's TCP_INFO agrees, see the ground-truth tests). Per fixture:
    reno_bulk 34 + 6, cubic_bulk 36 + 0, mptcp_2path 553 + 2, short_flows_any 248 + 46.
    """
    raw = tshark_analysis(name)
    an = annotate(load(name))
    ours = set(load(name)["frame_index"][an["is_retransmission"]] + 1)
    theirs = set(raw["frame"][(raw["retrans"] != "") | (raw["ooo"] != "")].astype(int))
    assert ours == theirs
    assert len(ours) > 30


@needs_tshark
@pytest.mark.parametrize("name", FIXTURES)
def test_duplicate_acks_match_tshark(name):
    raw = tshark_analysis(name)
    an = annotate(load(name))
    ours = set(load(name)["frame_index"][an["is_dup_ack"]] + 1)
    theirs = set(raw["frame"][raw["dupack"] != ""].astype(int))
    if name.startswith("mptcp"):
        # Known difference, not yet explained: Wireshark 4.0 flags 5 more pure ACKs of the MPTCP capture
        # (275 vs 270) as duplicate ACKs; every one we flag it flags too. Bounded here at 2%.
        assert ours <= theirs and len(theirs - ours) <= 0.02 * len(theirs)
    else:
        assert ours == theirs


@needs_tshark
@pytest.mark.parametrize("name", ["cubic_bulk.pcap.gz", "reno_bulk.pcap.gz"])
def test_rtt_samples_match_tshark_distribution(name):
    raw = tshark_analysis(name)
    theirs = pd.to_numeric(raw["ack_rtt"][raw["srcport"] == "5201"], errors="coerce").dropna().to_numpy()
    s = rtt_samples(load(name))
    ours = s[(s["method"] == "seq") & (s["flow_id"] == 0)]["rtt_s"].to_numpy()
    # Wireshark samples every ACK; we also drop, by Karn's rule, samples from segments that were retransmitted
    # and ACKs that may answer a retransmission: at most a few per retransmission
    n_rtx = int(flows(load(name))["retransmitted_packets"].sum())
    assert 0 <= len(theirs) - len(ours) <= 0.01 * len(theirs) + n_rtx
    q = [0.1, 0.25, 0.5, 0.75, 0.9]
    np.testing.assert_allclose(np.quantile(ours, q), np.quantile(theirs, q), rtol=0.03)
    # the timestamp-echo samples see the same path, 1 ms clock granularity aside
    ts = s[(s["method"] == "ts") & (s["flow_id"] == 0)]["rtt_s"].to_numpy()
    assert abs(np.median(ts) - np.median(ours)) < 1.5e-3


def test_mptcp_subflows_against_interface_counters():
    name = "mptcp_2path.pcapng.gz"
    prov = provenance(name)
    p = load(name)
    sub = mptcp_subflows(p)
    assert len(sub) == 2 and (sub["mptcp_id"] == 0).all()
    first, join = sub.iloc[0], sub.iloc[1]
    assert first["token"] == join["token"] == mptcp_token(first["responder_key"])
    assert first["client_addr"] == "10.201.1.1" and join["client_addr"] == "10.201.2.1"
    # both paths really carried data
    assert (sub["forward_share"] > 0.3).all() and abs(sub["forward_share"].sum() - 1) < 1e-12
    assert 0 < join["join_delay_s"] < 1.0
    # per-subflow wire bytes (client -> server) against the server interface counters; the rest is one ARP
    counters = prov["interface_counters_delta"]
    for row, dev in ((first, "path1 server tmfx-s1"), (join, "path2 server tmfx-s2")):
        rx = counters[dev]["rx_bytes"]
        assert 0 <= rx - row["forward_wire_bytes"] <= 2 * 60, dev
        # and the capture was taken on that interface
        iface = p.loc[p["src_port"] == row["client_port"], "interface_id"].unique()
        assert len(iface) == 1
    # data level: DSS mappings cover the application's bytes plus DATA_FIN
    assert first["data_level_bytes"] == prov["sender"]["bytes_sent_by_application"] + 1
