"""TCP options (MSS, window scale, SACK, timestamps, MPTCP) decoded for many packets at once.

Options are variable-length, so instead of looping over packets the parser walks
option *positions*: at step k every packet still inside its option area looks at
the option starting at its own cursor, and the cursors advance by that option's
length. The TCP option area is at most 40 bytes, so there are at most 40 steps,
each a handful of numpy operations over the packets still active.

For each field the *first* occurrence in the packet is kept (as ``tshark -E
occurrence=f`` does). Malformed options (length < 2 or running past the header)
end the walk for that packet; options cut off by the snap length are not read and
the packet is counted in ``options_truncated``.

References
----------
.. [1] RFC 9293, "Transmission Control Protocol (TCP)", Sec. 3.2 (options, MSS).
.. [2] RFC 7323, "TCP Extensions for High Performance" (window scale, timestamps).
.. [3] RFC 2018, "TCP Selective Acknowledgment Options".
.. [4] RFC 8684, "TCP Extensions for Multipath Operation with Multiple Addresses" (MPTCP v1), Sec. 3;
   RFC 6824 (MPTCP v0), Sec. 3: the same layouts of MP_CAPABLE, MP_JOIN, DSS and MP_FASTCLOSE.
"""

from __future__ import annotations

import numpy as np

from tcpmodels._docstrings import SharedEntries

