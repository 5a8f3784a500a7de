"""Each class of disagreement with Wireshark once found on real captures, on a capture this test writes.

The classes (issue 49's defects 1-7): a retransmission taken for a duplicate (no IP ID, identical bytes, far apart
in time); the initial RTT after a retransmitted SYN; a one-byte retransmission taken for a keep-alive; a pure ACK
whose seq ran ahead; encapsulations (MPLS, PPPoE with a compressed PPP protocol, NFLOG, IPv4 and IPv6 fragments);
bytes never captured; MPTCP fallback. Each answer is known by construction; where tshark is installed, its
analysis is compared too (corpus_check.compare_analysis: equal, or different only in an argued class).
"""

from __future__ import annotations

import shutil
import struct
import warnings

import numpy as np
import pytest
from corpus_check import compare_analysis, compare_tables, tshark_analysis
from pass_equality import assert_captures_equal
from trace_fixtures import needs_tshark
from trace_synth import ether, gre, ipv4, ipv6, tcp, write_pcap

from tcpmodels.traces import TraceWarning, annotate, flows, mptcp_subflows, read_pcap, rtt_samples
from tcpmodels.traces.connpass import compiled_pass_available
from tcpmodels.traces.fragments import Fragment, Reassembler

HAVE_TSHARK = shutil.which("tshark") is not None
T0 = 1_700_000_000_000_000_000
SYN, ACK, FIN, PSH = 0x02, 0x10, 0x01, 0x08
ISN_C, ISN_S = 1_000, 900_000


@pytest.fixture(autouse=True)
def _compiled_pass_equals_the_reference(tmp_path):
    """Every capture this module's tests write: the compiled pass gives the reference's columns."""
    yield
    if compiled_pass_available():
        assert_captures_equal(tmp_path)


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return read_pcap(path)


def write_conversation(tmp_path, events, *, v6=False, ip_ids=True, name="c.pcap", opts=b""):
    """events: (time µs, 'c' or 's', seq, ack, flags, payload bytes); IPv6 or IPv4 (IP ID 0 unless ip_ids)."""
    frames, ident = [], {"c": 100, "s": 5000}
    for t_us, who, seq, ack, flags, payload in events:
        sport, dport = (40000, 80) if who == "c" else (80, 40000)
        seg = tcp(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, payload=payload, options=opts)
        if v6:
            src, dst = ("fd00::1", "fd00::2") if who == "c" else ("fd00::2", "fd00::1")
            ip = ipv6(seg, src=src, dst=dst)
        else:
            src, dst = ("10.0.0.1", "10.0.0.2") if who == "c" else ("10.0.0.2", "10.0.0.1")
            ident[who] += 1
            ip = ipv4(seg, src=src, dst=dst, ip_id=ident[who] if ip_ids else 0)
        frames.append((T0 + t_us * 1000, ether(ip)))
    path = tmp_path / name
    write_pcap(path, frames, nano=True)
    return path


