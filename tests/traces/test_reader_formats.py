"""Container formats, link types, IP versions and TCP options on hand-built files with known contents."""

from __future__ import annotations

import gzip
import shutil
import socket
import struct
import warnings

import pytest
from trace_fixtures import needs_tshark
from trace_synth import (
    ether,
    geneve,
    gre,
    ipv4,
    ipv6,
    loopback,
    pcapng_section,
    ppp,
    sll,
    sll2,
    tcp,
    udp,
    vxlan,
    write_pcap,
)

from tcpmodels.traces import COLUMNS, TraceWarning, read_pcap
from tcpmodels.traces.mptcp import mptcp_token

T0 = 1_700_000_000_123_456_789
OPTS = (b"\x02\x04\x05\xb4" + b"\x01\x03\x03\x07" + b"\x04\x02" + b"\x08\x0a" + struct.pack("!II", 111, 222)
        + b"\x01\x01\x05\x12" + struct.pack("!IIII", 5000, 6000, 7000, 8000))


def segment(**kw):
    return tcp(sport=40000, dport=443, seq=4294967000, ack=17, flags=0x18, window=512, options=OPTS, payload=100, **kw)


LINKS = {
    "ethernet": (1, lambda ip: ether(ip)),
    "vlan": (1, lambda ip: ether(ip, vlans=(0x8100,))),
    "qinq": (1, lambda ip: ether(ip, vlans=(0x88A8, 0x8100))),
    "sll": (113, sll),
    "sll2": (276, sll2),
    "raw": (101, lambda ip: ip),
    "raw12": (12, lambda ip: ip),
    "raw14": (14, lambda ip: ip),
    "null": (0, loopback),
    "loop": (108, lambda ip: loopback(ip, network_order=True)),
    "ppp": (9, ppp),
    "ppp_hdlc": (50, lambda ip: ppp(ip, hdlc=True)),
}


@pytest.mark.parametrize("link", sorted(LINKS))
@pytest.mark.parametrize("version", [4, 6])
def test_link_types_and_options(tmp_path, link, version):
    lt, wrap = LINKS[link]
    ip = ipv4(segment(), ip_id=99, options=b"\x01\x01\x01\x00") if version == 4 else \
        ipv6(segment(), ext=[(0, b"\x00\x00" + b"\x01\x04\x00\x00\x00\x00"), (60, b"\x00\x00" + b"\x01\x04\x00\x00\x00\x00")])
    path = tmp_path / "x.pcap"
    write_pcap(path, [(T0, wrap(ip)), (T0 + 1500, wrap(ip))], linktype=lt, nano=True)
    t = read_pcap(path)
    assert len(t) == 2
    r = t.iloc[0]
    assert r["timestamp_ns"] == T0 and t["timestamp_ns"].iloc[1] == T0 + 1500
    assert r["ip_version"] == version and r["payload_bytes"] == 100 and r["tcp_header_bytes"] == 20 + len(OPTS)
    assert r["src_addr"] == ("10.0.0.1" if version == 4 else "fd00::1")
    assert (r["src_port"], r["dst_port"], r["seq"], r["ack"], r["window"]) == (40000, 443, 4294967000, 17, 512)
    assert (r["mss"], r["window_scale"], r["sack_permitted"], r["tsval"], r["tsecr"]) == (1460, 7, True, 111, 222)
    assert (r["sack_count"], r["sack_left"], r["sack_right"]) == (2, 5000, 6000)
    assert r["ip_id"] == (99 if version == 4 else 0)
    assert [str(d) for d in t.dtypes] == list(COLUMNS.values())


@needs_tshark
@pytest.mark.parametrize("link", ["vlan", "qinq", "sll", "sll2", "raw", "null", "loop", "ppp", "ppp_hdlc"])
def test_synthetic_link_types_agree_with_tshark(tmp_path, link):
    lt, wrap = LINKS[link]
    path = tmp_path / "x.pcap"
    frames = [(T0 + i, wrap(ipv4(segment(), ip_id=i) if i % 2 else ipv6(segment()))) for i in range(6)]
    write_pcap(path, frames, linktype=lt, nano=True)
    a, b = read_pcap(path), read_pcap(path, "tshark")
    for col in COLUMNS:
        assert (a[col].astype(str).to_numpy() == b[col].astype(str).to_numpy()).all(), col


