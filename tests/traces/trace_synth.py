"""Hand-built capture files for the reader tests, written byte by byte with struct (independent of the reader)."""

from __future__ import annotations

import socket
import struct


def tcp(sport=40000, dport=80, seq=1000, ack=0, flags=0x10, window=65535, options=b"", payload=0,
        data: bytes | None = None) -> tuple[bytes, int]:
    """TCP header (+ captured payload bytes); returns (bytes, payload length on the wire)."""
    opts = options + b"\x00" * (-len(options) % 4)
    doff = (20 + len(opts)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      (doff << 4) | ((flags >> 8) & 1), flags & 0xFF, window, 0, 0) + opts
    body = data if data is not None else bytes(payload)
    return hdr + body, len(body)


def ipv4(l4: tuple[bytes, int], src="10.0.0.1", dst="10.0.0.2", proto=6, ip_id=1, frag=0x4000,
         options=b"") -> bytes:
    seg, _ = l4
    opts = options + b"\x00" * (-len(options) % 4)
    ihl = (20 + len(opts)) // 4
    total = ihl * 4 + len(seg)
    return struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, ip_id, frag, 64, proto, 0,
                       socket.inet_aton(src), socket.inet_aton(dst)) + opts + seg


def ipv6(l4: tuple[bytes, int], src="fd00::1", dst="fd00::2", nh=6, ext: list[tuple[int, bytes]] = ()) -> bytes:
    """IPv6 with extension headers given as (header type, raw header bytes incl. next-header byte placeholder)."""
    seg, _ = l4
    chain = b""
    types = [t for t, _ in ext] + [nh]
    for i, (_t, raw) in enumerate(ext):
        chain += bytes([types[i + 1]]) + raw[1:]
    first = types[0]
    body = chain + seg
    return struct.pack("!IHBB16s16s", 6 << 28, len(body), first, 64, socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + body


def ether(ip: bytes, vlans: tuple[int, ...] = (), ethertype=None) -> bytes:
    et = ethertype if ethertype is not None else (0x0800 if ip[0] >> 4 == 4 else 0x86DD)
    tags = b"".join(struct.pack("!HH", tpid, 5) for tpid in vlans)
    return b"\x02" * 6 + b"\x04" * 6 + tags + struct.pack("!H", et) + ip


def ether_tagged(ip: bytes, tpid: int, tag: bytes) -> bytes:
    """Ethernet with one tag of another kind than 802.1Q (``tpid`` then ``tag``'s bytes) before the ethertype."""
    return ether(ip, ethertype=tpid)[:14] + tag + ether(ip)[12:]


def ether_llc(ip: bytes, oui: int = 0, vlan: bool = False) -> bytes:
    """IEEE 802.3 frame: a length instead of an ethertype (after an 802.1Q tag with ``vlan``), then LLC/SNAP
    (RFC 1042) carrying the ethertype."""
    snap = b"\xaa\xaa\x03" + oui.to_bytes(3, "big") + ether(ip)[12:14]
    tag = struct.pack("!HH", 0x8100, 5) if vlan else b""
    return b"\x02" * 6 + b"\x04" * 6 + tag + struct.pack("!H", len(snap) + len(ip)) + snap + ip


def sll(ip: bytes) -> bytes:
    return struct.pack("!HHH8sH", 0, 1, 6, b"\x02" * 8, 0x0800 if ip[0] >> 4 == 4 else 0x86DD) + ip


def sll2(ip: bytes) -> bytes:
    return struct.pack("!HHIHBB8s", 0x0800 if ip[0] >> 4 == 4 else 0x86DD, 0, 2, 1, 0, 6, b"\x02" * 8) + ip


def loopback(ip: bytes, network_order=False) -> bytes:
    fam = 2 if ip[0] >> 4 == 4 else 30
    return struct.pack("!I" if network_order else "<I", fam) + ip


def write_pcap(path, frames: list[tuple[int, bytes]], linktype=1, nano=False, big_endian=False, snaplen=262144,
               orig_lens: list[int] | None = None, cut_to: int | None = None) -> None:
    """frames: (timestamp_ns, frame bytes); cut_to trims every record's captured bytes (snap length)."""
    e = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)
    for i, (ts, frame) in enumerate(frames):
        orig = orig_lens[i] if orig_lens else len(frame)
        data = frame[:cut_to] if cut_to else frame
        frac = ts % 1_000_000_000 if nano else (ts % 1_000_000_000) // 1000
        out += struct.pack(e + "IIII", ts // 1_000_000_000, frac, len(data), orig) + data
    with open(path, "wb") as fh:
        fh.write(out)


def _opt(code: int, value: bytes, e: str) -> bytes:
    return struct.pack(e + "HH", code, len(value)) + value + b"\x00" * (-len(value) % 4)


def _block(btype: int, body: bytes, e: str) -> bytes:
    body += b"\x00" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack(e + "II", btype, n) + body + struct.pack(e + "I", n)


def pcapng_section(interfaces: list[tuple[int, int | None]], packets: list[tuple[int, int, bytes]],
                   big_endian=False) -> bytes:
    """interfaces: (linktype, tsresol byte or None); packets: (interface id, timestamp in ticks, frame)."""
    e = ">" if big_endian else "<"
    out = _block(0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1), e)
    for lt, resol in interfaces:
        opts = (_opt(9, bytes([resol]), e) if resol is not None else b"") + _opt(0, b"", e)
        out += _block(1, struct.pack(e + "HHI", lt, 0, 0) + opts, e)
    for ifid, ticks, frame in packets:
        out += _block(6, struct.pack(e + "IIIII", ifid, ticks >> 32, ticks & 0xFFFFFFFF, len(frame), len(frame))
                      + frame, e)
    return out


