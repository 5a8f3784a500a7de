r"""Model inputs estimated from a capture alone: p, RTT, T0, b, W_max, MSS and the measured rate.

:func:`flow_estimates` takes a packet table (:func:`tcpmodels.traces.read_pcap`) of a
capture made at (or near) the sender and returns, for one direction of one
connection, every input of the Mathis and PFTK formulas together with the measured
throughput they should predict:

=================  ==========================================================================
quantity           how it is estimated
=================  ==========================================================================
``p``              loss events (:mod:`tcpmodels.fit.events`) per data segment sent, in the
                   steady window
``RTT``            mean of the flow's RTT samples (data segment -> the ACK that covers it
                   exactly, Karn's rule; :func:`tcpmodels.traces.rtt_samples`) in the window;
                   queueing included when the capture is ahead of the bottleneck
``T0``             median over observed timeouts of the time from the lost segment's
                   previous transmission to its retransmission (Linux arms the RTO from
                   the head segment's send time); without timeouts, NaN here and the
                   Linux floor ``median RTT + 200 ms`` in ``t0_fallback_s``
``b``              segments newly acknowledged per advancing ACK (``ack`` advance / MSS /
                   number of ACKs that advance it) in the window
``W_max``          the largest window the receiver advertised (raw window shifted by the
                   receiver's window scale from its SYN), in MSS
``MSS``            the most common data-segment payload size (1448 with timestamps)
measured rate      bytes cumulatively acknowledged during the window / its length (goodput)
=================  ==========================================================================

The *steady window* starts when the first loss event closes (the end of the initial
slow start's overshoot and its recovery) and ends with the flow's last data
segment; a flow without any loss event is analysed whole and has ``p = 0``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from tcpmodels.fit.events import group_loss_events
from tcpmodels.traces import TraceWarning, annotate, rtt_samples
from tcpmodels.traces.flows import sequence_coverage

__all__ = ["FlowEstimates", "flow_estimates", "retransmissions", "LINUX_RTO_MIN_S"]

#: Linux's minimum RTO (TCP_RTO_MIN, also the floor of its RTT-variance term). [s]
LINUX_RTO_MIN_S = 0.2


@dataclass(frozen=True, kw_only=True)
class FlowEstimates:
    """Model inputs and measured throughput of one flow, estimated from its capture.

    Attributes
    ----------
    flow_id : int
        Direction analysed, numbered as :func:`tcpmodels.traces.flows`.
    mss_bytes : float
        Most common data payload size. [bytes]
    window_start_s, window_end_s : float
        Steady window, seconds after the flow's first packet. [s]
    duration_s : float
        Its length. [s]
    data_segments : int
        Data segments sent in the window, retransmissions included.
    retransmissions : int
        Retransmitted segments in the window.
    loss_events : int
        Loss events opened in the window.
    timeouts : int
        Of those, timeouts.
    loss_event_rate : float
        ``p = loss_events / data_segments``. [-]
    retransmission_rate : float
        ``retransmissions / data_segments`` (the packet loss estimate of :func:`tcpmodels.traces.flows`). [-]
    rtt_mean_s, rtt_median_s, rtt_min_s : float
        RTT samples in the window. [s]
    rtt_samples : int
        Their number.
    t0_s : float
        Median first-timeout duration over the flow's observed timeouts; NaN without any. [s]
    t0_observed : int
        Timeouts it is based on (all of the flow's, not only the window's).
    t0_fallback_s : float
        ``rtt_median_s + 0.2``, Linux's smallest RTO, for flows without a timeout. [s]
    b : float
        Segments acknowledged per advancing ACK. [segments]
    w_max_segments : float
        Largest advertised receiver window in MSS. [segments]
    w_max_bytes : float
        The same in bytes. [bytes]
    flight_mean_segments : float
        Time-averaged bytes in flight in the window, in MSS. [segments]
    throughput_bps : float
        Acknowledged payload per second in the window (goodput). [bit/s]
    bytes_not_captured : int
        Bytes of the flow's sequence space no captured segment carried
        (:func:`tcpmodels.traces.flows.sequence_coverage`): when above 0, p and the segment counts are of what
        was captured only (a warning says so). [bytes]
    events : pandas.DataFrame
        One row per loss event of the whole flow (``start_s``, ``end_s``,
        ``retransmissions``, ``is_timeout`` (any of its retransmissions was a timeout,
        e.g. a failed fast recovery), ``gap_s`` (of its first timeout retransmission, else
        of its first retransmission), ``first_gap_s``, ``in_window``, ``flight_before_segments``
        (the largest bytes in flight, in MSS, in the half RTT up to the original transmission of
        the first segment retransmitted: the window W_max when the loss happened).
    """

    flow_id: int
    mss_bytes: float
    window_start_s: float
    window_end_s: float
    duration_s: float
    data_segments: int
    retransmissions: int
    loss_events: int
    timeouts: int
    loss_event_rate: float
    retransmission_rate: float
    rtt_mean_s: float
    rtt_median_s: float
    rtt_min_s: float
    rtt_samples: int
    t0_s: float
    t0_observed: int
    t0_fallback_s: float
    b: float
    w_max_segments: float
    w_max_bytes: float
    flight_mean_segments: float
    throughput_bps: float
    bytes_not_captured: int = 0
    events: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The scalar fields (not the event table).

        Returns
        -------
        dict
            Field name -> value, every field but ``events``.
        """
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "events"}


