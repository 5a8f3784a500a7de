"""Link-layer, IP and TCP header decoding for a batch of records, with numpy array operations.

Input is a :class:`~tcpmodels.traces.pcapfile.RecordBatch`; output is the
packet-table columns for the records that are TCP segments, and the number of
records skipped for each reason (see :mod:`tcpmodels.traces.schema`).

Link types (numbers from the tcpdump.org LINKTYPE list): 1 Ethernet (with any
number up to three of 802.1Q / 802.1ad / QinQ tags), 113 Linux cooked (SLL),
276 Linux cooked v2 (SLL2, ``tcpdump -i any``), 101 / 12 / 14 raw IP, 228 raw
IPv4, 229 raw IPv6, 0 BSD loopback (host byte order), 108 OpenBSD loopback
(network byte order).

References
----------
.. [1] tcpdump.org, "Link-layer header types" (LINKTYPE_ values, SLL and SLL2 layouts).
.. [2] RFC 791 (IPv4), RFC 8200 (IPv6 and its extension headers), RFC 9293 (TCP).
"""

from __future__ import annotations

import numpy as np

from .options import parse_options, u8, u16, u32
from .pcapfile import RecordBatch

__all__ = ["decode_batch", "LINK_TYPES"]

LINK_TYPES = {0: "BSD loopback", 1: "Ethernet", 12: "raw IP", 14: "raw IP", 101: "raw IP", 108: "OpenBSD loopback",
              113: "Linux cooked (SLL)", 228: "raw IPv4", 229: "raw IPv6", 276: "Linux cooked v2 (SLL2)"}
VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
ETH_IPV4, ETH_IPV6 = 0x0800, 0x86DD
IPV6_EXT = (0, 43, 60, 135, 139, 140, 253, 254)  # hop-by-hop, routing, dest opts, mobility, HIP, shim6, tests
REASON_CODES = {1: "not_ip", 2: "not_tcp", 3: "ip_fragment", 4: "truncated_headers", 5: "bad_header",
                6: "unknown_link_type", 7: "ipsec_esp"}
_NOT_IP, _NOT_TCP, _FRAG, _TRUNC, _BAD, _LINK, _ESP = range(1, 8)


def _link_layer(buf, start, cap, link, reason):
    """Ethertype-like network protocol and offset of the IP header, per record."""
    n = len(start)
    proto = np.zeros(n, np.int64)
    off = np.full(n, -1, np.int64)
    known = np.isin(link, list(LINK_TYPES))
    reason[~known] = _LINK

    def need(sel, nbytes):
        short = sel & (cap < nbytes)
        reason[short & (reason == 0)] = _TRUNC
        return sel & ~short

    # Ethernet + VLAN tags
    e = need(link == 1, 14)
    proto[e] = u16(buf, start[e] + 12)
    off[e] = 14
    for _ in range(3):
        v = e & np.isin(proto, VLAN_TPIDS) & (reason == 0)
        if not v.any():
            break
        v = need(v, off + 4)
        proto[v] = u16(buf, start[v] + off[v] + 2)
        off[v] += 4
    # Linux cooked v1: protocol at 14, header 16 bytes; v2: protocol at 0, header 20 bytes
    s = need(link == 113, 16)
    proto[s], off[s] = u16(buf, start[s] + 14), 16
    s = need(link == 276, 20)
    proto[s], off[s] = u16(buf, start[s]), 20
    # raw IP: version nibble
    r = need(np.isin(link, (12, 14, 101, 228, 229)), 1)
    ver = u8(buf, start[r]) >> 4
    proto[r] = np.where(ver == 4, ETH_IPV4, np.where(ver == 6, ETH_IPV6, 0))
    off[r] = 0
    # loopback: 4-byte address family, host (0) or network (108) byte order
    lo = need(np.isin(link, (0, 108)), 4)
    b = buf[start[lo][:, None] + np.arange(4)].astype(np.int64)
    fam_be = (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]
    fam_le = (b[:, 3] << 24) | (b[:, 2] << 16) | (b[:, 1] << 8) | b[:, 0]
    fam = np.where(link[lo] == 108, fam_be, np.where(fam_le < 65536, fam_le, fam_be))
    proto[lo] = np.where(fam == 2, ETH_IPV4, np.where(np.isin(fam, (10, 23, 24, 28, 30)), ETH_IPV6, 0))
    off[lo] = 4
    notip = (reason == 0) & ~np.isin(proto, (ETH_IPV4, ETH_IPV6))
    reason[notip] = _NOT_IP
    return proto, off


