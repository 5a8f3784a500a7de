"""Per-packet TCP analysis: connections, directions, unwrapped sequence numbers, retransmissions.

A *connection* is a 4-tuple between a SYN and the next SYN with a different
initial sequence number on the same 4-tuple (so port reuse starts a new one);
a *flow* is one direction of a connection (``flow_id = 2 * connection_id`` for
the initiator's direction, ``+ 1`` for the responder's). The initiator is the
side that sent the first SYN without ACK, else the sender of the first packet.
Sequence numbers are unwrapped across the 2^32 boundary per flow.

:func:`annotate` is the layer that :mod:`.flows`, :mod:`.rtt`, :mod:`.series`,
:mod:`.mptcp` and :mod:`.patterns` build on; it imports none of them. (The module is not called ``annotate`` so that
``tcpmodels.traces.annotate`` stays the function.)
The definitions (duplicate, retransmission, duplicate ACK) are in :mod:`.flows`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["annotate"]

_M32 = 1 << 32


def _endpoint_codes(packets: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    src, dst = packets["src_addr"], packets["dst_addr"]
    cats = pd.Index(src.cat.categories).union(pd.Index(dst.cat.categories))
    s = cats.get_indexer(src.cat.categories)[src.cat.codes.to_numpy()].astype(np.int64)
    d = cats.get_indexer(dst.cat.categories)[dst.cat.codes.to_numpy()].astype(np.int64)
    return (s << 16) | packets["src_port"].to_numpy(np.int64), (d << 16) | packets["dst_port"].to_numpy(np.int64)


def _group_starts(keys: np.ndarray) -> np.ndarray:
    """Boolean array: True where a sorted key array starts a new group."""
    start = np.ones(len(keys), bool)
    start[1:] = keys[1:] != keys[:-1]
    return start


def _unwrap(values: np.ndarray, group_start: np.ndarray) -> np.ndarray:
    """Unwrap uint32 values within groups (sorted by group): each step is taken as the signed 32-bit difference."""
    v = values.astype(np.int64)
    step = np.empty_like(v)
    step[0] = 0
    step[1:] = ((v[1:] - v[:-1] + (1 << 31)) % _M32) - (1 << 31)
    step[group_start] = 0
    cum = np.cumsum(step)
    idx = np.flatnonzero(group_start)
    base = np.repeat(cum[idx], np.diff(np.append(idx, len(v))))
    first = np.repeat(v[idx], np.diff(np.append(idx, len(v))))
    return first + cum - base


def _exclusive_cummax(values: np.ndarray, group_start: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Running maximum of the *previous* values within each group (``floor`` for the first of a group)."""
    s = pd.Series(values)
    gid = np.cumsum(group_start)
    prev = s.groupby(gid).cummax().shift(1).to_numpy().copy()
    prev[group_start] = np.nan
    return np.where(np.isnan(prev), floor, prev)


