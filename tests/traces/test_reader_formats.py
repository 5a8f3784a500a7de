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
    atm_llc,
    c_hdlc,
    erf,
    erspan2,
    erspan3,
    ether,
    ether_llc,
    ether_tagged,
    frame_relay,
    geneve,
    gre,
    gre_raw,
    gtp_u,
    ipnet,
    ipoib,
    ipv4,
    ipv6,
    l2tp,
    loopback,
    mpls,
    netanalyzer,
    nsh,
    pcapng_section,
    pflog,
    pktap,
    ppi,
    ppp,
    radiotap,
    sll,
    sll2,
    sunatm,
    tcp,
    teredo,
    udp,
    vxlan,
    vxlan_gpe,
    wlan,
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
    "llc_snap": (1, ether_llc),
    "llc_snap_cisco": (1, lambda ip: ether_llc(ip, oui=0xF8)),
    "pbb": (1, lambda ip: ether_tagged(ip, 0x88E7, bytes.fromhex("00000100") + b"\x06" * 6 + b"\x08" * 6)),
    "vn_tag": (1, lambda ip: ether_tagged(ip, 0x8926, bytes(4))),
    "e_tag": (1, lambda ip: ether_tagged(ip, 0x893F, bytes(6))),
    "cisco_metadata": (1, lambda ip: ether_tagged(ip, 0x8909, bytes.fromhex("010100010005"))),
    "vlan_then_llc": (1, lambda ip: ether_llc(ip, vlan=True)),
    "wlan": (105, wlan),
    "wlan_qos_4addr_htc": (105, lambda ip: wlan(ip, from_ds=True, qos=True, htc=True)),
    "wlan_order_bit_without_qos": (105, lambda ip: wlan(ip, to_ds=False, from_ds=True, htc=True)),
    "radiotap": (127, lambda ip: radiotap(wlan(ip))),
    "radiotap_tsft_flags_fcs": (127, lambda ip: radiotap(wlan(ip) + b"\x11\x22\x33\x44", tsft=True, flags=0x10)),
    "radiotap_data_pad": (127, lambda ip: radiotap(wlan(ip, qos=True, pad=True), flags=0x20)),
    "radiotap_presence_words": (127, lambda ip: radiotap(wlan(ip, qos=True, pad=True), tsft=True, flags=0x20,
                                                         extra_presence_words=2)),
    "ppi_wlan": (192, lambda ip: ppi(wlan(ip))),
    "ppi_ethernet": (192, lambda ip: ppi(ether(ip), dlt=1)),
    "erf_ethernet": (197, lambda ip: erf(ether(ip))),
    "erf_extensions": (197, lambda ip: erf(ether(ip, vlans=(0x8100,)), extensions=2)),
    "erf_ip": (197, lambda ip: erf(ip, record_type=22 if ip[0] >> 4 == 4 else 23)),
    "ipnet": (226, ipnet),
    "pflog": (117, pflog),
    "pflog_freebsd": (117, lambda ip: pflog(ip, af=2 if ip[0] >> 4 == 4 else 28)),
    "cisco_hdlc": (104, c_hdlc),
    "atm_rfc1483": (100, atm_llc),
    "sunatm": (123, sunatm),
    "frame_relay": (107, frame_relay),
    "frame_relay_padded": (107, lambda ip: frame_relay(ip, "padded")),
    "frame_relay_snap": (107, lambda ip: frame_relay(ip, "snap")),
    "frame_relay_cisco": (107, lambda ip: frame_relay(ip, "cisco")),
    "frame_relay_address4": (107, lambda ip: frame_relay(ip, "address4")),
    "pktap_ethernet": (258, lambda ip: pktap(ether(ip))),
    "pktap_loopback": (258, lambda ip: pktap(loopback(ip), dlt=0)),
    "pktap_raw": (258, lambda ip: pktap(ip, dlt=12)),
    "netanalyzer": (240, lambda ip: netanalyzer(ether(ip))),
    "netanalyzer_errors_and_version_2": (240, lambda ip: netanalyzer(ether(ip, vlans=(0x8100,)), status=0x04,
                                                                     version=2)),
    "ipoib": (242, ipoib),
    "ipoib_grh": (242, lambda ip: ipoib(ip, grh=True)),
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
    if lt != 197:  # an ERF record's time is its own header's: test_erf_time_and_lengths_are_the_records_own
        assert r["timestamp_ns"] == T0 and t["timestamp_ns"].iloc[1] == T0 + 1500
    assert r["ip_version"] == version and r["payload_bytes"] == 100 and r["tcp_header_bytes"] == 20 + len(OPTS)
    assert r["src_addr"] == ("10.0.0.1" if version == 4 else "fd00::1")
    assert (r["src_port"], r["dst_port"], r["seq"], r["ack"], r["window"]) == (40000, 443, 4294967000, 17, 512)
    assert (r["mss"], r["window_scale"], r["sack_permitted"], r["tsval"], r["tsecr"]) == (1460, 7, True, 111, 222)
    assert (r["sack_count"], r["sack_left"], r["sack_right"]) == (2, 5000, 6000)
    assert r["ip_id"] == (99 if version == 4 else 0)
    assert [str(d) for d in t.dtypes] == list(COLUMNS.values())


