"""Time series from a packet table: per-flow throughput, bytes in flight, aggregate link rate.

All series are pandas objects indexed by time in seconds (bin start for binned
series, relative to ``t0_s`` when given, else absolute epoch seconds).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries

from .annotation import annotate

__all__ = ["throughput_series", "bytes_in_flight", "link_rate_series", "time_sequence", "SEGMENT_KINDS"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    bin_s : float
        Bin width. [s]
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_id : int
        The flow (``flow_id`` of :func:`~tcpmodels.traces.flows`).
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.
""")


def _bins(t: np.ndarray, bin_s: float, t0_s: float | None, t_end_s: float | None) -> tuple[np.ndarray, np.ndarray]:
    check_range("bin_s", bin_s, unit="s", low=0, low_open=True)
    t0 = float(np.min(t)) if t0_s is None else float(t0_s)
    t1 = float(np.max(t)) if t_end_s is None else float(t_end_s)
    n = max(int(np.floor((t1 - t0) / bin_s)) + 1, 1)
    idx = np.floor((t - t0) / bin_s).astype(np.int64)
    return idx, t0 + bin_s * np.arange(n)


@_PARAMETERS.fill
def throughput_series(packets: pd.DataFrame, flow_id: int, bin_s: float, annotated: pd.DataFrame | None = None,
                      *, unique: bool = False) -> pd.Series:
    """Payload rate of one flow (one direction) in time bins.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table.
    flow_id : int
        Flow (direction) as numbered by :func:`~tcpmodels.traces.flows.flows`.
    {bin_s}
    unique : bool
        Count only new bytes (retransmissions excluded) instead of all payload.

    Returns
    -------
    pandas.Series
        ``rate_bps`` indexed by bin start ``time_s`` (absolute) [bit/s]; empty bins are 0.
    """
    an = annotate(packets) if annotated is None else annotated
    sel = (an["flow_id"] == flow_id).to_numpy()
    if unique:
        sel &= ~an["is_retransmission"].to_numpy() & ~an["is_duplicate"].to_numpy()
    if not sel.any():
        raise ValueError(f"flow_id {flow_id} has no packets; valid flow ids are {sorted(an['flow_id'].unique())[:10]}...")
    t = packets["timestamp_s"].to_numpy()
    f_all = (an["flow_id"] == flow_id).to_numpy()
    idx, starts = _bins(t[sel], bin_s, t[f_all].min(), t[f_all].max())
    b = np.bincount(idx, weights=packets["payload_bytes"].to_numpy()[sel].astype(float), minlength=len(starts))
    return pd.Series(8.0 * b / bin_s, index=pd.Index(starts, name="time_s"), name="rate_bps")


@_PARAMETERS.fill
def bytes_in_flight(packets: pd.DataFrame, flow_id: int, annotated: pd.DataFrame | None = None) -> pd.Series:
    """Outstanding bytes of one flow: highest sequence sent minus highest acknowledged, after every event.

    Events are the flow's segments and the peer's ACKs in capture order. Measured
    at the sender this is the sender's flight size (RFC 5681 FlightSize);
    elsewhere it is what has passed the capture point and not yet been acknowledged.

    Parameters
    ----------
    {packets, flow_id, annotated}

    Returns
    -------
    pandas.Series
        ``bytes_in_flight`` indexed by ``time_s`` (absolute) [bytes].
    """
    an = annotate(packets) if annotated is None else annotated
    fl = an["flow_id"].to_numpy()
    mine = fl == flow_id
    peer = (fl == (flow_id ^ 1)) & (an["ack_u"].to_numpy() >= 0)
    if not mine.any():
        raise ValueError(f"flow_id {flow_id} has no packets")
    sel = mine | peer
    order = np.argsort(packets["frame_index"].to_numpy()[sel], kind="stable")
    t = packets["timestamp_s"].to_numpy()[sel][order]
    sent = np.where(mine[sel], an["seq_end_u"].to_numpy()[sel], np.iinfo(np.int64).min)[order]
    acked = np.where(peer[sel], an["ack_u"].to_numpy()[sel], np.iinfo(np.int64).min)[order]
    hs = np.maximum.accumulate(sent)
    ha = np.maximum.accumulate(acked)
    valid = (hs > np.iinfo(np.int64).min) & (ha > np.iinfo(np.int64).min)
    flight = np.where(valid, np.maximum(hs - ha, 0), 0)
    return pd.Series(flight[valid], index=pd.Index(t[valid], name="time_s"), name="bytes_in_flight")


@_PARAMETERS.fill
def link_rate_series(packets: pd.DataFrame, bin_s: float, *, interface_id: int | None = None,
                     src_addr: str | None = None, t0_s: float | None = None,
                     t_end_s: float | None = None) -> pd.Series:
    """Aggregate rate on a link (all TCP packets, wire bytes) in time bins, e.g. for Hurst estimation.

    Parameters
    ----------
    {bin_s}
    interface_id : int, optional
        Keep only packets captured on this pcapng interface.
    src_addr : str, optional
        Keep only packets sent by this address (one direction of the link).

    Returns
    -------
    pandas.Series
        ``rate_bps`` indexed by bin start ``time_s`` [bit/s]; empty bins are 0.
    """
    sel = np.ones(len(packets), bool)
    if interface_id is not None:
        sel &= (packets["interface_id"] == interface_id).to_numpy()
    if src_addr is not None:
        sel &= (packets["src_addr"].astype(str) == src_addr).to_numpy()
    if not sel.any():
        raise ValueError("no packets match interface_id / src_addr")
    t = packets["timestamp_s"].to_numpy()[sel]
    idx, starts = _bins(t, bin_s, t0_s, t_end_s)
    keep = (idx >= 0) & (idx < len(starts))
    b = np.bincount(idx[keep], weights=packets["wire_bytes"].to_numpy()[sel][keep].astype(float),
                    minlength=len(starts))
    return pd.Series(8.0 * b / bin_s, index=pd.Index(starts, name="time_s"), name="rate_bps")