def _pick_flow(packets: pd.DataFrame, an: pd.DataFrame, flow_id: int | None) -> int:
    fl = an["flow_id"].to_numpy()
    if flow_id is None:
        payload = pd.Series(packets["payload_bytes"].to_numpy(np.int64)).groupby(fl).sum()
        if payload.empty or payload.max() == 0:
            raise ValueError("the capture holds no TCP payload; nothing to estimate")
        return int(payload.idxmax())
    if not (fl == flow_id).any():
        raise ValueError(f"flow_id {flow_id} has no packets; flows present: {sorted(set(fl.tolist()))[:10]}")
    return int(flow_id)


def retransmissions(packets: pd.DataFrame, flow_id: int | None = None, annotated: pd.DataFrame | None = None,
                    *, min_rto_margin_s: float = 0.195) -> pd.DataFrame:
    """Every retransmission of one flow with what loss-event grouping and timeout detection need.

    Parameters
    ----------
    packets : pandas.DataFrame
        Packet table.
    flow_id : int, optional
        Direction; default the one with the most payload.
    annotated : pandas.DataFrame, optional
        :func:`tcpmodels.traces.annotate` of ``packets``.
    min_rto_margin_s : float
        A retransmission of the lowest unacknowledged byte is a timeout when its
        previous transmission is at least ``rtt + min_rto_margin_s`` old (Linux:
        RTO >= SRTT + 200 ms; 5 ms less for timer granularity). Checked against the
        kernel's TCPTimeouts counter on 100 runs: a margin of 150 ms took a lost
        retransmission found by RACK about two RTTs later at RTT 200 ms for a timeout. [s]

    Returns
    -------
    pandas.DataFrame
        ``time_s`` (after the flow's first packet), ``seq``, ``gap_s`` (since the
        previous transmission of that sequence number), ``snd_una`` (cumulative ACK
        when sent), ``is_head`` (resends the lowest unacknowledged byte), ``rtt_s``
        (median RTT sample of the preceding second), ``close_s`` (when the
        cumulative ACK covered the recovery point), ``is_timeout``, ``event``.
        Attributes ``attrs["flow_id"]``, ``attrs["t0_ns"]``.
    """
    an = annotate(packets) if annotated is None else annotated
    return _retransmissions(packets, _pick_flow(packets, an, flow_id), an, rtt_samples(packets, an), min_rto_margin_s)