def ppp(ip: bytes, hdlc=False) -> bytes:
    """PPP frame (LINKTYPE_PPP 9; with ``hdlc`` the FF 03 address/control bytes, as LINKTYPE 50 writes)."""
    return (b"\xff\x03" if hdlc else b"") + struct.pack("!H", 0x0021 if ip[0] >> 4 == 4 else 0x0057) + ip


def _as_l4(payload: bytes) -> tuple[bytes, int]:
    return payload, len(payload)


def gre(inner: bytes, key: int | None = None, seq: int | None = None, proto: int | None = None) -> tuple[bytes, int]:
    """GRE version 0 header (optional key and sequence number) + inner packet, as an IP payload (protocol 47)."""
    flags = (0x2000 if key is not None else 0) | (0x1000 if seq is not None else 0)
    et = proto if proto is not None else (0x0800 if inner[0] >> 4 == 4 else 0x86DD)
    hdr = struct.pack("!HH", flags, et) + (struct.pack("!I", key) if key is not None else b"") \
        + (struct.pack("!I", seq) if seq is not None else b"")
    return _as_l4(hdr + inner)


def udp(payload: bytes, sport=54321, dport=4789) -> tuple[bytes, int]:
    return _as_l4(struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload)


def vxlan(frame: bytes, vni=42) -> bytes:
    return struct.pack("!II", 0x08000000, vni << 8) + frame


