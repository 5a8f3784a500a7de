"""Why was this transfer slow? Each flow's limit over time, from the capture alone (after T-RAT).

Every flow (one direction of a connection, :func:`~tcpmodels.traces.flows`) is cut into fixed
intervals of *sender* time and each interval gets one of the classes of T-RAT [1]_:

=====================  ==========================================================================
class                  evidence in the capture
=====================  ==========================================================================
``application``        nothing outstanding (everything sent was acknowledged) for at least half
                       of the interval: the application gave TCP nothing to send
``receiver_window``    the sender's highest sequence reached the right edge of the window the
                       receiver advertised (``ack + window << scale``) for at least half of it
``bandwidth``          the rate delivered reached the bottleneck's rate (estimated from the
                       dispersion of back-to-back packets, or of their ACKs at the sender)
``congestion``         loss events (retransmissions) in the interval or in the RTTs before it,
                       below the bottleneck rate: a loss-driven window
``send_buffer``        none of the above, and the bytes in flight flat (within 20 %) over at
                       least five RTTs without loss or queue growth: the sender's buffer (or an
                       application writing just as fast) caps the window
``opportunity``        the whole transfer ended within a few RTTs without loss: it never left
                       slow start
``undecided``          none of the above, or the capture cannot tell; ``reason`` says why
=====================  ==========================================================================

Why fixed intervals and not one RTT each: a window limit shows only over a whole round trip
(within one, the flight ramps up and the ACK clock's gaps look like idleness), intervals of one
length line up across flows, capture points and the kernel's ``tcp_info`` samples, and the
default length, the larger of 100 ms and two of the flow's smallest RTTs, always holds at least
two round trips.

The capture point (:func:`capture_position`, from the handshake as
:func:`tcpmodels.analyze.capture.capture_point` infers it) decides what can be told apart. At the
sender, bytes in flight, idleness and the window's edge are read directly. At the receiver (or
mid-path), what arrives at time t was sent half a capture-to-sender round trip ``D`` earlier, on
the window the receiver advertised ``D`` earlier: every test is evaluated in the sender's time with
that shift, ``D`` from the handshake plus the queueing delay seen in the sender's TCP timestamps
(one-way delay, RFC 7323); the flight is the bytes that arrived in the last ``D``. A flow whose
handshake was not captured has an unknown capture point and window scale: its intervals are
``undecided``, never guessed. Losses before a receiver-side capture point show only as holes that
are later filled (still retransmissions in :func:`~tcpmodels.traces.annotate`).

Self-induced or external congestion (:func:`congestion_signature`) follows Sundaresan et al. [2]_:
a flow that fills the bottleneck's queue itself sees its RTT grow during slow start (a large
coefficient of variation and normalised max-min of the slow-start RTT samples); a flow that meets
an already full queue sees a high but flat RTT.

References
----------
.. [1] Y. Zhang, L. Breslau, V. Paxson, S. Shenker, "On the characteristics and origins of internet
   flow rates", ACM SIGCOMM 2002 (T-RAT), Sec. 3.
.. [2] S. Sundaresan, A. Dhamdhere, M. Allman, k. claffy, "TCP congestion signatures", ACM IMC 2017,
   Sec. 3-4.
.. [3] RFC 7323, "TCP Extensions for High Performance", Sec. 2 (window scale) and 4 (timestamps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.ndimage import minimum_filter1d

from tcpmodels._docstrings import SharedEntries

from .annotation import annotate
from .rtt import rtt_samples

__all__ = ["CLASSES", "NETWORK_CLASSES", "SIGNATURE_THRESHOLDS", "LimitDiagnosis", "capture_position", "diagnose",
           "limit_intervals", "congestion_signature", "limit_summary"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.
""")

#: the classes of :func:`limit_intervals`, in the order figures and tables show them
CLASSES = ("opportunity", "receiver_window", "send_buffer", "application", "congestion", "bandwidth", "undecided")
#: classes in which the network (the congestion window) is the limit: what the kernel counts as busy
NETWORK_CLASSES = ("opportunity", "congestion", "bandwidth")
#: thresholds of the tests (documented in :func:`limit_intervals`)
IDLE_SHARE = 0.5
WINDOW_SHARE = 0.5
BANDWIDTH_SHARE = 0.85
PLATEAU_RATIO = 1.2
PLATEAU_RTTS = 5
LOSS_MEMORY_RTTS = 8
LOSS_MEMORY_S = 2.0
OPPORTUNITY_RTTS = 10
#: Sundaresan et al.'s features and their thresholds: a flow is "self-induced" when the normalised max-min of its
#: slow-start RTT samples is at least ``norm_diff``. Tuned on the tuning seeds (0-3) of
#: :mod:`tcpmodels.experiments.limits` only (:func:`tcpmodels.experiments.limits.score.tune_signature`, 2026-12-06):
#: 47 flows at both capture points, self-induced 0.745-0.801, external 0.050-0.465, midpoint 0.605, rounded.
SIGNATURE_THRESHOLDS = {"norm_diff": 0.61, "min_samples": 10}
#: A round trip between the sender and the capture point shorter than this does not matter. [s]
NEGLIGIBLE_RTT_S = 1e-3

_INTERVAL_COLUMNS = {
    "flow_id": "int64", "interval": "int64", "start_s": "float64", "end_s": "float64", "limit": "object",
    "reason": "object", "position": "object", "active_share": "float64", "idle_share": "float64",
    "window_share": "float64", "flight_bytes": "float64", "window_bytes": "float64", "rate_bps": "float64",
    "capacity_bps": "float64", "rtt_s": "float64", "rtt_min_s": "float64", "retransmissions": "int64",
}


