r"""BBR v1: its constants, and Ware et al.'s model of BBR against loss-based congestion control.

Ware, Mukerjee, Seshan and Sherry (IMC 2019) explain why BBR v1 takes a fixed
share of a bottleneck from CUBIC or Reno flows whatever their number: under
competition BBR is *window-limited* by its in-flight cap,
``2 * BtlBw_est * RTT_est`` (the cwnd gain of 2 times its estimated BDP), and its
RTT estimate is inflated by the loss-based flows' standing queue, which it
cannot drain in ProbeRTT. Their symbols and the parameter names here:

======  ===================================================  =========================
symbol  meaning                                              parameter [unit]
======  ===================================================  =========================
c       bottleneck rate                                      ``bottleneck_rate_pps`` [packets/s]
l       base RTT (no queueing)                               ``base_rtt_s`` [s]
q       bottleneck queue (buffer) size                       ``queue_packets`` [packets]
X       the queue in BDPs, ``q / (c l)``                     ``queue_bdp`` [-]
N       number of BBR flows                                  ``n_bbr_flows`` [-]
p       loss-based flows' share of the link                  ``loss_based_share`` [-]
d       competition time after convergence                   ``duration_s`` [s]
======  ===================================================  =========================

Equations (numbers as in the paper, as restated in issue 53 and in the
authors' blog; see References):

* (5) simple model, one BBR flow, ``q >> c l``: in-flight cap ``2 q p (1 - p)``,
  which meets BBR's in-flight ``(1 - p) q`` at ``p = 1/2``
  (:func:`ware_simple_inflight_cap_packets`);
* (6) N BBR flows alone: ``RTT_est = max(l, (4N - c l)/c + l)``
  (:func:`ware_rtt_estimate_alone_s`);
* (7) against loss-based flows: ``RTT_est = (p q + 4N)/c + l``
  (:func:`ware_rtt_estimate_s`), so the aggregate cap is
  (8) ``2 (1 - p) c RTT_est`` (:func:`ware_inflight_cap_packets`);
* (9) ``p = max(0, 1/2 - 1/(2X) - 4N/q)`` (:func:`ware_loss_based_share`);
* (11) ProbeRTT time ``(q/c + 0.2 + l) d / 10`` (:func:`ware_probe_rtt_time_s`);
* (10) BBR's aggregate share ``(1 - p)(d - ProbeRTT time)/d``
  (:func:`ware_bbr_share`; ``d`` cancels).

And BBR v1 alone (Hock, Bless, Zitterbart, ICNP 2017): N BBR flows on one
bottleneck each over-estimate their share, so together they push in flight up
to their caps, ``2 c RTT_est`` in aggregate: a standing queue of one BDP while
``4N <= c l``, more when ProbeRTT's 4 packets per flow do not fit in the BDP
(:func:`bbr_standing_queue_packets`).

Mechanisms of the kernel's ``tcp_bbr.c`` these closed forms leave out: the
quantization budget (``cwnd += 3 * tso_segs_goal``, rounded up to even, ``+2``
in the 1.25 gain phase), the ACK-aggregation allowance (``extra_acked``, up to
100 ms of bandwidth added to cwnd), the long-term (policer) bandwidth estimate,
packet conservation in the first round of recovery, and the randomised start of
the gain cycle. The first two raise the real cap above ``2 BDP_est``; what they
cost the model is measured in the BBR coexistence campaign
(``tcpmodels.experiments.bbr``), not assumed here.

References
----------
.. [1] R. Ware, M. K. Mukerjee, S. Seshan, J. Sherry, "Modeling BBR's Interactions
   with Loss-Based Congestion Control", Proc. ACM IMC 2019, pp. 137-143,
   doi:10.1145/3355369.3355604, Sec. 4-5, eqs. (5)-(11).
.. [2] R. Ware, "Modeling BBRv1's Interactions with Loss-Based Congestion Control",
   CMU CSD blog, 2024-08-26 (simple model ``2q(p - p^2)``, p = 1/2; median model
   error 5 % against CUBIC, 8 % against Reno).
.. [3] M. Hock, R. Bless, M. Zitterbart, "Experimental Evaluation of BBR Congestion
   Control", Proc. IEEE ICNP 2017, Sec. IV.
.. [4] Linux ``net/ipv4/tcp_bbr.c`` (the constants below: ``bbr_pacing_gain``,
   ``bbr_cwnd_gain``, ``bbr_high_gain``, ``bbr_cwnd_min_target``,
   ``bbr_probe_rtt_mode_ms``, ``bbr_min_rtt_win_sec``, ``bbr_bw_rtts``).
"""

