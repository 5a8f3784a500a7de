"""Link-layer headers of wireless, DAG, Solaris and OpenBSD captures: where the network packet starts.

:func:`tcpmodels.traces.decode.decode_batch` reads Ethernet, Linux cooked, PPP, raw IP, loopback and NFLOG
records itself; the link types here are read by one function each, for a batch of records at once. Each
takes the records' start and captured length and returns per record the protocol that follows as an
ethertype (:data:`LLC_FOLLOWS` where an IEEE 802.2 LLC header follows, which the decoder follows as it does
below an 802.3 length field; 0 for a frame that carries no packet, e.g. an encrypted or null 802.11 data
frame) and its offset from the record's start (:data:`CUT` where the record ends inside the headers).

* 105 IEEE 802.11: data frames only; the header's length from its frame control (a fourth address when
  both DS bits are set, QoS control in QoS data subtypes, HT control when a QoS frame has the order bit);
  protected frames (encrypted) and the subtypes without a body carry no packet, nor do A-MSDUs (their
  sub-frames are not followed).
* 127 radiotap: its length field, and its flags field (when present) for the padding between the 802.11
  header and the body (flag 0x20); then 802.11.
* 192 PPI: its length field and the link type inside it (802.11 or Ethernet).
* 197 ERF (Endace DAG): the 16-byte record header and its extension headers; Ethernet records (types 2, 16,
  21: 2 bytes of padding) and IPv4 / IPv6 records (types 22, 23).
* 226 IPNET (Solaris): the 24-byte ``dl_ipnetinfo`` header; family 2 IPv4, 26 IPv6.
* 117 PFLOG (OpenBSD pf): the header's own length (rounded up to 4 bytes); family 2 IPv4, 24 / 28 / 30 IPv6
  (the BSDs' values).
* 104 Cisco HDLC (address, control, ethertype); 107 Frame Relay (:func:`_frame_relay`); 100 ATM with RFC 1483
  LLC and 123 SunATM (4 bytes of VPI/VCI, then LLC); 258 Apple PKTAP (:func:`_pktap`).
* 240 Hilscher netANALYZER (:func:`_netanalyzer`; 241, its transparent mode, carries no packet Wireshark reads);
  242 IP over InfiniBand (:func:`_ipoib`). 219 (LINKTYPE_MPLS), which Wireshark 4.0 does not read, stays an
  unknown link type.

These are the rules Wireshark (4.x) reads them by; the tests check each against tshark.

References
----------
.. [1] tcpdump.org, "Link-layer header types" (LINKTYPE_IEEE802_11, _IEEE802_11_RADIOTAP, _PPI, _ERF,
   _IPNET, _PFLOG) and www.radiotap.org (header layout, field alignment, flags).
.. [2] IEEE Std 802.11-2020, Sec. 9.2-9.3 (MAC frame formats: frame control, address fields, QoS and HT
   control); RFC 1042 (LLC/SNAP).
.. [3] Endace, "Extensible Record Format" (ERF types 2, 16, 21-23 and extension headers); CACE Technologies,
   "Per-Packet Information Header Specification" 1.0.
"""

from __future__ import annotations

import numpy as np

from tcpmodels._docstrings import SharedEntries

from .options import u8, u8_within, u16, u16_within
from .tunnels import CUT, ETH_IPV4, ETH_IPV6, ethertype_of