#: Retransmission classes of :func:`time_sequence`, in the order Wireshark tests them.
SEGMENT_KINDS = ("new", "spurious retransmission", "fast retransmission", "out-of-order", "retransmission")


@_PARAMETERS.fill
def time_sequence(packets: pd.DataFrame, flow_id: int, annotated: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Data for a time-sequence (Stevens) graph of one flow: segments, the peer's ACKs, window and SACK blocks.

    Parameters
    ----------
    {packets, flow_id, annotated}

    Returns
    -------
    dict
        ``segments`` (time_s, seq_bytes, end_bytes, is_retransmission, ``kind``: one of
        :data:`SEGMENT_KINDS`); ``acks`` (time_s, ack_bytes, ``window_edge_bytes``: the
        acknowledgment plus the peer's advertised window, scaled by the window scale both SYNs
        agreed -- NaN on a SYN, and unscaled, flagged by ``window_scaled`` False, when the
        handshake was not captured); ``sacks`` (time_s, left_bytes, right_bytes: the first SACK
        block of each peer ACK that carries one, the most recent, RFC 2018). Sequence numbers
        relative to the flow's first [bytes]; times absolute [s].
    """
    an = annotate(packets) if annotated is None else annotated
    fl = an["flow_id"].to_numpy()
    mine = (fl == flow_id) & (packets["payload_bytes"].to_numpy() > 0)
    if not (fl == flow_id).any():
        raise ValueError(f"flow_id {flow_id} has no packets")
    base = an["seq_u"].to_numpy()[fl == flow_id].min()
    kind = np.select([an["is_spurious_retransmission"].to_numpy(), an["is_fast_retransmission"].to_numpy(),
                      an["is_out_of_order"].to_numpy(), an["is_retransmission"].to_numpy()],
                     list(SEGMENT_KINDS[1:]), default=SEGMENT_KINDS[0])
    seg = pd.DataFrame({"time_s": packets["timestamp_s"].to_numpy()[mine],
                        "seq_bytes": an["seq_u"].to_numpy()[mine] - base,
                        "end_bytes": an["seq_end_u"].to_numpy()[mine] - base,
                        "is_retransmission": an["is_retransmission"].to_numpy()[mine],
                        "kind": kind[mine]})
    peer = (fl == (flow_id ^ 1)) & (an["ack_u"].to_numpy() >= 0)
    ack_rel = an["ack_u"].to_numpy()[peer] - base
    syn = packets["syn"].to_numpy()
    shift, scaled = _window_shift(packets, fl, flow_id)
    window = packets["window"].to_numpy()[peer].astype(np.float64) * (2.0 ** shift)
    acks = pd.DataFrame({"time_s": packets["timestamp_s"].to_numpy()[peer], "ack_bytes": ack_rel,
                         "window_edge_bytes": np.where(syn[peer], np.nan, ack_rel + window),
                         "window_scaled": scaled})
    has_sack = peer & (packets["sack_count"].to_numpy() > 0)
    if has_sack.any():
        # SACK edges are in this flow's sequence space: unwrap them near the ACK
        ack_raw = packets["ack"].to_numpy(np.int64)[has_sack]
        ack_u = an["ack_u"].to_numpy()[has_sack]
        edges = [ack_u + ((packets[c].to_numpy(np.int64)[has_sack] - ack_raw + (1 << 31)) % (1 << 32) - (1 << 31))
                 - base for c in ("sack_left", "sack_right")]
        sacks = pd.DataFrame({"time_s": packets["timestamp_s"].to_numpy()[has_sack], "left_bytes": edges[0],
                              "right_bytes": edges[1]})
    else:
        sacks = pd.DataFrame({"time_s": pd.Series(dtype=float), "left_bytes": pd.Series(dtype=np.int64),
                              "right_bytes": pd.Series(dtype=np.int64)})
    return {"segments": seg, "acks": acks, "sacks": sacks}


def _window_shift(packets: pd.DataFrame, fl: np.ndarray, flow_id: int) -> tuple[int, bool]:
    """Window scale shift of the peer of ``flow_id`` (RFC 7323: both SYNs must offer it), and whether it is known."""
    syn = packets["syn"].to_numpy()
    ws = packets["window_scale"].to_numpy()
    offered = {}
    for f in (flow_id, flow_id ^ 1):
        sel = syn & (fl == f)
        if not sel.any():
            return 0, False
        offered[f] = int(ws[sel].max())
    if offered[flow_id] < 0 or offered[flow_id ^ 1] < 0:
        return 0, True
    return min(offered[flow_id ^ 1], 14), True
