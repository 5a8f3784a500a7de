"""Packet table -> TCP connections and directions, with per-flow measurements.

A *connection* is a 4-tuple between a SYN and the next SYN with a different
initial sequence number on the same 4-tuple (so port reuse starts a new one);
a *flow* is one direction of a connection (``flow_id = 2 * connection_id`` for
the initiator's direction, ``+ 1`` for the responder's). The initiator is the
side that sent the first SYN without ACK, else the sender of the first packet.

:func:`annotate` adds per-packet analysis columns (unwrapped sequence numbers,
retransmission, duplicate, duplicate ACK); :func:`flows` summarises one row per
flow. Sequence numbers are unwrapped across the 2^32 boundary per flow.

Definitions (per direction, in capture order)
---------------------------------------------
- *Duplicate packet*: identical to an earlier packet of the same flow in IP ID,
  sequence, acknowledgment, flags, window, payload length and timestamps
  option (a packet captured twice); never counted as a retransmission.
- *Retransmission*: a segment that occupies sequence space (payload, SYN or FIN)
  and starts below the highest sequence number already sent in this direction
  (Wireshark's criterion, [1]_), excluding duplicates and keep-alives (one byte
  or none at ``highest - 1``). Wireshark splits these into retransmission, fast
  retransmission, spurious retransmission and out-of-order; here they are one.
- *Duplicate ACK*: a pure ACK (no payload, SYN, FIN or RST) with the same
  acknowledgment number, window and sequence number as the previous packet of
  the direction, and a non-zero window ([1]_).
- *Loss rate*: retransmitted segments / data segments (an upper estimate of the
  segment loss rate seen by the sender; spurious retransmissions count).
- *FCT*: from the connection's first SYN to the first ACK from the peer that
  covers the direction's last data byte.

References
----------
.. [1] Wireshark User's Guide, Sec. 7.5 "TCP Analysis".
.. [2] RFC 6298, "Computing TCP's Retransmission Timer" (Karn's algorithm, Sec. 3).
.. [3] S. Ostermann, tcptrace (RTT samples from data segments and their ACKs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["annotate", "flows"]

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
        ``is_dup_ack``, ``is_keepalive`` (bool).
    """
    n = len(packets)
    if n == 0:
        return pd.DataFrame({k: pd.Series(dtype=t) for k, t in (
            ("connection_id", "int64"), ("flow_id", "int64"), ("is_initiator", "bool"), ("seq_u", "int64"),
            ("seq_end_u", "int64"), ("ack_u", "int64"), ("is_retransmission", "bool"), ("is_duplicate", "bool"),
            ("is_dup_ack", "bool"), ("is_keepalive", "bool"))}, index=packets.index)
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
    # retransmissions
    occupies = (payload > 0) | syn | fin
    hmax = _exclusive_cummax(np.where(dup, -1, seq_end).astype(float), fstart, floor=-1.0)
    has_prev = hmax >= 0
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
    res = {
        "connection_id": f // 2, "flow_id": f, "is_initiator": (f % 2) == 0, "seq_u": seq_u, "seq_end_u": seq_end,
        "ack_u": ack_u, "is_retransmission": retrans, "is_duplicate": dup, "is_dup_ack": dupack,
        "is_keepalive": keepalive,
    }
    unsorted = {}
    for k, v in res.items():
        arr = np.empty(n, v.dtype)
        arr[order] = v
        unsorted[k] = arr
    return pd.DataFrame(unsorted, index=packets.index)