def geneve(inner: bytes, options: bytes = b"", proto=0x6558, vni=7) -> bytes:
    return struct.pack("!BBHI", len(options) // 4, 0, proto, vni << 8) + options + inner


def gre_raw(payload: bytes, proto: int, flags: int = 0, extra: bytes = b"") -> tuple[bytes, int]:
    """GRE header with the given flags word, protocol type and optional fields (``extra``), then ``payload``."""
    return _as_l4(struct.pack("!HH", flags, proto) + extra + payload)


def erspan2(frame: bytes, session=7) -> tuple[bytes, int]:
    """ERSPAN type II in GRE (sequence number set): 8-byte header (version 1), then the mirrored frame."""
    return gre_raw(struct.pack("!HHI", 0x1000 | 1, session, 0) + frame, 0x88BE, 0x1000, struct.pack("!I", 5))


def erspan3(frame: bytes, subheader=False, frame_type=0) -> tuple[bytes, int]:
    """ERSPAN type III in GRE: 12-byte header (version 2), the 8-byte platform subheader with ``subheader``."""
    last = (frame_type << 10) | (1 if subheader else 0)
    hdr = struct.pack("!HHIHH", 0x2000 | 1, 7, 0, 0, last) + (bytes(8) if subheader else b"")
    return gre_raw(hdr + frame, 0x22EB, 0x1000, struct.pack("!I", 5))


def nsh(inner: bytes, next_protocol=1, md_type=2, context: bytes = b"") -> bytes:
    """NSH (RFC 8300): base and service path headers (+ 16 bytes of context for MD type 1), then ``inner``."""
    ctx = bytes(16) if md_type == 1 else context
    return struct.pack("!BBBBI", 0, (8 + len(ctx)) // 4, md_type, next_protocol, (5 << 8) | 255) + ctx + inner


def mpls(inner: bytes, labels=(100,)) -> bytes:
    """An MPLS label stack (bottom of stack on the last label, TTL 64), then ``inner``."""
    out = b"".join(struct.pack("!I", (lab << 12) | (0x100 if i == len(labels) - 1 else 0) | 64)
                   for i, lab in enumerate(labels))
    return out + inner


def gtp_u(inner: bytes, msg_type=0xFF, extensions: list[bytes] = ()) -> bytes:
    """GTPv1-U header (TEID 0x1234); with ``extensions`` the optional fields and a chain of extension headers
    (each given as its content, padded to 4-byte words with its length and next-type bytes)."""
    if not extensions:
        return struct.pack("!BBHI", 0x30, msg_type, len(inner), 0x1234) + inner
    chain = b""
    for i, content in enumerate(extensions):
        words = (len(content) + 2 + 3) // 4
        body = content.ljust(words * 4 - 2, b"\x00")
        chain += bytes([words]) + body + bytes([0x85 if i < len(extensions) - 1 else 0])
    rest = struct.pack("!HBB", 0, 0, 0x85) + chain + inner
    return struct.pack("!BBHI", 0x34, msg_type, len(rest), 0x1234) + rest


def teredo(ipv6_packet: bytes, auth=False, origin=False) -> bytes:
    """Teredo payload: optional authentication (client id 2, auth value 3 bytes) and origin indications."""
    out = (struct.pack("!HBB", 1, 2, 3) + bytes(2 + 3 + 8 + 1)) if auth else b""
    out += (struct.pack("!HH", 0, 0x1234) + bytes(4)) if origin else b""
    return out + ipv6_packet


def l2tp(ppp_frame: bytes, control=False, length=False, sequence=False) -> bytes:
    """L2TPv2 header (tunnel 1, session 2; the length and Ns/Nr fields on request), then ``ppp_frame``."""
    flags = 0x0002 | (0x8000 if control else 0) | (0x4000 if length else 0) | (0x0800 if sequence else 0)
    size = 6 + (2 if length else 0) + (4 if sequence else 0)
    hdr = struct.pack("!H", flags) + (struct.pack("!H", size + len(ppp_frame)) if length else b"") \
        + struct.pack("!HH", 1, 2) + (struct.pack("!HH", 3, 4) if sequence else b"")
    return hdr + ppp_frame


def vxlan_gpe(inner: bytes, next_protocol=1, vni=42) -> bytes:
    """VXLAN-GPE header (flags I and P), then ``inner``."""
    return struct.pack("!BBBBI", 0x0C, 0, 0, next_protocol, vni << 8) + inner


def _snap(ip: bytes) -> bytes:
    return b"\xaa\xaa\x03\x00\x00\x00" + ether(ip)[12:14]


def wlan(ip: bytes, to_ds=True, from_ds=False, qos=False, htc=False, protected=False, subtype=None,
         pad=False, amsdu=False) -> bytes:
    """IEEE 802.11 data frame (LINKTYPE 105): frame control, duration, 3 or 4 addresses, sequence control, QoS
    and HT control as asked, padding to 4 bytes with ``pad`` (what radiotap's data-pad flag announces), then
    LLC/SNAP and ``ip``."""
    flags = (1 if to_ds else 0) | (2 if from_ds else 0) | (0x40 if protected else 0) | (0x80 if htc else 0)
    sub = subtype if subtype is not None else (8 if qos else 0)
    hdr = struct.pack("<HH", (2 << 2) | (sub << 4) | (flags << 8), 0) + b"\x04" * 6 + b"\x02" * 6 + b"\x06" * 6 \
        + struct.pack("<H", 0x10) + (b"\x08" * 6 if to_ds and from_ds else b"")
    if sub & 8:
        hdr += struct.pack("<H", 0x80 if amsdu else 0) + (bytes(4) if htc else b"")
    if pad:
        hdr += bytes(-len(hdr) % 4)
    return hdr + _snap(ip) + ip


def radiotap(frame: bytes, tsft=False, flags: int | None = None, extra_presence_words=0) -> bytes:
    """Radiotap header (LINKTYPE 127): presence words (bit 31 chains ``extra_presence_words`` more), TSFT and
    flags fields as asked (TSFT aligned to 8 bytes), then the 802.11 ``frame``."""
    first = (1 if tsft else 0) | (2 if flags is not None else 0) | (0x80000000 if extra_presence_words else 0)
    words = [first] + [0x80000000] * (extra_presence_words - 1) + ([0] if extra_presence_words else [])
    hdr = struct.pack("<BBH", 0, 0, 0) + b"".join(struct.pack("<I", w) for w in words)
    if tsft:
        hdr += bytes(-len(hdr) % 8) + struct.pack("<Q", 123456)
    if flags is not None:
        hdr += bytes([flags])
    return hdr[:2] + struct.pack("<H", len(hdr)) + hdr[4:] + frame


def ppi(frame: bytes, dlt=105) -> bytes:
    """PPI header (LINKTYPE 192) without fields: version, flags, length 8, the link type of ``frame``."""
    return struct.pack("<BBHI", 0, 0, 8, dlt) + frame


def erf(payload: bytes, record_type=2, extensions=0) -> bytes:
    """ERF record (LINKTYPE 197): 16-byte header, ``extensions`` 8-byte extension headers, 2 bytes of
    padding before an Ethernet frame (types 2, 16, 21), then ``payload``."""
    exts = b"".join(bytes([0x80 if i < extensions - 1 else 0]) + bytes(7) for i in range(extensions))
    pad = b"\x00\x00" if record_type in (2, 16, 21) else b""
    rtype = record_type | (0x80 if extensions else 0)
    rlen = 16 + len(exts) + len(pad) + len(payload)
    return struct.pack("<Q", 1 << 32) + struct.pack("!BBHHH", rtype, 0, rlen, 0, len(payload)) + exts + pad + payload


def ipnet(ip: bytes) -> bytes:
    """Solaris IPNET header (LINKTYPE 226): the 24-byte ``dl_ipnetinfo`` (family 2 or 26), then ``ip``."""
    return struct.pack("!BBHIIIII", 1, 2 if ip[0] >> 4 == 4 else 26, 0, len(ip), 1, 0, 0, 0) + ip


def pflog(ip: bytes, af: int | None = None) -> bytes:
    """OpenBSD pflog header (LINKTYPE 117): length 61, padded to 64 bytes, then ``ip``."""
    fam = af if af is not None else (2 if ip[0] >> 4 == 4 else 24)
    hdr = struct.pack("!BBBB", 61, fam, 0, 0) + b"em0".ljust(16, b"\0") + bytes(16) + struct.pack("!6I", *[0] * 6) \
        + b"\x01" + bytes(3)
    return hdr + ip


def c_hdlc(ip: bytes) -> bytes:
    """Cisco HDLC (LINKTYPE 104): unicast address, control 0, ethertype."""
    return b"\x0f\x00" + ether(ip)[12:14] + ip


def atm_llc(ip: bytes) -> bytes:
    """ATM with RFC 1483 LLC encapsulation (LINKTYPE 100): LLC/SNAP, then ``ip``."""
    return _snap(ip) + ip


def sunatm(ip: bytes) -> bytes:
    """SunATM (LINKTYPE 123): flags, VPI, VCI (4 bytes), then LLC/SNAP and ``ip``."""
    return bytes([0x02, 0, 0, 32]) + _snap(ip) + ip


def frame_relay(ip: bytes, encap: str = "nlpid") -> bytes:
    """Frame Relay (LINKTYPE 107), DLCI 100 in a 2-byte Q.922 address, then ``encap``: ``nlpid`` (RFC 2427: UI
    0x03 and NLPID 0xCC / 0x8E), ``padded`` (a 0x00 before the NLPID), ``snap`` (NLPID 0x80, SNAP with the
    ethertype), ``cisco`` (the ethertype at once), ``address4`` (a 4-byte address, then as ``nlpid``)."""
    addr = b"\x18\x41"
    v4 = ip[0] >> 4 == 4
    if encap == "cisco":
        return addr + ether(ip)[12:14] + ip
    if encap == "address4":
        addr = b"\x18\x40\x00\x01"
    if encap == "snap":
        return addr + b"\x03\x00\x80" + b"\x00\x00\x00" + ether(ip)[12:14] + ip
    return addr + b"\x03" + (b"\x00" if encap == "padded" else b"") + (b"\xcc" if v4 else b"\x8e") + ip


def pktap(frame: bytes, dlt: int = 1) -> bytes:
    """Apple PKTAP header (LINKTYPE 258): 108 bytes, little-endian, packet type 1, ``frame``'s DLT, interface
    en0, process curl; then ``frame``."""
    hdr = struct.pack("<III", 108, 1, dlt) + b"en0".ljust(24, b"\0") + struct.pack("<IIIIi", 0, 2, 0, 0, 123) \
        + b"curl".ljust(17, b"\0")
    return hdr.ljust(108, b"\0") + frame


def netanalyzer(frame: bytes, gpio: bool = False, status: int = 0, version: int = 1) -> bytes:
    """Hilscher netANALYZER record (LINKTYPE 240): the 4-byte little-endian header (error flags ``status``,
    GPIO flag, header version, port 0, frame length), then ``frame`` and a 4-byte FCS."""
    body = frame + b"\x11\x22\x33\x44"
    return bytes([status, (1 if gpio else 0) | (version << 2)]) + struct.pack("<H", len(body)) + body


def ipoib(ip: bytes, grh: bool = False) -> bytes:
    """IP over InfiniBand record (LINKTYPE 242): 40 bytes of addresses (a global route header, version 6, when
    ``grh``; else 20 bytes and the destination's QPN and GID), the RFC 4391 type and 2 reserved bytes, ``ip``."""
    addresses = (b"\x60" + bytes(39)) if grh else bytes(20) + struct.pack("!I", 0x48) + bytes.fromhex("fe80" + "00" * 13 + "01")
    return addresses + struct.pack("!HH", 0x0800 if ip[0] >> 4 == 4 else 0x86DD, 0) + ip