def _retransmissions(packets: pd.DataFrame, fid: int, an: pd.DataFrame, samples: pd.DataFrame,
                     min_rto_margin_s: float) -> pd.DataFrame:
    """:func:`retransmissions` of flow ``fid`` given ``rtt_samples(packets, an)`` (which :func:`flow_estimates`
    also needs: computed once there)."""
    fl = an["flow_id"].to_numpy()
    ns = packets["timestamp_ns"].to_numpy()
    mine = fl == fid
    t0_ns = int(ns[mine].min())
    dup = an["is_duplicate"].to_numpy()
    data = mine & (packets["payload_bytes"].to_numpy() > 0) & ~dup
    order = np.flatnonzero(data)
    order = order[np.argsort(ns[order], kind="stable")]
    t = (ns[order] - t0_ns) / 1e9
    seq = an["seq_u"].to_numpy()[order]
    end = an["seq_end_u"].to_numpy()[order]
    rtx = an["is_retransmission"].to_numpy()[order]
    # peer's cumulative ACKs over time
    peer = (fl == (fid ^ 1)) & (an["ack_u"].to_numpy() >= 0) & ~dup
    po = np.flatnonzero(peer)
    po = po[np.argsort(ns[po], kind="stable")]
    t_ack = (ns[po] - t0_ns) / 1e9
    ack_max = np.maximum.accumulate(an["ack_u"].to_numpy()[po]) if len(po) else np.array([], np.int64)
    # RTT samples of this flow
    rs = samples[(samples["flow_id"] == fid) & (samples["method"] == "seq")]
    rs_t = (rs["timestamp_s"].to_numpy() - t0_ns / 1e9)
    rs_v = rs["rtt_s"].to_numpy()
    rs_order = np.argsort(rs_t)
    rs_t, rs_v = rs_t[rs_order], rs_v[rs_order]
    rtt_all = float(np.median(rs_v)) if len(rs_v) else np.nan
    # previous transmission time of each retransmitted sequence number
    last_tx: dict[int, float] = {}
    prev = np.full(len(order), np.nan)
    for i in range(len(order)):
        s = int(seq[i])
        if rtx[i]:
            prev[i] = last_tx.get(s, np.nan)
        last_tx[s] = t[i]
    hs_before = np.concatenate([[-1], np.maximum.accumulate(end)[:-1]]) if len(end) else end
    ri = np.flatnonzero(rtx)
    cols: dict[str, Any] = {"time_s": t[ri], "seq": seq[ri], "gap_s": t[ri] - prev[ri]}
    k = np.searchsorted(t_ack, t[ri], side="right") - 1
    snd_una = np.where(k >= 0, ack_max[np.clip(k, 0, None)] if len(ack_max) else -1, -1)
    cols["snd_una"] = snd_una
    cols["is_head"] = seq[ri] <= snd_una
    # RTT current at each retransmission: median of the samples of the preceding second
    lo = np.searchsorted(rs_t, t[ri] - 1.0)
    hi = np.searchsorted(rs_t, t[ri], side="right")
    cur = np.array([np.median(rs_v[a:b]) if b > a else rtt_all for a, b in zip(lo, hi)])
    cols["rtt_s"] = cur
    recover = hs_before[ri]
    j = np.searchsorted(ack_max, recover, side="left") if len(ack_max) else np.zeros(len(ri), int)
    close = np.where(j < len(ack_max), t_ack[np.clip(j, 0, len(t_ack) - 1)] if len(t_ack) else np.inf, np.inf)
    cols["close_s"] = np.maximum(close, t[ri])
    cols["is_timeout"] = cols["is_head"] & (cols["gap_s"] >= cur + min_rto_margin_s)
    rtt_for_group = np.where(np.isfinite(cur), cur, 1e-3)
    cols["event"] = group_loss_events(t[ri], rtt_for_group, close_time_s=cols["close_s"]) if len(ri) else \
        np.array([], np.int64)
    out = pd.DataFrame(cols)
    out.attrs.update(flow_id=fid, t0_ns=t0_ns)
    return out


def _time_weighted_mean(t: np.ndarray, v: np.ndarray, a: float, b: float) -> float:
    """Mean over [a, b] of a step function taking value v[i] from t[i] on."""
    if b <= a or len(t) == 0:
        return np.nan
    i0 = max(np.searchsorted(t, a, side="right") - 1, 0)
    i1 = np.searchsorted(t, b, side="left")
    tt = np.clip(np.concatenate([t[i0:i1], [b]]), a, b)
    vv = v[i0:i1]
    if len(vv) == 0:
        return float(v[min(i0, len(v) - 1)])
    return float(np.sum(vv * np.diff(tt)) / (b - a))