from __future__ import annotations

import math

import numpy as np

from tcpmodels._arrays import broadcast, check_range, wrap
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric
from tcpmodels.models.constants import BBR_CWND_GAIN

__all__ = [
    "BBR_PACING_GAIN_CYCLE",
    "BBR_CWND_GAIN",
    "BBR_HIGH_GAIN",
    "BBR_DRAIN_GAIN",
    "BBR_PROBE_RTT_CWND_PACKETS",
    "BBR_PROBE_RTT_DURATION_S",
    "BBR_MIN_RTT_WINDOW_S",
    "BBR_BW_FILTER_ROUNDS",
    "rate_pps",
    "queue_packets_for_bdp",
    "ware_simple_inflight_cap_packets",
    "ware_rtt_estimate_alone_s",
    "ware_rtt_estimate_s",
    "ware_loss_based_share",
    "ware_inflight_cap_packets",
    "ware_probe_rtt_time_s",
    "ware_bbr_share",
    "bbr_standing_queue_packets",
]

#: PROBE_BW pacing gains, one per round trip: probe (1.25), drain (0.75), six cruising (1). [-]
BBR_PACING_GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
# BBR_CWND_GAIN (the in-flight cap in estimated BDPs, [-]): tcpmodels.models.constants
#: STARTUP pacing (and cwnd) gain, 2 / ln 2: the rate doubles every round trip. [-]
BBR_HIGH_GAIN = 2.0 / math.log(2.0)
#: DRAIN pacing gain, 1 / high gain: drains STARTUP's queue in about one round. [-]
BBR_DRAIN_GAIN = 1.0 / BBR_HIGH_GAIN
#: cwnd in PROBE_RTT (``bbr_cwnd_min_target``). [packets]
BBR_PROBE_RTT_CWND_PACKETS = 4
#: Time held at the ProbeRTT cwnd, plus one round trip (``bbr_probe_rtt_mode_ms``). [s]
BBR_PROBE_RTT_DURATION_S = 0.2
#: Window of the min-RTT filter: ProbeRTT when no lower RTT was seen for this long. [s]
BBR_MIN_RTT_WINDOW_S = 10.0
#: Window of the max-bandwidth filter, in round trips (``CYCLE_LEN + 2``). [rounds]
BBR_BW_FILTER_ROUNDS = 10

#: The path and flow parameters of Ware et al.'s model, documented once (symbols as in the module's table).
_PARAMETERS = SharedEntries("""
    bottleneck_rate_pps : numeric
        c, > 0. [packets/s]
    base_rtt_s : numeric
        l, in (0, 3600]. [s]
    queue_packets : numeric
        q, >= 0. [packets]
    n_bbr_flows : numeric
        N, a whole number >= 1. [-]
""")


def _check_path(args: dict) -> None:
    if "bottleneck_rate_pps" in args:
        check_range("bottleneck_rate_pps", args["bottleneck_rate_pps"], unit="packets/s", low=0, low_open=True,
                    high=np.inf, high_open=True)
    if "base_rtt_s" in args:
        check_range("base_rtt_s", args["base_rtt_s"], unit="s", low=0, low_open=True, high=3600)
    if "queue_packets" in args:
        check_range("queue_packets", args["queue_packets"], unit="packets", low=0, high=np.inf, high_open=True)
    if "n_bbr_flows" in args:
        n = args["n_bbr_flows"]
        check_range("n_bbr_flows", n, unit="-", low=1, high=np.inf, high_open=True)
        finite = n[~np.isnan(n)]
        fractional = finite[finite != np.round(finite)]
        if fractional.size:
            raise ValueError(f"n_bbr_flows [-] must be a whole number of flows >= 1; got {fractional[0]:g}")


