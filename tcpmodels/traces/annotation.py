"""Per-packet TCP analysis: connections, directions, unwrapped sequence numbers, retransmissions, Expert Info.

A *connection* is a 4-tuple between a SYN and the next SYN with a different
initial sequence number on the same 4-tuple (so port reuse starts a new one);
a *flow* is one direction of a connection (``flow_id = 2 * connection_id`` for
the initiator's direction, ``+ 1`` for the responder's). The initiator is the
side that sent the first SYN without ACK, else the sender of the first packet.
Sequence numbers are unwrapped across the 2^32 boundary per flow.

:func:`annotate` is the layer that :mod:`.flows`, :mod:`.rtt`, :mod:`.series`,
:mod:`.mptcp` and :mod:`.patterns` build on; it imports none of them. (The module is not called ``annotate`` so that
``tcpmodels.traces.annotate`` stays the function.)
The definitions (duplicate, retransmission, keep-alive, duplicate ACK, ...) are in :mod:`.flows`; where they
part from Wireshark's, the reason is given there and at the constants below.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import connpass

#: passes of the zero-window-probe fixed point (each settles the probes a probe before them hid)
MAX_PROBE_PASSES = 8

__all__ = ["annotate", "ANNOTATION_COLUMNS", "DUPLICATE_MAX_GAP_OF_INITIAL_RTT", "DUPLICATE_MAX_GAP_NS",
           "UNKNOWN_INITIAL_RTT_NS"]

_M32 = 1 << 32

#: Column name -> dtype of :func:`annotate`'s result, in order.
ANNOTATION_COLUMNS = {
    "connection_id": "int64", "flow_id": "int64", "is_initiator": "bool", "seq_u": "int64", "seq_end_u": "int64",
    "ack_u": "int64", "is_retransmission": "bool", "is_duplicate": "bool", "is_dup_ack": "bool",
    "is_keepalive": "bool", "is_fast_retransmission": "bool", "is_spurious_retransmission": "bool",
    "is_out_of_order": "bool", "is_zero_window": "bool", "is_zero_window_probe": "bool",
    "is_window_update": "bool", "is_window_full": "bool", "is_previous_segment_not_captured": "bool",
    "is_acked_unseen": "bool",
}

#: The connection's initial RTT used by Wireshark's out-of-order test when the handshake was not captured
#: (its ``tcp.analysis`` default). [ns]
UNKNOWN_INITIAL_RTT_NS = 3_000_000
#: A copy identical to an earlier packet of the flow is a *duplicate* (the same packet captured twice, or
#: duplicated in the network) only when it arrives less than this fraction of the connection's initial RTT
#: after that packet. A sender cannot retransmit sooner than about one round trip after the original (a fast
#: retransmission needs the receiver's duplicate ACKs, RACK an ACK, a tail-loss probe or an RTO a timer of at
#: least the RTT), and every capture point sees the two copies over the same path, so a copy closer than that
#: was not sent twice by TCP. Half the initial RTT leaves room for an RTT that falls below the handshake's. [-]
DUPLICATE_MAX_GAP_OF_INITIAL_RTT = 0.5
#: The same bound when the handshake was not captured (initial RTT unknown): copies of one packet seen on two
#: interfaces or duplicated by a link arrive microseconds apart, and the shortest retransmission timers
#: (Linux's tail-loss probe: 10 ms at least; RTO: 200 ms) are far longer. [ns]
DUPLICATE_MAX_GAP_NS = 1_000_000


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


def _exclusive_cummax(values: np.ndarray, group_start: np.ndarray, floor: np.ndarray,
                      restart: np.ndarray | None = None) -> np.ndarray:
    """Running maximum of the *previous* values within each group (``floor`` for the first of a group); a row
    where ``restart`` holds sees the maximum so far, and the rows after it the maximum from it on."""
    s = pd.Series(values)
    gid = np.cumsum(group_start if restart is None else group_start | restart)
    prev = s.groupby(gid).cummax().shift(1).to_numpy().copy()
    prev[group_start] = np.nan
    return np.where(np.isnan(prev), floor, prev)


def _syn_restarts(f, pos, syn_only, synack) -> np.ndarray:
    """Rows (sorted by flow, then capture order) of a SYN without ACK captured before any SYN/ACK of its
    connection: Wireshark 4.0.17 sets the direction's next sequence number anew there (a SYN sent again after
    a RST or an ACK whose sequence number ran ahead restarts the analysis; after the SYN/ACK it does not)."""
    if not syn_only.any():
        return syn_only
    conn = f // 2
    first_synack = pd.Series(pos[synack]).groupby(conn[synack]).min()
    before = pos < first_synack.reindex(conn).to_numpy(float, na_value=np.inf)
    return syn_only & before


def _is_unset(nxt: np.ndarray) -> np.ndarray:
    """Where Wireshark's next sequence number is "not set" though a packet set it: 0 raw (0 mod 2^32 unwrapped)."""
    out = np.zeros(len(nxt), bool)
    finite = np.isfinite(nxt)
    out[finite] = np.mod(nxt[finite], _M32) == 0
    return out


