"""Bad input: a clear error naming file, offset and problem, or a warning with a count; never a hang or silent loss."""

from __future__ import annotations

import struct
import warnings

import pytest
from trace_fixtures import CAPTURES
from trace_synth import ether, ipv4, pcapng_section, tcp, write_pcap

from tcpmodels.traces import CaptureFileError, TraceWarning, read_pcap
from tcpmodels.traces.annotation import annotate
from tcpmodels.traces.flows import flows

T0 = 1_700_000_000_000_000_000


def seg(seq=1000, ack=1, flags=0x10, payload=100, ip_id=1, **kw):
    return ether(ipv4(tcp(seq=seq, ack=ack, flags=flags, payload=payload, **kw), ip_id=ip_id))


def test_empty_file(tmp_path):
    p = tmp_path / "empty.pcap"
    p.write_bytes(b"")
    with pytest.raises(CaptureFileError, match=r"empty.pcap.*empty \(0 bytes\)"):
        read_pcap(p)


def test_header_only(tmp_path):
    p = tmp_path / "hdr.pcap"
    write_pcap(p, [])
    with pytest.warns(TraceWarning, match="no packet records"):
        t = read_pcap(p)
    assert len(t) == 0 and t.attrs["accounting"].records_read == 0
    assert len(flows(t)) == 0


def test_not_a_capture(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello, this is not a capture\n")
    with pytest.raises(CaptureFileError, match=r"notes.txt: offset 0: not a pcap or pcapng file \(magic number 68656c6c"):
        read_pcap(p)


def test_cut_in_the_middle_of_a_packet(tmp_path):
    p = tmp_path / "cut.pcap"
    write_pcap(p, [(T0 + i, seg(seq=1000 + 100 * i)) for i in range(3)])
    data = p.read_bytes()
    p.write_bytes(data[:-30])
    with pytest.warns(TraceWarning, match=r"middle of a record: last \d+ bytes ignored"):
        t = read_pcap(p)
    assert len(t) == 2
    assert t.attrs["accounting"].truncated_tail_bytes == len(data) - 30 - (24 + 2 * (16 + len(seg())))


def test_record_length_beyond_any_snap_length(tmp_path):
    p = tmp_path / "huge.pcap"
    write_pcap(p, [(T0, seg()), (T0 + 1, seg())])
    data = bytearray(p.read_bytes())
    second = 24 + 16 + len(seg())
    data[second + 8: second + 12] = struct.pack("<I", 5_000_000)
    p.write_bytes(bytes(data))
    with pytest.raises(CaptureFileError, match=rf"huge.pcap: offset {second}: record 1 claims 5000000 captured bytes"):
        read_pcap(p)


def test_record_longer_than_snaplen_is_kept_with_a_warning(tmp_path):
    p = tmp_path / "snap.pcap"
    write_pcap(p, [(T0, seg())], snaplen=64)
    with pytest.warns(TraceWarning, match="1 records longer than the file's snap length"):
        t = read_pcap(p)
    assert len(t) == 1


def test_unknown_link_type(tmp_path):
    p = tmp_path / "lt.pcap"
    write_pcap(p, [(T0, seg())] * 3, linktype=147)
    with pytest.warns(TraceWarning, match=r"3 unknown_link_type \(link type\(s\) \[147\]"):
        t = read_pcap(p)
    assert len(t) == 0


def test_pcapng_undefined_interface(tmp_path):
    p = tmp_path / "if.pcapng"
    p.write_bytes(pcapng_section([(1, None)], [(0, 1, seg()), (3, 2, seg())]))
    with pytest.raises(CaptureFileError, match=r"if.pcapng: offset \d+: packet block names interface 3, but this "
                                               r"section defines only 1"):
        read_pcap(p)


def test_snap_length_64_cuts_headers(tmp_path):
    p = tmp_path / "s64.pcap"
    opts = b"\x01\x01\x08\x0a" + struct.pack("!II", 1, 2)  # 12 bytes of options: TCP header 32, frame 66 > 64
    frames = [(T0 + i, ether(ipv4(tcp(seq=i, options=opts, payload=1000)))) for i in range(4)]
    frames.append((T0 + 9, ether(ipv4(tcp(), options=b"\x01" * 40))))  # IP header 60: TCP header cut before 20 bytes
    write_pcap(p, frames, snaplen=64, cut_to=64)
    with pytest.warns(TraceWarning) as rec:
        t = read_pcap(p)
    msg = str(rec[0].message)
    assert "1 truncated_headers" in msg and "4 TCP headers with options cut" in msg
    assert len(t) == 4 and (t["payload_bytes"] == 1000).all() and not t["has_timestamps"].any()


def test_non_tcp_traffic_only(tmp_path):
    p = tmp_path / "udp.pcap"
    write_pcap(p, [(T0 + i, ether(ipv4(tcp(), proto=17))) for i in range(5)])
    with pytest.warns(TraceWarning, match="skipped 5 of 5 records: 5 not_tcp"):
        t = read_pcap(p)
    assert len(t) == 0


def test_out_of_order_timestamps(tmp_path):
    p = tmp_path / "ooo.pcap"
    write_pcap(p, [(T0 + 3000, seg(seq=1000)), (T0 + 1000, seg(seq=1100)), (T0 + 5000, seg(seq=1200))])
    with pytest.warns(TraceWarning, match="1 records with a timestamp earlier than the previous one"):
        t = read_pcap(p)
    assert t["frame_index"].tolist() == [0, 1, 2]  # file order kept


def test_sequence_numbers_wrapping(tmp_path):
    p = tmp_path / "wrap.pcap"
    start = 2**32 - 250
    frames = [(T0, seg(seq=start - 1, flags=0x02, payload=0))]
    frames += [(T0 + 10 + i, seg(seq=start + 100 * i, ip_id=10 + i)) for i in range(6)]  # crosses 2**32
    frames.append((T0 + 100, seg(seq=start + 200, ip_id=99)))  # retransmission of the wrapped segment
    write_pcap(p, frames)
    t = read_pcap(p)
    an = annotate(t)
    assert an["seq_u"].tolist()[1:7] == [start + 100 * i for i in range(6)]
    assert an["is_retransmission"].tolist() == [False] * 7 + [True]
    fl = flows(t)
    assert fl["unique_payload_bytes"].iloc[0] == 600 and fl["retransmitted_packets"].iloc[0] == 1


def test_duplicate_packets_are_not_retransmissions(tmp_path):
    p = tmp_path / "dup.pcap"
    frames = []
    for i in range(5):
        frames += [(T0 + 10 * i, seg(seq=1000 + 100 * i, ip_id=i)), (T0 + 10 * i + 1, seg(seq=1000 + 100 * i, ip_id=i))]
    frames.append((T0 + 500, seg(seq=1100, ip_id=77)))  # a real retransmission: new IP ID
    write_pcap(p, frames)
    fl = flows(read_pcap(p))
    assert fl["duplicate_packets"].iloc[0] == 5
    assert fl["retransmitted_packets"].iloc[0] == 1


def test_tshark_missing_from_path(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match=r"tshark .* not found on PATH. Install it with `sudo apt-get install tshark`"):
        read_pcap(CAPTURES / "reno_bulk.pcap.gz", engine="tshark")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        assert len(read_pcap(CAPTURES / "reno_bulk.pcap.gz")) > 1000  # the native engine still works


def test_unknown_engine_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="engine must be one of"):
        read_pcap(CAPTURES / "reno_bulk.pcap.gz", engine="dpkt")
    with pytest.raises(FileNotFoundError, match="nope.pcap"):
        read_pcap(tmp_path / "nope.pcap")