# --------------------------------------------------------------------------- capture point and window scale
@_PARAMETERS.fill
def capture_position(packets: pd.DataFrame, annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Where each flow was captured, from its handshake: ``"sender"``, ``"receiver"``, ``"middle"`` or ``"unknown"``.

    SYN -> SYN/ACK at the capture point is the round trip to the responder, SYN/ACK -> ACK the one
    to the initiator. For a direction whose sender's part is below a quarter of the total (or below
    1 ms) the capture is at the sender; above three quarters at the receiver; else mid-path; without
    the three handshake packets the point is unknown. (:func:`tcpmodels.analyze.capture.capture_point` adds a
    caution to each position.)

    Parameters
    ----------
    {packets, annotated}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``sender_side_rtt_s``, ``receiver_side_rtt_s`` [s] (NaN if unknown),
        ``position``, and ``window_scale`` (the shift that applies to the window field of this
        direction's packets: the one its SYN announced when both SYNs carried the option, 0 when a
        captured SYN lacked it, NaN when a SYN was not captured).
    """
    an = annotate(packets) if annotated is None else annotated
    conn = an["connection_id"].to_numpy()
    init = an["is_initiator"].to_numpy()
    fl = an["flow_id"].to_numpy()
    t = packets["timestamp_s"].to_numpy()
    syn = packets["syn"].to_numpy()
    ack = packets["ack_flag"].to_numpy()
    df = pd.DataFrame({"conn": conn, "t": t})
    t_syn = df[init & syn & ~ack].groupby("conn")["t"].min()
    t_synack = df[~init & syn & ack].groupby("conn")["t"].min()
    later = df[init & ack & ~syn]
    later = later[later["t"].to_numpy() > t_synack.reindex(later["conn"]).to_numpy()]
    t_ack = later.groupby("conn")["t"].min()
    fids = np.unique(fl)
    c = fids // 2
    init_dir = fids % 2 == 0
    r_side = (t_synack - t_syn).reindex(c).to_numpy()
    i_side = (t_ack - t_synack).reindex(c).to_numpy()
    sender = np.where(init_dir, i_side, r_side)
    receiver = np.where(init_dir, r_side, i_side)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = sender / (sender + receiver)
    near_sender = (share < 0.25) | (sender < NEGLIGIBLE_RTT_S)
    position = np.where(np.isnan(share), "unknown",
                        np.where(near_sender, "sender", np.where(share > 0.75, "receiver", "middle")))
    # window scale: the option on each direction's SYN, valid only when both SYNs carried it (RFC 7323, 2.2)
    ws = packets["window_scale"].to_numpy().astype(float)
    syns = pd.DataFrame({"flow": fl[syn], "ws": ws[syn]}).groupby("flow")["ws"].first()
    own = syns.reindex(fids).to_numpy()
    peer = syns.reindex(fids ^ 1).to_numpy()
    both_seen = ~np.isnan(own) & ~np.isnan(peer)
    scale = np.where(both_seen, np.where((own >= 0) & (peer >= 0), np.clip(own, 0, 14), 0.0), np.nan)
    return pd.DataFrame({"sender_side_rtt_s": sender, "receiver_side_rtt_s": receiver, "position": position,
                         "window_scale": scale}, index=pd.Index(fids, name="flow_id"))


# --------------------------------------------------------------------------- per-flow evidence
class _Flow:
    """The arrays of one direction (data) and its peer's ACKs, in capture order."""

    def __init__(self, t_d, end_d, pay_d, rtx_d, ts_d, has_ts_d, t_a, ack_a, win_a, syn_end, t_syn):
        self.t_d, self.end_d, self.pay_d, self.rtx_d, self.ts_d, self.has_ts_d = t_d, end_d, pay_d, rtx_d, ts_d, has_ts_d
        self.t_a, self.ack_a, self.win_a = t_a, ack_a, win_a
        self.syn_end, self.t_syn = syn_end, t_syn


def _step(t_events: np.ndarray, values: np.ndarray, t: np.ndarray, before: float) -> np.ndarray:
    """Value of a step function (``values`` from ``t_events`` on, ``before`` earlier) at times ``t``."""
    i = np.searchsorted(t_events, t, side="right") - 1
    out = np.where(i >= 0, values[np.clip(i, 0, None)] if len(values) else before, before)
    return out.astype(float)


#: dispersion trains: gaps per train, and the shortest gap limit (a path of ~0 ms RTT still has ACK spacing) [s]
TRAIN_GAPS = 4
GAP_FLOOR_S = 2e-3


def _capacity_bps(t: np.ndarray, nbytes: np.ndarray, busy: np.ndarray, gap_max_s: float) -> float:
    """Bottleneck rate from the dispersion of trains of arrivals inside busy periods [bit/s] (NaN if < 10 trains).

    A train is ``TRAIN_GAPS`` consecutive gaps, each shorter than ``max(gap_max_s, GAP_FLOOR_S)``, whose
    first arrival came with data outstanding; its rate is the bytes of its last ``TRAIN_GAPS`` arrivals over
    its span. The estimate is the median of the upper half of the train rates: queued packets leave the
    bottleneck back to back, so a train's span is their service time, while gaps inside a window-limited or
    paced flight only lower a train's rate (the upper half discards them); ACKs or packets bunched on the way
    (ACK compression, a token bucket's burst) shorten one gap but not a whole train.
    """
    k = TRAIN_GAPS
    if len(t) < k + 2:
        return math.nan
    dt = np.diff(t)
    good = (dt > 0) & (dt < max(gap_max_s, GAP_FLOOR_S)) & busy[:-1]
    ok = np.lib.stride_tricks.sliding_window_view(good, k).all(axis=1)
    span = t[k:] - t[:-k]
    got = np.cumsum(np.concatenate([[0.0], nbytes[1:]]))
    sent = got[k:] - got[:-k]
    ok &= (span > 0) & (sent > 0)
    if ok.sum() < 10:
        return math.nan
    rates = 8.0 * sent[ok] / span[ok]
    return float(np.median(rates[rates >= np.median(rates)]))


