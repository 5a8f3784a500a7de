"""From one sample's flows to what the claims need: BBR's share, its time course, ProbeRTT episodes, the queue.

Every function takes the flows of one record (kernel) in the same form: a list of
``{"role", "start_offset_s", "samples"}`` whose samples carry ``t_s`` (since the flow's start),
``bytes_acked``, ``cwnd_segments`` and ``srtt_s``; times are put on the sample's common clock
(``start_offset_s + t_s``, seconds since the client started).
"""

from __future__ import annotations

import numpy as np

from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.bbr import BBR_PROBE_RTT_CWND_PACKETS
from tcpmodels.records.series import as_sample_list

__all__ = ["flow_arrays", "delivered_bytes", "bbr_share", "share_series", "probe_rtt_episodes_s", "standing_queue_s"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    t0_s, t1_s : float
        The window on the common clock. [s]
    flows : list of dict
        The sample's flows.
""")


def flow_arrays(flow: dict) -> dict[str, np.ndarray]:
    """A flow's samples as arrays on the common clock.

    Parameters
    ----------
    flow : dict
        ``start_offset_s`` [s] and ``samples`` (packed or a list).

    Returns
    -------
    dict
        ``t_s`` (common clock) [s], ``bytes_acked`` [bytes], ``cwnd_segments``, ``srtt_s`` [s].
    """
    s = as_sample_list(flow["samples"])
    t = np.array([x["t_s"] for x in s], dtype=float) + float(flow["start_offset_s"])
    return {"t_s": t, "bytes_acked": np.array([x["bytes_acked"] for x in s], dtype=float),
            "cwnd_segments": np.array([x["cwnd_segments"] for x in s], dtype=float),
            "srtt_s": np.array([x["srtt_s"] for x in s], dtype=float)}


def delivered_bytes(flow: dict, t0_s: float, t1_s: float) -> float:
    """Bytes a flow had acknowledged between two times of the common clock (linear between samples). [bytes]

    Parameters
    ----------
    flow : dict
        As :func:`flow_arrays`.
    t0_s, t1_s : float
        The window, t0 < t1. [s]

    Returns
    -------
    float
        ``bytes_acked(t1) - bytes_acked(t0)``; before its first sample a flow has 0, after its last
        it keeps the last value.
    """
    a = flow_arrays(flow)
    t = np.concatenate([[a["t_s"][0] - 1e-9], a["t_s"]]) if len(a["t_s"]) else np.array([0.0])
    b = np.concatenate([[0.0], a["bytes_acked"]]) if len(a["t_s"]) else np.array([0.0])
    return float(np.interp(t1_s, t, b) - np.interp(t0_s, t, b))


@_PARAMETERS.fill
def bbr_share(flows: list[dict], t0_s: float, t1_s: float) -> float:
    """BBR's share of all bytes delivered in ``[t0_s, t1_s]``. [-]

    Parameters
    ----------
    flows : list of dict
        The sample's flows (``role`` ``bbr`` or ``loss``).
    {t0_s, t1_s}

    Returns
    -------
    float
        ``sum(bbr bytes) / sum(all bytes)``; NaN if nothing was delivered.
    """
    got = {"bbr": 0.0, "loss": 0.0}
    for f in flows:
        got[f["role"]] += delivered_bytes(f, t0_s, t1_s)
    total = got["bbr"] + got["loss"]
    return got["bbr"] / total if total > 0 else float("nan")


@_PARAMETERS.fill
def share_series(flows: list[dict], end_s: float, window_s: float = 5.0) -> list[dict]:
    """BBR's share in consecutive windows and cumulated from the start: where does it settle?

    Parameters
    ----------
    {flows}
    end_s : float
        End of the series on the common clock. [s]
    window_s : float
        Window length. [s]

    Returns
    -------
    list of dict
        Per window: ``t_end_s`` [s], ``share`` (in the window) and ``share_since_start`` [-].
    """
    out = []
    t = window_s
    while t <= end_s + 1e-9:
        out.append({"t_end_s": round(t, 3), "share": bbr_share(flows, t - window_s, t),
                    "share_since_start": bbr_share(flows, 0.0, t)})
        t += window_s
    return out


@_PARAMETERS.fill
def probe_rtt_episodes_s(flow: dict, t0_s: float, t1_s: float, interval_s: float) -> list[float]:
    """Durations of the BBR flow's ProbeRTT episodes that lie wholly inside ``[t0_s, t1_s]``. [s]

    An episode is a run of consecutive samples with cwnd at most the ProbeRTT cwnd (4 packets): the
    kernel holds cwnd there from the start of ProbeRTT until it leaves it. Its duration is the time
    from its first to its last sample plus one sampling interval (resolution: one interval).

    Parameters
    ----------
    flow : dict
        A BBR flow (as :func:`flow_arrays`).
    {t0_s, t1_s}
    interval_s : float
        The sampling interval. [s]

    Returns
    -------
    list of float
        One duration per episode. [s]
    """
    a = flow_arrays(flow)
    low = a["cwnd_segments"] <= BBR_PROBE_RTT_CWND_PACKETS
    out, start = [], None
    for i, flag in enumerate(low):
        if flag and start is None:
            start = i
        if (not flag or i == len(low) - 1) and start is not None:
            last = i - 1 if not flag else i
            if a["t_s"][start] > t0_s and a["t_s"][last] < t1_s and last < len(low) - 1:
                out.append(float(a["t_s"][last] - a["t_s"][start] + interval_s))
            start = None
    return out


@_PARAMETERS.fill
def standing_queue_s(flows: list[dict], t0_s: float, t1_s: float, base_rtt_s: float) -> float:
    """Median queueing delay the flows saw in ``[t0_s, t1_s]``: median smoothed RTT minus the base RTT. [s]

    Parameters
    ----------
    {flows, t0_s, t1_s}
    base_rtt_s : float
        The path's RTT without queue (e.g. the ping before the flows). [s]

    Returns
    -------
    float
        ``median(srtt) - base_rtt_s`` over every flow's samples in the window; NaN without samples.
    """
    vals = []
    for f in flows:
        a = flow_arrays(f)
        m = (a["t_s"] >= t0_s) & (a["t_s"] <= t1_s)
        vals.append(a["srtt_s"][m])
    v = np.concatenate(vals) if vals else np.array([])
    return float(np.median(v) - base_rtt_s) if v.size else float("nan")
