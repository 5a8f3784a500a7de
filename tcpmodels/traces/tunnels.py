"""Tunnel headers: where the packet inside starts and what it is, for a batch of positions at once.

:func:`tcpmodels.traces.decode.decode_batch` finds the IP packets that carry a tunnel (IP protocol 4, 41 or
47; UDP on a tunnel's port) and asks this module where the inner packet starts. Each function takes the
positions of one kind of tunnel header and the end of each record's captured bytes, and returns per
position the inner protocol as an ethertype (:data:`ETH_IPV4`, :data:`ETH_IPV6`, :data:`ETH_BRIDGE` for an
Ethernet frame, an MPLS ethertype for a label stack; 0: not a packet this module follows) and where it
starts (:data:`CUT` where the record ends inside the header). Bytes are read only where the record holds
them.

Which headers, and how Wireshark (4.x) reads them, which is what the counts are checked against:

* GRE (RFC 2784 / 2890, PPTP's version 1 of RFC 2637): the payload's ethertype, and the payload types that
  carry a header of their own: ERSPAN type I (no header: GRE without a sequence number) and II (8 bytes),
  ERSPAN type III (12 bytes, 8 more with its O flag; frame type 0, Ethernet, only), WCCP (a 4-byte redirect
  header unless an IPv4 header follows at once), NSH (RFC 8300). Also over UDP (RFC 8086, port 4754).
* VXLAN (RFC 7348, UDP 4789), VXLAN-GPE (UDP 4790: its next-protocol byte, whatever its P flag), Geneve
  (RFC 8926, UDP 6081).
* GTP-U (3GPP TS 29.281, UDP 2152): version 1 G-PDUs (message type 255), the optional fields and the chain of
  extension headers; the T-PDU is IPv4 when its first byte is 0x45-0x4E, IPv6 when its first nibble is 6.
* Teredo (RFC 4380, UDP 3544): the authentication and origin indications, then IPv6.
* L2TP version 2 (RFC 2661, UDP 1701): data messages (not control), then PPP with or without its address
  and control bytes and with or without protocol field compression.
* MPLS in UDP (RFC 7510, UDP 6635).

A UDP tunnel is recognised on either port, unless the other port is below 1024 (Wireshark tries the lower
port's dissector first, and well-known ports have theirs): see :func:`udp_tunnel_port`.

References
----------
.. [1] RFC 2784, RFC 2890, RFC 2637 (GRE and PPTP's enhanced GRE); RFC 8086 (GRE-in-UDP).
.. [2] ERSPAN: draft-foschiano-erspan-03 (types I-III).
.. [3] RFC 8300 (Network Service Header), RFC 7348 (VXLAN), draft-ietf-nvo3-vxlan-gpe-12 (VXLAN-GPE),
   RFC 8926 (Geneve), RFC 4380 (Teredo), RFC 2661 (L2TP), RFC 1661 / 1662 (PPP, HDLC-like framing),
   RFC 7510 (MPLS in UDP).
.. [4] 3GPP TS 29.281, "GPRS Tunnelling Protocol User Plane (GTPv1-U)".
"""

from __future__ import annotations

import numpy as np

from tcpmodels._docstrings import SharedEntries

from .options import u8_within, u16_within

