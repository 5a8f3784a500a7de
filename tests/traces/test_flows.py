"""Flow measurements on hand-built conversations whose answers are known by construction."""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pandas as pd
import pytest
from pass_equality import assert_captures_equal
from trace_fixtures import CAPTURES, FIXTURES, load
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import (
    TraceWarning,
    annotate,
    bytes_in_flight,
    classify_short_flows,
    flows,
    link_rate_series,
    read_pcap,
    rtt_samples,
    throughput_series,
    time_sequence,
)
from tcpmodels.traces.connpass import compiled_pass_available

T0 = 1_700_000_000_000_000_000
SYN, ACK, FIN, PSH = 0x02, 0x10, 0x01, 0x08
C, S = ("10.0.0.1", 40000), ("10.0.0.2", 80)


@pytest.fixture(autouse=True)
def _compiled_pass_equals_the_reference(tmp_path):
    """Every capture this module's tests write: the compiled pass gives the reference's columns."""
    yield
    if compiled_pass_available():
        assert_captures_equal(tmp_path)


def ts_opt(tsval, tsecr):
    return b"\x01\x01\x08\x0a" + struct.pack("!II", tsval, tsecr)


def conversation(tmp_path, events, name="c.pcap"):
    """events: (time µs, 'c' or 's', seq, ack, flags, payload, tsval, tsecr)."""
    frames = []
    ip_id = {"c": 100, "s": 5000}
    for t_us, who, seq, ack, flags, payload, tsval, tsecr in events:
        (src, sport), (dst, dport) = (C, S) if who == "c" else (S, C)
        ip_id[who] += 1
        frames.append((T0 + t_us * 1000, ether(ipv4(tcp(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags,
                                                          payload=payload, options=ts_opt(tsval, tsecr)),
                                                      src=src, dst=dst, ip_id=ip_id[who]))))
    path = tmp_path / name
    write_pcap(path, frames, nano=True)
    return read_pcap(path)


ISN_C, ISN_S = 1_000, 900_000


def transfer(loss_second=False):
    """Client sends 4 x 1000 bytes; RTT 10 ms; optionally the 2nd segment is lost and retransmitted by RTO."""
    c, s = ISN_C + 1, ISN_S + 1
    ev = [(0, "c", ISN_C, 0, SYN, 0, 1, 0), (10_000, "s", ISN_S, c, SYN | ACK, 0, 50, 1),
          (10_100, "c", c, s, ACK, 0, 11, 50)]
    for i in range(4):  # data at 20, 21, 22, 23 ms
        ev.append((20_000 + 1000 * i, "c", c + 1000 * i, s, ACK | PSH, 1000, 20 + i, 50))
    if not loss_second:
        for i in range(4):  # ACKs 10 ms later
            ev.append((30_000 + 1000 * i, "s", s, c + 1000 * (i + 1), ACK, 0, 60 + i, 20 + i))
        done = 33_000
    else:
        ev.append((30_000, "s", s, c + 1000, ACK, 0, 60, 20))  # acks segment 1
        ev.append((32_000, "s", s, c + 1000, ACK, 0, 61, 20))  # dup ACK (segment 3 arrived)
        ev.append((33_000, "s", s, c + 1000, ACK, 0, 62, 20))  # dup ACK (segment 4 arrived)
        ev.append((250_000, "c", c + 1000, s, ACK, 1000, 250, 62))  # RTO retransmission of segment 2
        ev.append((260_000, "s", s, c + 4000, ACK, 0, 270, 250))  # cumulative ACK of everything
        done = 260_000
    ev += [(done + 100, "c", c + 4000, s, FIN | ACK, 0, 300, 63), (done + 10_100, "s", s, c + 4001, FIN | ACK, 0, 310, 300),
           (done + 10_200, "c", c + 4001, s + 1, ACK, 0, 301, 310)]
    return ev, done