def rate_pps(rate_bps: Numeric, packet_bytes: Numeric = 1500.0) -> Numeric:
    """A link rate in packets per second, the unit of Ware et al.'s c.

    Parameters
    ----------
    rate_bps : numeric
        Link rate, > 0. [bit/s]
    packet_bytes : numeric
        Size of a full packet on the wire (IP packet, MTU-sized), > 0. [bytes]

    Returns
    -------
    numeric
        ``rate_bps / (8 packet_bytes)``. [packets/s]

    Examples
    --------
    >>> round(rate_pps(10e6), 2)
    833.33
    """
    args, kind = broadcast(rate_bps=rate_bps, packet_bytes=packet_bytes)
    check_range("rate_bps", args["rate_bps"], unit="bit/s", low=0, low_open=True, high=np.inf, high_open=True)
    check_range("packet_bytes", args["packet_bytes"], unit="bytes", low=0, low_open=True, high=65535)
    return wrap(args["rate_bps"] / (8.0 * args["packet_bytes"]), kind)


def queue_packets_for_bdp(queue_bdp: Numeric, bottleneck_rate_pps: Numeric, base_rtt_s: Numeric) -> Numeric:
    """The bottleneck queue ``q = X c l`` for a queue of ``X`` BDPs.

    Parameters
    ----------
    queue_bdp : numeric
        X, the queue in bandwidth-delay products, >= 0. [-]
    bottleneck_rate_pps : numeric
        c, bottleneck rate, > 0. [packets/s]
    base_rtt_s : numeric
        l, base RTT, in (0, 3600]. [s]

    Returns
    -------
    numeric
        q. [packets]

    Examples
    --------
    >>> round(queue_packets_for_bdp(64, 10e6 / 12000, 0.040), 1)
    2133.3
    """
    args, kind = broadcast(queue_bdp=queue_bdp, bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s)
    check_range("queue_bdp", args["queue_bdp"], unit="-", low=0, high=np.inf, high_open=True)
    _check_path(args)
    return wrap(args["queue_bdp"] * args["bottleneck_rate_pps"] * args["base_rtt_s"], kind)


def ware_simple_inflight_cap_packets(queue_packets: Numeric, loss_based_share: Numeric) -> Numeric:
    r"""In-flight cap of one BBR flow in a bloated buffer (Ware et al.'s simple model, eq. 5).

    With ``q >> c l``, BBR's bandwidth estimate is ``(1 - p) c`` and its RTT estimate the
    loss-based flows' queue ``p q / c``, so the cap ``2 BtlBw RTT`` is ``2 q p (1 - p)``.
    BBR's in-flight ``(1 - p) q`` meets it at ``p = 1/2``: one BBR flow takes half the link
    from any number of loss-based flows.

    Parameters
    ----------
    queue_packets : numeric
        q, bottleneck queue, >= 0. [packets]
    loss_based_share : numeric
        p, the loss-based flows' share of the queue (and link), in [0, 1]. [-]

    Returns
    -------
    numeric
        The in-flight cap. [packets]

    Notes
    -----
    .. math:: \text{cap} = 2 \cdot (1 - p) c \cdot \frac{p q}{c} = 2 q (p - p^2)

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.1, eq. (5); the authors' blog (2024), Fig. 3.

    Examples
    --------
    >>> ware_simple_inflight_cap_packets(1000, 0.5)
    500.0
    """
    args, kind = broadcast(queue_packets=queue_packets, loss_based_share=loss_based_share)
    _check_path(args)
    check_range("loss_based_share", args["loss_based_share"], unit="-", low=0, high=1)
    p = args["loss_based_share"]
    return wrap(2.0 * args["queue_packets"] * p * (1.0 - p), kind)