def _group_median(keys: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Median of ``values`` per integer key in ``[0, n)`` (NaN where a key has none)."""
    out = np.full(n, np.nan)
    if not len(keys):
        return out
    order = np.lexsort((values, keys))
    k, v = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    counts = np.diff(np.append(starts, len(k)))
    out[k[starts]] = (v[starts + (counts - 1) // 2] + v[starts + counts // 2]) / 2
    return out


def _rolling(x: np.ndarray, window: int, how: str) -> np.ndarray:
    """Trailing rolling ``max``, ``min`` or ``mean`` over ``window`` values (NaN until the window is full)."""
    n = len(x)
    out = np.full(n, np.nan)
    if n < window:
        return out
    view = np.lib.stride_tricks.sliding_window_view(x, window)
    out[window - 1:] = {"max": np.max, "min": np.min, "mean": np.mean}[how](view, axis=1)
    return out


def _ffill(x: np.ndarray) -> np.ndarray:
    """Forward fill of NaN (leading NaN stay)."""
    idx = np.where(np.isnan(x), 0, np.arange(len(x)))
    np.maximum.accumulate(idx, out=idx)
    out = x[idx]
    out[np.isnan(x) & (np.cumsum(~np.isnan(x)) == 0)] = np.nan
    return out


def _owd_variation(t: np.ndarray, tsval: np.ndarray) -> np.ndarray | None:
    """Queueing delay variation from the sender's TCP timestamps: ``(t - tsval * tick) - min`` [s], or None.

    The timestamp clock's tick is fitted (Linux: 1 ms); None with fewer than 10 samples or a clock that
    does not advance at 0.1 to 10 ms per tick.
    """
    if len(t) < 10:
        return None
    span_ticks = float(tsval.max() - tsval.min())
    if span_ticks <= 0:
        return None
    tick = float((t.max() - t.min()) / span_ticks)
    for candidate in (1e-3, 1e-4, 4e-3, 1e-2):
        if abs(tick / candidate - 1) < 0.1:
            tick = candidate
            break
    else:
        return None
    owd = t - tsval * tick
    owd = owd - np.minimum.accumulate(owd)  # queueing above the lowest seen so far (clock drift is slow)
    return owd


def _flow_intervals(fid: int, fl: _Flow, pos: str, d_base_s: float, scale: float, rtt_t: np.ndarray,
                    rtt_v: np.ndarray, interval_s: float | None, origin_s: float | None) -> tuple[dict, dict]:
    """Intervals of one flow with data and ACKs; ``d_base_s`` is the capture-to-sender round trip (0 at the sender)."""
    at_sender = pos == "sender"
    # --- delay D(t) from the capture point to the sender and back; the RTT the flow sees
    if at_sender:
        rtt_min = float(np.min(rtt_v)) if len(rtt_v) else math.nan
    else:
        owd = _owd_variation(fl.t_d[fl.has_ts_d], fl.ts_d[fl.has_ts_d].astype(float))
        q_t = fl.t_d[fl.has_ts_d] if owd is not None else np.array([fl.t_d[0]])
        q_v = owd if owd is not None else np.array([0.0])
        rtt_t, rtt_v = q_t, d_base_s + q_v
        rtt_min = float(d_base_s)
    if not np.isfinite(rtt_min) or rtt_min <= 0:
        return {}, {"reason": "no RTT sample: no data segment was acknowledged in the capture"}
    step = interval_s if interval_s is not None else max(0.1, 2 * rtt_min)
    # --- events in capture order: highest sequence sent (incl. the SYN), highest ACK, window's right edge
    t_hs = np.concatenate([[fl.t_syn], fl.t_d]) if np.isfinite(fl.t_syn) else fl.t_d
    hs_v = np.maximum.accumulate(np.concatenate([[fl.syn_end], fl.end_d]) if np.isfinite(fl.t_syn) else fl.end_d)
    ha_v = np.maximum.accumulate(fl.ack_a)
    # the right edge the latest ACK gives (RFC 9293, 3.10.7.4: the sender takes SND.UNA + SND.WND of the last
    # window update, also when a receiver shrinks its window)
    edge_v = fl.ack_a + fl.win_a * (2.0 ** scale) if np.isfinite(scale) else None
    # --- grid in the sender's time: from the first data segment to the ACK of the last byte
    first_data = fl.t_d[0] - d_base_s / 2
    done = np.flatnonzero(fl.ack_a >= fl.end_d.max())
    last = (fl.t_a[done[0]] if len(done) else max(fl.t_a[-1], fl.t_d[-1])) - d_base_s / 2
    if last <= first_data:
        last = first_data + 1e-6
    origin = first_data if origin_s is None else float(origin_s)
    dt = min(2.5e-3, step / 40)  # 40 points per interval at least; shares resolve 2.5 %
    n_grid = int((last - first_data) / dt) + 1
    if n_grid > 4_000_000:
        dt = (last - first_data) / 4_000_000
        n_grid = 4_000_001
    tau = first_data + dt * np.arange(n_grid)
    d_tau = np.interp(tau + d_base_s / 2, rtt_t, rtt_v) if not at_sender else np.zeros(n_grid)
    half = d_tau / 2
    hs = _step(t_hs, hs_v, tau + half, hs_v[0])
    ha = _step(fl.t_a, ha_v, tau + half, np.nan)
    ha = np.where(np.isnan(ha), hs_v[0], ha)
    quiet = hs <= ha  # nothing outstanding at the capture point
    if at_sender:
        idle = quiet
        flight = np.maximum(hs - ha, 0.0)
    else:
        # no data arriving either (the receiver ACKs within microseconds, so "all acknowledged" alone holds
        # between almost any two arrivals): the sender is idle when the capture is quiet for a whole round trip
        arrived = np.bincount(np.clip(((fl.t_d - d_base_s / 2 - first_data) / dt).astype(np.int64), 0, n_grid - 1),
                              minlength=n_grid) > 0
        quiet &= ~arrived
        width = max(1, int(round(d_base_s / dt)))
        idle = minimum_filter1d(quiet.astype(np.uint8), size=2 * (width // 2) + 1, mode="nearest").astype(bool)
        # the sender's flight: what arrived during the last round trip to it
        hs_back = _step(t_hs, hs_v, tau + half - d_tau, hs_v[0])
        flight = np.maximum(hs - hs_back, 0.0)
    mss = float(fl.pay_d.max())
    if edge_v is not None:
        edge = _step(fl.t_a, edge_v, tau - half, np.inf)
        ha_seen = _step(fl.t_a, ha_v, tau - half, np.nan)  # the ACK that window came with
        window = edge - np.where(np.isnan(ha_seen), hs_v[0], ha_seen)  # the window the sender was using at tau
        tol = mss + 2.0 ** scale
        bound = (hs >= edge - tol) & ~idle
    else:
        window = np.full(n_grid, np.nan)
        bound = np.zeros(n_grid, bool)
    # --- per interval
    k = np.floor((tau - origin) / step).astype(np.int64)
    k0 = int(k.min())
    kk = k - k0
    n_int = int(kk.max()) + 1
    count = np.bincount(kk, minlength=n_int).astype(float)
    idle_share = np.bincount(kk, weights=idle, minlength=n_int) / count
    window_share = np.bincount(kk, weights=bound, minlength=n_int) / count
    flight_mean = np.bincount(kk, weights=flight, minlength=n_int) / count
    win_ok = np.isfinite(window)
    win_mean = np.bincount(kk[win_ok], weights=window[win_ok], minlength=n_int) / np.maximum(
        np.bincount(kk[win_ok], minlength=n_int), 1)
    win_mean[np.bincount(kk[win_ok], minlength=n_int) == 0] = np.nan
    starts = origin + (np.arange(n_int) + k0) * step
    ends = starts + step
    # delivered rate: bytes acknowledged (sender) or arriving (elsewhere) per interval of sender time
    lo_t = np.maximum(starts, first_data)
    hi_t = np.minimum(ends, last)
    if at_sender:
        got_hi = _step(fl.t_a, ha_v, hi_t, hs_v[0])
        got_lo = _step(fl.t_a, ha_v, lo_t, hs_v[0])
    else:
        d_lo = np.interp(lo_t + d_base_s / 2, rtt_t, rtt_v) / 2
        d_hi = np.interp(hi_t + d_base_s / 2, rtt_t, rtt_v) / 2
        got_hi = _step(t_hs, hs_v, hi_t + d_hi, hs_v[0])
        got_lo = _step(t_hs, hs_v, lo_t + d_lo, hs_v[0])
    active = np.maximum(hi_t - lo_t, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(active > 0, 8.0 * (got_hi - got_lo) / active, np.nan)
    # RTT per interval
    rt_tau = (rtt_t - (d_base_s / 2 if not at_sender else 0.0)) if len(rtt_t) else rtt_t
    rk = np.floor((rt_tau - origin) / step).astype(np.int64) - k0
    okr = (rk >= 0) & (rk < n_int)
    rtt_med = _group_median(rk[okr], rtt_v[okr], n_int)
    # losses: retransmitted data segments, in sender time
    rtx_tau = fl.t_d[fl.rtx_d] - d_base_s / 2
    lk = np.floor((rtx_tau - origin) / step).astype(np.int64) - k0
    okl = (lk >= 0) & (lk < n_int)
    retrans = np.bincount(lk[okl], minlength=n_int)
    # capacity from dispersion: ACKs at the sender, data arrivals elsewhere
    if at_sender:
        adv = np.concatenate([[True], np.diff(ha_v) > 0])
        outstanding = _step(t_hs, hs_v, fl.t_a, hs_v[0]) > fl.ack_a
        nb = np.concatenate([[0.0], np.diff(ha_v)])
        capacity = _capacity_bps(fl.t_a[adv], nb[adv], outstanding[adv], rtt_min / 4)
    else:
        new = ~fl.rtx_d
        capacity = _capacity_bps(fl.t_d[new], fl.pay_d[new].astype(float), np.ones(int(new.sum()), bool),
                                 rtt_min / 4)
    keep = count > 0
    ev = {"flow_id": np.full(n_int, fid, np.int64), "interval": np.arange(n_int) + k0, "start_s": starts,
          "end_s": ends, "position": np.full(n_int, pos, dtype=object), "active_share": active / step,
          "idle_share": idle_share, "window_share": window_share, "flight_bytes": flight_mean,
          "window_bytes": win_mean, "rate_bps": rate, "capacity_bps": np.full(n_int, capacity),
          "rtt_s": rtt_med, "rtt_min_s": np.full(n_int, rtt_min), "retransmissions": retrans.astype(np.int64)}
    ev = {k: v[keep] for k, v in ev.items()}
    facts = {"rtt_min_s": rtt_min, "interval_s": step, "mss_bytes": mss, "capacity_bps": capacity,
             "scale_known": np.isfinite(scale), "data_s": last - first_data,
             "retransmissions": int(fl.rtx_d.sum())}
    return ev, facts


def _classify(ev: dict, facts: dict) -> dict:
    """The decision rules of :func:`limit_intervals`, applied to one flow's intervals."""
    n = len(ev["interval"])
    step = facts["interval_s"]
    rtt = facts["rtt_min_s"]
    loss = ev["retransmissions"] > 0
    memory = max(1, int(math.ceil(max(LOSS_MEMORY_RTTS * rtt, LOSS_MEMORY_S) / step)))
    recent_loss = np.convolve(loss.astype(float), np.ones(memory), mode="full")[:n] > 0
    flight = ev["flight_bytes"]
    span = max(2, int(math.ceil(PLATEAU_RTTS * rtt / step)))
    fmin = _rolling(flight, span, "min")
    half = max(1, span // 2)
    late = _rolling(flight, half, "mean")
    early = np.concatenate([np.full(min(span - half, n), np.nan), late[:max(n - (span - half), 0)]])
    with np.errstate(invalid="ignore", divide="ignore"):
        trend = late / early
        flat = (fmin > 0) & (trend <= PLATEAU_RATIO) & (trend >= 1 / PLATEAU_RATIO)
        growing = (early > 0) & (trend > PLATEAU_RATIO)
        rtt_grow = _ffill(ev["rtt_s"]) / rtt
    cap = facts["capacity_bps"]
    rate = ev["rate_bps"]
    at_cap = np.isfinite(cap) & (rate >= BANDWIDTH_SHARE * cap)
    idle = ev["idle_share"] >= IDLE_SHARE
    # ran out of data: nothing outstanding for at least one RTT (and a tenth of the interval) without a loss
    idle_run = ev["idle_share"] * step >= max(rtt, 0.1 * step)
    near_idle = idle_run.copy()
    near_idle[1:] |= idle_run[:-1]
    near_idle[:-1] |= idle_run[1:]
    ran_out = near_idle & ~loss
    first_loss = int(np.flatnonzero(loss)[0]) if loss.any() else n
    slow_start = np.arange(n) < min(first_loss, span)
    win = ev["window_share"] >= WINDOW_SHARE
    queue_steady = ~(rtt_grow > 1.25)
    opportunity = (facts["retransmissions"] == 0) and facts["data_s"] <= OPPORTUNITY_RTTS * rtt
    limit = np.full(n, "undecided", dtype=object)
    reason = np.full(n, "", dtype=object)
    short_active = ev["active_share"] <= 0
    rules = [
        (idle, "application", "nothing outstanding {idle:.0%} of the interval"),
        (win, "receiver_window", "at the receiver's advertised window {win:.0%} of the interval"),
        (np.full(n, opportunity), "opportunity", "the transfer ended within {rtts:.0f} RTTs without loss"),
        (ran_out, "application", "a burst between idle periods (nothing outstanding for over an RTT in this "
                                 "interval or the next to it), no loss: the sender ran out of data"),
        (at_cap, "bandwidth", "{rate:.3g} of about {cap:.3g} Mbit/s at the bottleneck"),
        (recent_loss, "congestion", "loss events within {mem} interval(s), {rate:.3g} Mbit/s below the "
                                    "{cap:.3g} Mbit/s bottleneck"),
        (flat & queue_steady & ~recent_loss, "send_buffer", "flight flat at {flight:.0f} kB over {span} "
                                                            "intervals, no loss, no queue growth"),
        (flat & ~queue_steady & ~recent_loss, "congestion", "flight flat at {flight:.0f} kB with the RTT {grow_rtt:.0%} "
                                                            "above its minimum: a standing queue shared at the "
                                                            "bottleneck"),
        (slow_start, "congestion", "slow start: the congestion window grows from its initial value, no loss "
                                   "yet, {rate:.3g} Mbit/s below the {cap:.3g} Mbit/s bottleneck"),
        (growing, "congestion", "congestion window still growing (flight x{grow:.2f} over {span} intervals), no "
                                "loss, below the {cap:.3g} Mbit/s bottleneck (T-RAT's transport-limited)"),
    ]
    decided = np.zeros(n, bool)
    for cond, name, text in rules:
        take = cond & ~decided & ~short_active
        for i in np.flatnonzero(take):
            reason[i] = text.format(idle=ev["idle_share"][i], win=ev["window_share"][i],
                                    rtts=facts["data_s"] / rtt, idle_ms=ev["idle_share"][i] * step * 1e3,
                                    rate=rate[i] / 1e6,
                                    cap=cap / 1e6 if np.isfinite(cap) else float("nan"), mem=memory,
                                    flight=flight[i] / 1e3, span=span, grow=trend[i],
                                    grow_rtt=rtt_grow[i] - 1)
        limit[take] = name
        decided |= take
    rest = ~decided
    if not facts["scale_known"]:
        reason[rest] = "window scale unknown (a SYN was not captured): the receiver's window cannot be ruled out"
    else:
        reason[rest & ~np.isfinite(cap)] = "no bottleneck estimate (too few back-to-back packets)"
        reason[rest & np.isfinite(cap)] = ["rate %.3g Mbit/s below the %.3g Mbit/s bottleneck, no loss, no window "
                                           "or buffer limit seen" % (rate[i] / 1e6, cap / 1e6)
                                           for i in np.flatnonzero(rest & np.isfinite(cap))]
    if not facts["scale_known"]:
        # without the scale a window limit cannot be excluded: only idleness and losses decide
        keep = np.isin(limit, ("application", "congestion"))
        reason[~keep & (limit != "undecided")] = ("window scale unknown (a SYN was not captured): the receiver's "
                                                  "window cannot be ruled out")
        limit[~keep] = "undecided"
    return {**ev, "limit": limit, "reason": reason}


def _empty_intervals() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _INTERVAL_COLUMNS.items()})