def _wireshark_nextseq(values, f, fstart, syn_restart) -> tuple[np.ndarray, np.ndarray]:
    """Wireshark 4.0.17's next sequence number before each row, and the rows that set it while it was "not set".

    ``values`` are the rows' ends (``seq + payload + SYN + FIN``, -inf where a row does not take part: a duplicate
    or a zero-window probe); rows sorted by flow, then capture order. As ``tcp_analyze_sequence_number`` of
    4.0.17's ``packet-tcp.c`` (at its end: ``if (GT_SEQ(nextseq, fwd->nextseq) || !fwd->nextseq)``, the zero-window
    probe apart) a packet sets it when it ends beyond it, pure ACKs and RSTs without payload included (nothing
    there sets RSTs apart: one whose sequence number ran ahead moves it), or whatever its end while it is 0: the
    value it starts from and the one a segment ending at 2^32 or a RST with sequence number 0 (refusing a SYN)
    leaves. Such a row starts the
    running maximum anew, as a ``syn_restart`` row does (:func:`_syn_restarts`).

    Returns the next sequence number before each row (-inf none) and the rows that set it while "not set" after
    a packet had set it to 0 (the first packet of a direction is not one).
    """
    zero = np.zeros(len(values), bool)
    part = np.flatnonzero(np.isfinite(values))
    z = np.mod(values[part], _M32) == 0
    if not z.any():
        return _exclusive_cummax(values, fstart, floor=-np.inf, restart=syn_restart), zero
    # only the flows with a row ending at 0 (mod 2^32) can have one; their rows in order, one pass (a loop: each
    # restart changes the maximum the rows after it see, so a vectorised fixed point took a pass per restart)
    hit = np.unique(f[part[z]])
    rows = part[np.isin(f[part], hit)]
    flow_l, value_l, syn_l = f[rows].tolist(), values[rows].tolist(), syn_restart[rows].tolist()
    flagged = []
    current, state = None, -np.inf
    for i, (fl, v, sr) in enumerate(zip(flow_l, value_l, syn_l)):
        if fl != current:
            current, state = fl, -np.inf
        unset = state > -np.inf and state % _M32 == 0  # a packet set it to 0: this one sets it anew
        if unset:
            flagged.append(i)
        state = v if unset or sr else max(state, v)
    zero[rows[flagged]] = True
    return _exclusive_cummax(values, fstart, floor=-np.inf, restart=syn_restart | zero), zero