def test_clean_transfer(tmp_path):
    ev, done = transfer()
    p = conversation(tmp_path, ev)
    ft = flows(p)
    assert len(ft) == 2
    f = ft.iloc[0]
    assert f["is_initiator"] and f["syn_seen"] and f["fin_seen"] and not f["rst_seen"]
    assert (f["packets"], f["data_packets"], f["payload_bytes"], f["unique_payload_bytes"]) == (8, 4, 4000, 4000)
    assert (f["retransmitted_packets"], f["duplicate_acks"], f["loss_rate"]) == (0, 0, 0.0)
    assert f["fct_s"] == pytest.approx(done * 1e-6, abs=1e-9)  # SYN at 0 to the ACK of the last byte
    s = rtt_samples(p)
    seq = s[(s["method"] == "seq") & (s["flow_id"] == 0)]["rtt_s"].to_numpy()
    # SYN -> SYN/ACK, and each data segment -> its ACK: 10 ms each; the FIN -> FIN/ACK: 10 ms
    np.testing.assert_allclose(seq, [0.010] * 6, atol=1e-9)
    assert f["rtt_samples"] == 6 and f["rtt_median_s"] == pytest.approx(0.010)
    ts = s[(s["method"] == "ts") & (s["flow_id"] == 0)]["rtt_s"].to_numpy()
    np.testing.assert_allclose(ts, [0.010] * len(ts), atol=1e-9)
    assert f["throughput_bps"] == pytest.approx(8 * 4000 / f["duration_s"])


def test_loss_karn_dupacks_and_fct(tmp_path):
    ev, done = transfer(loss_second=True)
    p = conversation(tmp_path, ev)
    an = annotate(p)
    f = flows(p, an).iloc[0]
    assert f["retransmitted_packets"] == 1 and f["retransmitted_bytes"] == 1000
    assert f["loss_rate"] == pytest.approx(1 / 5)
    rev = flows(p, an).iloc[1]
    assert rev["duplicate_acks"] == 2
    assert f["fct_s"] == pytest.approx(done * 1e-6)
    s = rtt_samples(p, an)
    seq = s[(s["method"] == "seq") & (s["flow_id"] == 0)]
    # samples: SYN, segment 1 and FIN (10 ms each). The ACK at 260 ms acknowledges segment 4 exactly, but
    # it answers the retransmission of segment 2 sent after segment 4: ambiguous (Karn), no 237 ms sample.
    np.testing.assert_allclose(seq["rtt_s"], [0.010, 0.010, 0.010], atol=1e-9)
    # the timestamp echo resolves it: tsecr 250 names the retransmission, 10 ms before the ACK
    ts = s[(s["method"] == "ts") & (s["flow_id"] == 0)]
    assert np.isclose(ts["rtt_s"], 0.010).all() and len(ts) >= 3


def test_port_reuse_starts_a_new_connection(tmp_path):
    ev1, _ = transfer()
    ev2 = [(t + 1_000_000, w, sq + 77_777 if w == "c" else sq, ak + (77_777 if w == "s" and ak else 0), fl, pl, tv, te)
           for t, w, sq, ak, fl, pl, tv, te in ev1]
    p = conversation(tmp_path, ev1 + ev2)
    ft = flows(p)
    assert sorted(ft["connection_id"].unique()) == [0, 1]
    assert (ft[ft["is_initiator"]]["unique_payload_bytes"] == 4000).all()


def test_series(tmp_path):
    ev, _ = transfer()
    p = conversation(tmp_path, ev)
    an = annotate(p)
    thr = throughput_series(p, 0, 0.010, an)
    assert thr.sum() * 0.010 / 8 == 4000  # all payload, in bit/s per bin
    fl = bytes_in_flight(p, 0, an)
    assert fl.max() == 4000 and fl.iloc[-1] == 0
    link = link_rate_series(p, 0.005)
    assert link.sum() * 0.005 / 8 == p["wire_bytes"].sum()
    tsq = time_sequence(p, 0, an)
    assert tsq["segments"]["seq_bytes"].tolist() == [1, 1001, 2001, 3001]
    with pytest.raises(ValueError, match=r"bin_s \[s\] must be in \(0"):
        throughput_series(p, 0, 0.0, an)