def _undecided_row(fid: int, pos: str, why: str, t0: float) -> dict:
    row = {c: np.nan for c in _INTERVAL_COLUMNS}
    row.update(flow_id=fid, interval=0, start_s=t0, end_s=t0, limit="undecided", reason=why, position=pos,
               retransmissions=0)
    return row


@_PARAMETERS.fill
def limit_intervals(packets: pd.DataFrame, annotated: pd.DataFrame | None = None, *,
                    flow_ids: list[int] | np.ndarray | None = None, interval_s: float | None = None,
                    origin_s: float | None = None, min_data_packets: int = 2) -> pd.DataFrame:
    """Each flow's limit per interval of the sender's time: a T-RAT class, the reason and the evidence.

    Rules, in order (the first that holds decides; shares are of the interval's sender time):

    1. ``application``: nothing outstanding for >= 50 % of the interval.
    2. ``receiver_window``: the highest sequence sent within one MSS (plus the window's granularity)
       of the advertised right edge for >= 50 %.
    3. ``opportunity``: the flow's data took at most 10 of its smallest RTTs and nothing was retransmitted.
       ``application`` also when nothing was outstanding for at least one RTT (and a tenth of the
       interval) in it or in an interval next to it, and nothing was retransmitted in it: a burst
       between idle periods, the sender ran out of data.
    4. ``bandwidth``: delivered rate >= 85 % of the bottleneck estimate.
    5. ``congestion``: a retransmission in this interval or the intervals covering the last 8 RTTs or
       2 s, whichever is longer (a loss-driven window regrows for seconds: CUBIC's K is 2.8 s at 30 segments).
    6. ``send_buffer``: over the last 5 RTTs the flight's mean in the later half within a factor 1.2 of
       the earlier half (flat), no recent loss, and the RTT within 25 % of its minimum (no queue);
       with the RTT higher, a flat flight sits in a standing queue: ``congestion``.
    7. ``congestion``: the first 5 RTTs before any loss (slow start: the window grows from its initial
       value), or the flight grew by more than a factor 1.2 over the last 5 RTTs without loss, below
       the bottleneck: the congestion window is the limit while it grows (T-RAT's "transport-limited").
    8. else ``undecided``, with the reason (rate below the bottleneck with none of the above; no
       bottleneck estimate; window scale unknown).

    Whole flows are ``undecided`` with a reason when: no data segment (``min_data_packets``), no ACK
    from the peer (one direction not captured), no RTT sample, or the capture point unknown.

    Parameters
    ----------
    {packets, annotated}
    flow_ids : list of int or numpy.ndarray, optional
        The flows (directions) to diagnose; default every flow that carries payload.
    interval_s : float, optional
        Interval length [s], > 0; default per flow the larger of 0.1 s and two of its smallest RTTs.
    origin_s : float, optional
        Start of interval 0 on the capture's clock [s] (to line intervals up with other measurements);
        default each flow's first data segment in sender time.
    min_data_packets : int
        Fewer data segments than this: the flow is too short to tell. [packets]

    Returns
    -------
    pandas.DataFrame
        One row per flow and interval: ``flow_id``, ``interval`` (index from ``origin_s``), ``start_s``,
        ``end_s`` (sender time, capture clock) [s], ``limit`` (one of :data:`CLASSES`), ``reason``
        (text with the numbers), ``position`` (capture point), ``active_share`` (of the interval inside
        the transfer), ``idle_share``, ``window_share`` [-], ``flight_bytes``, ``window_bytes`` (mean
        advertised window in use) [bytes], ``rate_bps``, ``capacity_bps`` (the flow's bottleneck
        estimate) [bit/s], ``rtt_s`` (median in the interval), ``rtt_min_s`` [s], ``retransmissions``.

    Raises
    ------
    ValueError
        If ``interval_s`` is not a positive finite number or ``min_data_packets`` < 1.
    """
    if interval_s is not None and not (np.isfinite(interval_s) and interval_s > 0):
        raise ValueError(f"interval_s [s] must be a positive finite number; got {interval_s!r}")
    if min_data_packets < 1:
        raise ValueError(f"min_data_packets [packets] must be >= 1; got {min_data_packets!r}")
    if len(packets) == 0:
        return _empty_intervals()
    an = annotate(packets) if annotated is None else annotated
    rows, frames = [], []
    for fid, fl, pos, d_base, scale, rtt_t, rtt_v, why in _flows_of(packets, an, flow_ids, min_data_packets):
        if why:
            rows.append(_undecided_row(fid, pos, why, float(fl.t_d[0]) if fl is not None and len(fl.t_d) else np.nan))
            continue
        ev, facts = _flow_intervals(fid, fl, pos, d_base, scale, rtt_t, rtt_v, interval_s, origin_s)
        if not ev:
            rows.append(_undecided_row(fid, pos, facts["reason"], float(fl.t_d[0])))
            continue
        frames.append(_classify(ev, facts))
    if frames:
        frames = [pd.DataFrame({c: np.concatenate([f[c] for f in frames]) for c in _INTERVAL_COLUMNS})]
    if rows:
        frames.append(pd.DataFrame(rows))
    if not frames:
        return _empty_intervals()
    out = pd.concat(frames, ignore_index=True)
    out = out.astype({c: t for c, t in _INTERVAL_COLUMNS.items() if t != "object"})
    return out[list(_INTERVAL_COLUMNS)].sort_values(["flow_id", "interval"], kind="stable", ignore_index=True)