def _empty(index: pd.Index) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series(dtype=t) for k, t in ANNOTATION_COLUMNS.items()}, index=index)


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
        ``is_dup_ack``, ``is_keepalive`` (bool), the classes of a retransmission as
        Wireshark's ``tcp.analysis`` flags name them (disjoint, each a subset of
        ``is_retransmission``; the rest are plain retransmissions):
        ``is_spurious_retransmission`` (payload the peer's last ACK already covered, the
        end taken without a FIN; tested first and on its own: a segment the capture saw
        first, its original missed, and a zero-window probe are one too),
        ``is_fast_retransmission`` (the sequence number the peer's last ACK asked
        for, after at least two duplicate ACKs, within 20 ms of that ACK),
        ``is_out_of_order`` (sent less than the connection's initial RTT -- 3 ms if
        unknown -- after the packet that last set Wireshark's next sequence number, a
        pure ACK included, and not ending there) (bool); and the other conditions of Wireshark's Expert Info
        (bool): ``is_zero_window``, ``is_zero_window_probe``, ``is_window_update``,
        ``is_window_full``, ``is_previous_segment_not_captured`` (the segment starts
        beyond the highest sequence number seen so far: bytes before it were not
        captured, yet), ``is_acked_unseen`` (acknowledges bytes of the peer never seen).
        The definitions are in :mod:`tcpmodels.traces.flows`.

    Notes
    -----
    With the compiled kernel (:func:`tcpmodels.traces.pcapfile.set_kernel`, ``"auto"`` when built) the
    columns come from one ordered pass per connection in C (:mod:`.connpass`); the vectorised code below is
    the reference it is tested equal to, column by column.
    """
    n = len(packets)
    if n == 0:
        return _empty(packets.index)
    if connpass.use_compiled_pass():
        return _annotate_compiled(packets)
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
    t = packets["timestamp_ns"].to_numpy(np.int64)[order]
    seq_u = _unwrap(seq[order], fstart)
    seq_end = seq_u + payload + syn + fin
    irtt = _initial_rtt_ns(f, order, t, syn, ackf)
    # duplicates: the same packet twice, close in time (DUPLICATE_MAX_GAP_*)
    key_cols = ["ip_id", "seq", "ack", "flags", "window", "payload_bytes", "tsval", "tsecr", "sack_left"]
    # only rows whose quick hash repeats can be copies; the exact grouping runs on those
    h = f.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for c in key_cols:
        h = (h ^ packets[c].to_numpy()[order].astype(np.uint64)) * np.uint64(0x100000001B3)
    maybe = np.flatnonzero(pd.Series(h).duplicated(keep=False).to_numpy())
    prev_copy_t = np.full(n, np.nan)
    if len(maybe):
        dkey = packets[key_cols].iloc[order[maybe]].reset_index(drop=True)
        dkey["flow"] = f[maybe]
        copy_group = dkey.groupby(list(dkey.columns), sort=False).ngroup().to_numpy()
        prev_copy_t[maybe] = pd.Series(t[maybe], dtype="float64").groupby(copy_group).shift(1).to_numpy()
    max_gap = np.where(np.isnan(irtt), DUPLICATE_MAX_GAP_NS, DUPLICATE_MAX_GAP_OF_INITIAL_RTT * irtt)
    dup = ~np.isnan(prev_copy_t) & (t - prev_copy_t < max_gap)
    # the highest sequence number sent so far: set by segments that occupy sequence space (payload, SYN or
    # FIN), never by a pure ACK or a RST without payload (whose seq may run ahead of data still in flight)
    occupies = (payload > 0) | syn | fin
    ack = packets["ack"].to_numpy(np.int64)[order]
    win = packets["window"].to_numpy(np.int64)[order]
    ack_u = _unwrap_acks(f, fstart, ackf, ack, seq_u)
    # a zero-window probe: one byte at the mark while the peer's last window is 0; as in Wireshark it does
    # not move the mark, so a probe sent again is at the mark too (a fixed point: probes leave the seeds)
    peer_spoke, peer_row = _peer_rows(f, order, dup)
    peer_closed = peer_spoke & (win[np.maximum(peer_row, 0)] == 0)
    probe_like = (payload == 1) & ~syn & ~fin & ~rst & ~dup & peer_closed
    # Wireshark's nextseq (_wireshark_nextseq): every packet but a duplicate or a zero-window probe sets it when it
    # ends beyond it, pure ACKs and RSTs without payload too (a RST that ran ahead moves it); a SYN sent again
    # before any SYN/ACK of the connection was captured sets it anew (after the SYN's own tests), and so does any
    # packet while it is 0 (Wireshark's "not set"). Its keep-alive, duplicate-ACK, window-update and previous-segment-not-captured tests compare with it;
    # the retransmission mark starts anew where it does while "not set" (``zero_restart``)
    restart = _syn_restarts(f, order, syn & ~ackf & ~dup, syn & ackf)
    def marks(zw_probe: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Given the zero-window probes: what sets the next sequence number, it (before each row), the rows
        where it was "not set", and the retransmission mark (the highest end of the segments before)."""
        nxt_values = np.where(~dup & ~zw_probe, seq_end, -np.inf)
        nxt, zero_restart = _wireshark_nextseq(nxt_values, f, fstart, restart)
        seeds = ~dup & occupies & ~zw_probe
        hmax = _exclusive_cummax(np.where(seeds, seq_end, -np.inf), fstart, floor=-np.inf, restart=zero_restart)
        return nxt_values, nxt, zero_restart, hmax

    zw_probe = np.zeros(n, bool)
    for _ in range(MAX_PROBE_PASSES):
        nxt_values, nxt, zero_restart, hmax = marks(zw_probe)
        again = probe_like & (hmax > -np.inf) & (seq_u == hmax)
        if np.array_equal(again, zw_probe):
            break  # the marks are those of the final probes
        zw_probe = again
    else:
        nxt_values, nxt, zero_restart, hmax = marks(zw_probe)
    has_prev = hmax > -np.inf
    peer = _peer_state(f, order, t, ackf, ack_u, win, dup, ~dup & ~zw_probe, seq_end, fstart)
    # nextseq 0 (raw) is "not set" for the tests that read it so (4.0.17: ``nextseq && GT_SEQ(seq, nextseq)``,
    # ``nextseq && LT_SEQ(seq, nextseq)``): no retransmission (the spurious test apart), no previous segment
    # not captured
    unset = _is_unset(nxt)
    nxt_raised = (nxt_values > nxt) | restart | zero_restart  # the rows that set it (Wireshark's nextseqtime)
    # keep-alive: at most one byte, one below the next sequence number, and (when the peer's ACKs were
    # captured) a byte the peer has already acknowledged; an unacknowledged byte sent again is a retransmission
    peer_acked = np.where(peer["max_ack"] >= 0, peer["max_ack"] > seq_u, True)
    # (before any packet set the next sequence number it is 0, so one below is raw 2^32 - 1: 4.0.17's
    # ``nextseq - 1 == seq`` has no ``nextseq &&`` guard)
    one_below = np.where(nxt > -np.inf, seq_u == nxt - 1, np.mod(seq_u, _M32) == _M32 - 1)
    keepalive = (payload <= 1) & ~syn & ~fin & ~rst & one_below & peer_acked & ~zw_probe
    # Wireshark never calls a segment of more than one byte that starts one below the next sequence number a
    # retransmission (4.0.17: ``seglen > 1 && nextseq - 1 == seq``, meant for the data after a zero-window probe)
    after_probe_like = (payload > 1) & (seq_u == hmax - 1)
    # ... and calls payload the peer's last acknowledgment already covers (its end without a FIN: seq + payload)
    # a spurious retransmission before and apart from those tests: a first copy whose original the capture
    # missed, a zero-window probe, more than one byte from one below the mark (no keep-alive, no duplicate)
    # (the peer's acknowledgment number 0, raw, is "not set" for it: ``rev->lastack && LE_SEQ(...)``)
    peer_ack = peer["ack"]
    acked_payload = ((payload > 0) & (peer_ack > 0) & (np.mod(peer_ack, _M32) != 0) & (seq_u + payload <= peer_ack)
                     & ~dup & ~keepalive)
    retrans = ((occupies & has_prev & (seq_u < hmax) & ~dup & ~keepalive & ~zw_probe & ~after_probe_like & ~unset)
               | acked_payload)
    ctl = syn | fin | rst
    prev_win, prev_ack = _previous(win, fstart), _previous(ack, fstart)
    # duplicate ACKs (Wireshark's rule): no payload, the direction's window and acknowledgment number repeated,
    # at its next sequence number; not the answer to a keep-alive, not right after an MPTCP signal
    mptcp_signal = _after_mptcp_signal(packets["mptcp_subtype"].to_numpy()[order], f, order, fstart)
    after_keepalive = np.zeros(n, bool)
    pr = peer["row"]
    after_keepalive[pr >= 0] = keepalive[pr[pr >= 0]]
    dupack = ((payload == 0) & ~ctl & (win != 0) & (win == prev_win) & (seq_u == nxt) & (ack == prev_ack)
              & ~dup & ~after_keepalive & ~mptcp_signal)
    expert = _expert(packets, order, f, payload, ctl, ackf, ack_u, win, prev_win, prev_ack, ack, seq_u, nxt, dup,
                     peer)
    expert["is_previous_segment_not_captured"] &= ~unset
    expert["is_acked_unseen"], parked_count = _acked_unseen(
        order, f, ackf, ack, ack_u, seq_u, seq_end, nxt, dup, zw_probe, dupack,
        expert["is_previous_segment_not_captured"], expert["is_acked_unseen"], restart, zero_restart)
    fast, ooo = _retransmission_classes(fstart, t, irtt, ack_u, seq_u, seq_end, nxt, nxt_raised,
                                        retrans & ~acked_payload, dupack, peer, parked_count)
    spurious = acked_payload
    res = {
        "connection_id": f // 2, "flow_id": f, "is_initiator": (f % 2) == 0, "seq_u": seq_u, "seq_end_u": seq_end,
        "ack_u": ack_u, "is_retransmission": retrans, "is_duplicate": dup, "is_dup_ack": dupack,
        "is_keepalive": keepalive, "is_fast_retransmission": fast, "is_spurious_retransmission": spurious,
        "is_out_of_order": ooo, "is_zero_window_probe": zw_probe, **expert,
    }
    unsorted = {}
    for k in ANNOTATION_COLUMNS:
        v = res[k]
        arr = np.empty(n, v.dtype)
        arr[order] = v
        unsorted[k] = arr
    return pd.DataFrame(unsorted, index=packets.index)