@_PARAMETERS.fill
def ware_rtt_estimate_alone_s(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, n_bbr_flows: Numeric) -> Numeric:
    r"""RTT estimate of N BBR flows sharing a bottleneck with nothing else (Ware et al. eq. 6).

    In ProbeRTT each flow keeps 4 packets in flight; if the 4N packets do not fit in
    the BDP ``c l``, the queue does not drain and the min-RTT includes the rest.

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s, n_bbr_flows}

    Returns
    -------
    numeric
        RTT_est. [s]

    Notes
    -----
    .. math:: RTT_{est} = \max\left(l, \frac{4N - c l}{c} + l\right)

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.2, eq. (6).

    Examples
    --------
    >>> ware_rtt_estimate_alone_s(1000.0, 0.010, 5)   # 20 packets do not fit in a BDP of 10
    0.02
    """
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s, n_bbr_flows=n_bbr_flows)
    _check_path(args)
    c, l_s, n = args["bottleneck_rate_pps"], args["base_rtt_s"], args["n_bbr_flows"]
    return wrap(np.maximum(l_s, (BBR_PROBE_RTT_CWND_PACKETS * n - c * l_s) / c + l_s), kind)


@_PARAMETERS.fill
def ware_loss_based_share(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, queue_packets: Numeric,
                          n_bbr_flows: Numeric) -> Numeric:
    r"""Share of the link the loss-based flows keep against N BBR flows (Ware et al. eq. 9).

    Setting BBR's aggregate in-flight cap (eq. 8) equal to the data it has in flight,
    ``(1 - p)(q + c l)``, and solving for p. A negative solution means BBR's cap exceeds
    the BDP plus the queue: BBR takes the whole link, p = 0. It does not depend on the
    number of loss-based flows, nor on whether they run CUBIC or Reno.

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s}
    queue_packets : numeric
        q, > 0 (with q = 0 the share is 0). [packets]
    {n_bbr_flows}

    Returns
    -------
    numeric
        p, in [0, 1/2). [-]

    Notes
    -----
    .. math:: p = \max\left(0, \frac{1}{2} - \frac{1}{2X} - \frac{4N}{q}\right),\qquad X = \frac{q}{c l}

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.2, eqs. (7)-(9).

    Examples
    --------
    >>> round(ware_loss_based_share(10e6 / 12000, 0.040, 64 * 10e6 / 12000 * 0.040, 1), 4)
    0.4903
    """
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s,
                           queue_packets=queue_packets, n_bbr_flows=n_bbr_flows)
    _check_path(args)
    c, l_s, q, n = (args[k] for k in ("bottleneck_rate_pps", "base_rtt_s", "queue_packets", "n_bbr_flows"))
    with np.errstate(divide="ignore", invalid="ignore"):
        x = q / (c * l_s)
        p = 0.5 - 1.0 / (2.0 * x) - BBR_PROBE_RTT_CWND_PACKETS * n / q
    p = np.where(q == 0, 0.0, np.maximum(0.0, p))
    p = np.where(np.isnan(q) | np.isnan(c) | np.isnan(l_s) | np.isnan(n), np.nan, p)
    return wrap(p, kind)


@_PARAMETERS.fill
def ware_rtt_estimate_s(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, queue_packets: Numeric,
                        n_bbr_flows: Numeric) -> Numeric:
    r"""RTT estimate of N BBR flows against loss-based flows (Ware et al. eq. 7), p from eq. (9).

    In ProbeRTT the BBR flows drain their own packets but the loss-based flows' ``p q``
    stay in the queue, plus the 4N packets BBR keeps in flight.

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows}

    Returns
    -------
    numeric
        RTT_est. [s]

    Notes
    -----
    .. math:: RTT_{est} = \frac{p q + 4N}{c} + l

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.2, eq. (7).

    Examples
    --------
    >>> round(ware_rtt_estimate_s(1000.0, 0.010, 1000.0, 1), 4)   # p = 0.491
    0.505
    """
    p = ware_loss_based_share(bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows)
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s,
                           queue_packets=queue_packets, n_bbr_flows=n_bbr_flows, p=p)
    c, l_s, q, n = (args[k] for k in ("bottleneck_rate_pps", "base_rtt_s", "queue_packets", "n_bbr_flows"))
    return wrap((args["p"] * q + BBR_PROBE_RTT_CWND_PACKETS * n) / c + l_s, kind)