def _flows_of(packets: pd.DataFrame, an: pd.DataFrame, flow_ids, min_data_packets: int):
    """Yield ``(flow_id, _Flow or None, position, D_base, scale, rtt_t, rtt_v, why_undecided)`` per flow."""
    fl_all = an["flow_id"].to_numpy()
    pay = packets["payload_bytes"].to_numpy(np.int64)
    dup = an["is_duplicate"].to_numpy()
    if flow_ids is None:
        flow_ids = np.unique(fl_all[pay > 0])
    flow_ids = np.asarray(flow_ids, dtype=np.int64)
    where = capture_position(packets, an)
    positions = dict(zip(where.index.tolist(), where["position"].tolist()))
    scales = dict(zip(where.index.tolist(), where["window_scale"].tolist()))
    sender_side = dict(zip(where.index.tolist(), where["sender_side_rtt_s"].tolist()))
    t = packets["timestamp_s"].to_numpy()
    order = np.lexsort((packets["frame_index"].to_numpy(), fl_all))
    f_sorted = fl_all[order]
    seq_end = an["seq_end_u"].to_numpy()
    ack_u = an["ack_u"].to_numpy()
    syn = packets["syn"].to_numpy()
    win = packets["window"].to_numpy().astype(float)
    rtx = an["is_retransmission"].to_numpy() & ~an["is_spurious_retransmission"].to_numpy()
    tsval = packets["tsval"].to_numpy()
    has_ts = packets["has_timestamps"].to_numpy()
    samples = None
    for fid in flow_ids:
        fid = int(fid)
        pos = str(positions.get(fid, "unknown"))
        lo, hi = np.searchsorted(f_sorted, [fid, fid + 1])
        rows = order[lo:hi]
        data = rows[(pay[rows] > 0) & ~dup[rows]]
        if len(data) < min_data_packets:
            yield fid, None, pos, math.nan, math.nan, None, None, (
                f"too short: {len(data)} data segment(s), fewer than {min_data_packets}")
            continue
        plo, phi = np.searchsorted(f_sorted, [fid ^ 1, (fid ^ 1) + 1])
        peer = order[plo:phi]
        acks = peer[(ack_u[peer] >= 0) & ~syn[peer] & ~dup[peer]]
        syn_rows = rows[syn[rows]]
        fl = _Flow(t[data], seq_end[data].astype(float), pay[data], rtx[data], tsval[data], has_ts[data],
                   t[acks], ack_u[acks].astype(float), win[acks],
                   float(seq_end[syn_rows[0]]) if len(syn_rows) else math.nan,
                   float(t[syn_rows[0]]) if len(syn_rows) else math.nan)
        if len(acks) == 0:
            yield fid, fl, pos, math.nan, math.nan, None, None, (
                "the peer's ACKs were not captured (one direction missing): nothing can be told from data alone")
            continue
        if pos == "unknown":
            yield fid, fl, pos, math.nan, math.nan, None, None, (
                "capture point unknown (the handshake was not captured): bytes in flight, idleness and the "
                "window cannot be placed in the sender's time")
            continue
        if not (fl.ack_a.max() > fl.end_d.min() - fl.pay_d[0]):
            yield fid, fl, pos, math.nan, math.nan, None, None, "too short: no data segment was acknowledged"
            continue
        scale = float(scales.get(fid ^ 1, math.nan))
        if pos == "sender":
            if samples is None:
                samples = rtt_samples(packets, an)
                samples = samples[samples["method"] == "seq"]
                s_flow = samples["flow_id"].to_numpy()
                s_t = samples["timestamp_s"].to_numpy()
                s_r = samples["rtt_s"].to_numpy()
            mine = s_flow == fid
            if not mine.any():
                yield fid, fl, pos, math.nan, scale, None, None, (
                    "no RTT sample (Karn's rule left none): the round trip is unknown")
                continue
            yield fid, fl, pos, 0.0, scale, s_t[mine], s_r[mine], ""
        else:
            d_base = float(sender_side[fid])
            yield fid, fl, pos, d_base, scale, np.array([fl.t_d[0]]), np.array([d_base]), ""