def annotate(packets: pd.DataFrame) -> pd.DataFrame:
    """Per-packet flow analysis columns, aligned with ``packets`` (same index).

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.

    Returns
    -------
    pandas.DataFrame
        ``connection_id``, ``flow_id`` (int64), ``is_initiator`` (bool: sent by the
        side that opened the connection), ``seq_u`` and ``seq_end_u`` (unwrapped
        sequence numbers, int64; ``seq_end_u = seq_u + payload + SYN + FIN``),
        ``ack_u`` (unwrapped acknowledgment number in the *peer's* sequence space,
        int64; -1 without the ACK flag), ``is_retransmission``, ``is_duplicate``,
        ``is_dup_ack``, ``is_keepalive`` (bool), and the classes of a retransmission as
        Wireshark's ``tcp.analysis`` flags name them (disjoint, each a subset of
        ``is_retransmission``; the rest are plain retransmissions):
        ``is_fast_retransmission`` (the sequence number the peer's last ACK asked for,
        after at least two duplicate ACKs, within 20 ms of that ACK),
        ``is_out_of_order`` (sent less than the connection's initial RTT -- 3 ms if
        unknown -- after the segment that set the highest sequence number, and not
        ending there), ``is_spurious_retransmission`` (payload the peer had already
        acknowledged) (bool).
    """
    n = len(packets)
    if n == 0:
        return pd.DataFrame({k: pd.Series(dtype=t) for k, t in (
            ("connection_id", "int64"), ("flow_id", "int64"), ("is_initiator", "bool"), ("seq_u", "int64"),
            ("seq_end_u", "int64"), ("ack_u", "int64"), ("is_retransmission", "bool"), ("is_duplicate", "bool"),
            ("is_dup_ack", "bool"), ("is_keepalive", "bool"), ("is_fast_retransmission", "bool"),
            ("is_spurious_retransmission", "bool"), ("is_out_of_order", "bool"))}, index=packets.index)
    a, b = _endpoint_codes(packets)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    syn_only = (packets["syn"] & ~packets["ack_flag"]).to_numpy()
    seq = packets["seq"].to_numpy(np.int64)
    # --- connections: 4-tuple, split where a SYN with a new ISN appears
    tup = pd.DataFrame({"lo": lo, "hi": hi}).groupby(["lo", "hi"], sort=False).ngroup().to_numpy()
    order = np.lexsort((np.arange(n), tup))
    t_sorted = tup[order]
    start_t = _group_starts(t_sorted)
    syn_s = syn_only[order]
    seq_s = np.where(syn_s, seq[order], -1)
    # previous SYN's ISN within the tuple (forward fill of seq over SYN rows)
    gid = np.cumsum(start_t)
    prev_syn = pd.Series(np.where(syn_s, seq_s, np.nan)).groupby(gid).ffill().shift(1).to_numpy().copy()
    prev_syn[start_t] = np.nan
    new_conn = syn_s & (np.isnan(prev_syn) | (prev_syn != seq_s))
    new_conn |= start_t
    conn_sorted = np.cumsum(new_conn) - 1
    conn = np.empty(n, np.int64)
    conn[order] = conn_sorted
    # initiator endpoint per connection: sender of the first SYN-only, else of the first packet
    first_pos = pd.Series(np.arange(n)[order]).groupby(conn_sorted).first().to_numpy()
    syn_rows = np.flatnonzero(syn_only)
    init = a[first_pos]
    if len(syn_rows):
        fs = pd.Series(syn_rows).groupby(conn[syn_rows]).first()
        init[fs.index.to_numpy()] = a[fs.to_numpy()]
    is_init = a == init[conn]
    flow = 2 * conn + (~is_init).astype(np.int64)

    # --- per direction, capture order
    order = np.lexsort((np.arange(n), flow))
    f = flow[order]
    fstart = _group_starts(f)
    payload = packets["payload_bytes"].to_numpy(np.int64)[order]
    syn = packets["syn"].to_numpy()[order]
    fin = packets["fin"].to_numpy()[order]
    rst = packets["rst"].to_numpy()[order]
    ackf = packets["ack_flag"].to_numpy()[order]
    seq_u = _unwrap(seq[order], fstart)
    seq_end = seq_u + payload + syn + fin
    # duplicates: same packet twice
    key_cols = ["ip_id", "seq", "ack", "flags", "window", "payload_bytes", "tsval", "tsecr", "sack_left"]
    dkey = packets[key_cols].iloc[order].copy()
    dkey["flow"] = f
    dup = dkey.duplicated(keep="first").to_numpy()
    # retransmissions: a RST without payload never moves the highest-sequence mark (e.g. one with seq 0
    # before the SYN/ACK); other segments do, pure ACKs included (as Wireshark's nextseq)
    occupies = (payload > 0) | syn | fin
    seeds = ~dup & (occupies | ~rst)
    hmax = _exclusive_cummax(np.where(seeds, seq_end, -np.inf), fstart, floor=-np.inf)
    has_prev = hmax > -np.inf
    keepalive = (payload <= 1) & ~syn & ~fin & has_prev & (seq_u == hmax - 1)
    retrans = occupies & has_prev & (seq_u < hmax) & ~dup & ~keepalive
    # duplicate ACKs (Wireshark's rule): pure ACK repeating the previous packet's ack, window and seq
    ack = packets["ack"].to_numpy(np.int64)[order]
    win = packets["window"].to_numpy(np.int64)[order]
    pure = ackf & (payload == 0) & ~syn & ~fin & ~rst
    same = np.zeros(n, bool)
    same[1:] = (ack[1:] == ack[:-1]) & (win[1:] == win[:-1]) & (seq_u[1:] == seq_u[:-1]) & ackf[:-1]
    same &= ~fstart
    dupack = pure & same & (win != 0) & ~dup
    # acknowledgments unwrapped in the peer's sequence space (anchored at the peer's first seq)
    ack_u = np.full(n, -1, np.int64)
    ra = np.flatnonzero(ackf)
    if len(ra):
        fa = f[ra]
        st = _group_starts(fa)
        unwrapped = _unwrap(ack[ra], st)
        peer_first = pd.Series(seq_u[fstart], index=f[fstart])
        anchor = peer_first.reindex(fa ^ 1).to_numpy()
        first_ack = np.repeat(unwrapped[st], np.diff(np.append(np.flatnonzero(st), len(ra))))
        shift = np.where(np.isnan(anchor), 0,
                         ((first_ack - np.nan_to_num(anchor) + (1 << 31)) % _M32) - (1 << 31)
                         + np.nan_to_num(anchor) - first_ack).astype(np.int64)
        ack_u[ra] = unwrapped + shift
    t = packets["timestamp_ns"].to_numpy(np.int64)[order]
    fast, spurious, ooo = _retransmission_classes(f, fstart, order, t, syn, ackf, seq_u, seq_end, ack_u, hmax,
                                                  seeds, retrans, dup, dupack, payload)
    res = {
        "connection_id": f // 2, "flow_id": f, "is_initiator": (f % 2) == 0, "seq_u": seq_u, "seq_end_u": seq_end,
        "ack_u": ack_u, "is_retransmission": retrans, "is_duplicate": dup, "is_dup_ack": dupack,
        "is_keepalive": keepalive, "is_fast_retransmission": fast, "is_spurious_retransmission": spurious,
        "is_out_of_order": ooo,
    }
    unsorted = {}
    for k, v in res.items():
        arr = np.empty(n, v.dtype)
        arr[order] = v
        unsorted[k] = arr
    return pd.DataFrame(unsorted, index=packets.index)