def _annotate_compiled(packets: pd.DataFrame) -> pd.DataFrame:
    """:func:`annotate` by the compiled pass (:mod:`.connpass`)."""
    rows = connpass.run_table(packets, 0, rows=True, samples=False).rows
    conn, bits = rows["connection_id"], rows["bits"]
    cols = {"connection_id": conn, "seq_u": rows["seq_u"], "seq_end_u": rows["seq_end_u"], "ack_u": rows["ack_u"]}
    for name, bit in connpass.ROW_BITS.items():
        cols[name] = (bits & np.uint16(1 << bit)) != 0
    cols["flow_id"] = 2 * conn + (~cols["is_initiator"]).astype(np.int64)
    return pd.DataFrame({k: cols[k] for k in ANNOTATION_COLUMNS}, index=packets.index)


def _unwrap_acks(f, fstart, ackf, ack, seq_u) -> np.ndarray:
    """Acknowledgment numbers unwrapped in the peer's sequence space, anchored at the peer's first seq."""
    n = len(f)
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
    return ack_u


def _peer_rows(f, pos, dup) -> tuple[np.ndarray, np.ndarray]:
    """(whether the peer had spoken, the row of its last packet or -1) just before each row (rows sorted by
    flow, then capture order; duplicates are not the peer speaking)."""
    # flow * (n + 1) + position is sorted; the peer's last packet before a row is the last key of the peer
    # flow below (peer flow, row's position)
    stride = np.int64(len(f) + 1)
    key = f.astype(np.int64) * stride + pos
    speaking = np.flatnonzero(~dup)
    j = np.searchsorted(key[speaking], (f ^ 1).astype(np.int64) * stride + pos, side="left") - 1
    hit = j >= 0
    prow = np.where(hit, speaking[np.maximum(j, 0)], -1)
    hit &= (prow >= 0) & (f[np.maximum(prow, 0)] == (f ^ 1))
    return hit, np.where(hit, prow, -1)