# --------------------------------------------------------------------------- Sundaresan et al.
@_PARAMETERS.fill
def congestion_signature(packets: pd.DataFrame, annotated: pd.DataFrame | None = None, *,
                         flow_ids: list[int] | np.ndarray | None = None,
                         thresholds: dict | None = None) -> pd.DataFrame:
    """Self-induced or external congestion from each flow's slow-start RTTs (Sundaresan et al., IMC 2017).

    Slow start is taken from the first data segment to the first retransmission (or the end of the
    flow). The RTT samples in it are the sequence/ACK samples at the sender, and elsewhere the
    capture-to-sender round trip of the handshake plus the queueing delay read from the sender's
    TCP timestamps. Features: coefficient of variation ``std / mean`` and normalised max-min
    ``(max - min) / max`` of those samples. A flow with at least ``min_samples`` of them is
    ``"self-induced"`` when ``norm_diff`` reaches the threshold, else ``"external"``: its RTT did not grow
    in slow start, so it met a queue it did not build (the signature, like the paper's, presumes the flow
    met congestion; losses without any queue, e.g. random loss, also read "external").

    Parameters
    ----------
    {packets, annotated}
    flow_ids : list of int or numpy.ndarray, optional
        The flows; default every flow that carries payload.
    thresholds : dict, optional
        ``norm_diff`` [-] and ``min_samples`` [samples]; default :data:`SIGNATURE_THRESHOLDS`.

    Notes
    -----
    Sundaresan et al. take the RTT samples of slow start proper. Linux's HyStart can end slow start on
    a rising delay before any loss; the window here (to the first retransmission) then also holds the
    congestion avoidance before the first loss, in which a self-induced queue keeps growing and an
    external one stays put, so the signature keeps its sense. The threshold was tuned on such windows.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``slow_start_s`` [s], ``samples``, ``rtt_min_s``, ``rtt_max_s`` [s],
        ``cov``, ``norm_diff`` [-], ``congestion`` (``"self-induced"``, ``"external"`` or
        ``"undecided"``), ``reason``.

    References
    ----------
    .. [1] S. Sundaresan, A. Dhamdhere, M. Allman, k. claffy, "TCP congestion signatures", IMC 2017, Sec. 3.
    """
    th = {**SIGNATURE_THRESHOLDS, **(thresholds or {})}
    an = annotate(packets) if annotated is None else annotated
    out = {}
    for fid, fl, pos, d_base, scale, rtt_t, rtt_v, why in _flows_of(packets, an, flow_ids, 2):
        row = {"slow_start_s": np.nan, "samples": 0, "rtt_min_s": np.nan, "rtt_max_s": np.nan, "cov": np.nan,
               "norm_diff": np.nan, "congestion": "undecided", "reason": why}
        if not why:
            if pos != "sender":
                owd = _owd_variation(fl.t_d[fl.has_ts_d], fl.ts_d[fl.has_ts_d].astype(float))
                if owd is None:
                    row["reason"] = ("no TCP timestamps from the sender: the slow-start RTT cannot be followed "
                                     "away from the sender")
                    out[fid] = row
                    continue
                rtt_t, rtt_v = fl.t_d[fl.has_ts_d], d_base + owd
            end = fl.t_d[fl.rtx_d][0] if fl.rtx_d.any() else np.inf
            ss = (rtt_t >= fl.t_d[0]) & (rtt_t < end)
            v = rtt_v[ss]
            row.update(slow_start_s=float(min(end, rtt_t.max()) - fl.t_d[0]), samples=int(len(v)))
            if len(v) < th["min_samples"]:
                row["reason"] = f"{len(v)} RTT samples in slow start, fewer than {th['min_samples']}"
            else:
                cov = float(np.std(v) / np.mean(v))
                nd = float((v.max() - v.min()) / v.max())
                self_induced = nd >= th["norm_diff"]
                row.update(rtt_min_s=float(v.min()), rtt_max_s=float(v.max()), cov=cov, norm_diff=nd,
                           congestion="self-induced" if self_induced else "external",
                           reason=(f"slow-start RTT {v.min() * 1e3:.3g} -> {v.max() * 1e3:.3g} ms "
                                   f"(normalised max-min {nd:.2f} {'>=' if self_induced else '<'} "
                                   f"{th['norm_diff']:.2f}, CoV {cov:.2f})"
                                   + ("" if self_induced else ": the flow did not build the queue it met (or "
                                      "lost packets without queueing)")))
        out[fid] = row
    cols = ["slow_start_s", "samples", "rtt_min_s", "rtt_max_s", "cov", "norm_diff", "congestion", "reason"]
    return pd.DataFrame.from_dict(out, orient="index", columns=cols).rename_axis("flow_id")