def _retransmission_classes(f, fstart, pos, t, syn, ackf, seq_u, seq_end, ack_u, hmax, seeds, retrans, dup, dupack,
                            payload):
    """Fast / spurious / out-of-order flags (rows sorted by flow, then capture order; ``pos`` = capture position).

    Wireshark's order of tests ([1]_ in :mod:`.flows`): fast retransmission first, then out-of-order, then
    spurious; what remains is a plain retransmission.
    """
    n = len(f)
    # the peer's state just before each packet: its last ACK, when it was sent, and its run of duplicate ACKs
    # Wireshark's dupacknum: duplicate ACKs since the acknowledgment number last changed (window updates and
    # data with the same ACK do not reset it)
    run_break = fstart.copy()
    run_break[1:] |= ack_u[1:] != ack_u[:-1]
    run_id = np.cumsum(run_break)
    run_len = pd.Series(dupack.astype(np.int64)).groupby(run_id).cumsum().to_numpy()
    peer = pd.DataFrame({"pos": pos, "key": f, "peer_ack": np.where(ackf, ack_u, -1), "peer_t": t,
                         "dupacks": run_len})[~dup]
    me = pd.DataFrame({"pos": pos, "key": f ^ 1, "row": np.arange(n)})
    m = pd.merge_asof(me.sort_values("pos"), peer.sort_values("pos"), on="pos", by="key", direction="backward",
                      allow_exact_matches=False).sort_values("row")
    peer_ack = m["peer_ack"].fillna(-1).to_numpy(np.int64)
    peer_t = m["peer_t"].to_numpy(float)
    dupacks = m["dupacks"].fillna(0).to_numpy(np.int64)
    fast = retrans & (dupacks >= 2) & (peer_ack == seq_u) & (t - peer_t < 20e6)
    # out of order: soon after the segment that set the mark (the connection's initial RTT; 3 ms unknown)
    setter_t = np.where(seeds & (seq_end > hmax), t, np.nan).astype(float)
    gid = np.cumsum(fstart)
    mark_t = pd.Series(setter_t).groupby(gid).ffill().groupby(gid).shift(1).to_numpy()
    irtt = _initial_rtt_ns(f, fstart, t, syn, ackf)
    ooo = retrans & ~fast & (t - mark_t < irtt) & (hmax != seq_end)
    spurious = retrans & ~fast & ~ooo & (payload > 0) & (peer_ack > 0) & (seq_end <= peer_ack)
    return fast, spurious, ooo


def _initial_rtt_ns(f, fstart, t, syn, ackf) -> np.ndarray:
    """Per row: the connection's initial RTT (SYN to the first initiator ACK after the SYN/ACK) [ns], else 3 ms."""
    conn = f // 2
    init = (f % 2) == 0
    df = pd.DataFrame({"conn": conn, "t": t.astype(float)})
    t_syn = df[init & syn & ~ackf].groupby("conn")["t"].min()
    t_synack = df[~init & syn & ackf].groupby("conn")["t"].min()
    after = df[init & ackf & ~syn]
    after = after[after["t"].to_numpy() > t_synack.reindex(after["conn"]).to_numpy()]
    t_ack3 = after.groupby("conn")["t"].min()
    irtt = (t_ack3 - t_syn).reindex(np.unique(conn))
    out = irtt.reindex(conn).to_numpy()
    return np.where(np.isnan(out) | (out <= 0), 3e6, out)