@pytest.mark.parametrize("nano", [False, True])
@pytest.mark.parametrize("big_endian", [False, True])
def test_classic_pcap_byte_orders_and_resolutions(tmp_path, nano, big_endian):
    path = tmp_path / "x.pcap"
    write_pcap(path, [(T0, ether(ipv4(segment())))], nano=nano, big_endian=big_endian)
    t = read_pcap(path)
    assert t["timestamp_ns"].iloc[0] == (T0 if nano else T0 // 1000 * 1000)


def test_gzip_is_transparent(tmp_path):
    path = tmp_path / "x.pcap"
    write_pcap(path, [(T0 + i, ether(ipv4(segment()))) for i in range(3)], nano=True)
    gz = tmp_path / "x.pcap.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert read_pcap(gz)["timestamp_ns"].tolist() == read_pcap(path)["timestamp_ns"].tolist()


def test_pcapng_interfaces_resolutions_and_sections(tmp_path):
    frame_eth = ether(ipv4(segment()))
    frame_raw = ipv6(segment())
    sec1 = pcapng_section([(1, None), (101, 9)], [(0, 1_700_000_000_123_456, frame_eth),
                                                  (1, 1_700_000_000_123_456_789, frame_raw)])
    sec2 = pcapng_section([(276, 0x80 | 20)], [(0, 1_700_000_001 << 20 | (1 << 19), sll2(ipv4(segment())))],
                          big_endian=True)
    path = tmp_path / "x.pcapng"
    path.write_bytes(sec1 + sec2)
    t = read_pcap(path)
    assert t["interface_id"].tolist() == [0, 1, 2]
    assert t["timestamp_ns"].tolist() == [1_700_000_000_123_456_000, 1_700_000_000_123_456_789,
                                          1_700_000_001_500_000_000]
    assert t["ip_version"].tolist() == [4, 6, 4]
    assert t.attrs["accounting"].link_types == (1, 101, 276)


def test_mptcp_options(tmp_path):
    key_a, key_b = 0x0123456789ABCDEF, 0xFEDCBA9876543210
    cap_syn = b"\x1e\x04\x01\x81"
    cap_ack = b"\x1e\x14\x01\x81" + struct.pack("!QQ", key_a, key_b)
    join = b"\x1e\x0c\x10\x01" + struct.pack("!II", mptcp_token(key_b), 42)
    # DSS, flags A|a|M|m: 8-byte data ACK, 8-byte DSN, subflow seq, data-level length, checksum: 28 bytes
    dss = b"\x1e\x1c\x20\x0f" + struct.pack("!QQIHH", 2**40 + 5, 2**50 + 7, 1, 100, 0)
    frames = [ether(ipv4(tcp(flags=0x02, options=o, payload=p))) for o, p in
              ((cap_syn, 0), (cap_ack, 0), (join, 0), (dss, 100))]
    path = tmp_path / "m.pcap"
    write_pcap(path, [(T0 + i, f) for i, f in enumerate(frames)])
    t = read_pcap(path)
    assert t["mptcp_subtype"].tolist() == [0, 0, 1, 2]
    assert (t["mptcp_send_key"].iloc[1], t["mptcp_recv_key"].iloc[1]) == (key_a, key_b)
    assert t["mptcp_recv_token"].iloc[2] == mptcp_token(key_b)
    d = t.iloc[3]
    assert d["has_mptcp_data_ack"] and d["mptcp_data_ack"] == 2**40 + 5
    assert d["has_mptcp_dsn"] and d["mptcp_dsn"] == 2**50 + 7
    assert (d["mptcp_subflow_seq"], d["mptcp_data_len"]) == (1, 100)


def test_token_is_sha256_prefix():
    # RFC 8684 Sec. 3.2: token = most significant 32 bits of SHA-256(key); checked against hashlib directly
    import hashlib
    key = 14022254626758317318
    assert mptcp_token(key) == int(hashlib.sha256(key.to_bytes(8, "big")).hexdigest()[:8], 16)


def test_fragments_and_non_tcp_are_counted(tmp_path):
    frames = [ether(ipv4(segment())),
              ether(ipv4(segment(), frag=0x2000)),  # first fragment (MF)
              ether(ipv4(segment(), frag=0x0010, ip_id=2)),  # a later fragment of another datagram
              ether(ipv4(segment(), proto=17)),  # UDP
              ether(ipv6(segment(), ext=[(44, b"\x00\x00\x00\x09\x00\x00\x00\x01")])),  # v6 fragment, offset 1
              ether(b"\x00" * 28, ethertype=0x0806)]  # ARP
    path = tmp_path / "f.pcap"
    write_pcap(path, [(T0 + i, f) for i, f in enumerate(frames)])
    with pytest.warns(TraceWarning, match=r"skipped 5 of 6 records: 1 ip_fragment|ip_fragment"):
        t = read_pcap(path)
    acc = t.attrs["accounting"]
    assert len(t) == 1
    assert acc.skipped == {"ip_fragment": 3, "not_tcp": 1, "not_ip": 1}


@needs_tshark
def test_pyshark_engine_gives_the_same_table(tmp_path):
    pytest.importorskip("pyshark", reason="pyshark not installed (it is in the `test` extra)")
    path = tmp_path / "p.pcap"
    frames = [(T0 + i, ether(ipv4(segment(), ip_id=i) if i % 2 else ipv6(segment()))) for i in range(4)]
    frames.append((T0 + 9, ether(ipv4(tcp(), proto=17))))
    write_pcap(path, frames, nano=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        a, b = read_pcap(path), read_pcap(path, engine="pyshark")
    assert [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes]
    for col in COLUMNS:
        assert (a[col].astype(str).to_numpy() == b[col].astype(str).to_numpy()).all(), col
    assert b.attrs["accounting"].skipped == {"not_tcp": 1}


INNER4 = ipv4(segment(), src="192.168.1.1", dst="192.168.1.2", ip_id=7)
INNER6 = ipv6(segment(), src="fd01::a", dst="fd01::b")
OUT4 = {"src": "10.9.0.1", "dst": "10.9.0.2"}
TUNNELLED = {  # name -> (tunnel column, outer IP packet, inner source address)
    "gre": ("gre", ipv4(gre(INNER4), proto=47, **OUT4), "192.168.1.1"),
    "gre_key_seq_v6": ("gre", ipv4(gre(INNER6, key=5, seq=9), proto=47, **OUT4), "fd01::a"),
    "gre_ethernet": ("gre", ipv4(gre(ether(INNER4), proto=0x6558), proto=47, **OUT4), "192.168.1.1"),
    "ipip": ("ipip", ipv4((INNER4, 0), proto=4, **OUT4), "192.168.1.1"),
    "6in4": ("ipip", ipv4((INNER6, 0), proto=41, **OUT4), "fd01::a"),
    "4in6": ("ipip", ipv6((INNER4, 0), nh=4), "192.168.1.1"),
    "vxlan": ("vxlan", ipv4(udp(vxlan(ether(INNER4, vlans=(0x8100,)))), proto=17, **OUT4), "192.168.1.1"),
    "geneve": ("geneve", ipv6(udp(geneve(ether(INNER4), options=b"\x01\x02\x03\x01" + b"\x00" * 4),
                                  dport=6081), nh=17), "192.168.1.1"),
    "geneve_ip": ("geneve", ipv4(udp(geneve(INNER6, proto=0x86DD), dport=6081), proto=17, **OUT4), "fd01::a"),
}


@pytest.mark.parametrize("name", sorted(TUNNELLED))
def test_tunnelled_tcp_is_decoded_to_the_inner_packet(tmp_path, name):
    kind, outer, inner_src = TUNNELLED[name]
    path = tmp_path / "t.pcap"
    write_pcap(path, [(T0, ether(outer)), (T0 + 10, ether(INNER4))], nano=True)
    t = read_pcap(path)
    assert list(t["tunnel"].astype(str)) == [kind, ""]
    r = t.iloc[0]
    assert r["src_addr"] == inner_src and r["ip_version"] == (4 if "." in inner_src else 6)
    assert (r["src_port"], r["dst_port"], r["payload_bytes"], r["tsval"]) == (40000, 443, 100, 111)
    assert r["wire_bytes"] == len(ether(outer))
    if shutil.which("tshark"):
        b = read_pcap(path, "tshark")
        for col in COLUMNS:
            assert (t[col].astype(str).to_numpy() == b[col].astype(str).to_numpy()).all(), (col, t[col], b[col])


def test_udp_on_other_ports_and_non_ip_in_a_tunnel_are_not_tcp(tmp_path):
    path = tmp_path / "u.pcap"
    arp = b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(28)
    frames = [(T0, ether(ipv4(udp(vxlan(ether(INNER4)), dport=4790), proto=17))),
              (T0 + 1, ether(ipv4(udp(vxlan(arp)), proto=17)))]
    write_pcap(path, frames, nano=True)
    with pytest.warns(TraceWarning, match="not_ip.*not_tcp|not_tcp.*not_ip"):
        t = read_pcap(path)
    acc = t.attrs["accounting"]
    assert len(t) == 0 and acc.skipped == {"not_tcp": 1, "not_ip": 1}


def test_ipv6_jumbogram_length_from_the_hop_by_hop_option(tmp_path):
    """BIG TCP: payload length 0, hop-by-hop Jumbo option = 70 000 + headers; captured 200 bytes of it."""
    payload = 70_000
    seg, _ = tcp(sport=1, dport=2, seq=5, ack=6, flags=0x10, payload=payload)
    hbh = bytes([6, 0, 0xC2, 4]) + struct.pack("!I", 8 + len(seg))
    ip = struct.pack("!IHBB16s16s", 6 << 28, 0, 0, 64, socket.inet_pton(socket.AF_INET6, "fd00::1"),
                     socket.inet_pton(socket.AF_INET6, "fd00::2")) + hbh + seg
    frame = ether(ip)
    path = tmp_path / "j.pcap"
    write_pcap(path, [(T0, frame)], nano=True, cut_to=200)
    t = read_pcap(path)
    assert len(t) == 1 and t["payload_bytes"].iloc[0] == payload and t["wire_bytes"].iloc[0] == len(frame)
    if shutil.which("tshark"):
        assert read_pcap(path, "tshark")["payload_bytes"].iloc[0] == payload


def test_ip_length_beyond_the_frame_is_capped_and_counted(tmp_path):
    ip = bytearray(ipv4(tcp(payload=10)))
    ip[2:4] = struct.pack("!H", 820)  # claims 780 bytes of payload; the frame holds 10
    path = tmp_path / "k.pcap"
    write_pcap(path, [(T0, ether(bytes(ip))), (T0 + 1, ether(ipv4(tcp(payload=10))))], nano=True)
    with pytest.warns(TraceWarning, match="1 segments whose IP length claims more than the frame held"):
        t = read_pcap(path)
    acc = t.attrs["accounting"]
    assert list(t["payload_bytes"]) == [10, 10]
    assert acc.notes["payload_beyond_frame"] == 1 and acc.records_read == acc.tcp_parsed == 2


def test_records_cut_at_the_snap_length_without_wire_length_keep_the_ip_length(tmp_path):
    """A writer that records the cut length as the wire length (dpkt's): the IP length is the truth there."""
    frame = ether(ipv4(tcp(payload=1000)))
    path = tmp_path / "s.pcap"
    write_pcap(path, [(T0, frame)], nano=True, snaplen=96, cut_to=96, orig_lens=[96])
    t = read_pcap(path)
    assert t["payload_bytes"].iloc[0] == 1000 and not t.attrs["accounting"].notes