@needs_tshark
@pytest.mark.parametrize("link", sorted(set(LINKS) - {"ethernet", "raw12", "raw14"}))
def test_synthetic_link_types_agree_with_tshark(tmp_path, link):
    lt, wrap = LINKS[link]
    path = tmp_path / "x.pcap"
    frames = [(T0 + i, wrap(ipv4(segment(), ip_id=i) if i % 2 else ipv6(segment()))) for i in range(6)]
    write_pcap(path, frames, linktype=lt, nano=True)
    a, b = read_pcap(path), read_pcap(path, "tshark")
    for col in COLUMNS:
        assert (a[col].astype(str).to_numpy() == b[col].astype(str).to_numpy()).all(), col


def _same_as_tshark(path, table) -> None:
    """Every column of ``table`` equal to the tshark engine's reading of ``path`` (where tshark is installed)."""
    if shutil.which("tshark"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            b = read_pcap(path, "tshark")
        for col in COLUMNS:
            assert (table[col].astype(str).to_numpy() == b[col].astype(str).to_numpy()).all(), col


def _ah(next_header: int, payload: bytes, icv_bytes: int = 12) -> bytes:
    """An IPsec AH header (RFC 4302; SPI 0x100, sequence 1, an ICV of ``icv_bytes``) before ``payload``."""
    return bytes([next_header, (12 + icv_bytes) // 4 - 2, 0, 0]) + struct.pack("!II", 0x100, 1) + bytes(icv_bytes) \
        + payload


def test_ipsec_ah_before_tcp_is_followed(tmp_path):
    """AH in transport mode after an IPv4 or IPv6 header, once or twice, then TCP: as tshark decodes it."""
    seg, _ = segment()
    frames = [ether(ipv4((_ah(6, seg), 0), proto=51, ip_id=1)),
              ether(ipv4((_ah(51, _ah(6, seg, icv_bytes=16)), 0), proto=51, ip_id=2)),
              ether(ipv6((_ah(6, seg), 0), nh=51)),
              ether(ipv4((_ah(6, seg), 0), proto=51, ip_id=3))[:14 + 20 + 10]]
    path = tmp_path / "ah.pcap"
    write_pcap(path, [(T0 + i, f) for i, f in enumerate(frames)], nano=True)
    with pytest.warns(TraceWarning, match="truncated_headers"):
        t = read_pcap(path)
    assert list(t["payload_bytes"]) == [100, 100, 100] and list(t["tcp_header_bytes"]) == [20 + len(OPTS)] * 3
    _same_as_tshark(path, t)


def test_ip_version_against_the_ethertype_as_wireshark_reads_it(tmp_path):
    """IPv4's ethertype over an IPv6 header: decoded as IPv6 (Wireshark's IPv4 dissector hands it on); IPv6's
    ethertype over an IPv4 header: a bad header (Wireshark's IPv6 dissector does not)."""
    path = tmp_path / "v.pcap"
    write_pcap(path, [(T0, ether(ipv6(segment()), ethertype=0x0800)), (T0 + 1, ether(ipv4(segment()), ethertype=0x86DD)),
                      (T0 + 2, ether(ipv6(segment())[:30], ethertype=0x0800))], nano=True)
    with pytest.warns(TraceWarning, match="bad_header"):
        t = read_pcap(path)
    assert len(t) == 1 and t["ip_version"].iloc[0] == 6
    assert t.attrs["accounting"].skipped == {"bad_header": 1, "truncated_headers": 1}
    _same_as_tshark(path, t)


def test_erf_time_and_lengths_are_the_records_own(tmp_path):
    """ERF's 32.32 fixed-point time rounded to the nearest ns (a fraction of 2**32 - 1 carries into the next
    second), its wire length, and the frame without the ERF header, as tshark counts them."""
    ip = ipv4(segment())
    frames = []
    for frac in (0, 1, 0x12345678, 1 << 31, 0xFFFFFFFF):
        rec = bytearray(erf(ether(ip), extensions=1))
        struct.pack_into("<Q", rec, 0, (1_700_000_123 << 32) | frac)
        struct.pack_into("!H", rec, 14, len(ether(ip)) + 4)  # the wire length counts the FCS, not captured
        frames.append((T0, bytes(rec)))
    path = tmp_path / "e.pcap"
    write_pcap(path, frames, linktype=197, nano=True, orig_lens=[len(frames[0][1]) + 99] * len(frames))
    t = read_pcap(path)
    expected = [1_700_000_123 * 10**9 + (f * 10**9 + 2**31) // 2**32 for f in (0, 1, 0x12345678, 1 << 31, 0xFFFFFFFF)]
    assert list(t["timestamp_ns"]) == expected and expected[-1] == 1_700_000_124 * 10**9
    assert set(t["wire_bytes"]) == {len(ether(ip)) + 4} and set(t["captured_bytes"]) == {len(ether(ip))}
    _same_as_tshark(path, t)


#: 802.11 frames that carry no packet Wireshark follows: name -> frame
WLAN_WITHOUT_A_PACKET = {
    "protected": wlan(ipv4(segment()), protected=True),
    "null_function": wlan(ipv4(segment()), subtype=4),
    "qos_null": wlan(ipv4(segment()), subtype=12),
    "a_msdu": wlan(ipv4(segment()), qos=True, amsdu=True),
}


@pytest.mark.parametrize("name", sorted(WLAN_WITHOUT_A_PACKET))
def test_wlan_frames_without_a_packet_are_not_ip(tmp_path, name):
    path = tmp_path / "w.pcap"
    write_pcap(path, [(T0, WLAN_WITHOUT_A_PACKET[name]), (T0 + 1, wlan(ipv4(segment())))], linktype=105, nano=True)
    with pytest.warns(TraceWarning, match="not_ip"):
        t = read_pcap(path)
    assert len(t) == 1 and t.attrs["accounting"].skipped == {"not_ip": 1}
    if shutil.which("tshark"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            assert len(read_pcap(path, "tshark")) == 1


def test_netanalyzer_records_without_a_packet_are_not_ip(tmp_path):
    """A netANALYZER GPIO event (link type 240) and a transparent-mode frame (241, preamble kept) carry no packet
    Wireshark reads: each counted as not IP, beside a frame that is read."""
    ip = ipv4(segment())
    for linktype, frame in ((240, netanalyzer(ether(ip), gpio=True)),
                            (241, netanalyzer(b"\x55" * 7 + b"\xd5" + ether(ip)))):
        path = tmp_path / f"n{linktype}.pcap"
        read = [(T0 + 1, netanalyzer(ether(ip)))] if linktype == 240 else []
        write_pcap(path, [(T0, frame)] + read, linktype=linktype, nano=True)
        with pytest.warns(TraceWarning, match="not_ip"):
            t = read_pcap(path)
        assert len(t) == len(read) and t.attrs["accounting"].skipped == {"not_ip": 1}
        if shutil.which("tshark"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TraceWarning)
                assert len(read_pcap(path, "tshark")) == len(read)


def _read_every_cut(tmp_path, frame: bytes, linktype: int):
    """``frame`` cut at every snap length (its wire length kept), read: (table, accounting), parsed + skipped =
    read checked."""
    path = tmp_path / "c.pcap"
    write_pcap(path, [(T0 + cut, frame[:cut]) for cut in range(1, len(frame) + 1)], linktype=linktype, nano=True,
               orig_lens=[len(frame)] * len(frame))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        t = read_pcap(path)
    acc = t.attrs["accounting"]
    assert acc.records_read == len(frame) == acc.tcp_parsed + sum(acc.skipped.values())
    return t, acc


@pytest.mark.parametrize("link", sorted(set(LINKS) - {"ethernet", "raw12", "raw14"}))
def test_a_link_header_cut_anywhere_is_accounted_for(tmp_path, link):
    """Every snap length of one frame: parsed + skipped = read, only truncation skipped, the whole frame parsed."""
    lt, wrap = LINKS[link]
    t, acc = _read_every_cut(tmp_path, wrap(ipv4(segment())), lt)
    assert set(acc.skipped) <= {"truncated_headers"} and acc.tcp_parsed >= 1


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
    # what else Wireshark follows inside GRE
    "erspan_i": ("gre", ipv4(gre_raw(ether(INNER4), 0x88BE), proto=47, **OUT4), "192.168.1.1"),
    "erspan_ii": ("gre", ipv4(erspan2(ether(INNER4, vlans=(0x8100,))), proto=47, **OUT4), "192.168.1.1"),
    "erspan_iii": ("gre", ipv6(erspan3(ether(INNER6)), nh=47), "fd01::a"),
    "erspan_iii_subheader": ("gre", ipv4(erspan3(ether(INNER4), subheader=True), proto=47, **OUT4), "192.168.1.1"),
    "wccp_redirect": ("gre", ipv4(gre_raw(bytes(4) + INNER4, 0x883E), proto=47, **OUT4), "192.168.1.1"),
    "wccp_plain": ("gre", ipv4(gre_raw(INNER4, 0x883E), proto=47, **OUT4), "192.168.1.1"),
    "nsh_md1": ("gre", ipv4(gre_raw(nsh(INNER4, md_type=1), 0x894F), proto=47, **OUT4), "192.168.1.1"),
    "nsh_md2_ethernet": ("gre", ipv4(gre_raw(nsh(ether(INNER6), next_protocol=3, context=bytes(8)), 0x894F),
                                     proto=47, **OUT4), "fd01::a"),
    "gre_mpls": ("gre", ipv4(gre_raw(mpls(INNER4, labels=(16, 17)), 0x8847), proto=47, **OUT4), "192.168.1.1"),
    "gre_in_udp": ("gre", ipv4(udp(gre_raw(INNER6, 0x86DD)[0], sport=50000, dport=4754), proto=17, **OUT4),
                   "fd01::a"),
    # UDP tunnels
    "gtp_u": ("gtp", ipv4(udp(gtp_u(INNER4), sport=2152, dport=2152), proto=17, **OUT4), "192.168.1.1"),
    "gtp_u_extensions": ("gtp", ipv6(udp(gtp_u(INNER6, extensions=[b"\x09", b"\x01\x02\x03\x04\x05"]), sport=2152,
                                         dport=40000), nh=17), "fd01::a"),
    "teredo": ("teredo", ipv4(udp(teredo(INNER6), sport=3544, dport=40001), proto=17, **OUT4), "fd01::a"),
    "teredo_indications": ("teredo", ipv4(udp(teredo(INNER6, auth=True, origin=True), sport=40001, dport=3544),
                                          proto=17, **OUT4), "fd01::a"),
    "l2tp_hdlc": ("l2tp", ipv4(udp(l2tp(ppp(INNER4, hdlc=True)), sport=1701, dport=1701), proto=17, **OUT4),
                  "192.168.1.1"),
    "l2tp_length_sequence": ("l2tp", ipv4(udp(l2tp(ppp(INNER6), length=True, sequence=True), sport=1701, dport=1701),
                                          proto=17, **OUT4), "fd01::a"),
    "l2tp_compressed_protocol": ("l2tp", ipv4(udp(l2tp(b"\x21" + INNER4), sport=1701, dport=1701), proto=17, **OUT4),
                                 "192.168.1.1"),
    "mpls_in_udp": ("mpls", ipv4(udp(mpls(INNER4), sport=50000, dport=6635), proto=17, **OUT4), "192.168.1.1"),
    "vxlan_gpe_ipv4": ("vxlan", ipv4(udp(vxlan_gpe(INNER4), dport=4790), proto=17, **OUT4), "192.168.1.1"),
    "vxlan_gpe_ethernet": ("vxlan", ipv4(udp(vxlan_gpe(ether(INNER6), next_protocol=3), dport=4790), proto=17,
                                         **OUT4), "fd01::a"),
    "vxlan_source_port": ("vxlan", ipv4(udp(vxlan(ether(INNER4)), sport=4789, dport=40000), proto=17, **OUT4),
                          "192.168.1.1"),
}
#: UDP and GRE packets on tunnel ports or types that carry no TCP segment, for Wireshark as for the reader:
#: name -> (outer IP packet, the reader's skip reason)
NO_TCP_INSIDE = {
    "gtp_echo": (ipv4(udp(gtp_u(bytes(4), msg_type=1), sport=2152, dport=2152), proto=17, **OUT4), "not_tcp"),
    "gtp_beside_a_well_known_port": (ipv4(udp(gtp_u(INNER4), sport=53, dport=2152), proto=17, **OUT4), "not_tcp"),
    "l2tp_control": (ipv4(udp(l2tp(bytes(8), control=True, length=True, sequence=True), sport=1701, dport=1701),
                          proto=17, **OUT4), "not_tcp"),
    "l2tp_lcp": (ipv4(udp(l2tp(b"\xff\x03\xc0\x21" + bytes(8)), sport=1701, dport=1701), proto=17, **OUT4), "not_ip"),
    "erspan_iii_ip_frame": (ipv4(erspan3(INNER4, frame_type=2), proto=47, **OUT4), "not_ip"),
    "vxlan_gpe_unknown_next_protocol": (ipv4(udp(vxlan_gpe(INNER4, next_protocol=0), dport=4790), proto=17, **OUT4),
                                        "not_ip"),
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
    _same_as_tshark(path, t)


@pytest.mark.parametrize("name", sorted(NO_TCP_INSIDE))
def test_tunnel_ports_and_types_without_a_segment_inside(tmp_path, name):
    outer, reason = NO_TCP_INSIDE[name]
    path = tmp_path / "n.pcap"
    write_pcap(path, [(T0, ether(outer)), (T0 + 10, ether(INNER4))], nano=True)
    with pytest.warns(TraceWarning, match=reason):
        t = read_pcap(path)
    assert len(t) == 1 and t.attrs["accounting"].skipped == {reason: 1}
    if shutil.which("tshark"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            assert len(read_pcap(path, "tshark")) == 1


@pytest.mark.parametrize("name", sorted(TUNNELLED))
def test_a_tunnelled_frame_cut_anywhere_is_accounted_for(tmp_path, name):
    """Every snap length: parsed + skipped = read; a record cut inside the tunnel's headers is truncated, one cut
    inside an outer UDP header (its ports unknown) is UDP, not TCP."""
    kind, outer, _ = TUNNELLED[name]
    t, acc = _read_every_cut(tmp_path, ether(outer), 1)
    over_udp = kind not in ("gre", "ipip") or name == "gre_in_udp"
    assert set(acc.skipped) <= {"truncated_headers", "bad_header", "not_tcp"}
    assert acc.skipped.get("not_tcp", 0) == (8 if over_udp else 0)
    assert acc.tcp_parsed >= 1 and (t["tunnel"].astype(str) == kind).all()


def test_udp_on_other_ports_and_non_ip_in_a_tunnel_are_not_tcp(tmp_path):
    path = tmp_path / "u.pcap"
    arp = b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(28)
    frames = [(T0, ether(ipv4(udp(vxlan(ether(INNER4)), dport=4791), proto=17))),
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
