"""The ACK clock of a sender's capture (tcpmodels.traces.ack_clock) and P1's loss-free split by it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import read_pcap
from tcpmodels.traces.patterns import ack_clock, classify_short_flows

T0 = 1_700_000_000_000_000_000
SYN, ACK, FIN = 0x02, 0x10, 0x01
C, S = ("10.0.0.1", 40000), ("10.0.0.2", 80)
MSS = 1448
RATE = 100e6


def flow(tmp_path, ack_spacing_us: float, *, name: str):
    """Handshake, 10 segments of 1448 bytes back to back at 100 Mbit/s, one ACK per two segments spaced
    ``ack_spacing_us`` apart (the link needs 2 x 121 us to send the two segments an ACK acknowledges), FIN."""
    c0, s0 = 1000, 900_000
    ev = [(0, "c", c0, 0, SYN, 0), (100, "s", s0, c0 + 1, SYN | ACK, 0), (200, "c", c0 + 1, s0 + 1, ACK, 0)]
    for i in range(10):
        ev.append((300 + i * 121, "c", c0 + 1 + i * MSS, s0 + 1, ACK, MSS))
    first_ack = 300 + 10 * 121 + 100
    for k in range(5):
        ev.append((first_ack + k * ack_spacing_us, "s", s0 + 1, c0 + 1 + (k + 1) * 2 * MSS, ACK, 0))
    end = first_ack + 5 * ack_spacing_us + 50
    ev += [(end, "c", c0 + 1 + 10 * MSS, s0 + 1, FIN | ACK, 0), (end + 100, "s", s0 + 1, c0 + 2 + 10 * MSS, FIN | ACK, 0),
           (end + 200, "c", c0 + 2 + 10 * MSS, s0 + 2, ACK, 0)]
    frames = []
    for i, (t_us, who, seq, ack, flags, payload) in enumerate(ev):
        (src, sport), (dst, dport) = (C, S) if who == "c" else (S, C)
        frames.append((T0 + int(t_us * 1000), ether(ipv4(tcp(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags,
                                                              payload=payload), src=src, dst=dst, ip_id=i + 1))))
    path = tmp_path / name
    write_pcap(path, frames, nano=True)
    return read_pcap(path)


def test_acks_at_the_links_pace_are_a_clock_and_bunched_acks_a_burst(tmp_path):
    paced = flow(tmp_path, 250.0, name="paced.pcap")  # 2 segments need 242 us at 100 Mbit/s
    bunched = flow(tmp_path, 20.0, name="bunched.pcap")
    a = ack_clock(paced, link_rate_bps=RATE)
    b = ack_clock(bunched, link_rate_bps=RATE)
    data_flow = a["acked_bytes"].idxmax()
    assert a.loc[data_flow, "advancing_acks"] == 6  # the handshake's ACK of the SYN/ACK direction aside
    assert a.loc[data_flow, "ack_burst_share"] == 0.0
    # the first ACK has no predecessor; the other four each acknowledge 2 x 1448 bytes within 20 us
    assert b.loc[data_flow, "ack_burst_share"] == pytest.approx(4 * 2 * MSS / (1 + 10 * MSS), rel=0.01)
    assert a.loc[data_flow, "flights"] == 1 and a.loc[data_flow, "largest_flight_bytes"] == 10 * MSS
    # the same capture read at a 10x slower link: 250 us is then far below 2 x 1.2 ms, a burst
    assert ack_clock(paced, link_rate_bps=RATE / 10).loc[data_flow, "ack_burst_share"] > 0.5


def test_loss_free_split_by_the_ack_clock_and_by_the_fct(tmp_path):
    paced = classify_short_flows(flow(tmp_path, 250.0, name="p.pcap"), split="ack_clock", link_rate_bps=RATE)
    bunched = classify_short_flows(flow(tmp_path, 20.0, name="b.pcap"), split="ack_clock", link_rate_bps=RATE)
    assert paced["pattern"].tolist() == ["Full window"] and bunched["pattern"].tolist() == ["Intensive flow"]
    assert paced["pattern_fct_rule"].tolist() == bunched["pattern_fct_rule"].tolist() == ["Full window"]  # both < 30 ms
    with pytest.raises(ValueError, match="link_rate_bps"):
        classify_short_flows(flow(tmp_path, 20.0, name="c.pcap"), split="ack_clock")
    with pytest.raises(ValueError, match="split"):
        classify_short_flows(flow(tmp_path, 20.0, name="d.pcap"), split="acks")