@pytest.mark.parametrize("name", FIXTURES)
def test_chunked_reading_is_identical(name):
    """Bounded-memory chunks (here 64 KB) give exactly the table read in one piece."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        small = read_pcap(CAPTURES / name, chunk_bytes=64 << 10)
    pd.testing.assert_frame_equal(small.astype({"src_addr": str, "dst_addr": str}),
                                  load(name).astype({"src_addr": str, "dst_addr": str}))


def test_patterns_on_short_flows():
    p = load("short_flows_any.pcap.gz")
    c = classify_short_flows(p)
    assert len(c) == 40 and not (c["pattern"] == "Incomplete").any()
    lossy = c["retransmitted_packets"] > 0
    assert set(c.loc[~lossy, "pattern"]) <= {"Full window", "Intensive flow"}
    assert set(c.loc[lossy, "pattern"]) <= {"Delay with loss", "Extreme delay"}
    assert (c.loc[c["pattern"] == "Full window", "fct_s"] <= 0.030).all()
    # thresholds are parameters: a looser full-window bound moves the fastest loss-free flow
    fastest = c[~lossy]["fct_s"].idxmin()
    c2 = classify_short_flows(p, full_window_max_fct_s=c.loc[fastest, "fct_s"] + 1e-6)
    assert c2.loc[fastest, "pattern"] == "Full window"
    # an RTO before any data was acknowledged is "Extreme delay" even with a high FCT threshold
    c3 = classify_short_flows(p, extreme_min_fct_s=10.0)
    early = c3["acked_before_timeout_bytes"] < 1460
    assert early.any() and (c3.loc[early, "pattern"] == "Extreme delay").all()
    assert (c3.loc[lossy & ~early, "pattern"] == "Delay with loss").all()
    with pytest.raises(ValueError, match="extreme_min_fct_s"):
        classify_short_flows(p, extreme_min_fct_s=0.01)


def _classes(an):
    return {k: an.index[an[k]].tolist() for k in ("is_retransmission", "is_fast_retransmission",
                                                   "is_spurious_retransmission", "is_out_of_order")}


def test_rst_without_payload_does_not_seed_the_retransmission_mark(tmp_path):
    """A RST with seq 0 from the server before its SYN/ACK (a stale reply): the SYN/ACK is no retransmission."""
    c, s = ISN_C + 1, 3_000_000_000  # the server's ISN is more than 2^31 from the RST's seq 0
    ev = [(0, "c", ISN_C, 0, SYN, 0, 1, 0), (1_000, "s", 0, c, 0x04 | ACK, 0, 2, 1),
          (10_000, "s", s, c, SYN | ACK, 0, 3, 1), (10_100, "c", c, s + 1, ACK, 0, 4, 3),
          (20_000, "c", c, s + 1, ACK | PSH, 1000, 5, 3), (30_000, "s", s + 1, c + 1000, ACK, 0, 6, 5),
          (40_000, "s", s + 1, c + 1000, ACK | PSH, 500, 7, 5),
          (300_000, "s", s + 1, c + 1000, ACK | PSH, 500, 8, 5)]  # RTO retransmission of the server's data
    p = conversation(tmp_path, ev)
    an = annotate(p)
    assert _classes(an)["is_retransmission"] == [7]  # not the SYN/ACK (row 2); the late resend still counts
    assert flows(p, an).loc[1, "retransmitted_packets"] == 1


def test_retransmission_classes_as_wireshark_names_them(tmp_path):
    """Fast (3 dup ACKs, 5 ms later), spurious (already acked), out-of-order (right after the mark) and plain."""
    c, s = ISN_C + 1, ISN_S + 1
    ev = [(0, "c", ISN_C, 0, SYN, 0, 1, 0), (10_000, "s", ISN_S, c, SYN | ACK, 0, 2, 1),
          (20_000, "c", c, s, ACK, 0, 3, 2)]  # initial RTT 20 ms
    for i in range(5):  # segments 0..4 at 30..34 ms; segment 1 lost
        ev.append((30_000 + 1000 * i, "c", c + 1000 * i, s, ACK, 1000, 10 + i, 2))
    ev += [(40_000, "s", s, c + 1000, ACK, 0, 20, 10), (42_000, "s", s, c + 1000, ACK, 0, 21, 10),
           (43_000, "s", s, c + 1000, ACK, 0, 22, 10), (44_000, "s", s, c + 1000, ACK, 0, 23, 10),
           (49_000, "c", c + 1000, s, ACK, 1000, 30, 2),  # row 12: fast retransmission of segment 1
           (60_000, "s", s, c + 5000, ACK, 0, 24, 30),
           (70_000, "c", c, s, ACK, 1000, 40, 24),  # row 14: segment 0 again, acked long ago: spurious
           (100_000, "c", c + 5000, s, ACK, 1000, 50, 24), (100_500, "c", c + 6000, s, ACK, 1000, 51, 24),
           (101_000, "c", c + 5000, s, ACK, 1000, 52, 24),  # row 17: 1 ms after the mark: out-of-order
           (400_000, "c", c + 6000, s, ACK, 1000, 53, 24)]  # row 18: much later, unacked: plain (RTO)
    p = conversation(tmp_path, ev)
    an = annotate(p)
    cl = _classes(an)
    assert cl == {"is_retransmission": [12, 14, 17, 18], "is_fast_retransmission": [12],
                  "is_spurious_retransmission": [14], "is_out_of_order": [17]}
    f = flows(p, an).loc[0]
    assert (f["retransmitted_packets"], f["fast_retransmissions"], f["spurious_retransmissions"],
            f["out_of_order_packets"]) == (4, 1, 1, 1)