def flows(packets: pd.DataFrame, annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per TCP connection and direction, with counts, retransmissions, RTT, loss, throughput and FCT.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    annotated : pandas.DataFrame, optional
        The result of :func:`annotate` for ``packets`` if already computed.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``; columns ``connection_id``, ``is_initiator``,
        ``src_addr, src_port, dst_addr, dst_port, ip_version``, ``first_time_s``,
        ``last_time_s``, ``duration_s`` [s], ``syn_seen, fin_seen, rst_seen``,
        ``packets``, ``data_packets``, ``payload_bytes``, ``wire_bytes``,
        ``unique_payload_bytes`` [bytes] (highest sequence reached minus the first,
        SYN and FIN excluded), ``retransmitted_packets``, ``retransmitted_bytes``
        [bytes], ``duplicate_packets``, ``duplicate_acks`` (sent by this direction),
        ``rtt_samples``, ``rtt_min_s``, ``rtt_median_s``, ``rtt_mean_s`` (data segment ->
        ACK, Karn's rule), ``rtt_ts_samples``, ``rtt_ts_median_s`` (timestamp echoes),
        ``loss_rate`` [-], ``throughput_bps`` (unique payload over the direction's
        duration) [bit/s], ``fct_s`` [s] (NaN when the SYN or the final ACK was not captured).
    """
    from .rtt import rtt_samples

    if len(packets) == 0:
        return _empty_flows()
    if annotated is None:
        annotated = annotate(packets)
    p = packets
    an = annotated
    data = (p["payload_bytes"] > 0).to_numpy()
    ns0 = int(p["timestamp_ns"].min())  # times relative to the first packet keep nanosecond precision
    payload = p["payload_bytes"].to_numpy(np.int64)
    df = pd.DataFrame({
        "flow_id": an["flow_id"].to_numpy(), "connection_id": an["connection_id"].to_numpy(),
        "is_initiator": an["is_initiator"].to_numpy(),
        "t": (p["timestamp_ns"].to_numpy() - ns0) / 1e9, "syn": p["syn"].to_numpy(), "fin": p["fin"].to_numpy(),
        "rst": p["rst"].to_numpy(), "data": data, "payload": payload,
        "wire": p["wire_bytes"].to_numpy(np.int64),
        "rtx": an["is_retransmission"].to_numpy(), "rtx_bytes": np.where(an["is_retransmission"], payload, 0),
        "dup": an["is_duplicate"].to_numpy(), "dupack": an["is_dup_ack"].to_numpy(),
        "seq_u": np.where(data, an["seq_u"], np.nan), "end_u": np.where(data, an["seq_u"] + payload, np.nan),
    })
    g = df.groupby("flow_id", sort=True)
    out = g.agg(connection_id=("connection_id", "first"), is_initiator=("is_initiator", "first"),
                first_time_s=("t", "min"), last_time_s=("t", "max"), syn_seen=("syn", "any"),
                fin_seen=("fin", "any"), rst_seen=("rst", "any"), packets=("t", "size"),
                data_packets=("data", "sum"), payload_bytes=("payload", "sum"), wire_bytes=("wire", "sum"),
                retransmitted_packets=("rtx", "sum"), retransmitted_bytes=("rtx_bytes", "sum"),
                duplicate_packets=("dup", "sum"), duplicate_acks=("dupack", "sum"),
                first_seq=("seq_u", "min"), last_end=("end_u", "max"))
    first_rows = pd.Series(np.arange(len(p))).groupby(df["flow_id"].to_numpy()).first()
    ident = p.iloc[first_rows.to_numpy()]
    for c in ("src_addr", "src_port", "dst_addr", "dst_port", "ip_version"):
        out[c] = ident[c].to_numpy()
    out["duration_s"] = out["last_time_s"] - out["first_time_s"]
    out["first_time_s"] += ns0 / 1e9
    out["last_time_s"] += ns0 / 1e9
    out["unique_payload_bytes"] = (out["last_end"] - out["first_seq"]).fillna(0).astype(np.int64)
    # RTT summaries
    samples = rtt_samples(p, an)
    for method, prefix in (("seq", "rtt"), ("ts", "rtt_ts")):
        s = samples[samples["method"] == method].groupby("flow_id")["rtt_s"]
        out[f"{prefix}_samples"] = s.size().reindex(out.index, fill_value=0).astype(np.int64)
        out[f"{prefix}_median_s"] = s.median().reindex(out.index)
        if method == "seq":
            out["rtt_min_s"] = s.min().reindex(out.index)
            out["rtt_mean_s"] = s.mean().reindex(out.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["loss_rate"] = np.where(out["data_packets"] > 0,
                                    out["retransmitted_packets"] / out["data_packets"].where(out["data_packets"] > 0),
                                    np.nan)
        out["throughput_bps"] = np.where(out["duration_s"] > 0,
                                         8.0 * out["unique_payload_bytes"] / out["duration_s"].where(out["duration_s"] > 0),
                                         np.nan)
    out["fct_s"] = _fct(df, an, out)
    return out[FLOW_COLUMNS]


def _fct(df: pd.DataFrame, an: pd.DataFrame, out: pd.DataFrame) -> np.ndarray:
    """SYN of the connection -> first peer ACK covering the direction's last data byte. [s]"""
    syn_t = df[df["syn"] & df["is_initiator"]].groupby("connection_id")["t"].min()
    acks = pd.DataFrame({"flow_id": an["flow_id"].to_numpy() ^ 1, "ack_u": an["ack_u"].to_numpy(),
                         "t": df["t"].to_numpy()})
    acks = acks[acks["ack_u"] >= 0]
    target = out["last_end"].dropna()
    acks = acks[acks["flow_id"].isin(target.index)]
    acks = acks[acks["ack_u"].to_numpy() >= target.reindex(acks["flow_id"]).to_numpy()]
    done_t = acks.groupby("flow_id")["t"].min()
    fct = done_t.reindex(out.index) - syn_t.reindex(out["connection_id"]).to_numpy()
    return fct.to_numpy()


FLOW_COLUMNS = ["connection_id", "is_initiator", "src_addr", "src_port", "dst_addr", "dst_port", "ip_version",
                "first_time_s", "last_time_s", "duration_s", "syn_seen", "fin_seen", "rst_seen", "packets",
                "data_packets", "payload_bytes", "wire_bytes", "unique_payload_bytes", "retransmitted_packets",
                "retransmitted_bytes", "duplicate_packets", "duplicate_acks", "rtt_samples", "rtt_min_s",
                "rtt_median_s", "rtt_mean_s", "rtt_ts_samples", "rtt_ts_median_s", "loss_rate", "throughput_bps",
                "fct_s"]


def _empty_flows() -> pd.DataFrame:
    return pd.DataFrame(columns=FLOW_COLUMNS).rename_axis("flow_id")