@_PARAMETERS.fill
def ware_inflight_cap_packets(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, queue_packets: Numeric,
                              n_bbr_flows: Numeric) -> Numeric:
    r"""Aggregate in-flight cap of N BBR flows against loss-based flows (Ware et al. eq. 8).

    ``2 BtlBw_est RTT_est`` with ``BtlBw_est = (1 - p) c`` and RTT_est from eq. (7), p from
    eq. (9). Where p > 0 it equals the data BBR holds, ``(1 - p)(q + c l)``; where p = 0 it
    is at least the BDP plus the queue (BBR fills the link).

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows}

    Returns
    -------
    numeric
        The aggregate cap. [packets]

    Notes
    -----
    .. math:: \text{cap} = 2 (1 - p) c \left(\frac{p q + 4N}{c} + l\right)

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.2, eq. (8).

    Examples
    --------
    >>> round(ware_inflight_cap_packets(1000.0, 0.010, 1000.0, 1), 1)   # (1 - 0.491)(1000 + 10)
    514.1
    """
    p = ware_loss_based_share(bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows)
    rtt = ware_rtt_estimate_s(bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows)
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, p=p, rtt=rtt)
    return wrap(BBR_CWND_GAIN * (1.0 - args["p"]) * args["bottleneck_rate_pps"] * args["rtt"], kind)


@_PARAMETERS.fill
def ware_probe_rtt_time_s(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, queue_packets: Numeric,
                          duration_s: Numeric) -> Numeric:
    r"""Time BBR spends in ProbeRTT over ``d`` seconds of competition (Ware et al. eq. 11).

    Each ProbeRTT waits for a full queue to drain (``q/c``), holds 4 packets for 200 ms and
    one more round trip (``l``), about once every 10 s: linear in the queue.

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s, queue_packets}
    duration_s : numeric
        d, competition time after convergence, > 0. [s]

    Returns
    -------
    numeric
        Time in ProbeRTT. [s]

    Notes
    -----
    .. math:: T_{ProbeRTT} = \left(\frac{q}{c} + 0.2 + l\right)\frac{d}{10}

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.3, eq. (11).

    Examples
    --------
    >>> round(ware_probe_rtt_time_s(1000.0, 0.05, 1000.0, 100.0), 3)
    12.5
    """
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s,
                           queue_packets=queue_packets, duration_s=duration_s)
    _check_path(args)
    check_range("duration_s", args["duration_s"], unit="s", low=0, low_open=True, high=np.inf, high_open=True)
    per_probe = args["queue_packets"] / args["bottleneck_rate_pps"] + BBR_PROBE_RTT_DURATION_S + args["base_rtt_s"]
    return wrap(per_probe * args["duration_s"] / BBR_MIN_RTT_WINDOW_S, kind)