def _peer_state(f, pos, t, ackf, ack_u, win, dup, reaching, seq_end, fstart) -> dict[str, np.ndarray]:
    """What the peer had last said just before each packet (rows sorted by flow, then capture order).

    ``ack`` (its last acknowledgment, -1 if none), ``t`` (when, NaN if none), ``win`` (its last raw window,
    -1 if none), ``next_seq`` (the highest sequence number its ``reaching`` packets had reached, pure ACKs and
    RSTs included: where an ACK beyond it may be "ACKed unseen"; -1 if none), ``max_ack`` (the highest
    acknowledgment it had sent, -1 if none), ``row`` (its last packet's row, -1 if none). Duplicates are not the
    peer speaking.
    """
    gid = np.cumsum(fstart)
    own_next = pd.Series(np.where(reaching, seq_end, np.nan)).groupby(gid).cummax().groupby(gid).ffill().to_numpy()
    own_max_ack = pd.Series(np.where(ackf & ~dup, ack_u, np.nan)).groupby(gid).cummax().groupby(gid).ffill().to_numpy()
    hit, prow = _peer_rows(f, pos, dup)
    r = np.maximum(prow, 0)
    return {"ack": np.where(hit & ackf[r], ack_u[r], -1), "t": np.where(hit, t[r].astype(float), np.nan),
            "win": np.where(hit, win[r], -1), "next_seq": np.where(hit, np.nan_to_num(own_next[r], nan=-1.0), -1.0),
            "row": prow, "max_ack": np.where(hit, np.nan_to_num(own_max_ack[r], nan=-1.0), -1.0)}


