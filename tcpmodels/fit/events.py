r"""Loss events and retransmission timeouts from a sender's retransmissions.

Definitions used throughout :mod:`tcpmodels.fit`
------------------------------------------------
*Retransmission*: a data segment starting below the highest sequence number already
sent (:func:`tcpmodels.traces.annotate`, Wireshark's criterion).

*Loss event*: the retransmissions that answer one congestion signal. The first
retransmission not already in an event opens one at time :math:`t_0`; every later
retransmission sent before the event closes joins it. The event closes at
:math:`\max(t_0 + RTT,\ t_{rec})`, where :math:`t_{rec}` (when known) is the first
time the cumulative ACK covers the *recovery point*, the highest sequence sent before
:math:`t_0` (RFC 6582 "recover"). So all losses of one window count once, as in the
loss-event definition of TFRC (RFC 5348 Sec. 5.2: losses within one RTT of the
first loss of an event belong to it) and as the sender reduces its window once per
recovery episode; a timeout with exponential back-off, whose repeated
retransmissions all fall before the recovery point is acknowledged, is one event.

*Loss-event rate*: loss events per data segment sent, :math:`p = n_{events} / n_{segments}`
(segments including retransmissions) — PFTK's :math:`p`, "the probability that a
packet is the first loss of a round" ([2]_ Sec. 2), and the congestion-signal rate
of Mathis et al. ([1]_). It is at most the packet retransmission rate.

*Timeout*: an event with a retransmission that resends the lowest unacknowledged
byte after that byte's previous transmission has gone unanswered for at least
``rtt + min_rto_margin_s`` (195 ms) (Linux arms the RTO relative to the head segment's send
time, and its RTO is at least SRTT + 200 ms). A fast retransmission (three duplicate
ACKs / SACK / RACK) comes about one RTT plus a reordering window after the original.
Tail-loss probes resend the *highest* segment and so are not taken as timeouts. A fast
recovery that ends in a timeout is a timeout event (PFTK's TO loss indication).

References
----------
.. [1] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP
   congestion avoidance algorithm", ACM SIGCOMM CCR 27(3), 1997.
.. [2] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno performance: a
   simple model and its empirical validation", IEEE/ACM ToN 8(2), 2000.
.. [3] RFC 5348, "TCP Friendly Rate Control (TFRC)", Sec. 5.2.
.. [4] RFC 6582, "The NewReno Modification to TCP's Fast Recovery Algorithm", Sec. 3.2.
.. [5] RFC 6298, "Computing TCP's Retransmission Timer".
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcpmodels._arrays import check_range

__all__ = ["group_loss_events"]


def group_loss_events(rtx_time_s: npt.ArrayLike, rtt_s: float | npt.ArrayLike, *,
                      close_time_s: npt.ArrayLike | None = None) -> np.ndarray:
    r"""Assign each retransmission to a loss event.

    Parameters
    ----------
    rtx_time_s : array_like
        Send times of the retransmissions, non-decreasing. [s]
    rtt_s : float or array_like
        Round-trip time: one value, or one per retransmission (the RTT current when it
        was sent; the opening retransmission's value is used for its event). [s]
    close_time_s : array_like, optional
        Per retransmission, the time at which an event opened by it would end because
        the cumulative ACK covered the recovery point (``inf`` if never, NaN if
        unknown). The event then lasts ``max(t0 + RTT, close_time_s)``.

    Returns
    -------
    numpy.ndarray of int64
        Event number of each retransmission (0, 1, ...), same order as the input.

    Raises
    ------
    ValueError
        If times are not non-decreasing, or an RTT is not positive.

    Examples
    --------
    >>> group_loss_events([0.0, 0.01, 0.05, 0.30, 0.31], 0.1).tolist()
    [0, 0, 0, 1, 1]
    """
    t = np.asarray(rtx_time_s, dtype=float).ravel()
    if t.size and np.any(np.isnan(t)):
        raise ValueError("rtx_time_s [s] must not contain NaN")
    if np.any(np.diff(t) < 0):
        raise ValueError("rtx_time_s [s] must be non-decreasing (sort the retransmissions by time)")
    rtt = np.broadcast_to(np.asarray(rtt_s, dtype=float), t.shape)
    check_range("rtt_s", rtt, unit="s", low=0.0, low_open=True)
    if close_time_s is None:
        close = np.full(t.shape, np.nan)
    else:
        close = np.broadcast_to(np.asarray(close_time_s, dtype=float), t.shape)
    out = np.empty(t.size, dtype=np.int64)
    event = -1
    end = -np.inf
    for i in range(t.size):
        if t[i] >= end:
            event += 1
            r = rtt[i] if np.isfinite(rtt[i]) else 0.0
            end = t[i] + r
            if not np.isnan(close[i]):
                end = max(end, close[i])
        out[i] = event
    return out
