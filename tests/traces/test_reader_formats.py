"""Container formats, link types, IP versions and TCP options on hand-built files with known contents."""

from __future__ import annotations

import gzip
import struct
import warnings

import pytest

from tcpmodels.traces import COLUMNS, TraceWarning, read_pcap
from tcpmodels.traces.mptcp import mptcp_token
from trace_fixtures import needs_tshark
from trace_synth import (ether, ipv4, ipv6, loopback, pcapng_section, sll, sll2, tcp, write_pcap)

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
    "null": (0, loopback),
    "loop": (108, lambda ip: loopback(ip, network_order=True)),
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
@pytest.mark.parametrize("link", ["vlan", "qinq", "sll", "raw", "null"])
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
              ether(ipv4(segment(), frag=0x0010)),  # later fragment
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