def handshake(rtt_us=10_000, syn_again_us=None):
    c, s = ISN_C + 1, ISN_S + 1
    ev = [(0, "c", ISN_C, 0, SYN, 0)]
    t = 0
    if syn_again_us is not None:
        t = syn_again_us
        ev.append((t, "c", ISN_C, 0, SYN, 0))
    ev += [(t + rtt_us // 2, "s", ISN_S, c, SYN | ACK, 0), (t + rtt_us, "c", c, s, ACK, 0)]
    return ev, c, s


def tshark_agrees(path, packets=None):
    """corpus_check's analysis comparison: {} when tshark agrees or differs only in an argued class."""
    packets = _read(path) if packets is None else packets
    return compare_analysis(packets, tshark_analysis(path))


# ---- 1: a retransmission is no duplicate; a copy a few µs later is


def test_an_rto_copy_is_a_retransmission_and_a_double_capture_a_duplicate(tmp_path):
    ev, c, s = handshake(rtt_us=10_000)
    ev += [(20_000, "c", c, s, ACK | PSH, 1000),
           (20_040, "c", c, s, ACK | PSH, 1000),  # the same frame captured again 40 µs later
           (1_020_000, "c", c, s, ACK | PSH, 1000),  # identical bytes 1 s later: the RTO retransmission
           (1_030_000, "s", s, c + 1000, ACK, 0)]
    path = write_conversation(tmp_path, ev, v6=True)
    p = _read(path)
    an = annotate(p)
    assert an["is_duplicate"].tolist() == [False] * 4 + [True] + [False] * 2
    assert an["is_retransmission"].tolist() == [False] * 5 + [True, False]
    f = flows(p, an).loc[0]
    assert (f["retransmitted_packets"], f["duplicate_packets"], f["loss_rate"]) == (1, 1, 0.5)
    # Karn: the ACK answers the retransmission too, so the segment gives no sequence RTT sample
    seq = rtt_samples(p, an)
    assert not ((seq["method"] == "seq") & (seq["ack_frame_index"] == 6)).any()


def test_acknowledged_data_sent_again_is_spurious_before_out_of_order_or_fast(tmp_path):
    """Wireshark 4 tests "spurious" first: a segment whose bytes the peer's last ACK covers is spurious even
    within the initial RTT of the highest segment (out-of-order otherwise) and after duplicate ACKs for it."""
    ev, c, s = handshake(rtt_us=20_000)
    ev += [(30_000, "c", c, s, ACK | PSH, 1000), (31_000, "c", c + 1000, s, ACK | PSH, 1000),
           (32_000, "c", c + 2000, s, ACK | PSH, 1000),
           (40_000, "s", s, c + 1000, ACK, 0),  # acknowledges the first segment
           (41_000, "c", c, s, ACK | PSH, 1000),  # it again, 9 ms after the highest: within the initial RTT
           (45_000, "s", s, c + 3000, ACK, 0)]
    path = write_conversation(tmp_path, ev)
    an = annotate(_read(path))
    row = 7
    assert an["is_retransmission"].iloc[row] and an["is_spurious_retransmission"].iloc[row]
    assert not an["is_out_of_order"].iloc[row] and not an["is_fast_retransmission"].iloc[row]
    if HAVE_TSHARK:
        assert tshark_agrees(path) == {}


def _zero_window_conversation(tmp_path, tail, name):
    """A handshake, 1000 bytes, the receiver's window closing, then ``tail``: (ms, 'c'|'s', rel seq, rel ack,
    flags, payload, window)."""
    c0, s0 = ISN_C + 1, ISN_S + 1
    ev = [(0, "c", ISN_C, 0, SYN, 0, 65535), (10, "s", ISN_S, c0, SYN | ACK, 0, 65535), (20, "c", c0, s0, ACK, 0, 65535),
          (21, "c", c0, s0, ACK | PSH, 1000, 65535), (30, "s", s0, c0 + 1000, ACK, 0, 0)]
    frames = []
    for ms, who, seq, ack, flags, payload, win in ev + [(ms, w, c0 + a if w == "c" else s0 + a,
                                                        (s0 + b) if w == "c" else (c0 + b), fl, p, wn)
                                                       for ms, w, a, b, fl, p, wn in tail]:
        src, dst = (("10.0.0.1", 40000), ("10.0.0.2", 80)) if who == "c" else (("10.0.0.2", 80), ("10.0.0.1", 40000))
        seg = tcp(sport=src[1], dport=dst[1], seq=seq, ack=ack, flags=flags, window=win, payload=payload)
        frames.append((T0 + ms * 1_000_000, ether(ipv4(seg, src=src[0], dst=dst[0], ip_id=len(frames) + 1))))
    path = tmp_path / name
    write_pcap(path, frames, nano=True)
    return path


def test_zero_window_probes_are_at_the_next_byte_and_do_not_move_it(tmp_path):
    """A probe sent twice is a probe both times, and the data sent when the window opens at that byte is new;
    one byte sent one below the next byte while the window is closed is a keep-alive, not a probe."""
    probes = _zero_window_conversation(tmp_path, [
        (230, "c", 1000, 0, ACK | PSH, 1, 65535), (240, "s", 0, 1000, ACK, 0, 0),
        (640, "c", 1000, 0, ACK | PSH, 1, 65535), (650, "s", 0, 1000, ACK, 0, 65535),
        (651, "c", 1000, 0, ACK | PSH, 1000, 65535), (660, "s", 0, 2000, ACK, 0, 65535)], "probes.pcap")
    an = annotate(_read(probes))
    assert an["is_zero_window_probe"].tolist() == [False] * 5 + [True, False, True, False, False, False]
    assert not an["is_retransmission"].any()
    keepalive = _zero_window_conversation(tmp_path, [(230, "c", 999, 0, ACK, 1, 65535), (240, "s", 0, 1000, ACK, 0, 0)],
                                          "ka.pcap")
    an = annotate(_read(keepalive))
    assert an["is_keepalive"].iloc[5] and not an["is_zero_window_probe"].iloc[5]
    if HAVE_TSHARK:
        assert tshark_agrees(probes) == {} and tshark_agrees(keepalive) == {}


def test_a_syn_sent_again_after_a_second_is_a_retransmission(tmp_path):
    ev, c, s = handshake(rtt_us=10_000, syn_again_us=1_000_000)
    path = write_conversation(tmp_path, ev, ip_ids=False)  # IPv4 with ID 0: the two SYNs are identical
    an = annotate(_read(path))
    assert an["is_retransmission"].tolist() == [False, True, False, False]
    assert not an["is_duplicate"].any()


@needs_tshark
def test_duplicates_and_retransmissions_as_tshark(tmp_path):
    ev, c, s = handshake(rtt_us=10_000, syn_again_us=1_000_000)
    t = 1_010_000
    ev += [(t + 10_000, "c", c, s, ACK | PSH, 1000), (t + 10_040, "c", c, s, ACK | PSH, 1000),
           (t + 1_010_000, "c", c, s, ACK | PSH, 1000), (t + 1_020_000, "s", s, c + 1000, ACK, 0)]
    assert tshark_agrees(write_conversation(tmp_path, ev, v6=True)) == {}


# ---- 2: the initial RTT is measured from the SYN that was answered


def test_initial_rtt_after_a_retransmitted_syn(tmp_path):
    # SYN at 0, again at 1 s; handshake RTT 200 µs; then segments 0..3, segment 1 re-sent 5 ms after segment 3:
    # a plain retransmission (5 ms is 25 initial RTTs), not an out-of-order segment
    ev, c, s = handshake(rtt_us=200, syn_again_us=1_000_000)
    t = 1_001_000
    ev += [(t + 100 * i, "c", c + 1000 * i, s, ACK, 1000) for i in range(4)]
    ev += [(t + 5_300, "c", c + 1000, s, ACK, 1000), (t + 5_500, "s", s, c + 4000, ACK, 0)]
    path = write_conversation(tmp_path, ev)
    an = annotate(_read(path))
    rtx = an.index[an["is_retransmission"]].tolist()
    assert rtx == [1, 8]  # the SYN sent again, and the segment
    assert not an["is_out_of_order"].any()
    if HAVE_TSHARK:
        assert tshark_agrees(path) == {}


# ---- 3: a one-byte segment re-sent, never acknowledged, is a retransmission; a keep-alive re-sends an acked byte


def test_one_byte_resent_is_a_retransmission_and_a_keepalive_is_not(tmp_path):
    ev, c, s = handshake(rtt_us=100)
    ev += [(1_000, "c", c, s, ACK | PSH, 1),  # one byte, lost
           (201_000, "c", c, s, ACK | PSH, 1),  # re-sent by RTO 200 ms later: a retransmission
           (201_100, "s", s, c + 1, ACK, 0),  # acknowledged now
           (60_000_000, "c", c, s, ACK, 0),  # a minute idle: a keep-alive (seq one below, byte acked), no data
           (60_000_100, "s", s, c + 1, ACK, 0)]
    path = write_conversation(tmp_path, ev)
    p = _read(path)
    an = annotate(p)
    assert an.index[an["is_retransmission"]].tolist() == [4]
    assert an.index[an["is_keepalive"]].tolist() == [6]
    f = flows(p, an).loc[0]
    assert (f["retransmitted_packets"], f["keepalive_packets"]) == (1, 1)
    # Karn: no 200 ms sample from the first copy to the ACK of the re-sent byte
    seq = rtt_samples(p, an)
    assert not ((seq["method"] == "seq") & (seq["rtt_s"] > 0.1)).any()
    if HAVE_TSHARK:
        assert tshark_agrees(path, p) == {}  # tshark calls frame 5 a keep-alive: an argued difference


# ---- 4: a pure ACK whose seq ran ahead does not make the data after it retransmissions


def test_data_captured_after_a_pure_ack_that_ran_ahead_is_no_retransmission(tmp_path):
    ev, c, s = handshake(rtt_us=10_000)
    ev += [(20_000, "s", s, c, ACK, 1000),
           (20_010, "s", s + 3000, c, ACK, 0),  # a pure ACK sent after two more segments still on their way
           (20_020, "s", s + 1000, c, ACK, 1000), (20_030, "s", s + 2000, c, ACK, 1000),
           (30_000, "c", c, s + 3000, ACK, 0)]
    path = write_conversation(tmp_path, ev)
    p = _read(path)
    an = annotate(p)
    assert not an["is_retransmission"].any()
    assert an.index[an["is_previous_segment_not_captured"]].tolist() == [4]
    f = flows(p, an).loc[1]
    assert (f["unique_payload_bytes"], f["bytes_not_captured"]) == (3000, 0)
    if HAVE_TSHARK:
        assert tshark_agrees(path, p) == {}  # tshark flags frames 6 and 7: an argued difference


# ---- 6: bytes never captured are not counted as sent


def test_bytes_never_captured_are_counted_apart(tmp_path):
    ev, c, s = handshake(rtt_us=10_000)
    ev += [(20_000, "s", s, c, ACK, 1000),
           (20_200, "s", s + 3000, c, ACK, 1000),  # 2000 bytes never captured (capture drops)
           (30_000, "c", c, s + 4000, ACK, 0)]  # acknowledges all of it
    path = write_conversation(tmp_path, ev)
    p = _read(path)
    an = annotate(p)
    f = flows(p, an).loc[1]
    assert (f["unique_payload_bytes"], f["bytes_not_captured"]) == (2000, 2000)
    assert (f["previous_segment_not_captured"], f["acked_unseen_packets"]) == (1, 0)
    assert an.index[an["is_acked_unseen"]].tolist() == [5]
    assert flows(p, an).loc[0, "acked_unseen_packets"] == 1
    if HAVE_TSHARK:
        assert tshark_agrees(path, p) == {}


# ---- 7: MPTCP fallback


def _capable(*keys: int) -> bytes:
    return bytes([30, 4 + 8 * len(keys), 1, 0x81]) + b"".join(struct.pack("!Q", k) for k in keys)


def test_a_connection_whose_syn_ack_refuses_mptcp_is_plain_tcp(tmp_path):
    frames = []
    for i, (src, dst, sp, dp, seq, ack, fl, opt) in enumerate([
            ("10.0.0.1", "10.0.0.2", 40000, 80, 100, 0, SYN, _capable()),
            ("10.0.0.2", "10.0.0.1", 80, 40000, 900, 101, SYN | ACK, b""),  # no MP_CAPABLE: fallback
            ("10.0.0.1", "10.0.0.2", 40000, 80, 101, 901, ACK, b""),
            ("10.0.0.1", "10.0.0.2", 40001, 80, 100, 0, SYN, _capable()),  # a real MPTCP connection
            ("10.0.0.2", "10.0.0.1", 80, 40001, 900, 101, SYN | ACK, _capable(7)),
            ("10.0.0.1", "10.0.0.2", 40001, 80, 101, 901, ACK, _capable(5, 7))]):
        frames.append((T0 + 1000 * i, ether(ipv4(tcp(sport=sp, dport=dp, seq=seq, ack=ack, flags=fl, options=opt),
                                                 src=src, dst=dst, ip_id=i))))
    path = tmp_path / "fallback.pcap"
    write_pcap(path, frames)
    sub = mptcp_subflows(_read(path))
    assert sub["client_port"].tolist() == [40001] and sub["forward_share"].isna().all()


# ---- 5: encapsulations


def _mpls(ip: bytes, labels=(16, 17)) -> bytes:
    stack = b"".join(struct.pack("!I", (lab << 12) | ((i == len(labels) - 1) << 8) | 64)
                     for i, lab in enumerate(labels))
    return stack + ip


def _pppoe(ip: bytes, compressed=True) -> bytes:
    ppp = b"\x21" if compressed else b"\x00\x21"
    return struct.pack("!BBHH", 0x11, 0, 0x2d, len(ppp) + len(ip)) + ppp + ip


def _nflog(ip: bytes) -> bytes:
    def tlv(kind, value):
        body = struct.pack("<HH", 4 + len(value), kind) + value
        return body + b"\x00" * (-len(body) % 4)
    return b"\x02\x00\x00\x00" + tlv(1, b"\x08\x00\x01\x00") + tlv(10, b"eth0\x00") + tlv(9, ip)


def _segments(n=4):
    return [ipv4(tcp(seq=1000 + 100 * i, flags=ACK, payload=100), ip_id=i + 1) for i in range(n)]


@pytest.mark.parametrize("kind", ["mpls", "pppoe", "pppoe_2byte", "nflog"])
def test_encapsulations_are_decoded_as_tshark_decodes_them(tmp_path, kind):
    ips = _segments()
    if kind == "nflog":
        frames, linktype = [_nflog(ip) for ip in ips], 239
    elif kind == "mpls":
        frames, linktype = [ether(_mpls(ip), ethertype=0x8847) for ip in ips], 1
    else:
        frames = [ether(_pppoe(ip, compressed=kind == "pppoe"), ethertype=0x8864) for ip in ips]
        linktype = 1
    path = tmp_path / f"{kind}.pcap"
    write_pcap(path, [(T0 + 1000 * i, f) for i, f in enumerate(frames)], linktype=linktype)
    p = _read(path)
    assert len(p) == 4 and (p["payload_bytes"] == 100).all() and p["seq"].tolist() == [1000, 1100, 1200, 1300]
    if HAVE_TSHARK:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            assert compare_tables(p, read_pcap(path, engine="tshark")) == []


def _fragment_v4(packet: bytes, size: int) -> list[bytes]:
    """IPv4 fragments of ``packet`` carrying ``size`` bytes of data each (a multiple of 8)."""
    ihl = (packet[0] & 0x0F) * 4
    head, data = bytearray(packet[:ihl]), packet[ihl:]
    out = []
    for off in range(0, len(data), size):
        part = data[off:off + size]
        h = bytearray(head)
        h[2:4] = (ihl + len(part)).to_bytes(2, "big")
        h[6:8] = ((0x2000 if off + size < len(data) else 0) | (off // 8)).to_bytes(2, "big")
        out.append(bytes(h) + part)
    return out


def _fragment_v6(packet: bytes, size: int, ident=77) -> list[bytes]:
    """IPv6 fragments (a fragment header after the fixed header) of an IPv6 ``packet`` without extensions."""
    nh, body = packet[6], packet[40:]
    out = []
    for off in range(0, len(body), size):
        part = body[off:off + size]
        more = off + size < len(body)
        fh = struct.pack("!BBHI", nh, 0, off | more, ident)
        h = bytearray(packet[:40])
        h[4:6] = (8 + len(part)).to_bytes(2, "big")
        h[6] = 44
        out.append(bytes(h) + fh + part)
    return out


def test_fragments_are_reassembled_and_accounted_for(tmp_path):
    big4 = ipv4(tcp(seq=5000, flags=ACK | PSH, payload=3000), ip_id=4242)
    big6 = ipv6(tcp(seq=7000, flags=ACK | PSH, payload=2500))
    tunnelled = ipv4(gre(ether(ipv4(tcp(seq=9000, flags=ACK, payload=1400), src="192.168.0.1",
                                    dst="192.168.0.2", ip_id=9)), proto=0x6558), proto=47, ip_id=4343,
                     src="172.16.0.1", dst="172.16.0.2")
    f4, f6, ft = _fragment_v4(big4, 1480), _fragment_v6(big6, 1232), _fragment_v4(tunnelled, 1000)
    lone = _fragment_v4(ipv4(tcp(seq=1, flags=ACK, payload=2000), ip_id=5), 1480)[0]  # its rest never comes
    frames = [f4[2], f4[0], f6[0], ft[0], f4[1], f6[1], lone, ft[1], f6[2]]  # out of order, interleaved
    path = tmp_path / "frag.pcap"
    write_pcap(path, [(T0 + 1000 * i, ether(f)) for i, f in enumerate(frames)])
    with pytest.warns(TraceWarning, match="ip_fragment"):
        p = read_pcap(path)
    acc = p.attrs["accounting"]
    assert acc.records_read == 9 and acc.tcp_parsed == 3
    assert acc.skipped == {"ip_fragment": 1, "ip_fragment_reassembled": 5}
    # each datagram is the row of the fragment that completed it, with all its fragments' bytes
    assert p["frame_index"].tolist() == [4, 7, 8]
    assert p["payload_bytes"].tolist() == [3000, 1400, 2500]
    assert p["tunnel"].astype(str).tolist() == ["", "gre", ""]
    assert p["wire_bytes"].tolist() == [sum(len(ether(f)) for f in fr) for fr in (f4, ft, f6)]
    if HAVE_TSHARK:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            assert compare_tables(p, read_pcap(path, engine="tshark")) == []


def _frag(t_ns, offset, more, data=b"x" * 8, ident=1):
    return Fragment(frame_index=t_ns, timestamp_ns=t_ns, interface_id=0, wire_bytes=60, captured_bytes=60,
                    tunnel=0, version=4, key=(b"a", b"b", 6, ident), offset_bytes=offset, more=more,
                    header=b"\x45" + bytes(19), next_header_at=-1, data=data, data_len=len(data))


def test_reassembly_is_bounded_in_time_and_memory():
    r = Reassembler()
    assert r.add(_frag(0, 0, True)) is None
    assert r.add(_frag(31_000_000_000, 8, False)) is None  # 31 s later: the first one timed out (30 s)
    assert r.dropped == {"timed_out": 1} and r.pending_fragments == 1
    small = Reassembler(max_held_bytes=20)
    for i in range(3):
        small.add(_frag(i, 0, True, ident=i))
    assert small.dropped == {"memory": 1} and small.pending_fragments == 2
    big = Reassembler()
    assert big.add(_frag(0, 65_528, False, data=b"y" * 16)) is None and big.dropped == {"too_long": 1}
    done = big.add(_frag(1, 8, False, ident=9)) or big.add(_frag(2, 0, True, ident=9))
    assert done is not None and done.fragments == 2 and len(done.ip_bytes) == 20 + 16
    assert np.frombuffer(done.ip_bytes[2:4], ">u2")[0] == 36
