"""Link-layer, IP and TCP header decoding for a batch of records, with numpy array operations.

Input is a :class:`~tcpmodels.traces.pcapfile.RecordBatch`; output is the
packet-table columns for the records that are TCP segments, and the number of
records skipped for each reason (see :mod:`tcpmodels.traces.schema`).

Link types (numbers from the tcpdump.org LINKTYPE list): 1 Ethernet, 9 PPP and 50 PPP
in HDLC-like framing (what ns-3's point-to-point devices write), 113 Linux cooked (SLL),
276 Linux cooked v2 (SLL2, ``tcpdump -i any``), 101 / 12 / 14 raw IP, 228 raw
IPv4, 229 raw IPv6, 0 BSD loopback (host byte order), 108 OpenBSD loopback
(network byte order), 239 Linux netfilter log (NFLOG: the packet is the
``NFULA_PAYLOAD`` TLV, TLV lengths and types in the capturing host's byte order);
105 IEEE 802.11, 127 radiotap, 192 PPI, 197 ERF, 226 Solaris IPNET and 117 OpenBSD
pflog (:mod:`tcpmodels.traces.linkheaders`).
Below the link layer (and inside a bridged tunnel's Ethernet frame), up to eight of:
802.1Q / 802.1ad / QinQ tags, 802.1ah (PBB) I-tags, Cisco VN-Tags, 802.1BR E-Tags and
Cisco MetaData (:data:`ETH_TAGS`), an 802.3 length field with LLC/SNAP carrying an
ethertype (RFC 1042), a PPPoE session header (ethertype 0x8864, RFC 2516)
with its PPP protocol, and an MPLS label stack (0x8847 / 0x8848, RFC 3032) whose
payload is IPv4 or IPv6 (first nibble 4 or 6), or a pseudowire control word and an
Ethernet frame (first nibble 0, RFC 4385 / RFC 4448).

IPv6 extension headers are followed (at most 8), including the hop-by-hop Jumbo
Payload option that gives the length of a jumbogram (Linux BIG TCP), and so are IPsec
AH headers after IPv4 (at most 2; RFC 4302). TCP inside
a tunnel -- IP-in-IP / 6in4 / 4in6, GRE (version 0 and PPTP's version 1; ERSPAN,
WCCP, NSH and MPLS inside it; also over UDP), VXLAN, VXLAN-GPE, Geneve, GTP-U,
Teredo, L2TPv2 and MPLS in UDP (:mod:`tcpmodels.traces.tunnels`), nested up to
three deep -- is decoded to the inner packet: its addresses, ports and lengths are
the inner ones and the ``tunnel`` column names the outermost tunnel. A segment whose IP length claims
more than the frame held on the wire keeps only what the frame held
(``payload_beyond_frame`` note), unless the record was cut at the snap length and
its wire length equals its captured length (a writer that lost the wire length).

References
----------
.. [1] tcpdump.org, "Link-layer header types" (LINKTYPE_ values, SLL and SLL2 layouts).
.. [2] RFC 791 (IPv4), RFC 8200 (IPv6 and its extension headers), RFC 9293 (TCP).
.. [3] RFC 2675 (IPv6 jumbograms), RFC 1661 (PPP), RFC 2516 (PPPoE), RFC 3032 (MPLS label stack),
   RFC 4385 / 4448 (MPLS pseudowire control word, Ethernet over MPLS), RFC 1042 (IP over IEEE 802 networks:
   LLC/SNAP), IEEE 802.1Q (VLAN, provider bridges, PBB), IEEE 802.1BR (E-Tag); the tunnels' references are
   in :mod:`tcpmodels.traces.tunnels`.
.. [4] netfilter, ``linux/netfilter/nfnetlink_log.h`` (NFLOG attributes; NFULA_PAYLOAD = 9).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import tunnels
from .fragments import Fragment
from .linkheaders import LINK_NAMES, PSEUDO_HEADER_LINKS, link_header, pseudo_headers
from .options import parse_options, u8, u16, u32
from .pcapfile import RecordBatch, active_kernel, compiled_kernel
from .tunnels import CUT, ETH_BRIDGE, ETH_IPV4, ETH_IPV6, ETH_MPLS, PPP_IPV4, PPP_IPV6

__all__ = ["decode_batch", "LINK_TYPES", "TUNNELS"]

LINK_TYPES = {0: "BSD loopback", 1: "Ethernet", 9: "PPP", 50: "PPP in HDLC-like framing", 12: "raw IP", 14: "raw IP",
              101: "raw IP", 108: "OpenBSD loopback",
              113: "Linux cooked (SLL)", 228: "raw IPv4", 229: "raw IPv6", 239: "Linux netfilter log (NFLOG)",
              276: "Linux cooked v2 (SLL2)", **LINK_NAMES}
VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
#: Tags between an Ethernet header and its payload: ethertype -> bytes from the tag to the payload, the
#: payload's ethertype in the last two (802.1Q / 802.1ad / QinQ; 802.1ah PBB: I-tag and the customer's
#: addresses; Cisco VN-Tag; 802.1BR E-Tag; Cisco MetaData)
ETH_TAGS = {**dict.fromkeys(VLAN_TPIDS, 4), 0x88E7: 18, 0x8926: 6, 0x893F: 8, 0x8909: 8}
ETH_PPPOE_SESSION = 0x8864
#: IEEE 802.2 SNAP organisation codes whose protocol id is an ethertype (RFC 1042; Cisco's 0x0000F8)
SNAP_ETHERTYPE_OUIS = (0x000000, 0x0000F8)
#: Layers of tags, LLC/SNAP, PPPoE and MPLS labels followed below a link-layer header (more: ``bad_header``).
MAX_L2_LAYERS = 8
LINKTYPE_NFLOG = 239
NFULA_PAYLOAD = 9
#: NFLOG attributes (TLVs) looked at before the payload one (the kernel writes about ten).
MAX_NFLOG_TLVS = 32
#: IPsec AH headers followed after an IPv4 header (IPv6 follows AH among its extension headers)
MAX_AH_HEADERS = 2
IPV6_EXT = (0, 43, 60, 135, 139, 140, 253, 254)  # hop-by-hop, routing, dest opts, mobility, HIP, shim6, tests
JUMBO_OPTION = 0xC2
#: Values of the ``tunnel`` column, by code ("" = not tunnelled).
TUNNELS = ("", "gre", "ipip", "vxlan", "geneve", "gtp", "teredo", "l2tp", "mpls")
TUNNEL_CODES = {name: code for code, name in enumerate(TUNNELS)}
#: the ``tunnel`` code of each UDP tunnel port (:data:`tcpmodels.traces.tunnels.UDP_TUNNEL_PORTS` order)
_UDP_TUNNEL_CODES = np.array([TUNNEL_CODES[tunnels.UDP_TUNNELS[int(p)]] for p in tunnels.UDP_TUNNEL_PORTS], np.int8)
MAX_TUNNEL_DEPTH = 3
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
    off[e] = 14  # VLAN tags, PPPoE and MPLS below it: _below_link
    # Linux cooked v1: protocol at 14, header 16 bytes; v2: protocol at 0, header 20 bytes
    s = need(link == 113, 16)
    proto[s], off[s] = u16(buf, start[s] + 14), 16
    s = need(link == 276, 20)
    proto[s], off[s] = u16(buf, start[s]), 20
    # PPP (RFC 1661; ns-3's point-to-point links write it): optional address/control FF 03, 2-byte protocol
    pp = need(np.isin(link, (9, 50)), 4)
    hdlc = (u8(buf, start[pp]) == 0xFF) & (u8(buf, start[pp] + 1) == 0x03)
    ppp_proto = u16(buf, start[pp] + np.where(hdlc, 2, 0))
    proto[pp] = np.where(ppp_proto == PPP_IPV4, ETH_IPV4, np.where(ppp_proto == PPP_IPV6, ETH_IPV6, 0))
    off[pp] = np.where(hdlc, 4, 2)
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
    _nflog(buf, start, cap, link, proto, off, reason)
    for lt in LINK_NAMES:  # 802.11, radiotap, PPI, ERF, IPNET, pflog: linkheaders
        w = np.flatnonzero((link == lt) & (reason == 0))
        if len(w):
            proto[w], off[w] = link_header(buf, lt, start[w], cap[w])
            reason[w[off[w] == CUT]] = _TRUNC
    ok = (reason == 0) & (off >= 0)
    if ok.any():
        rows = np.flatnonzero(ok)
        pos = start[rows] + off[rows]
        p2, pos2 = _below_link(buf, rows, pos, proto[rows], start + cap, reason)
        proto[rows] = p2
        off[rows] = np.where(pos2 >= 0, pos2 - start[rows], -1)
    notip = (reason == 0) & ~np.isin(proto, (ETH_IPV4, ETH_IPV6))
    reason[notip] = _NOT_IP
    return proto, off


def _nflog(buf, start, cap, link, proto, off, reason) -> None:
    """LINKTYPE_NFLOG: the IP packet is the value of the NFULA_PAYLOAD attribute (in place: proto, off, reason).

    The 4-byte header gives the address family (2 IPv4, 10 IPv6); the attributes follow, each a length
    (header included) and a type in the capturing host's byte order (little-endian tried first; big-endian
    when little-endian gives an impossible length), padded to 4 bytes.
    """
    rows = np.flatnonzero((link == LINKTYPE_NFLOG) & (reason == 0))
    if len(rows) == 0:
        return
    short = cap[rows] < 8
    reason[rows[short]] = _TRUNC
    rows = rows[~short]
    fam = u8(buf, start[rows])
    end = start[rows] + cap[rows]
    pos = start[rows] + 4
    b0, b1 = u8(buf, pos), u8(buf, pos + 1)
    little = ((b0 | (b1 << 8)) >= 4) & ((b0 | (b1 << 8)) <= cap[rows] - 4)
    found = np.full(len(rows), -1, np.int64)
    live = np.ones(len(rows), bool)
    for _ in range(MAX_NFLOG_TLVS):
        live &= (found < 0) & (pos + 4 <= end)
        if not live.any():
            break
        a, b, c, d = u8(buf, pos), u8(buf, pos + 1), u8(buf, pos + 2), u8(buf, pos + 3)
        length = np.where(little, a | (b << 8), (a << 8) | b)
        kind = np.where(little, c | (d << 8), (c << 8) | d) & 0x7FFF  # top bit: NLA_F_NESTED
        hit = live & (kind == NFULA_PAYLOAD) & (length >= 4)
        found[hit] = pos[hit] + 4
        bad = live & ~hit & (length < 4)
        live &= ~bad
        pos = np.where(live & ~hit, pos + ((length + 3) & ~3), pos)
    missing = found < 0
    reason[rows[missing]] = _NOT_IP
    rows, found, fam = rows[~missing], found[~missing], fam[~missing]
    proto[rows] = np.where(fam == 2, ETH_IPV4, np.where(fam == 10, ETH_IPV6, 0))
    off[rows] = found - start[rows]


def _below_link(buf, rows, pos, proto, cap_end, reason) -> tuple[np.ndarray, np.ndarray]:
    """Follow tags (:data:`ETH_TAGS`), LLC/SNAP, a PPPoE session and MPLS label stacks below a link-layer header.

    ``pos`` is where the payload of ``proto`` starts (absolute). Returns the network protocol (ethertype)
    and where its header starts (-1 where the record ends first: ``truncated_headers``; or more than
    :data:`MAX_L2_LAYERS` layers: ``bad_header``).
    """
    proto = proto.astype(np.int64).copy()
    pos = pos.astype(np.int64).copy()
    tag_types = np.array(sorted(ETH_TAGS), np.int64)
    tag_sizes = np.array([ETH_TAGS[t] for t in sorted(ETH_TAGS)], np.int64)
    for _ in range(MAX_L2_LAYERS):
        tagged = np.isin(proto, tag_types)
        llc = (proto > 0) & (proto <= 1500)  # an 802.3 length (or SLL's 802.2 protocol 4): an LLC header follows
        pppoe = proto == ETH_PPPOE_SESSION
        mpls = np.isin(proto, ETH_MPLS)
        todo = (tagged | llc | pppoe | mpls) & (pos >= 0)
        if not todo.any():
            return proto, pos
        size = np.zeros(len(proto), np.int64)
        size[tagged] = tag_sizes[np.searchsorted(tag_types, proto[tagged])]
        need = np.where(tagged, size, np.where(pppoe | llc, 8, 4))
        cut = todo & (cap_end[rows] < pos + need)
        reason[rows[cut & (reason[rows] == 0)]] = _TRUNC
        pos[cut], proto[cut] = -1, 0
        todo &= ~cut
        v = np.flatnonzero(todo & tagged)
        proto[v], pos[v] = u16(buf, pos[v] + size[v] - 2), pos[v] + size[v]
        # LLC: SNAP (AA AA 03) with an ethertype organisation code gives an ethertype; other LLC is not IP
        q = np.flatnonzero(todo & llc)
        snap = (u16(buf, pos[q]) == 0xAAAA) & (u8(buf, pos[q] + 2) == 0x03) \
            & np.isin(u32(buf, pos[q] + 2) & 0xFFFFFF, SNAP_ETHERTYPE_OUIS)
        proto[q], pos[q] = np.where(snap, u16(buf, pos[q] + 6), 0), pos[q] + 8
        # PPPoE session: version/type, code, session id, length (6 bytes), then the PPP protocol: 2 bytes, or
        # 1 when its first byte is odd (protocol field compression, RFC 1661 Sec. 6.5)
        q = np.flatnonzero(todo & pppoe)
        first = u8(buf, pos[q] + 6)
        short_field = (first & 1) == 1
        ppp = np.where(short_field, first, u16(buf, pos[q] + 6))
        proto[q] = np.where(ppp == PPP_IPV4, ETH_IPV4, np.where(ppp == PPP_IPV6, ETH_IPV6, 0))
        pos[q] += np.where(short_field, 7, 8)
        # MPLS: 4-byte label entries until the bottom-of-stack bit; then the payload's first nibble decides
        m = np.flatnonzero(todo & mpls)
        bottom = (u8(buf, pos[m] + 2) & 1) == 1
        nxt = pos[m] + 4
        inner = m[bottom]
        after = nxt[bottom]
        pos[m[~bottom]] = nxt[~bottom]  # another label: proto stays MPLS
        if len(inner):
            room = cap_end[rows[inner]] >= after + 1
            nib = np.where(room, u8(buf, after) >> 4, -1)
            cw = nib == 0  # pseudowire control word, then an Ethernet frame
            eth_ok = cw & (cap_end[rows[inner]] >= after + 4 + 14)
            proto[inner] = np.where(nib == 4, ETH_IPV4, np.where(nib == 6, ETH_IPV6,
                                    np.where(eth_ok, u16(buf, np.where(eth_ok, after + 16, 0)), 0)))
            pos[inner] = np.where(eth_ok, after + 18, after)
            short = ~room | (cw & ~eth_ok)
            reason[rows[inner[short]][reason[rows[inner[short]]] == 0]] = _TRUNC
            pos[inner[short]], proto[inner[short]] = -1, 0
    deep = (np.isin(proto, tag_types) | np.isin(proto, (ETH_PPPOE_SESSION,) + ETH_MPLS) | ((proto > 0) & (proto <= 1500))
            ) & (pos >= 0)
    reason[rows[deep & (reason[rows] == 0)]] = _BAD
    pos[deep], proto[deep] = -1, 0
    return proto, pos


#: Outputs of the compiled kernel after the record index, in its order: (column, dtype).
_KERNEL_COLUMNS = (
    ("ip_version", np.uint8), ("src_hi", np.uint64), ("src_lo", np.uint64), ("dst_hi", np.uint64),
    ("dst_lo", np.uint64), ("ip_id", np.uint32), ("src_port", np.uint16), ("dst_port", np.uint16),
    ("seq", np.uint32), ("ack", np.uint32), ("flags", np.uint16), ("window", np.uint16),
    ("tcp_header_bytes", np.uint8), ("payload_bytes", np.uint32), ("mss", np.int32), ("window_scale", np.int8),
    ("sack_permitted", np.bool_), ("sack_count", np.uint8), ("sack_left", np.uint32), ("sack_right", np.uint32),
    ("has_timestamps", np.bool_), ("tsval", np.uint32), ("tsecr", np.uint32), ("mptcp_subtype", np.int8),
    ("mptcp_version", np.int8), ("mptcp_send_key", np.uint64), ("mptcp_recv_key", np.uint64),
    ("mptcp_recv_token", np.uint32), ("has_mptcp_dsn", np.bool_), ("mptcp_dsn", np.uint64),
    ("mptcp_subflow_seq", np.uint32), ("mptcp_data_len", np.uint16), ("has_mptcp_data_ack", np.bool_),
    ("mptcp_data_ack", np.uint64))
#: Columns taken from the batch itself, per decoded row.
_BATCH_COLUMNS = (("frame_index", "frame_index"), ("interface_id", "interface_id"), ("timestamp_ns", "timestamp_ns"),
                  ("wire_bytes", "wire_bytes"), ("captured_bytes", "captured_bytes"))


def decode_batch(batch: RecordBatch, kernel: str | None = None, fragments: list | None = None
                 ) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, int]]:
    """Decode one batch of records.

    Parameters
    ----------
    batch : RecordBatch
        Records of one chunk (from :func:`~tcpmodels.traces.pcapfile.iter_batches`).
    kernel : {"auto", "c", "numpy"} or None
        ``"c"``: the compiled kernel decodes the common case (IPv4 / IPv6 without
        extension headers, TCP and its options) and hands every other record to the
        numpy path; ``"numpy"``: the numpy path only; ``None``: the process setting
        (:func:`~tcpmodels.traces.pcapfile.set_kernel`). Both give the same result.

    Returns
    -------
    columns : dict
        Packet-table columns for the TCP segments, except the addresses, which come
        as ``src_hi, src_lo, dst_hi, dst_lo`` (uint64 halves; IPv4 in ``*_lo``), and
        ``tunnel`` as a code (index into :data:`TUNNELS`).
    skipped : dict
        Records skipped, by reason name.
    notes : dict
        ``options_truncated``: TCP headers whose options the snap length cut;
        ``payload_beyond_frame``: segments whose IP length claimed more payload than the
        frame held on the wire (payload counted up to the frame's end).

    Notes
    -----
    An ERF record's time and wire length are its own header's, and the lengths of ERF and SunATM frames leave
    their pseudo-header out (:func:`~tcpmodels.traces.linkheaders.pseudo_headers`), as Wireshark counts them.
    """
    decode = _decode_compiled if active_kernel(kernel) == "c" else _decode_numpy
    if not np.isin(batch.link_type, PSEUDO_HEADER_LINKS).any():
        return decode(batch, fragments)
    ts, header, wire = pseudo_headers(batch.buf, batch.link_type, batch.data_offset, batch.captured_bytes,
                                      batch.wire_bytes, batch.timestamp_ns)
    batch = replace(batch, timestamp_ns=ts, wire_bytes=wire.astype(np.uint32))
    cols, skipped, notes = decode(batch, fragments)
    cut = header[np.searchsorted(batch.frame_index, cols["frame_index"])]
    for c in ("wire_bytes", "captured_bytes"):
        cols[c] = (cols[c].astype(np.int64) - cut).astype(cols[c].dtype)
    return cols, skipped, notes


def _decode_compiled(batch: RecordBatch, fragments: list | None = None) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, int]]:
    """The compiled kernel on every record, the numpy path on the records it leaves; merged in file order."""
    n = len(batch)
    snap = batch.snap_bytes if len(batch.snap_bytes) == n else np.zeros(n, np.uint32)
    outs = (np.empty(n, np.int64),) + tuple(np.empty(n, dt) for _, dt in _KERNEL_COLUMNS)
    fallback = np.empty(n, np.uint8)
    nfast, opt_trunc, beyond = compiled_kernel().decode(
        batch.buf, np.ascontiguousarray(batch.data_offset, np.int64),
        np.ascontiguousarray(batch.captured_bytes, np.uint32), np.ascontiguousarray(batch.wire_bytes, np.uint32),
        np.ascontiguousarray(batch.link_type, np.int32), np.ascontiguousarray(snap, np.uint32), outs, fallback)
    rows = outs[0][:nfast]
    cols: dict[str, np.ndarray] = {name: getattr(batch, attr)[rows] for name, attr in _BATCH_COLUMNS}
    cols["tunnel"] = np.zeros(nfast, np.int8)
    cols.update((name, arr[:nfast]) for (name, _), arr in zip(_KERNEL_COLUMNS, outs[1:]))
    notes = {"options_truncated": int(opt_trunc), "payload_beyond_frame": int(beyond)}
    skipped: dict[str, int] = {}
    left = np.flatnonzero(fallback)
    if len(left):
        sub = RecordBatch(buf=batch.buf, data_offset=batch.data_offset[left],
                          captured_bytes=batch.captured_bytes[left], wire_bytes=batch.wire_bytes[left],
                          timestamp_ns=batch.timestamp_ns[left], interface_id=batch.interface_id[left],
                          link_type=batch.link_type[left], frame_index=batch.frame_index[left],
                          snap_bytes=snap[left])
        more, skipped, more_notes = _decode_numpy(sub, fragments)
        for k in notes:
            notes[k] += more_notes[k]
        if len(more["seq"]):
            # both parts are in file order; frame_index increases with the record
            order = np.argsort(np.concatenate([cols["frame_index"], more["frame_index"]]), kind="stable")
            cols = {k: np.concatenate([cols[k], np.asarray(more[k]).astype(cols[k].dtype, copy=False)])[order]
                    for k in cols}
    return cols, skipped, notes


def _decode_numpy(batch: RecordBatch, fragments: list | None = None) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, int]]:
    """:func:`decode_batch` with numpy array operations only (the reference)."""
    buf = batch.buf
    n = len(batch)
    start = batch.data_offset
    cap = batch.captured_bytes.astype(np.int64)
    reason = np.zeros(n, np.int8)
    proto, l3 = _link_layer(buf, start, cap, batch.link_type.astype(np.int64), reason)

    # ---------------- IP, and the IP packet inside a tunnel (at most MAX_TUNNEL_DEPTH levels)
    cap_end = start + cap
    wire_end = start + np.maximum(batch.wire_bytes.astype(np.int64), cap)
    ip = start + np.maximum(l3, 0)
    st = _IpState(n)
    tunnel = np.zeros(n, np.int8)
    rows = np.flatnonzero((reason == 0) & np.isin(proto, (ETH_IPV4, ETH_IPV6)))
    for _ in range(MAX_TUNNEL_DEPTH + 1):
        _ip_layer(buf, rows, ip, proto, cap_end, wire_end, reason, st)
        rows, kind = _tunnels(buf, rows[reason[rows] == 0], ip, proto, cap_end, reason, st)
        if len(rows) == 0:
            break
        tunnel[rows[tunnel[rows] == 0]] = kind[tunnel[rows] == 0]
    is4, is6, nh, l4, l4_total = st.is4, st.is6, st.nh, st.l4, st.l4_total
    ipok = (reason == 0) & (is4 | is6)
    reason[ipok & (nh == 50)] = _ESP
    reason[ipok & (nh != 50) & (nh != 6)] = _NOT_TCP

    # ---------------- TCP fixed header
    tcp_ok = (reason == 0) & (is4 | is6)
    cut = tcp_ok & (cap_end < l4 + 20)
    reason[cut] = _TRUNC
    tcp_ok &= ~cut
    t_rows = np.flatnonzero(tcp_ok)
    t = l4[t_rows]
    doff = (u8(buf, t + 12) >> 4) * 4
    payload = l4_total[t_rows] - doff
    bad = (doff < 20) | (payload < 0)
    reason[t_rows[bad]] = _BAD
    keep = ~bad
    t_rows, t, doff, payload = t_rows[keep], t[keep], doff[keep], payload[keep]
    # an IP length that claims more than the frame held on the wire (corrupt or fuzzed): keep what was there.
    # Not for a record cut exactly at the snap length whose wire length equals its captured length: some
    # writers (dpkt's, for one) record the cut length as the wire length, and there the IP length is right.
    room = np.maximum(wire_end[t_rows] - t - doff, 0)
    snap = batch.snap_bytes[t_rows].astype(np.int64)
    wire_unknown = (snap > 0) & (cap[t_rows] == snap) & (batch.wire_bytes[t_rows] == cap[t_rows])
    beyond = (payload > room) & ~wire_unknown
    payload = np.where(beyond, room, payload)
    assert np.all(reason[t_rows] == 0)

    hdr = buf[t[:, None] + np.arange(20)]
    # network byte order in, native out (as the C kernel gives them: pandas rejects big-endian arrays)
    be32 = lambda a: hdr[:, a:a + 4].copy().view(">u4")[:, 0].astype(np.uint32)  # noqa: E731
    be16 = lambda a: hdr[:, a:a + 2].copy().view(">u2")[:, 0].astype(np.uint16)  # noqa: E731
    flags = ((hdr[:, 12].astype(np.uint16) & 1) << 8) | hdr[:, 13]
    opt_end = np.minimum(t + doff, cap_end[t_rows])
    notes = {"options_truncated": int(np.count_nonzero(t + doff > cap_end[t_rows])),
             "payload_beyond_frame": int(np.count_nonzero(beyond))}
    cols: dict[str, np.ndarray] = {
        "frame_index": batch.frame_index[t_rows],
        "interface_id": batch.interface_id[t_rows],
        "timestamp_ns": batch.timestamp_ns[t_rows],
        "wire_bytes": batch.wire_bytes[t_rows],
        "captured_bytes": batch.captured_bytes[t_rows],
        "ip_version": np.where(is4[t_rows], 4, 6).astype(np.uint8),
        "tunnel": tunnel[t_rows],
        "src_hi": st.src_hi[t_rows], "src_lo": st.src_lo[t_rows], "dst_hi": st.dst_hi[t_rows],
        "dst_lo": st.dst_lo[t_rows], "ip_id": st.ip_id[t_rows].astype(np.uint32),
        "src_port": be16(0), "dst_port": be16(2), "seq": be32(4), "ack": be32(8),
        "flags": flags.astype(np.uint16),
        "window": be16(14),
        "tcp_header_bytes": doff.astype(np.uint8),
        "payload_bytes": payload.astype(np.uint32),
    }
    cols.update(parse_options(buf, t + 20, opt_end))
    if fragments is not None:
        fragments.extend(_fragments(batch, buf, np.flatnonzero(reason == _FRAG), ip, cap_end, tunnel, st))
    counts = np.bincount(reason, minlength=8)
    skipped = {REASON_CODES[k]: int(counts[k]) for k in REASON_CODES if counts[k]}
    return cols, skipped, notes


def _fragments(batch: RecordBatch, buf, rows, ip, cap_end, tunnel, st: "_IpState") -> list:
    """A :class:`~tcpmodels.traces.fragments.Fragment` for each fragment record (few: a Python loop)."""
    out = []

    def raw(lo: int, hi: int) -> bytes:
        return buf[lo:max(hi, lo)].tobytes()

    def be(lo: int, n: int) -> int:
        return int.from_bytes(raw(lo, lo + n), "big")

    for r in rows.tolist():
        p, end = int(ip[r]), int(cap_end[r])
        if st.is4[r]:
            ihl = (int(buf[p]) & 0x0F) * 4
            frag = be(p + 6, 2)
            key = (raw(p + 12, p + 16), raw(p + 16, p + 20), int(buf[p + 9]), be(p + 4, 2))
            header, nh_at, start, stop = raw(p, min(p + ihl, end)), -1, p + ihl, p + be(p + 2, 2)
            offset, more, version = (frag & 0x1FFF) * 8, bool(frag & 0x2000), 4
        else:
            fh = int(st.l4[r]) - 8
            fo = be(fh + 2, 2)
            key = (raw(p + 8, p + 24), raw(p + 24, p + 40), int(buf[fh]), be(fh + 4, 4))
            header = bytearray(raw(p, min(fh, end)))
            nh_at = int(st.frag_nh_at[r]) - p
            if 0 <= nh_at < len(header):
                header[nh_at] = int(buf[fh])
            header = bytes(header)
            start, stop = fh + 8, p + 40 + be(p + 4, 2)
            offset, more, version = fo & 0xFFF8, bool(fo & 1), 6
        out.append(Fragment(frame_index=int(batch.frame_index[r]), timestamp_ns=int(batch.timestamp_ns[r]),
                            interface_id=int(batch.interface_id[r]), wire_bytes=int(batch.wire_bytes[r]),
                            captured_bytes=int(batch.captured_bytes[r]), tunnel=int(tunnel[r]), version=version,
                            key=key, offset_bytes=offset, more=more, header=header, next_header_at=nh_at,
                            data=raw(start, min(stop, end)), data_len=max(stop - start, 0)))
    return out


class _IpState:
    """Per-record results of the IP layer (absolute indexes into the batch buffer)."""

    def __init__(self, n: int) -> None:
        self.is4 = np.zeros(n, bool)
        self.is6 = np.zeros(n, bool)
        self.l4 = np.zeros(n, np.int64)  # where the transport header starts
        self.l4_total = np.zeros(n, np.int64)  # bytes from there to the end of the IP datagram
        self.nh = np.zeros(n, np.int64)
        self.nh_at = np.zeros(n, np.int64)  # IPv6: where the byte naming the current next header is
        self.frag_nh_at = np.zeros(n, np.int64)  # IPv6 fragment: where the byte naming the fragment header is
        self.ip_id = np.zeros(n, np.int64)
        self.src_hi = np.zeros(n, np.uint64)
        self.src_lo = np.zeros(n, np.uint64)
        self.dst_hi = np.zeros(n, np.uint64)
        self.dst_lo = np.zeros(n, np.uint64)


def _ip_layer(buf, rows, ip, proto, cap_end, wire_end, reason, st: _IpState) -> None:
    """Decode the IPv4 / IPv6 header at ``ip[rows]`` (and IPv6 extension headers) into ``st``."""
    for arr in (st.is4, st.is6):
        arr[rows] = False
    is4 = np.zeros(len(reason), bool)
    is6 = np.zeros(len(reason), bool)
    is4[rows] = proto[rows] == ETH_IPV4
    is6[rows] = proto[rows] == ETH_IPV6
    short = (is4 & (cap_end < ip + 20)) | (is6 & (cap_end < ip + 40))
    reason[short] = _TRUNC
    is4 &= ~short
    is6 &= ~short
    ver = np.zeros(len(reason), np.int64)
    r = np.flatnonzero(is4 | is6)
    ver[r] = u8(buf, ip[r]) >> 4
    # Wireshark's IPv4 dissector hands a version-6 header to IPv6 ("Bogus IPv4 version"); IPv6's keeps no IPv4
    swap = is4 & (ver == 6)
    reason[swap & (cap_end < ip + 40)] = _TRUNC
    is4 &= ~swap
    is6 |= swap & (cap_end >= ip + 40)
    badver = (is4 & (ver != 4)) | (is6 & (ver != 6))
    reason[badver] = _BAD
    is4 &= ~badver
    is6 &= ~badver

    i4 = np.flatnonzero(is4)
    p = ip[i4]
    ihl = (u8(buf, p) & 0x0F) * 4
    tot = u16(buf, p + 2)
    frag = u16(buf, p + 6)
    bad4 = (ihl < 20) | ((tot != 0) & (tot < ihl))
    # total length 0 happens with TCP segmentation offload: fall back on the frame length
    tot = np.where(tot == 0, wire_end[i4] - p, tot)
    reason[i4[bad4]] = _BAD
    reason[i4[~bad4 & ((frag & 0x3FFF) != 0)]] = _FRAG
    st.l4[i4] = p + ihl
    st.l4_total[i4] = tot - ihl
    st.nh[i4] = u8(buf, p + 9)
    st.ip_id[i4] = u16(buf, p + 4)
    st.src_hi[i4] = 0
    st.dst_hi[i4] = 0
    st.src_lo[i4] = u32(buf, p + 12).astype(np.uint64)
    st.dst_lo[i4] = u32(buf, p + 16).astype(np.uint64)
    # IPsec AH (RFC 4302) in front of the transport header: its length is (field + 2) 32-bit words
    ah = i4[(reason[i4] == 0) & (st.nh[i4] == 51)]
    for _ in range(MAX_AH_HEADERS):
        if len(ah) == 0:
            break
        cut = cap_end[ah] < st.l4[ah] + 12
        reason[ah[cut]] = _TRUNC
        ah = ah[~cut]
        q = st.l4[ah]
        size = (u8(buf, q + 1) + 2) * 4
        st.nh[ah] = u8(buf, q)
        st.l4[ah] += size
        st.l4_total[ah] -= size
        ah = ah[st.nh[ah] == 51]

    i6 = np.flatnonzero(is6)
    p = ip[i6]
    plen = u16(buf, p + 4)
    st.nh[i6] = u8(buf, p + 6)
    st.ip_id[i6] = 0
    for k, arr in ((8, st.src_hi), (16, st.src_lo), (24, st.dst_hi), (32, st.dst_lo)):
        arr[i6] = (u32(buf, p + k).astype(np.uint64) << np.uint64(32)) | u32(buf, p + k + 4).astype(np.uint64)
    st.l4[i6] = p + 40
    st.nh_at[i6] = p + 6
    st.l4_total[i6] = plen  # minus extension headers, below
    # extension headers (at most 8 followed); a hop-by-hop Jumbo Payload option (RFC 2675, Linux BIG TCP)
    # gives the length when the payload length field is 0
    jumbo = np.zeros(len(reason), bool)
    hops = i6
    for _ in range(8):
        hops = hops[reason[hops] == 0]
        h = st.nh[hops]
        hops = hops[np.isin(h, IPV6_EXT) | (h == 44) | (h == 51)]
        if len(hops) == 0:
            break
        h = st.nh[hops]
        cut = cap_end[hops] < st.l4[hops] + 8
        reason[hops[cut]] = _TRUNC
        hops, h = hops[~cut], h[~cut]
        q = st.l4[hops]
        hdr_len = np.where(h == 44, 8, np.where(h == 51, (u8(buf, q + 1) + 2) * 4, (u8(buf, q + 1) + 1) * 8))
        fr = (h == 44) & ((u16(buf, q + 2) & 0xFFF9) != 0)  # offset or M flag set
        st.frag_nh_at[hops[fr]] = st.nh_at[hops[fr]]
        reason[hops[fr]] = _FRAG
        jb = (h == 0) & (st.l4_total[hops] == 0) & (u8(buf, q + 2) == JUMBO_OPTION) & (u8(buf, q + 3) == 4)
        st.l4_total[hops[jb]] = u32(buf, q[jb] + 4)
        jumbo[hops[jb]] = True
        st.nh[hops] = u8(buf, q)
        st.nh_at[hops] = q
        st.l4[hops] += hdr_len
        st.l4_total[hops] -= hdr_len
    st.is4[is4] = True
    st.is6[is6] = True


def _ethernet(buf, rows, pos, cap_end, reason) -> tuple[np.ndarray, np.ndarray]:
    """Ethertype and start of the payload of the Ethernet frames at ``pos`` (0 / -1 where cut)."""
    proto = np.zeros(len(rows), np.int64)
    nxt = np.full(len(rows), -1, np.int64)
    ok = cap_end[rows] >= pos + 14
    reason[rows[~ok]] = _TRUNC
    proto[ok] = u16(buf, pos[ok] + 12)
    nxt[ok] = pos[ok] + 14
    p2, n2 = _below_link(buf, rows[ok], nxt[ok], proto[ok], cap_end, reason)
    proto[ok], nxt[ok] = p2, n2
    ok &= nxt >= 0
    return np.where(ok, proto, 0), np.where(ok, nxt, -1)


def _tunnels(buf, rows, ip, proto, cap_end, reason, st: _IpState) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose IP payload is a tunnel: set ``ip`` / ``proto`` to the inner packet; returns (rows, kind).

    The tunnels' headers are read by :mod:`tcpmodels.traces.tunnels`; an Ethernet frame or an MPLS label
    stack inside is followed here (VLAN tags, PPPoE and MPLS as below a link layer)."""
    nh = st.nh[rows]
    l4 = st.l4[rows]
    end = cap_end[rows]
    inner = np.full(len(rows), CUT, np.int64)
    iproto = np.zeros(len(rows), np.int64)
    kind = np.zeros(len(rows), np.int8)
    # IP in IP (IPv4 4, IPv6 41: IP-in-IP, 6in4, 4in6)
    m = np.isin(nh, (4, 41))
    inner[m], iproto[m], kind[m] = l4[m], np.where(nh[m] == 4, ETH_IPV4, ETH_IPV6), TUNNEL_CODES["ipip"]
    m = np.flatnonzero(nh == 47)
    iproto[m], inner[m] = tunnels.gre(buf, l4[m], end[m])
    kind[m] = TUNNEL_CODES["gre"]
    u = np.flatnonzero((nh == 17) & (end >= l4 + 8))
    port = tunnels.udp_tunnel_port(u16(buf, l4[u]), u16(buf, l4[u] + 2))
    u, port = u[port != 0], port[port != 0]
    carries, p, i = tunnels.udp_tunnel(buf, port, l4[u] + 8, end[u])
    u, port = u[carries], port[carries]
    iproto[u], inner[u] = p[carries], i[carries]
    kind[u] = _UDP_TUNNEL_CODES[np.searchsorted(tunnels.UDP_TUNNEL_PORTS, port)]
    cut = (kind != 0) & (inner == CUT)
    reason[rows[cut & (reason[rows] == 0)]] = _TRUNC
    kind[cut] = 0
    ether = np.flatnonzero((kind != 0) & (iproto == ETH_BRIDGE))
    if len(ether):
        iproto[ether], inner[ether] = _ethernet(buf, rows[ether], inner[ether], cap_end, reason)
    mpls = np.flatnonzero((kind != 0) & np.isin(iproto, ETH_MPLS))
    if len(mpls):
        iproto[mpls], inner[mpls] = _below_link(buf, rows[mpls], inner[mpls], iproto[mpls], cap_end, reason)
    found = (kind != 0) & (reason[rows] == 0)
    notip = found & ~np.isin(iproto, (ETH_IPV4, ETH_IPV6))
    reason[rows[notip]] = _NOT_IP
    found &= ~notip
    rows, inner, iproto, kind = rows[found], inner[found], iproto[found], kind[found]
    ip[rows] = inner
    proto[rows] = iproto
    return rows, kind