def flow_estimates(packets: pd.DataFrame, flow_id: int | None = None, annotated: pd.DataFrame | None = None,
                   *, min_rto_margin_s: float = 0.195) -> FlowEstimates:
    """Estimate p, RTT, T0, b, W_max, MSS and the measured rate of one flow from its capture.

    Parameters
    ----------
    packets : pandas.DataFrame
        Packet table of a capture at the sender (:func:`tcpmodels.traces.read_pcap`).
    flow_id : int, optional
        Direction to analyse; default the one carrying the most payload.
    annotated : pandas.DataFrame, optional
        :func:`tcpmodels.traces.annotate` of ``packets`` if already computed.
    min_rto_margin_s : float
        See :func:`retransmissions`. [s]

    Returns
    -------
    FlowEstimates

    Raises
    ------
    ValueError
        If the capture holds no payload, or ``flow_id`` is not in it.

    Notes
    -----
    The definitions are in the module docstring and in :mod:`tcpmodels.fit.events`.

    References
    ----------
    .. [1] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, IEEE/ACM ToN 8(2), 2000, Sec. 2 and Sec. 4
       (p, RTT, T0, b, W_max as measured from traces).
    .. [2] RFC 7323, Sec. 2.2-2.3 (window scale).
    """
    if len(packets) == 0:
        raise ValueError("the packet table is empty; nothing to estimate")
    an = annotate(packets) if annotated is None else annotated
    fid = _pick_flow(packets, an, flow_id)
    samples = rtt_samples(packets, an)  # for the retransmissions' RTTs and this flow's RTT: computed once
    rt = _retransmissions(packets, fid, an, samples, min_rto_margin_s)
    t0_ns = rt.attrs["t0_ns"]
    fl = an["flow_id"].to_numpy()
    ns = packets["timestamp_ns"].to_numpy()
    dup = an["is_duplicate"].to_numpy()
    payload = packets["payload_bytes"].to_numpy(np.int64)
    data = (fl == fid) & (payload > 0) & ~dup
    t_data = np.sort((ns[data] - t0_ns) / 1e9)
    sizes = payload[data]
    vals, counts = np.unique(sizes, return_counts=True)
    mss = float(vals[np.argmax(counts)])

    # events table
    if len(rt):
        rt = rt.assign(to_gap_s=rt["gap_s"].where(rt["is_timeout"]))
        g = rt.groupby("event")
        ev = pd.DataFrame({"start_s": g["time_s"].min(), "end_s": g["close_s"].first(),
                           "retransmissions": g.size(), "is_timeout": g["is_timeout"].any(),
                           "gap_s": g["to_gap_s"].first().fillna(g["gap_s"].first()), "rtt_s": g["rtt_s"].first(),
                           "first_gap_s": g["gap_s"].first()})
        ev["end_s"] = np.maximum(ev["end_s"], ev["start_s"] + ev["rtt_s"].fillna(0))
    else:
        ev = pd.DataFrame({"start_s": [], "end_s": [], "retransmissions": [], "is_timeout": [], "gap_s": [],
                           "rtt_s": [], "first_gap_s": []})
    t_last = float(t_data[-1]) if len(t_data) else 0.0
    w_start = float(ev["end_s"].iloc[0]) if len(ev) else 0.0
    if not w_start < t_last:  # the first event lasted to the end: analyse the whole flow
        w_start = 0.0
    w_end = t_last
    ev["in_window"] = (ev["start_s"] >= w_start) & (ev["start_s"] <= w_end)
    ev = ev.reset_index(drop=True)

    in_w = (t_data >= w_start) & (t_data <= w_end)
    n_seg = int(in_w.sum())
    n_rtx = int(((rt["time_s"] >= w_start) & (rt["time_s"] <= w_end)).sum()) if len(rt) else 0
    n_ev = int(ev["in_window"].sum())
    n_to = int((ev["in_window"] & ev["is_timeout"].astype(bool)).sum()) if len(ev) else 0
    p = n_ev / n_seg if n_seg else np.nan

    # RTT
    rs = samples[(samples["flow_id"] == fid) & (samples["method"] == "seq")]
    rs_t = rs["timestamp_s"].to_numpy() - t0_ns / 1e9
    rv = rs["rtt_s"].to_numpy()[(rs_t >= w_start) & (rs_t <= w_end)]
    if len(rv) == 0:
        rv = rs["rtt_s"].to_numpy()
    rtt_mean = float(np.mean(rv)) if len(rv) else np.nan
    rtt_median = float(np.median(rv)) if len(rv) else np.nan
    rtt_min = float(np.min(rs["rtt_s"])) if len(rs) else np.nan

    # T0 from the flow's observed timeouts
    to_gaps = ev.loc[ev["is_timeout"].astype(bool), "gap_s"].to_numpy(float) if len(ev) else np.array([])
    to_gaps = to_gaps[np.isfinite(to_gaps)]
    t0 = float(np.median(to_gaps)) if len(to_gaps) else np.nan

    # ACKs of the peer: b, throughput, receiver window
    peer = (fl == (fid ^ 1)) & (an["ack_u"].to_numpy() >= 0) & ~dup
    po = np.flatnonzero(peer)
    po = po[np.argsort(ns[po], kind="stable")]
    t_ack = (ns[po] - t0_ns) / 1e9
    ack = an["ack_u"].to_numpy()[po]
    ack_max = np.maximum.accumulate(ack) if len(ack) else ack
    prev_max = np.concatenate([[ack[0]], ack_max[:-1]]) if len(ack) else ack
    adv = (ack > prev_max) & (t_ack >= w_start) & (t_ack <= w_end)
    adv_bytes = (ack - prev_max)[adv]
    b = float(adv_bytes.sum() / mss / adv.sum()) if adv.sum() else np.nan
    if len(ack):
        i_a = max(np.searchsorted(t_ack, w_start, side="right") - 1, 0)
        i_b = max(np.searchsorted(t_ack, w_end, side="right") - 1, 0)
        t_b = max(t_ack[i_b], w_end)
        dur = t_b - w_start
        thr = float(8.0 * (ack_max[i_b] - ack_max[i_a]) / dur) if dur > 0 else np.nan
    else:
        thr = np.nan
    syn_mine = (fl == fid) & packets["syn"].to_numpy()
    syn_peer = (fl == (fid ^ 1)) & packets["syn"].to_numpy()
    ws_mine = packets["window_scale"].to_numpy()[syn_mine]
    ws_peer = packets["window_scale"].to_numpy()[syn_peer]
    scale = int(ws_peer[0]) if len(ws_peer) and len(ws_mine) and ws_mine[0] >= 0 and ws_peer[0] >= 0 else 0
    nonsyn_peer = (fl == (fid ^ 1)) & ~packets["syn"].to_numpy() & packets["ack_flag"].to_numpy()
    win = packets["window"].to_numpy(np.int64)[nonsyn_peer] << scale
    w_max_bytes = float(win.max()) if len(win) else np.nan

    # bytes in flight, time-averaged over the window
    mine_any = (fl == fid) & ~dup
    sel = np.flatnonzero(mine_any | peer)
    sel = sel[np.argsort(ns[sel], kind="stable")]
    tt = (ns[sel] - t0_ns) / 1e9
    neg = np.iinfo(np.int64).min
    sent = np.where(mine_any[sel], an["seq_end_u"].to_numpy()[sel], neg)
    acked = np.where(peer[sel], an["ack_u"].to_numpy()[sel], neg)
    hs, ha = np.maximum.accumulate(sent), np.maximum.accumulate(acked)
    ok = (hs > neg) & (ha > neg)
    flight = np.maximum(hs[ok] - ha[ok], 0).astype(float)
    flight_mean = _time_weighted_mean(tt[ok], flight, w_start, w_end) / mss
    # W_max seen in the capture: the largest flight in the half RTT up to the lost segment's original
    # transmission (later, SACKed and lost bytes still count in the flight while the sender adds new data)
    if len(ev):
        tf = tt[ok]
        t_lost = (ev["start_s"] - ev["first_gap_s"].fillna(ev["rtt_s"]).fillna(rtt_median)).to_numpy()
        lo_i = np.searchsorted(tf, t_lost - 0.5 * ev["rtt_s"].fillna(rtt_median).to_numpy())
        hi_i = np.searchsorted(tf, t_lost, side="right")
        ev["flight_before_segments"] = [float(flight[a:b].max()) / mss if b > a else np.nan for a, b in zip(lo_i, hi_i)]
    else:
        ev["flight_before_segments"] = pd.Series(dtype=float)

    missing = int(sequence_coverage(packets, an, [fid])["bytes_not_captured"].iloc[0])
    if missing:
        warnings.warn(f"flow {fid}: {missing} bytes of its sequence space were never captured (capture drops, or "
                      "a capture of part of the path's traffic): p, the segment counts and the RTT samples are of "
                      "the captured segments only", TraceWarning, stacklevel=2)
    return FlowEstimates(
        flow_id=fid, mss_bytes=mss, bytes_not_captured=missing, window_start_s=w_start, window_end_s=w_end, duration_s=w_end - w_start,
        data_segments=n_seg, retransmissions=n_rtx, loss_events=n_ev, timeouts=n_to, loss_event_rate=p,
        retransmission_rate=n_rtx / n_seg if n_seg else np.nan, rtt_mean_s=rtt_mean, rtt_median_s=rtt_median,
        rtt_min_s=rtt_min, rtt_samples=int(len(rv)), t0_s=t0, t0_observed=int(len(to_gaps)),
        t0_fallback_s=rtt_median + LINUX_RTO_MIN_S, b=b, w_max_segments=w_max_bytes / mss, w_max_bytes=w_max_bytes,
        flight_mean_segments=flight_mean, throughput_bps=thr, events=ev,
    )