def _retransmission_classes(fstart, t, irtt, ack_u, seq_u, seq_end, nxt, nxt_raised, unacked_retrans,
                            dupack, peer, parked_count):
    """Fast / out-of-order flags of the retransmissions that are not spurious (rows sorted by flow, then capture
    order).

    Wireshark's order of tests (4.x, ``tcp_analyze_sequence_number`` of ``packet-tcp.c``; [1]_ in
    :mod:`.flows`): spurious first (the payload ends at or below the peer's last acknowledgment: the caller's),
    then fast retransmission, then out-of-order; what remains is a plain retransmission. ``parked_count`` is the peer's
    duplicate-ACK counter where the ACKed-unseen test parked it (:func:`_acked_unseen`), else
    :data:`_NOT_PARKED`. ``nxt`` is Wireshark's next sequence number before each row and ``nxt_raised`` the
    rows that set it: the out-of-order test reads both (a pure ACK that ran ahead of the captured data moves
    them, not our retransmission mark).
    """
    # Wireshark's dupacknum: duplicate ACKs since the acknowledgment number last changed
    run_break = fstart.copy()
    run_break[1:] |= ack_u[1:] != ack_u[:-1]
    run_id = np.cumsum(run_break)
    run_len = pd.Series(dupack.astype(np.int64)).groupby(run_id).cumsum().to_numpy()
    peer_row = peer["row"]
    dupacks = np.where(peer_row >= 0, run_len[np.maximum(peer_row, 0)], 0)
    # ... unless the ACKed-unseen test parked the peer's counter since its acknowledgment number last changed
    # (see _acked_unseen): -1, which as Wireshark's guint32 is at least 2, or the count restarted since
    dupacks = np.where(parked_count == _NOT_PARKED, dupacks, np.where(parked_count == -1, 2**31, parked_count))
    peer_ack, peer_t = peer["ack"], peer["t"]
    fast = unacked_retrans & (dupacks >= 2) & (peer_ack == seq_u) & (t - peer_t < 20e6)
    # out of order: soon after the packet that set the next sequence number (the connection's initial RTT; 3 ms
    # unknown), and not ending there
    setter_t = np.where(nxt_raised, t, np.nan).astype(float)
    gid = np.cumsum(fstart)
    next_t = pd.Series(setter_t).groupby(gid).ffill().groupby(gid).shift(1).to_numpy()
    ooo_window = np.where(np.isnan(irtt), UNKNOWN_INITIAL_RTT_NS, irtt)
    ooo = unacked_retrans & ~fast & (t - next_t < ooo_window) & (nxt != seq_end)
    return fast, ooo


def _initial_rtt_ns(f, pos, t, syn, ackf) -> np.ndarray:
    """Per row: the connection's initial RTT [ns], NaN when the handshake was not captured.

    As Wireshark 4.0.17's ``tcp.analysis.initial_rtt`` (``ts_first_rtt`` in ``dissect_tcp``): from the most
    recent SYN (without ACK) to the first packet of the connection, either direction, with ACK and without SYN
    after a SYN; a SYN/ACK is not needed in between (an ACK that answers a SYN from an old connection's
    TIME_WAIT ends it too). After a retransmitted SYN it is measured from the most recent one.
    """
    conn = f // 2
    df = pd.DataFrame({"conn": conn, "pos": pos, "t": t.astype(float)})
    first_syn = df[syn & ~ackf].groupby("conn")["pos"].min()
    after = df[ackf & ~syn]
    after = after[after["pos"].to_numpy() > first_syn.reindex(after["conn"]).to_numpy()]
    third = after.sort_values("pos").groupby("conn").first()
    syns = df[syn & ~ackf].sort_values("pos")
    if len(third) == 0 or len(syns) == 0:
        return np.full(len(f), np.nan)
    q = third.reset_index().sort_values("pos")
    last_syn = pd.merge_asof(q, syns.rename(columns={"t": "t_syn"}), on="pos", by="conn", direction="backward")
    irtt = pd.Series((last_syn["t"] - last_syn["t_syn"]).to_numpy(), index=last_syn["conn"].to_numpy())
    out = irtt.reindex(conn).to_numpy()
    return np.where(out > 0, out, np.nan)


def _after_mptcp_signal(subtype, f, pos, fstart) -> np.ndarray:
    """True where MP_CAPABLE was carried by the direction's previous packet or by a packet of the connection
    since (rows sorted by flow, then capture order). After the MPTCP handshake a subflow repeats its ACK to carry
    connection-level options (RFC 8684 Sec. 3.4: ADD_ADDR right after the handshake), and Wireshark's MPTCP
    analysis does not call that repeat a duplicate ACK. The rule is Wireshark's as its flags show it on the test
    corpora: MP_JOIN, ADD_ADDR, REMOVE_ADDR or MP_FASTCLOSE on earlier packets do not suppress the flag."""
    n = len(f)
    op = subtype == 0
    if not op.any():
        return np.zeros(n, bool)
    conn = f // 2
    corder = np.lexsort((pos, conn))
    cum = np.zeros(n + 1, np.int64)
    cum[1:] = np.cumsum(op[corder])
    rank = np.empty(n, np.int64)
    rank[corder] = np.arange(n)
    prev_rank = np.empty(n, np.int64)
    prev_rank[1:] = rank[:-1]
    prev_rank[0] = -1
    prev_rank[fstart] = -1
    between = np.where(prev_rank >= 0, cum[rank] - cum[np.maximum(prev_rank, 0)], 0)
    return between > 0