# --------------------------------------------------------------------------- summary for analyze
_MODEL = {
    "congestion": "Mathis/PFTK apply: the window is loss-driven",
    "bandwidth": "the bottleneck rate, not Mathis/PFTK (the link, not the loss rate, sets the rate)",
    "receiver_window": "W/RTT with W the receiver's window; Mathis/PFTK do not apply",
    "send_buffer": "W/RTT with W the sender's buffer; Mathis/PFTK do not apply",
    "application": "the offered load; Mathis/PFTK do not apply",
    "opportunity": "slow-start rounds (too short for a steady-state model); Mathis/PFTK do not apply",
    "undecided": "undecided: no model can be chosen",
}


def limit_summary(intervals: pd.DataFrame, signature: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per flow: share of time in each class, the main limit, one sentence with the numbers, the model that applies.

    Parameters
    ----------
    intervals : pandas.DataFrame
        :func:`limit_intervals`.
    signature : pandas.DataFrame, optional
        :func:`congestion_signature`; adds self-induced/external to congestion-limited flows.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``share_<class>`` for every class of :data:`CLASSES` [-] (weighted by
        the time inside the transfer; they sum to 1), ``limit`` (the class with the largest share),
        ``sentence``, ``model`` (which model applies), ``mathis_meaningful`` (bool: congestion-limited
        for at least half of the time), ``position`` (capture point) and, with ``signature``,
        ``congestion`` (self-induced, external or undecided).
    """
    if not len(intervals):
        return pd.DataFrame(columns=[f"share_{c}" for c in CLASSES] + ["limit", "sentence", "model",
                                                                       "mathis_meaningful", "position"])
    w = intervals["active_share"].fillna(0).clip(lower=0).to_numpy()
    w = np.where(intervals["limit"].to_numpy() == "undecided", np.maximum(w, 1e-9), w)
    tab = pd.crosstab(intervals["flow_id"], intervals["limit"], values=w, aggfunc="sum").fillna(0.0)
    tab = tab.reindex(columns=list(CLASSES), fill_value=0.0)
    tab = tab.div(tab.sum(axis=1), axis=0)
    out = tab.add_prefix("share_")
    out.columns.name = None
    main = tab.idxmax(axis=1)
    out["limit"] = main
    num = ["window_bytes", "flight_bytes", "rate_bps", "idle_share", "rtt_s", "rtt_min_s"]
    med = intervals.groupby(["flow_id", "limit"])[num].median()
    per_flow = intervals.groupby("flow_id").agg(capacity_bps=("capacity_bps", "max"), rate_bps=("rate_bps", "mean"),
                                                retransmissions=("retransmissions", "sum"),
                                                rtt_min_s=("rtt_min_s", "first"))
    und = intervals[intervals["limit"] == "undecided"]
    why = und.groupby("flow_id")["reason"].agg(lambda r: r.value_counts().index[0]) if len(und) else pd.Series(
        dtype=object)
    med_d = med.to_dict("index")
    flow_d = per_flow.to_dict("index")
    why_d = why.to_dict()
    sig_d = signature[["congestion", "reason"]].to_dict("index") if signature is not None else {}
    share_d = {fid: float(tab.at[fid, lim]) for fid, lim in main.items()}
    sentences = [_sentence(lim, share_d[fid], med_d.get((fid, lim), dict.fromkeys(num, np.nan)), flow_d[fid],
                           why_d.get(fid), sig_d.get(fid)) for fid, lim in main.items()]
    out["sentence"] = sentences
    out["model"] = [_MODEL[m] for m in main]
    out["mathis_meaningful"] = tab["congestion"].to_numpy() >= 0.5
    out["position"] = intervals.groupby("flow_id")["position"].first().reindex(out.index)
    if signature is not None:
        out["congestion"] = signature["congestion"].reindex(out.index)
    return out


def _mbit(x: float) -> str:
    return f"{x / 1e6:.3g} Mbit/s" if np.isfinite(x) else "an unknown rate"


def _sentence(lim: str, share: float, med: dict, flow: dict, why, sig) -> str:
    """One sentence naming the limit with numbers: ``med`` the medians over the flow's intervals of that class."""
    rtt = med["rtt_s"] if np.isfinite(med["rtt_s"]) else med["rtt_min_s"]
    cap = flow["capacity_bps"]
    rtt_min = flow["rtt_min_s"]
    head = f"{share:.0%} of the time"
    if lim == "receiver_window":
        wb = med["window_bytes"]
        return (f"limited by the receiver's window {head}: {wb / 1024:.0f} KiB advertised at {rtt * 1e3:.3g} ms RTT "
                f"caps it at {_mbit(8 * wb / rtt)}")
    if lim == "send_buffer":
        return (f"limited by the sender {head}: {med['flight_bytes'] / 1024:.0f} KiB in flight, flat, without loss "
                f"or queueing, at {rtt * 1e3:.3g} ms RTT gives {_mbit(med['rate_bps'])} (the send buffer, or an "
                "application writing just as fast)")
    if lim == "application":
        return (f"limited by the application {head}: nothing outstanding {med['idle_share']:.0%} of those "
                f"intervals; it averaged {_mbit(flow['rate_bps'])} on a path that carried about {_mbit(cap)}")
    if lim == "congestion":
        text = (f"congestion-limited {head}: {int(flow['retransmissions'])} retransmissions, "
                f"{_mbit(med['rate_bps'])} below the bottleneck's {_mbit(cap)}; Mathis/PFTK apply")
        if sig is not None and sig["congestion"] != "undecided":
            text += f"; {sig['congestion']} congestion ({sig['reason']})"
        return text
    if lim == "bandwidth":
        return (f"limited by the bottleneck {head}: {_mbit(med['rate_bps'])} of about {_mbit(cap)} (packet "
                f"dispersion), RTT {rtt_min * 1e3:.3g} -> {rtt * 1e3:.3g} ms with the queue")
    if lim == "opportunity":
        return (f"opportunity-limited: the transfer ended in slow start ({rtt_min * 1e3:.3g} ms RTT, no loss); too "
                "short to reach the path's rate")
    return f"undecided {head}: {why if isinstance(why, str) else 'no interval'}"


# --------------------------------------------------------------------------- one call for analyze
@dataclass(frozen=True, kw_only=True)
class LimitDiagnosis:
    """Everything :func:`diagnose` finds: the intervals, Sundaresan's signature and the per-flow summary."""

    #: :func:`limit_intervals`
    intervals: pd.DataFrame
    #: :func:`congestion_signature`
    signature: pd.DataFrame
    #: :func:`limit_summary` (shares, limit, sentence, model, capture point, congestion)
    summary: pd.DataFrame

    def to_dict(self) -> dict[str, pd.DataFrame]:
        """The three tables by name.

        Returns
        -------
        dict of str to pandas.DataFrame
            ``intervals``, ``signature``, ``summary``.
        """
        return {"intervals": self.intervals, "signature": self.signature, "summary": self.summary}


@_PARAMETERS.fill
def diagnose(packets: pd.DataFrame, annotated: pd.DataFrame | None = None, *,
             flow_ids: list[int] | np.ndarray | None = None, interval_s: float | None = None) -> LimitDiagnosis:
    """Why each flow was slow: :func:`limit_intervals`, :func:`congestion_signature` and :func:`limit_summary` at once.

    Parameters
    ----------
    {packets, annotated}
    flow_ids : list of int or numpy.ndarray, optional
        The flows (directions); default every flow that carries payload.
    interval_s : float, optional
        Interval length [s]; default per flow (see :func:`limit_intervals`).

    Returns
    -------
    LimitDiagnosis
        The intervals, the signature and the summary (one row per flow: shares of time per class, the
        main limit, one sentence with the numbers, the model that applies).

    Examples
    --------
    >>> from tcpmodels.traces import read_pcap
    >>> d = diagnose(read_pcap("data/captures/fit_single-reno-50ms-r0.5-r0-pa.pcap.gz"))  # doctest: +SKIP
    >>> d.summary.loc[0, "limit"]  # doctest: +SKIP
    'congestion'
    """
    an = annotate(packets) if annotated is None else annotated
    intervals = limit_intervals(packets, an, flow_ids=flow_ids, interval_s=interval_s)
    signature = congestion_signature(packets, an, flow_ids=flow_ids)
    return LimitDiagnosis(intervals=intervals, signature=signature, summary=limit_summary(intervals, signature))