__all__ = ["parse_options", "u8", "u16", "u32", "u64", "u8_within", "u16_within"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    buf : numpy.ndarray of uint8
        The bytes.
    pos, end : numpy.ndarray of int64
        A header's start and its record's end in ``buf``.
    at : int
        Offset in the header. [bytes]
""")

MAX_OPTION_BYTES = 40


@_PARAMETERS.fill
def u8(buf: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Unsigned 8-bit big-endian integers read at ``idx``.

    Parameters
    ----------
    {buf}
    idx : numpy.ndarray of int64
        Index of the first byte of each value (``idx + 0`` must be inside ``buf``).

    Returns
    -------
    numpy.ndarray of int64
        The values, one per index.
    """
    return buf[idx].astype(np.int64)


@_PARAMETERS.fill
def u16(buf: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Unsigned 16-bit big-endian integers read at ``idx``.

    Parameters
    ----------
    {buf}
    idx : numpy.ndarray of int64
        Index of the first byte of each value (``idx + 1`` must be inside ``buf``).

    Returns
    -------
    numpy.ndarray of int64
        The values, one per index.
    """
    return (buf[idx].astype(np.int64) << 8) | buf[idx + 1]


@_PARAMETERS.fill
def u32(buf: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Unsigned 32-bit big-endian integers read at ``idx``.

    Parameters
    ----------
    {buf}
    idx : numpy.ndarray of int64
        Index of the first byte of each value (``idx + 3`` must be inside ``buf``).

    Returns
    -------
    numpy.ndarray of int64
        The values, one per index.
    """
    return (u16(buf, idx) << 16) | u16(buf, idx + 2)


@_PARAMETERS.fill
def u64(buf: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Unsigned 64-bit big-endian integers read at ``idx``.

    Parameters
    ----------
    {buf}
    idx : numpy.ndarray of int64
        Index of the first byte of each value (``idx + 7`` must be inside ``buf``).

    Returns
    -------
    numpy.ndarray of uint64
        The values, one per index.
    """
    return (u32(buf, idx).astype(np.uint64) << np.uint64(32)) | u32(buf, idx + 4).astype(np.uint64)


@_PARAMETERS.fill
def u8_within(buf: np.ndarray, pos: np.ndarray, end: np.ndarray, at: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The byte at ``pos + at`` where the record (ending at ``end``) holds it, else 0; and whether it does.

    Parameters
    ----------
    {buf, pos, end, at}

    Returns
    -------
    values : numpy.ndarray of int64
        The bytes (0 where not captured).
    held : numpy.ndarray of bool
        Whether the record holds them.
    """
    return _within(u8, 1, buf, pos, end, at)


@_PARAMETERS.fill
def u16_within(buf: np.ndarray, pos: np.ndarray, end: np.ndarray, at: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`u8_within` for the big-endian 16-bit word at ``pos + at``.

    Parameters
    ----------
    {buf, pos, end, at}

    Returns
    -------
    values : numpy.ndarray of int64
        The words (0 where not captured).
    held : numpy.ndarray of bool
        Whether the record holds them.
    """
    return _within(u16, 2, buf, pos, end, at)


def _within(read, width: int, buf: np.ndarray, pos: np.ndarray, end: np.ndarray,
            at: int) -> tuple[np.ndarray, np.ndarray]:
    """``read`` (``width`` bytes) at ``pos + at`` where the record holds all of it, else 0; and whether it does."""
    ok = end >= pos + at + width
    return np.where(ok, read(buf, np.where(ok, pos + at, 0)), 0), ok


def parse_options(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> dict[str, np.ndarray]:
    """Decode the TCP options found between ``start`` and ``end`` for every packet.

    Parameters
    ----------
    buf : numpy.ndarray of uint8
        The bytes (padded so that reads up to 40 bytes past ``end`` are safe).
    start, end : numpy.ndarray of int64
        Index of the first option byte and one past the last readable option byte
        (header end or captured end, whichever is smaller), per packet.

    Returns
    -------
    dict
        Arrays named as the packet-table columns (``mss``, ``window_scale``,
        ``sack_permitted``, ``sack_count``, ``sack_left``, ``sack_right``,
        ``has_timestamps``, ``tsval``, ``tsecr`` and the ``mptcp_*`` columns).
    """
    n = len(start)
    out = {
        "mss": np.full(n, -1, np.int32),
        "window_scale": np.full(n, -1, np.int8),
        "sack_permitted": np.zeros(n, bool),
        "sack_count": np.zeros(n, np.uint8),
        "sack_left": np.zeros(n, np.uint32),
        "sack_right": np.zeros(n, np.uint32),
        "has_timestamps": np.zeros(n, bool),
        "tsval": np.zeros(n, np.uint32),
        "tsecr": np.zeros(n, np.uint32),
        "mptcp_subtype": np.full(n, -1, np.int8),
        "mptcp_version": np.full(n, -1, np.int8),
        "mptcp_send_key": np.zeros(n, np.uint64),
        "mptcp_recv_key": np.zeros(n, np.uint64),
        "mptcp_recv_token": np.zeros(n, np.uint32),
        "has_mptcp_dsn": np.zeros(n, bool),
        "mptcp_dsn": np.zeros(n, np.uint64),
        "mptcp_subflow_seq": np.zeros(n, np.uint32),
        "mptcp_data_len": np.zeros(n, np.uint16),
        "has_mptcp_data_ack": np.zeros(n, bool),
        "mptcp_data_ack": np.zeros(n, np.uint64),
    }
    seen_key = np.zeros(n, bool)
    seen_token = np.zeros(n, bool)
    seen_sack = np.zeros(n, bool)
    rows = np.flatnonzero(start < end)
    pos = start[rows].copy()
    lim = end[rows]
    for _ in range(MAX_OPTION_BYTES):
        if len(rows) == 0:
            break
        kind = u8(buf, pos)
        length = u8(buf, pos + 1)
        nop = kind == 1
        eol = kind == 0
        length = np.where(nop, 1, length)
        bad = ~nop & ~eol & ((length < 2) | (pos + length > lim) | (pos + 1 >= lim))
        ok = ~nop & ~eol & ~bad
        # --- MSS
        m = ok & (kind == 2) & (length == 4)
        first = m & (out["mss"][rows] < 0)
        out["mss"][rows[first]] = u16(buf, pos[first] + 2)
        # --- window scale
        m = ok & (kind == 3) & (length == 3)
        first = m & (out["window_scale"][rows] < 0)
        out["window_scale"][rows[first]] = u8(buf, pos[first] + 2)
        # --- SACK permitted
        m = ok & (kind == 4)
        out["sack_permitted"][rows[m]] = True
        # --- SACK blocks
        m = ok & (kind == 5) & (length >= 10) & ~seen_sack[rows]
        r = rows[m]
        out["sack_count"][r] = (length[m] - 2) // 8
        out["sack_left"][r] = u32(buf, pos[m] + 2)
        out["sack_right"][r] = u32(buf, pos[m] + 6)
        seen_sack[r] = True
        # --- timestamps
        m = ok & (kind == 8) & (length == 10) & ~out["has_timestamps"][rows]
        r = rows[m]
        out["has_timestamps"][r] = True
        out["tsval"][r] = u32(buf, pos[m] + 2)
        out["tsecr"][r] = u32(buf, pos[m] + 6)
        # --- MPTCP
        m = ok & (kind == 30) & (length >= 3)
        if m.any():
            _mptcp(buf, rows[m], pos[m], length[m], out, seen_key, seen_token)
        # advance
        go = ~eol & ~bad
        rows, pos, lim = rows[go], pos[go] + length[go], lim[go]
        keep = pos < lim
        rows, pos, lim = rows[keep], pos[keep], lim[keep]
    return out


def _mptcp(buf, rows, pos, length, out, seen_key, seen_token) -> None:
    subtype = (u8(buf, pos + 2) >> 4).astype(np.int8)
    first = out["mptcp_subtype"][rows] < 0
    out["mptcp_subtype"][rows[first]] = subtype[first]
    # MP_CAPABLE (Sec. 3.1): version in the low nibble of byte 2 (0: RFC 6824, 1: RFC 8684); sender's key at
    # +4 (length >= 12), receiver's key at +12 (length >= 20); the same layout in both versions
    cap = (subtype == 0) & (out["mptcp_version"][rows] < 0)
    out["mptcp_version"][rows[cap]] = (u8(buf, pos[cap] + 2) & 0x0F).astype(np.int8)
    m = (subtype == 0) & (length >= 12) & ~seen_key[rows]
    out["mptcp_send_key"][rows[m]] = u64(buf, pos[m] + 4)
    m2 = m & (length >= 20)
    out["mptcp_recv_key"][rows[m2]] = u64(buf, pos[m2] + 12)
    seen_key[rows[m]] = True
    # MP_CAPABLE with data (length >= 22): data-level length at +20, no mapping sequence numbers
    m3 = m & (length >= 22)
    out["mptcp_data_len"][rows[m3]] = u16(buf, pos[m3] + 20)
    # MP_FASTCLOSE (Sec. 3.5): the receiver's key at +4, option length 12
    m = (subtype == 7) & (length >= 12) & ~seen_key[rows]
    out["mptcp_recv_key"][rows[m]] = u64(buf, pos[m] + 4)
    seen_key[rows[m]] = True
    # MP_JOIN SYN (Sec. 3.2): receiver's token at +4, option length 12
    m = (subtype == 1) & (length == 12) & ~seen_token[rows]
    out["mptcp_recv_token"][rows[m]] = u32(buf, pos[m] + 4)
    seen_token[rows[m]] = True
    # DSS (Sec. 3.3): flags at +3; data ACK (A, a) then mapping (M, m): DSN, subflow seq, data-level length
    m = subtype == 2
    if not m.any():
        return
    r, p, ln = rows[m], pos[m], length[m]
    flags = u8(buf, p + 3)
    has_ack = (flags & 0x01) != 0
    ack8 = (flags & 0x02) != 0
    has_map = (flags & 0x04) != 0
    dsn8 = (flags & 0x08) != 0
    ack_len = np.where(has_ack, np.where(ack8, 8, 4), 0)
    map_len = np.where(has_map, np.where(dsn8, 8, 4) + 6, 0)
    fits = 4 + ack_len + map_len <= ln
    a = has_ack & fits & ~out["has_mptcp_data_ack"][r]
    val = np.where(ack8[a], u64(buf, p[a] + 4), u32(buf, p[a] + 4).astype(np.uint64))
    out["mptcp_data_ack"][r[a]] = val
    out["has_mptcp_data_ack"][r[a]] = True
    d = has_map & fits & ~out["has_mptcp_dsn"][r]
    q = p[d] + 4 + ack_len[d]
    dsn = np.where(dsn8[d], u64(buf, q), u32(buf, q).astype(np.uint64))
    q = q + np.where(dsn8[d], 8, 4)
    out["mptcp_dsn"][r[d]] = dsn
    out["mptcp_subflow_seq"][r[d]] = u32(buf, q)
    out["mptcp_data_len"][r[d]] = u16(buf, q + 4)
    out["has_mptcp_dsn"][r[d]] = True