def _previous(values: np.ndarray, fstart: np.ndarray) -> np.ndarray:
    """The value of the previous row of the same flow (-1 for a flow's first row)."""
    prev = np.empty(len(values), np.int64)
    prev[0] = -1
    prev[1:] = values[:-1]
    prev[fstart] = -1
    return prev


def _expert(packets, order, f, payload, ctl, ackf, ack_u, win, prev_win, prev_ack, ack, seq_u, nxt, dup,
            peer) -> dict[str, np.ndarray]:
    """Wireshark's Expert Info conditions other than retransmissions (rows sorted by flow, then capture order)."""
    zero_window = (win == 0) & ~ctl & ~dup
    window_update = ((payload == 0) & (win != 0) & (prev_win >= 0) & (win != prev_win) & (seq_u == nxt)
                     & (ack == prev_ack) & ~ctl & ~dup)
    # the peer's window in bytes: its raw window << its scale (not on SYNs), the scale as Wireshark 4.0.17 knows
    # it: a SYN (or SYN/ACK) without the option means no scaling either way (RFC 7323: scaling needs both), so
    # shift 0 for both directions whatever the other offered; else the shift the direction's own SYN offered,
    # even when the other SYN was not captured; unknown (no window-full test) when neither says
    syn = packets["syn"].to_numpy()[order]
    ws = packets["window_scale"].to_numpy(np.int64)[order]
    size = 2 * (int(f.max()) // 2 + 1)
    offered = np.full(size, -1, np.int64)  # the window scale a flow's SYN offered (-1: none, or no SYN captured)
    np.maximum.at(offered, f[syn], ws[syn])
    no_ws = np.zeros(size // 2, bool)  # per connection: a SYN without the option was captured
    no_ws[f[syn & (ws < 0)] // 2] = True
    shift = np.where(no_ws[np.arange(size) // 2], 0, np.where(offered >= 0, np.minimum(offered, 14), np.nan))
    peer_shift = shift[f ^ 1]
    peer_win_bytes = peer["win"] * np.exp2(np.nan_to_num(peer_shift))
    window_full = ((payload > 0) & ~ctl & ~dup & ~np.isnan(peer_shift) & (peer["ack"] >= 0) & (peer["win"] >= 0)
                   & (seq_u + payload == peer["ack"] + peer_win_bytes))
    not_captured = (nxt > -np.inf) & (seq_u > nxt) & ~packets["rst"].to_numpy()[order] & ~dup
    # candidates for Wireshark's "ACKed unseen segment" (see _acked_unseen): beyond the peer's highest seq
    acked_unseen = ackf & ~dup & (peer["next_seq"] >= 0) & (ack_u > peer["next_seq"])
    return {"is_zero_window": zero_window, "is_window_update": window_update, "is_window_full": window_full,
            "is_previous_segment_not_captured": not_captured, "is_acked_unseen": acked_unseen}


#: :func:`_acked_unseen`'s "the peer's duplicate-ACK counter was not parked" (any value below -1).
_NOT_PARKED = -2


def _acked_unseen(pos, f, ackf, ack, ack_u, seq_u, seq_end, nxt, dup, zw_probe, dupack, not_captured, beyond,
                  restart, zero_restart):
    """Wireshark's "ACKed segment that wasn't captured", per row (rows sorted by flow, then capture order).

    As tshark 4.0 flags ``tcp.analysis.ack_lost_segment`` (``tcp_analyze_sequence_number`` of 4.0.17's
    ``packet-tcp.c``): per direction, the sequence number up to which the segments seen are contiguous ("max
    seq to be acked": it moves to the direction's next sequence number when a segment starts exactly there).
    An ACK beyond the peer's mark

    - when the mark is below the peer's next sequence number (a hole in the peer's segments) is flagged, and
      the mark moves to that next sequence number: every new hole is flagged by the first ACK over it;
    - otherwise (the ACK runs beyond everything seen of the peer) is flagged unless an earlier such ACK was
      flagged since the peer's own acknowledgment number last changed: Wireshark parks the peer's
      duplicate-ACK counter at -1 to remember it, and a duplicate ACK of the peer or a new acknowledgment
      number re-arms it.

    A next sequence number that is 0 (raw: a RST refusing a SYN, or data ending at 2^32) is Wireshark's "not
    set": no ACK is checked against it, and the direction's next packet sets it whatever its number. A
    ``restart`` row (:func:`_syn_restarts`) sets the next sequence number and the mark anew. (The loop keeps its
    own next sequence number; ``zero_restart``, the rows :func:`_wireshark_nextseq` finds it "not set" at, only
    chooses the connections it runs on.)

    Returns the flags and, per row, the peer's duplicate-ACK counter as this row's retransmission tests read
    it where the test parked it since the peer's acknowledgment number last changed (-1 while parked, the
    count restarted at 1 by a duplicate ACK after), else :data:`_NOT_PARKED`: Wireshark's counter is a guint32,
    so -1 passes the fast-retransmission test (at least 2 duplicate ACKs).

    The state runs over both directions in capture order, so it is a loop; it runs only on the connections
    where it can fire (a segment beyond its direction's next sequence number, or an ACK beyond the peer's
    highest sequence number); elsewhere the contiguous mark is the highest sequence number and nothing fires.
    """
    out = np.zeros(len(f), bool)
    parked_count = np.full(len(f), _NOT_PARKED, np.int64)
    conn = f // 2
    # elsewhere the contiguous mark equals the highest sequence number (a segment that starts below it and ends
    # beyond it, a repacketized retransmission, would leave the mark behind: those connections run the loop too)
    extends = (seq_u < nxt) & (seq_end > nxt) & ~dup
    candidates = np.unique(conn[not_captured | beyond | extends | restart | zero_restart])
    if len(candidates) == 0:
        return out, parked_count
    rows = np.flatnonzero(np.isin(conn, candidates) & ~dup)
    rows = rows[np.lexsort((pos[rows], conn[rows]))]
    # plain Python values: the loop reads each once
    cl, dl = conn[rows].tolist(), (f[rows] & 1).tolist()
    ackl, ackul = ack[rows].tolist(), ack_u[rows].tolist()
    ackfl, zwl, dupal = ackf[rows].tolist(), zw_probe[rows].tolist(), dupack[rows].tolist()
    seql, endl, restl = seq_u[rows].tolist(), seq_end[rows].tolist(), restart[rows].tolist()
    flagged, parked = [], []
    current = None
    for i in range(len(rows)):
        c, d = cl[i], dl[i]
        if c != current:  # per direction: next seq, contiguous mark, last raw ack, duplicate-ACK counter, and
            # whether the counter was parked since the direction's acknowledgment number last changed
            current, nxt, mx, last, dupn, park = c, [None, None], [None, None], [None, None], [0, 0], [0, 0]
        e = 1 - d
        a = ackl[i]
        if dupal[i]:
            dupn[d] = 1 if dupn[d] == -1 else dupn[d] + 1
        if a != last[d]:
            dupn[d] = 0
            park[d] = 0
        m = mx[e]
        if ackfl[i] and m is not None and ackul[i] > m:
            # LT_SEQ(maxseqtobeacked, nextseq); a nextseq "not set" (None) is 0 raw, below a mark of 2^31 or more
            if m < nxt[e] if nxt[e] is not None else m % _M32 >= _M32 // 2:
                flagged.append(i)  # over a hole in the peer's segments: flagged, and the mark moves on
                mx[e] = nxt[e]
            else:  # beyond everything seen of the peer: flagged once until the peer's counter re-arms
                if dupn[e] == 0:
                    flagged.append(i)
                dupn[e] = -1
                park[e] = 1
        if park[e]:  # what this row's retransmission tests read as the peer's count
            parked.append((i, dupn[e]))
        if restl[i]:
            end = endl[i]
            nxt[d] = mx[d] = end if end % _M32 else None
        elif not zwl[i]:
            end = endl[i]
            if nxt[d] is None or end > nxt[d]:
                nxt[d] = end if end % _M32 else None  # raw sequence number 0 is Wireshark's "not set"
            if mx[d] is None or seql[i] == mx[d]:
                mx[d] = nxt[d]
        last[d] = a
    out[rows[flagged]] = True
    if parked:
        at, count = zip(*parked)
        parked_count[rows[list(at)]] = count
    return out, parked_count