__all__ = ["LINKTYPE_IEEE802_11", "LINKTYPE_RADIOTAP", "LINKTYPE_PPI", "LINKTYPE_ERF", "LINKTYPE_IPNET",
           "LINKTYPE_PFLOG", "LINK_NAMES", "LLC_FOLLOWS", "link_header", "erf_records", "PSEUDO_HEADER_LINKS", "pseudo_headers"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    buf : numpy.ndarray of uint8
        The chunk's bytes.
    start : numpy.ndarray of int64
        Where each record's bytes start in ``buf``.
""")

LINKTYPE_IEEE802_11, LINKTYPE_RADIOTAP, LINKTYPE_PPI = 105, 127, 192
LINKTYPE_ERF, LINKTYPE_IPNET, LINKTYPE_PFLOG = 197, 226, 117
LINKTYPE_C_HDLC, LINKTYPE_ATM_RFC1483, LINKTYPE_FRELAY, LINKTYPE_SUNATM = 104, 100, 107, 123
LINKTYPE_PKTAP = 258
LINKTYPE_NETANALYZER, LINKTYPE_NETANALYZER_TRANSPARENT, LINKTYPE_IPOIB = 240, 241, 242
#: the link types this module reads, by name
LINK_NAMES = {LINKTYPE_IEEE802_11: "IEEE 802.11", LINKTYPE_RADIOTAP: "IEEE 802.11 with radiotap",
              LINKTYPE_PPI: "PPI", LINKTYPE_ERF: "ERF (Endace DAG)", LINKTYPE_IPNET: "Solaris IPNET",
              LINKTYPE_PFLOG: "OpenBSD pflog", LINKTYPE_C_HDLC: "Cisco HDLC",
              LINKTYPE_ATM_RFC1483: "ATM (RFC 1483 LLC)", LINKTYPE_FRELAY: "Frame Relay",
              LINKTYPE_SUNATM: "SunATM", LINKTYPE_PKTAP: "Apple PKTAP",
              LINKTYPE_NETANALYZER: "Hilscher netANALYZER",
              LINKTYPE_NETANALYZER_TRANSPARENT: "Hilscher netANALYZER (transparent mode)",
              LINKTYPE_IPOIB: "IP over InfiniBand"}
#: Bytes before the ethertype of an IP-over-InfiniBand record: a 40-byte address area (a global route header, or
#: 20 bytes and the destination's QPN and GID), then the RFC 4391 header's type and 2 reserved bytes
IPOIB_TYPE_AT = 40
#: the protocol value meaning "an IEEE 802.2 LLC header follows" (Linux's ETH_P_802_2, as in SLL)
LLC_FOLLOWS = 0x0004
#: ERF record types carrying an Ethernet frame after 2 bytes of padding, and IPv4 / IPv6 packets
ERF_ETHERNET, ERF_IPV4, ERF_IPV6 = (2, 16, 21), 22, 23
#: ERF extension headers followed at most
MAX_ERF_EXTENSIONS = 8
IPNET_HEADER_BYTES = 24
IPNET_FAMILIES = {2: ETH_IPV4, 26: ETH_IPV6}
PFLOG_FAMILIES = {2: ETH_IPV4, 24: ETH_IPV6, 28: ETH_IPV6, 30: ETH_IPV6}


def _le16(buf, idx):
    return u8(buf, idx) | (u8(buf, idx + 1) << 8)


def _le32(buf, idx):
    return _le16(buf, idx) | (_le16(buf, idx + 2) << 16)


def _ieee80211(buf, at: np.ndarray, end: np.ndarray, data_pad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """802.11 frames at absolute positions ``at``: (protocol, absolute position of what follows)."""
    ok = end >= at + 24
    fc = np.where(ok, _le16(buf, np.where(ok, at, 0)), 0)
    kind, subtype, flags = (fc >> 2) & 3, (fc >> 4) & 0xF, fc >> 8
    qos = (subtype & 8) != 0
    size = 24 + 6 * ((flags & 3) == 3) + 2 * qos + 4 * (qos & ((flags & 0x80) != 0))
    size = np.where(data_pad, (size + 3) & ~3, size)
    qos_at = at + 24 + 6 * ((flags & 3) == 3)
    amsdu = qos & ok & (end >= qos_at + 1) & ((u8(buf, np.where(ok & qos, qos_at, 0)) & 0x80) != 0)
    carries = ok & (kind == 2) & ((subtype & 4) == 0) & ((flags & 0x40) == 0) & ~amsdu
    pos = np.where(ok & (end >= at + size), at + size, CUT)
    return np.where(carries, LLC_FOLLOWS, 0), np.where(carries | ~ok, pos, at)


def _radiotap(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """Radiotap then 802.11: the flags field (bit 1 of the first presence word) after the presence words and a
    TSFT field (bit 0, 8 bytes aligned to 8)."""
    ok = end >= at + 8
    safe = np.where(ok, at, 0)
    length = np.where(ok, _le16(buf, safe + 2), 0)
    present = np.where(ok, _le32(buf, safe + 4), 0)
    words = np.ones(len(at), np.int64)
    more = ok & ((present & 0x80000000) != 0)
    for _ in range(8):  # further presence words while bit 31 is set
        nxt = at + 4 + 4 * words
        more &= end >= nxt + 4
        if not more.any():
            break
        word = np.where(more, _le32(buf, np.where(more, nxt, 0)), 0)
        words += more
        more &= (word & 0x80000000) != 0
    field = 4 + 4 * words
    field = np.where((present & 1) != 0, ((field + 7) & ~7) + 8, field)
    has_flags = ok & ((present & 2) != 0) & (field < length) & (end >= at + field + 1)
    flags = np.where(has_flags, u8(buf, np.where(has_flags, at + field, 0)), 0)
    ok &= (length >= 8) & (end >= at + length)
    proto, pos = _ieee80211(buf, np.where(ok, at + length, at), end, (flags & 0x20) != 0)
    return np.where(ok, proto, 0), np.where(ok, pos, CUT)


def _ethernet_at(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    ok = end >= at + 14
    return np.where(ok, u16(buf, np.where(ok, at + 12, 0)), 0), np.where(ok, at + 14, CUT)


def _ppi(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    ok = end >= at + 8
    safe = np.where(ok, at, 0)
    length, dlt = _le16(buf, safe + 2), _le32(buf, safe + 4)
    ok &= (length >= 8) & (end >= at + length)
    inner = at + length
    proto, pos = np.zeros(len(at), np.int64), np.full(len(at), CUT, np.int64)
    w = ok & (dlt == LINKTYPE_IEEE802_11)
    proto[w], pos[w] = _ieee80211(buf, inner[w], end[w], np.zeros(int(w.sum()), bool))
    e = ok & (dlt == 1)
    proto[e], pos[e] = _ethernet_at(buf, inner[e], end[e])
    other = ok & ~w & ~e
    pos[other] = inner[other]  # another link type inside: not followed (proto 0)
    return proto, pos


def _erf(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    size, ok = _erf_header_bytes(buf, at, end)
    kind = np.where(ok, u8(buf, np.where(ok, at + 8, 0)), 0) & 0x7F
    pos = at + size
    proto, out = np.zeros(len(at), np.int64), np.where(ok, pos, CUT)
    e = ok & np.isin(kind, ERF_ETHERNET)
    proto[e], out[e] = _ethernet_at(buf, pos[e], end[e])
    proto[ok & (kind == ERF_IPV4)] = ETH_IPV4
    proto[ok & (kind == ERF_IPV6)] = ETH_IPV6
    return proto, out


def _ipnet(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    ok = end >= at + IPNET_HEADER_BYTES
    fam = np.where(ok, u8(buf, np.where(ok, at + 1, 0)), 0)
    return ethertype_of(fam, IPNET_FAMILIES), np.where(ok, at + IPNET_HEADER_BYTES, CUT)


def _pflog(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    ok = end >= at + 2
    safe = np.where(ok, at, 0)
    size = (u8(buf, safe) + 3) & ~3
    fam = u8(buf, safe + 1)
    ok &= (size >= 4) & (end >= at + size)
    return np.where(ok, ethertype_of(fam, PFLOG_FAMILIES), 0), np.where(ok, at + size, CUT)


def _c_hdlc(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """Cisco HDLC: address, control, then an ethertype."""
    ok = end >= at + 4
    return np.where(ok, u16(buf, np.where(ok, at + 2, 0)), 0), np.where(ok, at + 4, CUT)


def _frame_relay(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """Frame Relay: a Q.922 address (2-4 bytes, to the byte with its EA bit), then either RFC 2427's UI control
    byte 0x03 and an NLPID (0xCC IPv4, 0x8E IPv6, 0x80 SNAP, one 0x00 of padding before it), or Cisco's
    ethertype."""
    pos = at + 2
    for _ in range(2):  # 3- and 4-byte addresses
        last, ok = u8_within(buf, pos - 1, end)
        pos = np.where(ok & ((last & 1) == 0), pos + 1, pos)
    control, ok = u8_within(buf, pos, end)
    ui = ok & (control == 0x03)
    nlpid_at = pos + 1
    nlpid, ok1 = u8_within(buf, nlpid_at, end)
    padded = ui & ok1 & (nlpid == 0)
    nlpid_at = np.where(padded, nlpid_at + 1, nlpid_at)
    nlpid, ok1 = u8_within(buf, nlpid_at, end)
    ether, ok2 = u16_within(buf, np.where(ui, nlpid_at + 4, pos), end)
    proto = np.where(ui, np.where(nlpid == 0xCC, ETH_IPV4, np.where(nlpid == 0x8E, ETH_IPV6, np.where(
        (nlpid == 0x80) & ok2, np.where(u8_within(buf, nlpid_at + 3, end)[0] == 0, ether, 0), 0))), ether)
    start = np.where(ui, np.where(nlpid == 0x80, nlpid_at + 6, nlpid_at + 1), pos + 2)
    whole = np.where(ui, ok1 & ((nlpid != 0x80) | ok2), ok2) & (end >= start)
    return np.where(whole, proto, 0), np.where(whole, start, CUT)


#: BSD loopback address families: IPv4, and IPv6 as the BSDs, FreeBSD and Darwin number it
NULL_FAMILIES = {2: ETH_IPV4, 24: ETH_IPV6, 28: ETH_IPV6, 30: ETH_IPV6}


def _pktap(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """Apple PKTAP (``tcpdump -i pktap`` / ``-k`` on macOS): the header's own length and the packet's DLT
    (little-endian), then Ethernet (DLT 1), BSD loopback (0: a 4-byte family, either byte order) or raw IP
    (12)."""
    ok = end >= at + 12
    safe = np.where(ok, at, 0)
    length, kind, dlt = _le32(buf, safe), _le32(buf, safe + 4), _le32(buf, safe + 8)
    ok &= (length >= 12) & (end >= at + length)
    packet = ok & (kind == 1)  # PTH_TYPE_PACKET
    inner = at + length
    proto, pos = np.zeros(len(at), np.int64), np.where(ok, inner, CUT)
    e = packet & (dlt == 1)
    proto[e], pos[e] = _ethernet_at(buf, inner[e], end[e])
    n = np.flatnonzero(packet & (dlt == 0))
    fam_ok = end[n] >= inner[n] + 4
    fam = np.where(fam_ok, _le32(buf, np.where(fam_ok, inner[n], 0)), 0)
    fam = np.where(fam >= 65536, ((fam & 0xFF) << 24) | ((fam & 0xFF00) << 8) | ((fam >> 8) & 0xFF00) | (fam >> 24),
                   fam)
    proto[n], pos[n] = ethertype_of(fam, NULL_FAMILIES), np.where(fam_ok, inner[n] + 4, CUT)
    r = np.flatnonzero(packet & (dlt == 12))
    first, okr = u8_within(buf, inner[r], end[r])
    proto[r] = np.where((first >> 4) == 4, ETH_IPV4, np.where((first >> 4) == 6, ETH_IPV6, 0))
    pos[r] = np.where(okr, inner[r], CUT)
    return proto, pos


def _netanalyzer(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """Hilscher netANALYZER: a 4-byte little-endian header (error flags, then a flag for a GPIO event, which carries
    no packet), then an Ethernet frame with its FCS. Wireshark 4.0 does not check the header's version."""
    ok = end >= at + 4
    gpio = ok & ((u8(buf, np.where(ok, at + 1, 0)) & 0x01) != 0)
    proto, pos = _ethernet_at(buf, at + 4, end)
    return np.where(ok & ~gpio, proto, 0), np.where(ok, np.where(gpio, at + 4, pos), CUT)


def _ipoib(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """IP over InfiniBand (link type 242): the type at :data:`IPOIB_TYPE_AT`, the packet 4 bytes after it."""
    ok = end >= at + IPOIB_TYPE_AT + 4
    return np.where(ok, u16(buf, np.where(ok, at + IPOIB_TYPE_AT, 0)), 0), np.where(ok, at + IPOIB_TYPE_AT + 4, CUT)


_READERS = {LINKTYPE_IEEE802_11: lambda buf, at, end: _ieee80211(buf, at, end, np.zeros(len(at), bool)),
            LINKTYPE_RADIOTAP: _radiotap, LINKTYPE_PPI: _ppi, LINKTYPE_ERF: _erf, LINKTYPE_IPNET: _ipnet,
            LINKTYPE_PFLOG: _pflog, LINKTYPE_C_HDLC: _c_hdlc,
            LINKTYPE_ATM_RFC1483: lambda buf, at, end: (np.full(len(at), LLC_FOLLOWS, np.int64), at.copy()),
            LINKTYPE_FRELAY: _frame_relay, LINKTYPE_PKTAP: _pktap,
            LINKTYPE_SUNATM: lambda buf, at, end: (np.full(len(at), LLC_FOLLOWS, np.int64),
                                                   np.where(end >= at + 4, at + 4, CUT)),
            LINKTYPE_NETANALYZER: _netanalyzer, LINKTYPE_IPOIB: _ipoib,
            # transparent mode keeps the preamble: Wireshark shows the frame as data, no packet in it
            LINKTYPE_NETANALYZER_TRANSPARENT: lambda buf, at, end: (np.zeros(len(at), np.int64),
                                                                    np.where(end >= at + 4, at + 4, CUT))}


@_PARAMETERS.fill
def link_header(buf: np.ndarray, link: int, start: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What follows the link-layer header of records of one of :data:`LINK_NAMES`' link types.

    Parameters
    ----------
    {buf}
    link : int
        The records' link type (a key of :data:`LINK_NAMES`).
    {start}
    cap : numpy.ndarray of int64
        Each record's captured length. [bytes]

    Returns
    -------
    proto : numpy.ndarray of int64
        The ethertype that follows (:data:`LLC_FOLLOWS` for an LLC header; 0 for none).
    offset : numpy.ndarray of int64
        Its offset from the record's start, or :data:`CUT`.
    """
    start = np.asarray(start, np.int64)
    end = start + np.asarray(cap, np.int64)
    proto, pos = _READERS[link](buf, start, end)
    return proto.astype(np.int64), np.where(pos >= 0, pos - start, CUT)



def _erf_header_bytes(buf, at, end) -> tuple[np.ndarray, np.ndarray]:
    """(bytes before an ERF record's packet: header, extension headers, Ethernet padding; whether readable)."""
    ok = end >= at + 16
    rtype = np.where(ok, u8(buf, np.where(ok, at + 8, 0)), 0)
    pos = at + 16
    more = ok & ((rtype & 0x80) != 0)
    for _ in range(MAX_ERF_EXTENSIONS):  # 8-byte extension headers while the top bit of their type is set
        more &= end >= pos + 8
        if not more.any():
            break
        nxt = u8(buf, np.where(more, pos, 0))
        pos = np.where(more, pos + 8, pos)
        more &= (nxt & 0x80) != 0
    ok &= ~more
    pos = pos + np.where(np.isin(rtype & 0x7F, ERF_ETHERNET), 2, 0)
    return pos - at, ok & (end >= pos)


@_PARAMETERS.fill
def erf_records(buf: np.ndarray, start: np.ndarray, cap: np.ndarray, fallback_ns: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What Wireshark takes from ERF records' own headers: their time, and the frame without the header.

    The header starts with a little-endian 64-bit fixed-point time: seconds since 1970 in the high 32 bits,
    the fraction of a second in the low 32 (units of 2**-32 s), turned into nanoseconds rounding to nearest
    (``(frac * 10**9 + 2**31) >> 32`` in effect); its ``wlen`` field (bytes 14-15, big-endian) is the frame's
    length on the wire. The header, its extension headers and an Ethernet record's 2 bytes of padding are
    not part of the frame.

    Parameters
    ----------
    {buf, start}
    cap : numpy.ndarray
        Each record's captured length. [bytes]
    fallback_ns : numpy.ndarray of int64
        The pcap records' times, kept for records too short to hold an ERF header. [ns]

    Returns
    -------
    timestamp_ns : numpy.ndarray of int64
        Times since the Unix epoch. [ns]
    header_bytes : numpy.ndarray of int64
        Bytes before the frame (0 where the header is not whole). [bytes]
    wire_bytes : numpy.ndarray of int64
        The frame's length on the wire (-1 where the header is not whole). [bytes]
    """
    start = np.asarray(start, np.int64)
    end = start + np.asarray(cap, np.int64)
    size, ok = _erf_header_bytes(buf, start, end)
    idx = np.where(ok, start, 0)
    frac = _le32(buf, idx).astype(np.uint64) * np.uint64(1_000_000_000)
    frac += (frac & np.uint64(0x80000000)) << np.uint64(1)
    ns = (frac >> np.uint64(32)).astype(np.int64)
    secs = _le32(buf, idx + 4).astype(np.int64) + (ns >= 1_000_000_000)
    ns = np.where(ns >= 1_000_000_000, ns - 1_000_000_000, ns)
    ts = np.where(ok, secs * 1_000_000_000 + ns, fallback_ns).astype(np.int64)
    return ts, np.where(ok, size, 0), np.where(ok, u16(buf, idx + 14), -1)


#: link types whose first bytes Wireshark reads as a pseudo-header, not as part of the frame
PSEUDO_HEADER_LINKS = (LINKTYPE_ERF, LINKTYPE_SUNATM)
SUNATM_HEADER_BYTES = 4


@_PARAMETERS.fill
def pseudo_headers(buf: np.ndarray, link_type: np.ndarray, start: np.ndarray, cap: np.ndarray, wire: np.ndarray,
                   timestamp_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Records as Wireshark counts them where their link type starts with a pseudo-header (ERF, SunATM).

    Parameters
    ----------
    {buf}
    link_type, start, cap, wire, timestamp_ns : numpy.ndarray
        Per record: link type, where its bytes start in ``buf``, captured and wire lengths [bytes], time [ns].

    Returns
    -------
    timestamp_ns : numpy.ndarray of int64
        Times: an ERF record's own (:func:`erf_records`), the others unchanged. [ns]
    header_bytes : numpy.ndarray of int64
        Bytes of pseudo-header before each frame (0 for other link types), which the frame's captured and
        wire lengths leave out. [bytes]
    wire_bytes : numpy.ndarray of int64
        Wire lengths counting the pseudo-header: an ERF record's header plus its ``wlen``. [bytes]
    """
    ts, wire = np.array(timestamp_ns, np.int64), np.array(wire, np.int64)
    header = np.zeros(len(ts), np.int64)
    e = np.flatnonzero(link_type == LINKTYPE_ERF)
    if len(e):
        ts[e], header[e], wlen = erf_records(buf, start[e], cap[e], ts[e])
        wire[e] = np.where(wlen >= 0, header[e] + wlen, wire[e])
    a = np.flatnonzero(link_type == LINKTYPE_SUNATM)
    header[a] = np.minimum(SUNATM_HEADER_BYTES, np.asarray(cap, np.int64)[a])
    return ts, header, wire