__all__ = ["ETH_IPV4", "ETH_IPV6", "ETH_BRIDGE", "ETH_MPLS", "PPP_IPV4", "PPP_IPV6", "CUT", "UDP_TUNNELS", "UDP_TUNNEL_PORTS", "gre", "udp_tunnel_port",
           "udp_tunnel", "ethertype_of"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    buf : numpy.ndarray of uint8
        The chunk's bytes.
    end : numpy.ndarray of int64
        End of each record's captured bytes.
""")

ETH_IPV4, ETH_IPV6 = 0x0800, 0x86DD
ETH_BRIDGE = 0x6558  # transparent Ethernet bridging: an Ethernet frame follows (GRE, Geneve)
ETH_MPLS = (0x8847, 0x8848)
ERSPAN_II, ERSPAN_III, WCCP, NSH = 0x88BE, 0x22EB, 0x883E, 0x894F
PPP_IPV4, PPP_IPV6 = 0x0021, 0x0057
#: the position returned where the record ends inside a tunnel's header
CUT = -1
#: UDP port -> the ``tunnel`` column's name for the tunnel on it
UDP_TUNNELS = {4789: "vxlan", 4790: "vxlan", 6081: "geneve", 2152: "gtp", 3544: "teredo", 1701: "l2tp",
               6635: "mpls", 4754: "gre"}
#: their ports, sorted
UDP_TUNNEL_PORTS = np.array(sorted(UDP_TUNNELS), np.int64)
#: GTP-U extension headers followed at most, and NSH / VXLAN-GPE next-protocol values
MAX_GTP_EXTENSIONS = 8
_NEXT_PROTOCOL = {1: ETH_IPV4, 2: ETH_IPV6, 3: ETH_BRIDGE, 5: ETH_MPLS[0]}


def ethertype_of(values: np.ndarray, table: dict[int, int]) -> np.ndarray:
    """The ethertype ``table`` gives each of ``values`` (a protocol or address-family field), 0 for others.

    Parameters
    ----------
    values : numpy.ndarray of int64
        The field's values.
    table : dict
        Value -> ethertype.

    Returns
    -------
    numpy.ndarray of int64
        Ethertypes.
    """
    out = np.zeros(len(values), np.int64)
    for v, proto in table.items():
        out[values == v] = proto
    return out


def _nsh(buf, pos, end) -> tuple[np.ndarray, np.ndarray]:
    """NSH (RFC 8300): MD type 1 headers are 24 bytes (as Wireshark reads them), others their length field."""
    length, ok1 = u8_within(buf, pos, end, 1)
    md_type, ok2 = u8_within(buf, pos, end, 2)
    nxt, ok3 = u8_within(buf, pos, end, 3)
    size = np.where((md_type & 0x0F) == 1, 24, (length & 0x3F) * 4)
    ok = ok1 & ok2 & ok3 & (size >= 8) & (end >= pos + size)
    return np.where(ok, ethertype_of(nxt, _NEXT_PROTOCOL), 0), np.where(ok, pos + size, CUT)


@_PARAMETERS.fill
def gre(buf: np.ndarray, pos: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The packet inside GRE headers at ``pos``.

    Parameters
    ----------
    {buf}
    pos : numpy.ndarray of int64
        Start of each GRE header.
    {end}

    Returns
    -------
    proto : numpy.ndarray of int64
        Inner protocol as an ethertype (0: none followed).
    inner : numpy.ndarray of int64
        Where it starts (:data:`CUT` where the record ends first).
    """
    flags, ok = u16_within(buf, pos, end, 0)
    proto, ok2 = u16_within(buf, pos, end, 2)
    ok &= ok2
    ver = flags & 7
    # flags C, K, S add 4 bytes each; version 1 (PPTP) always has the key, and S and A optional
    size = np.where(ver == 1, 8 + 4 * ((flags >> 12) & 1) + 4 * ((flags >> 7) & 1),
                    4 + 4 * ((flags >> 15) & 1) + 4 * ((flags >> 13) & 1) + 4 * ((flags >> 12) & 1))
    inner = pos + size
    proto = proto.copy()
    # ERSPAN type II has an 8-byte header and a GRE sequence number; type I neither
    e2 = ok & (proto == ERSPAN_II)
    inner[e2] += np.where((flags[e2] & 0x1000) != 0, 8, 0)
    proto[e2] = ETH_BRIDGE
    # ERSPAN type III: 12 bytes, 8 more with the O flag; frame type (bits 10-14 of the last word) 0 is Ethernet
    e3 = np.flatnonzero(ok & (proto == ERSPAN_III))
    last, ok3 = u16_within(buf, inner[e3], end[e3], 10)
    ethernet = ok3 & (((last >> 10) & 0x1F) == 0)
    proto[e3] = np.where(ethernet, ETH_BRIDGE, 0)
    inner[e3] += 12 + 8 * (last & 1)
    ok[e3[~ok3]] = False
    # WCCP: a 4-byte redirect header, unless an IPv4 header follows at once
    w = np.flatnonzero(ok & (proto == WCCP))
    first, okw = u8_within(buf, inner[w], end[w])
    inner[w] += np.where((first >> 4) == 4, 0, 4)
    proto[w] = ETH_IPV4
    ok[w[~okw]] = False
    n = np.flatnonzero(ok & (proto == NSH))
    proto[n], inner[n] = _nsh(buf, inner[n], end[n])
    return np.where(ok, proto, 0), np.where(ok & (inner <= end), inner, CUT)


def udp_tunnel_port(sport: np.ndarray, dport: np.ndarray) -> np.ndarray:
    """The tunnel port of each UDP datagram (0 for none): a port of :data:`UDP_TUNNELS`, the lower one if
    both are, and only where the other port is not below 1024.

    Parameters
    ----------
    sport, dport : numpy.ndarray of int64
        Source and destination ports.

    Returns
    -------
    numpy.ndarray of int64
        The port whose tunnel the payload is, or 0.
    """
    ports = UDP_TUNNEL_PORTS
    lo, hi = np.minimum(sport, dport), np.maximum(sport, dport)
    return np.where(np.isin(lo, ports), lo, np.where(np.isin(hi, ports) & (lo >= 1024), hi, 0))


def _gtp_u(buf, pos, end) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GTPv1-U G-PDUs: (tunnel?, proto, inner)."""
    flags, ok = u8_within(buf, pos, end, 0)
    mtype, ok2 = u8_within(buf, pos, end, 1)
    header_cut = ~(ok & ok2)  # which message it is is not captured: a cut tunnel header
    tunnel = header_cut | (((flags >> 5) == 1) & ((flags & 0x10) != 0) & (mtype == 0xFF))
    optional = (flags & 0x07) != 0
    inner = pos + np.where(optional, 12, 8)
    nxt, ok3 = u8_within(buf, pos, end, 11)
    nxt = np.where(tunnel & optional & ((flags & 0x04) != 0), nxt, 0)
    cut = header_cut | (tunnel & optional & ~ok3)
    for _ in range(MAX_GTP_EXTENSIONS):
        more = np.flatnonzero(tunnel & ~cut & (nxt != 0))
        if len(more) == 0:
            break
        words, okl = u8_within(buf, inner[more], end[more])
        size = words * 4
        after, okn = u8_within(buf, inner[more] + np.maximum(size, 1) - 1, end[more])
        bad = ~okl | ~okn | (size == 0)
        cut[more[bad]] = True
        inner[more] += size
        nxt[more] = np.where(bad, 0, after)
    cut |= tunnel & (nxt != 0)  # more extension headers than followed
    first, okf = u8_within(buf, inner, end)
    proto = np.where((first >= 0x45) & (first <= 0x4E), ETH_IPV4, np.where((first >> 4) == 6, ETH_IPV6, 0))
    cut |= tunnel & ~okf
    return tunnel, proto, np.where(cut, CUT, inner)


def _teredo(buf, pos, end) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Teredo: the authentication indication (type 1), then the origin indication (type 0), then IPv6."""
    inner = pos.copy()
    kind, ok = u16_within(buf, inner, end)
    auth = ok & (kind == 1)
    a = np.flatnonzero(auth)
    id_len, ok1 = u8_within(buf, inner[a], end[a], 2)
    au_len, ok2 = u8_within(buf, inner[a], end[a], 3)
    inner[a] += 4 + id_len + au_len + 8 + 1
    cut = np.zeros(len(pos), bool)
    cut[a] = ~(ok1 & ok2)
    kind, ok = u16_within(buf, inner, end)
    inner += np.where(ok & (kind == 0), 8, 0)
    cut |= inner >= end
    return np.ones(len(pos), bool), np.where(cut, 0, ETH_IPV6), np.where(cut, CUT, inner)


def _l2tp(buf, pos, end) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L2TPv2 data messages, then PPP: (tunnel?, proto, inner)."""
    flags, ok = u16_within(buf, pos, end)
    tunnel = ~ok | (((flags & 0x000F) == 2) & ((flags & 0x8000) == 0))  # flags not captured: a cut header
    inner = pos + 6 + 2 * ((flags >> 14) & 1) + 4 * ((flags >> 11) & 1)  # length; Ns and Nr
    offset_flag = (flags & 0x0200) != 0
    pad, okp = u16_within(buf, inner, end)
    inner += np.where(offset_flag, 2 + pad, 0)
    cut = ~ok | (tunnel & offset_flag & ~okp)
    first, ok1 = u8_within(buf, inner, end)
    hdlc = ok1 & (first == 0xFF)
    inner += np.where(hdlc, 2, 0)
    first, ok1 = u8_within(buf, inner, end)
    word, ok2 = u16_within(buf, inner, end)
    compressed = (first & 1) == 1  # protocol field compression (RFC 1661 Sec. 6.5)
    ppp = np.where(compressed, first, word)
    cut |= tunnel & ~(ok1 & (compressed | ok2))
    inner += np.where(compressed, 1, 2)
    proto = np.where(ppp == PPP_IPV4, ETH_IPV4, np.where(ppp == PPP_IPV6, ETH_IPV6, 0))
    return tunnel, proto, np.where(cut, CUT, inner)


@_PARAMETERS.fill
def udp_tunnel(buf: np.ndarray, port: np.ndarray, pos: np.ndarray, end: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The packet inside UDP payloads at ``pos`` that :func:`udp_tunnel_port` gave ``port``.

    Parameters
    ----------
    {buf}
    port : numpy.ndarray of int64
        The tunnel port of each datagram (a key of :data:`UDP_TUNNELS`).
    pos : numpy.ndarray of int64
        Start of each UDP payload.
    {end}

    Returns
    -------
    tunnel : numpy.ndarray of bool
        Whether the datagram carries a packet (False: e.g. a GTP echo or an L2TP control message).
    proto : numpy.ndarray of int64
        Inner protocol as an ethertype (0: not one followed).
    inner : numpy.ndarray of int64
        Where it starts (:data:`CUT` where the record ends first).
    """
    n = len(pos)
    tunnel = np.zeros(n, bool)
    proto = np.zeros(n, np.int64)
    inner = np.full(n, CUT, np.int64)

    def put(sel, t, p, i):
        tunnel[sel], proto[sel], inner[sel] = t, p, i

    v = np.flatnonzero(port == 4789)  # VXLAN: 8 bytes, then Ethernet
    put(v, True, ETH_BRIDGE, np.where(end[v] >= pos[v] + 8, pos[v] + 8, CUT))
    v = np.flatnonzero(port == 4790)  # VXLAN-GPE: 8 bytes, next protocol in the fourth
    nxt, ok = u8_within(buf, pos[v], end[v], 3)
    put(v, True, np.where(ok, ethertype_of(nxt, _NEXT_PROTOCOL), 0), np.where(ok & (end[v] >= pos[v] + 8), pos[v] + 8, CUT))
    g = np.flatnonzero(port == 6081)  # Geneve: 8 bytes + options (6-bit length in 4-byte words)
    opt, ok = u8_within(buf, pos[g], end[g], 0)
    gp, ok2 = u16_within(buf, pos[g], end[g], 2)
    put(g, True, gp, np.where(ok & ok2, pos[g] + 8 + (opt & 0x3F) * 4, CUT))
    m = np.flatnonzero(port == 6635)  # MPLS in UDP: the label stack at once
    put(m, True, ETH_MPLS[0], pos[m])
    r = np.flatnonzero(port == 4754)  # GRE in UDP
    put(r, True, *gre(buf, pos[r], end[r]))
    for number, parse in ((2152, _gtp_u), (3544, _teredo), (1701, _l2tp)):
        s = np.flatnonzero(port == number)
        put(s, *parse(buf, pos[s], end[s]))
    inner = np.where(tunnel & (inner > end), CUT, inner)
    return tunnel, proto, inner