def decode_batch(batch: RecordBatch) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, int]]:
    """Decode one batch of records.

    Returns
    -------
    columns : dict
        Packet-table columns for the TCP segments, except the addresses, which come
        as ``src_hi, src_lo, dst_hi, dst_lo`` (uint64 halves; IPv4 in ``*_lo``).
    skipped : dict
        Records skipped, by reason name.
    notes : dict
        ``options_truncated``: TCP headers whose options the snap length cut.
    """
    buf = batch.buf
    n = len(batch)
    start = batch.data_offset
    cap = batch.captured_bytes.astype(np.int64)
    reason = np.zeros(n, np.int8)
    proto, l3 = _link_layer(buf, start, cap, batch.link_type.astype(np.int64), reason)

    # ---------------- IP
    ip = start + np.maximum(l3, 0)
    is4 = (reason == 0) & (proto == ETH_IPV4)
    is6 = (reason == 0) & (proto == ETH_IPV6)
    short = (is4 & (cap < l3 + 20)) | (is6 & (cap < l3 + 40))
    reason[short] = _TRUNC
    is4 &= ~short
    is6 &= ~short
    ver = u8(buf, ip) >> 4
    badver = (is4 & (ver != 4)) | (is6 & (ver != 6))
    reason[badver] = _BAD
    is4 &= ~badver
    is6 &= ~badver

    l4 = np.zeros(n, np.int64)  # offset of TCP header from the IP header
    l4_total = np.zeros(n, np.int64)  # bytes from the TCP header to the end of the IP datagram
    nh = np.zeros(n, np.int64)
    ip_id = np.zeros(n, np.int64)
    src_hi = np.zeros(n, np.uint64)
    src_lo = np.zeros(n, np.uint64)
    dst_hi = np.zeros(n, np.uint64)
    dst_lo = np.zeros(n, np.uint64)

    i4 = np.flatnonzero(is4)
    p = ip[i4]
    ihl = (u8(buf, p) & 0x0F) * 4
    tot = u16(buf, p + 2)
    frag = u16(buf, p + 6)
    bad4 = (ihl < 20) | ((tot != 0) & (tot < ihl))
    # total length 0 happens with TCP segmentation offload: fall back on the frame length
    tot = np.where(tot == 0, batch.wire_bytes[i4].astype(np.int64) - l3[i4], tot)
    reason[i4[bad4]] = _BAD
    reason[i4[~bad4 & ((frag & 0x3FFF) != 0)]] = _FRAG
    l4[i4] = ihl
    l4_total[i4] = tot - ihl
    nh[i4] = u8(buf, p + 9)
    ip_id[i4] = u16(buf, p + 4)
    src_lo[i4] = u32(buf, p + 12).astype(np.uint64)
    dst_lo[i4] = u32(buf, p + 16).astype(np.uint64)

    i6 = np.flatnonzero(is6)
    p = ip[i6]
    plen = u16(buf, p + 4)
    nh[i6] = u8(buf, p + 6)
    for k, arr in ((8, src_hi), (16, src_lo), (24, dst_hi), (32, dst_lo)):
        arr[i6] = (u32(buf, p + k).astype(np.uint64) << np.uint64(32)) | u32(buf, p + k + 4).astype(np.uint64)
    l4[i6] = 40
    l4_total[i6] = plen  # minus extension headers, below
    # extension headers (at most 8 followed)
    rows = i6
    for _ in range(8):
        rows = rows[reason[rows] == 0]
        h = nh[rows]
        ext = np.isin(h, IPV6_EXT) | (h == 44) | (h == 51)
        rows = rows[ext]
        if len(rows) == 0:
            break
        h = nh[rows]
        cut = cap[rows] < l3[rows] + l4[rows] + 8
        reason[rows[cut]] = _TRUNC
        rows, h = rows[~cut], h[~cut]
        q = ip[rows] + l4[rows]
        hdr_len = np.where(h == 44, 8, np.where(h == 51, (u8(buf, q + 1) + 2) * 4, (u8(buf, q + 1) + 1) * 8))
        fr = (h == 44) & ((u16(buf, q + 2) & 0xFFF9) != 0)  # offset or M flag set
        reason[rows[fr]] = _FRAG
        nh[rows] = u8(buf, q)
        l4[rows] += hdr_len
        l4_total[rows] -= hdr_len
    ipok = (reason == 0) & (is4 | is6)
    reason[ipok & (nh == 50)] = _ESP
    reason[ipok & (nh != 50) & (nh != 6)] = _NOT_TCP

    # ---------------- TCP fixed header
    tcp_ok = (reason == 0) & (is4 | is6)
    cut = tcp_ok & (cap < l3 + l4 + 20)
    reason[cut] = _TRUNC
    tcp_ok &= ~cut
    t_rows = np.flatnonzero(tcp_ok)
    t = ip[t_rows] + l4[t_rows]
    doff = (u8(buf, t + 12) >> 4) * 4
    payload = l4_total[t_rows] - doff
    bad = (doff < 20) | (payload < 0)
    reason[t_rows[bad]] = _BAD
    keep = ~bad
    t_rows, t, doff, payload = t_rows[keep], t[keep], doff[keep], payload[keep]
    assert np.all(reason[t_rows] == 0)

    hdr = buf[t[:, None] + np.arange(20)]
    be32 = lambda a: hdr[:, a:a + 4].copy().view(">u4")[:, 0]  # noqa: E731
    be16 = lambda a: hdr[:, a:a + 2].copy().view(">u2")[:, 0]  # noqa: E731
    flags = ((hdr[:, 12].astype(np.uint16) & 1) << 8) | hdr[:, 13]
    cap_end = start[t_rows] + cap[t_rows]
    opt_end = np.minimum(t + doff, cap_end)
    notes = {"options_truncated": int(np.count_nonzero(t + doff > cap_end))}
    cols: dict[str, np.ndarray] = {
        "frame_index": batch.frame_index[t_rows],
        "interface_id": batch.interface_id[t_rows],
        "timestamp_ns": batch.timestamp_ns[t_rows],
        "wire_bytes": batch.wire_bytes[t_rows],
        "captured_bytes": batch.captured_bytes[t_rows],
        "ip_version": np.where(is4[t_rows], 4, 6).astype(np.uint8),
        "src_hi": src_hi[t_rows], "src_lo": src_lo[t_rows], "dst_hi": dst_hi[t_rows], "dst_lo": dst_lo[t_rows],
        "ip_id": ip_id[t_rows].astype(np.uint32),
        "src_port": be16(0), "dst_port": be16(2), "seq": be32(4), "ack": be32(8),
        "flags": flags.astype(np.uint16),
        "window": be16(14),
        "tcp_header_bytes": doff.astype(np.uint8),
        "payload_bytes": payload.astype(np.uint32),
    }
    cols.update(parse_options(buf, t + 20, opt_end))
    counts = np.bincount(reason, minlength=8)
    skipped = {REASON_CODES[k]: int(counts[k]) for k in REASON_CODES if counts[k]}
    return cols, skipped, notes
