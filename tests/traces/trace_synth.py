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