@_PARAMETERS.fill
def ware_bbr_share(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, queue_packets: Numeric,
                   n_bbr_flows: Numeric) -> Numeric:
    r"""Aggregate share of the link N BBR flows take from loss-based flows (Ware et al. eq. 10).

    ``(1 - p)(d - T_ProbeRTT)/d`` with p from eq. (9) and T_ProbeRTT from eq. (11); the
    competition time d cancels. It does not depend on the number of loss-based flows.

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows}

    Returns
    -------
    numeric
        BBR's aggregate share of the bottleneck, in (0, 1]. [-]

    Raises
    ------
    ValueError
        If one ProbeRTT would last 10 s or more (``q/c + 0.2 + l >= 10``): the model's
        assumption of one ProbeRTT per 10 s window no longer holds.

    Notes
    -----
    .. math:: \text{share}_{BBR} = (1 - p)\left(1 - \frac{q/c + 0.2 + l}{10}\right)

    References
    ----------
    .. [1] Ware et al., IMC 2019, Sec. 4.3, eq. (10).

    Examples
    --------
    >>> c = rate_pps(10e6)                           # 10 Mbit/s, 40 ms, 64 BDP queue, 1 BBR flow
    >>> round(ware_bbr_share(c, 0.040, queue_packets_for_bdp(64, c, 0.040), 1), 3)
    0.367
    """
    p = ware_loss_based_share(bottleneck_rate_pps, base_rtt_s, queue_packets, n_bbr_flows)
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s,
                           queue_packets=queue_packets, p=p)
    per_probe = args["queue_packets"] / args["bottleneck_rate_pps"] + BBR_PROBE_RTT_DURATION_S + args["base_rtt_s"]
    too_long = per_probe >= BBR_MIN_RTT_WINDOW_S
    if too_long.any():
        raise ValueError(f"queue_packets / bottleneck_rate_pps + base_rtt_s + 0.2 [s] must be < "
                         f"{BBR_MIN_RTT_WINDOW_S:g} (one ProbeRTT per 10 s window); got {per_probe[too_long][0]:g}")
    return wrap((1.0 - args["p"]) * (1.0 - per_probe / BBR_MIN_RTT_WINDOW_S), kind)


@_PARAMETERS.fill
def bbr_standing_queue_packets(bottleneck_rate_pps: Numeric, base_rtt_s: Numeric, n_bbr_flows: Numeric,
                               buffer_packets: Numeric = np.inf) -> Numeric:
    r"""Standing queue of N BBR v1 flows alone on a bottleneck (Hock et al., with Ware et al. eq. 6).

    Several BBR flows each estimate slightly more than their fair share (the max filter
    over the gain cycle), so together they send faster than c until each is held by its
    in-flight cap; in aggregate they then keep ``2 c RTT_est`` in flight, of which ``c l``
    is on the wire and the rest queued: one BDP of queue when ProbeRTT can measure l
    (Hock et al.), ``8N - c l`` when the 4N packets of ProbeRTT exceed the BDP (eq. 6).
    A buffer smaller than that caps the queue (and BBR then loses packets).

    Parameters
    ----------
    {bottleneck_rate_pps, base_rtt_s}
    n_bbr_flows : numeric
        N, a whole number >= 1 (with N = 1 the flow is not held by its cap and keeps
        almost no queue; the formula is for N >= 2). [-]
    buffer_packets : numeric
        Bottleneck buffer, >= 0; ``inf`` for no limit. [packets]

    Returns
    -------
    numeric
        The standing queue. [packets]

    Notes
    -----
    .. math:: Q = \min\left(B,\; 2 c\, RTT_{est} - c l\right),\qquad RTT_{est} = \max\left(l, 4N/c\right)

    References
    ----------
    .. [1] M. Hock, R. Bless, M. Zitterbart, ICNP 2017, Sec. IV (about one BDP of queue).
    .. [2] Ware et al., IMC 2019, eq. (6).

    Examples
    --------
    >>> bbr_standing_queue_packets(1000.0, 0.040, 2)     # one BDP
    40.0
    >>> bbr_standing_queue_packets(1000.0, 0.010, 5)     # 4N = 20 > BDP = 10: 8N - cl
    30.0
    """
    rtt = ware_rtt_estimate_alone_s(bottleneck_rate_pps, base_rtt_s, n_bbr_flows)
    args, kind = broadcast(bottleneck_rate_pps=bottleneck_rate_pps, base_rtt_s=base_rtt_s, rtt=rtt,
                           buffer_packets=buffer_packets)
    check_range("buffer_packets", args["buffer_packets"], unit="packets", low=0)
    c, l_s = args["bottleneck_rate_pps"], args["base_rtt_s"]
    return wrap(np.minimum(args["buffer_packets"], BBR_CWND_GAIN * c * args["rtt"] - c * l_s), kind)