def test_corrupt_gzip(tmp_path):
    p = tmp_path / "bad.pcap.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(7, 71)))
    with pytest.raises(CaptureFileError, match="bad.pcap.gz"):
        read_pcap(p)


def test_time_going_backwards_gives_no_negative_rtt_or_fct_and_loss_rate_stays_a_rate(tmp_path):
    """A clock stepped back mid-capture: the would-be negative RTT sample and FCT are dropped with a count."""
    def c2s(t, seq, ack, flags, payload=0, ip_id=1):
        return (T0 + t, ether(ipv4(tcp(sport=40000, dport=80, seq=seq, ack=ack, flags=flags, payload=payload),
                                   ip_id=ip_id)))

    def s2c(t, seq, ack, flags, payload=0, ip_id=1):
        return (T0 + t, ether(ipv4(tcp(sport=80, dport=40000, seq=seq, ack=ack, flags=flags, payload=payload),
                                   src="10.0.0.2", dst="10.0.0.1", ip_id=ip_id)))

    ms = 1_000_000
    frames = [c2s(0, 99, 0, 0x02), c2s(1000 * ms, 99, 0, 0x02, ip_id=2), c2s(2000 * ms, 99, 0, 0x02, ip_id=3),
              s2c(2010 * ms, 499, 100, 0x12),  # SYN sent three times, then answered
              c2s(2020 * ms, 100, 500, 0x10, ip_id=4),
              c2s(2030 * ms, 100, 500, 0x18, payload=100, ip_id=5),  # the one data segment
              s2c(-5 * ms, 500, 200, 0x10, ip_id=6)]  # its ACK, stamped before the first SYN: the clock went back
    p = tmp_path / "back.pcap"
    write_pcap(p, frames)
    with pytest.warns(TraceWarning, match="timestamp earlier than the previous one"):
        t = read_pcap(p)
    with pytest.warns(TraceWarning) as caught:
        fl = flows(t)
    texts = " ".join(str(w.message) for w in caught)
    assert "1 of 2 RTT samples dropped: negative" in texts and "1 flow completion times set to NaN" in texts
    assert (fl["rtt_min_s"].dropna() >= 0).all() and (fl["fct_s"].dropna() >= 0).all()
    assert (fl["duration_s"] >= 0).all()
    client = fl[fl["src_port"] == 40000].iloc[0]
    assert client["retransmitted_packets"] == 2 and client["data_packets"] == 1  # the two SYN repeats
    assert client["loss_rate"] == 0.0  # no data segment was retransmitted: a rate, never 2.0
