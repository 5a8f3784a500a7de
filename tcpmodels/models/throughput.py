r"""Steady-state TCP throughput: Mathis, Padhye (PFTK) full and approximate, window limit.

All functions take floats, numpy arrays or pandas Series (broadcast against
each other, see :mod:`tcpmodels._arrays`), return bit/s, raise ``ValueError``
naming the parameter, its unit, the value and the valid range for input out of
the model's domain, and let NaN through.

Models
------
- :func:`mathis_throughput_bps`: the square-root law of Mathis, Semke, Mahdavi
  and Ott (1997), ``B = MSS / RTT * C / sqrt(p)``.
- :func:`mathis_loss_rate`: the same law solved for the loss rate that
  sustains a given rate.
- :func:`padhye_throughput_bps`: the full model of Padhye, Firoiu, Towsley and
  Kurose (IEEE/ACM ToN 2000, eq. (31)) with triple-duplicate losses,
  retransmission timeouts with back-off and the receiver window limit.
- :func:`padhye_approx_throughput_bps`: its closed-form approximation
  (eq. (32) of the same paper; also RFC 5348 Sec. 3.1 without the window term).
- :func:`window_limited_throughput_bps`: ``window / RTT``, the ceiling a window
  imposes whatever the loss rate.
"""

from __future__ import annotations

import numpy as np

from tcpmodels._arrays import broadcast, check_range, finite_result, wrap
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric

__all__ = [
    "mathis_throughput_bps",
    "mathis_loss_rate",
    "padhye_throughput_bps",
    "padhye_approx_throughput_bps",
    "window_limited_throughput_bps",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt_s : numeric
        Round-trip time. [s]
""")

_BITS_PER_BYTE = 8.0


def _mathis_constant(b: np.ndarray, c: float | None) -> np.ndarray:
    """C = sqrt(3 / (2 b)) unless the caller fixes C."""
    if c is None:
        return np.sqrt(3.0 / (2.0 * b))
    c_arr = np.asarray(c, dtype=float)
    check_range("c", c_arr, unit="-", low=0, low_open=True)
    return c_arr


@_PARAMETERS.fill
@finite_result
def mathis_throughput_bps(mss_bytes: Numeric, rtt_s: Numeric, loss_rate: Numeric, b: Numeric = 1, c: float | None = None) -> Numeric:
    r"""Mathis et al. square-root law for TCP Reno in congestion avoidance.

    Parameters
    ----------
    mss_bytes : numeric
        Maximum segment size, payload bytes per segment. [bytes]
    {rtt_s}
    loss_rate : numeric
        Probability that a segment is lost, ``p`` in (0, 1]. [-]
    b : numeric, default 1
        Segments acknowledged per ACK (2 with delayed ACKs), must be >= 1. [segments]
    c : float, optional
        The constant ``C``. By default ``sqrt(3 / (2 b))``: 1.2247 for one ACK
        per segment, 0.866 for delayed ACKs. Pass e.g. ``c=1.2`` to match the
        tables of RFC 3649 / RFC 8312, or a constant fitted to measurements. A
        float (it is not broadcast like the other parameters). [-]

    Returns
    -------
    numeric
        Average throughput (payload). [bit/s]

    Notes
    -----
    With periodic loss (one loss every ``1/p`` segments) the window saws between
    ``W/2`` and ``W``, which gives

    .. math:: B = \frac{MSS}{RTT} \frac{C}{\sqrt{p}}, \qquad C = \sqrt{\frac{3}{2b}}

    The law ignores timeouts and the receiver window: it overestimates at high
    loss (see :func:`padhye_throughput_bps`) and has no ceiling (combine with
    :func:`window_limited_throughput_bps`).

    References
    ----------
    .. [1] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of
       the TCP congestion avoidance algorithm", ACM SIGCOMM CCR 27(3), 1997.
    .. [2] RFC 3649, "HighSpeed TCP for Large Congestion Windows", Sec. 5 (W = 1.2 / sqrt(p)).

    Examples
    --------
    >>> round(mathis_throughput_bps(1460, 0.1, 0.01) / 1e6, 4)
    1.4305
    """
    args, kind = broadcast(mss_bytes=mss_bytes, rtt_s=rtt_s, loss_rate=loss_rate, b=b)
    check_range("mss_bytes", args["mss_bytes"], unit="bytes", low=0, low_open=True)
    check_range("rtt_s", args["rtt_s"], unit="s", low=0, low_open=True)
    check_range("loss_rate", args["loss_rate"], unit="-", low=0, high=1, low_open=True)
    check_range("b", args["b"], unit="segments", low=1)
    const = _mathis_constant(args["b"], c)
    rate = args["mss_bytes"] * _BITS_PER_BYTE / args["rtt_s"] * const / np.sqrt(args["loss_rate"])
    return wrap(rate, kind)


@_PARAMETERS.fill
@finite_result
def mathis_loss_rate(rate_bps: Numeric, mss_bytes: Numeric, rtt_s: Numeric, b: Numeric = 1, c: float | None = None) -> Numeric:
    r"""Loss rate at which the Mathis law gives ``rate_bps``.

    Parameters
    ----------
    rate_bps : numeric
        Target average throughput (payload). [bit/s]
    mss_bytes : numeric
        Maximum segment size. [bytes]
    {rtt_s}
    b : numeric, default 1
        Segments acknowledged per ACK, >= 1. [segments]
    c : float, optional
        The constant ``C`` (default ``sqrt(3 / (2 b))``). [-]

    Returns
    -------
    numeric
        ``p = (C MSS / (RTT B))^2``. Values above 1 mean the rate is too low for
        the law to apply (fewer than one segment per RTT on average); they are
        returned as computed, not clipped. [-]

    References
    ----------
    .. [1] M. Mathis et al., ACM SIGCOMM CCR 27(3), 1997.
    .. [2] RFC 8312, Sec. 5.2, Table 3 (loss rate Standard TCP needs for a given throughput).

    Examples
    --------
    >>> f"{mathis_loss_rate(10e9, 1500, 0.1, c=1.2):.2e}"
    '2.07e-10'
    """
    args, kind = broadcast(rate_bps=rate_bps, mss_bytes=mss_bytes, rtt_s=rtt_s, b=b)
    check_range("rate_bps", args["rate_bps"], unit="bit/s", low=0, low_open=True)
    check_range("mss_bytes", args["mss_bytes"], unit="bytes", low=0, low_open=True)
    check_range("rtt_s", args["rtt_s"], unit="s", low=0, low_open=True)
    check_range("b", args["b"], unit="segments", low=1)
    const = _mathis_constant(args["b"], c)
    window_segments = args["rate_bps"] * args["rtt_s"] / (args["mss_bytes"] * _BITS_PER_BYTE)
    return wrap((const / window_segments) ** 2, kind)


def _padhye_inputs(mss_bytes: Numeric, rtt_s: Numeric, loss_rate: Numeric, t0_s: Numeric, w_max_segments: Numeric,
                   b: Numeric, *, p_high_open: bool) -> tuple:
    """The PFTK inputs broadcast and checked (``loss_rate`` = 1 allowed unless ``p_high_open``):
    ``(p, rtt, t0, w_max, b, mss, kind)``, the arrays in the papers' symbols and the kind to return."""
    args, kind = broadcast(
        mss_bytes=mss_bytes, rtt_s=rtt_s, loss_rate=loss_rate, t0_s=t0_s,
        w_max_segments=w_max_segments, b=b,
    )
    check_range("mss_bytes", args["mss_bytes"], unit="bytes", low=0, low_open=True)
    check_range("rtt_s", args["rtt_s"], unit="s", low=0, low_open=True)
    check_range("loss_rate", args["loss_rate"], unit="-", low=0, high=1, low_open=True, high_open=p_high_open)
    check_range("t0_s", args["t0_s"], unit="s", low=0)
    check_range("w_max_segments", args["w_max_segments"], unit="segments", low=1)
    check_range("b", args["b"], unit="segments", low=1)
    return (*(args[k] for k in ("loss_rate", "rtt_s", "t0_s", "w_max_segments", "b", "mss_bytes")), kind)


def _pftk_q_hat(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Q-hat(w), PFTK eq. (24): probability that a loss in a window of w is a timeout."""
    log_q = np.log1p(-p)  # log(1 - p), accurate for small p
    one_minus_q3 = -np.expm1(3.0 * log_q)  # 1 - (1-p)^3
    one_minus_qw = -np.expm1(w * log_q)  # 1 - (1-p)^w
    q3 = np.exp(3.0 * log_q)
    tail = -np.expm1((w - 3.0) * log_q)  # 1 - (1-p)^(w-3)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = one_minus_q3 * (1.0 + q3 * tail) / one_minus_qw
    return np.minimum(1.0, ratio)  # NaN stays NaN (np.minimum propagates it)


def _pftk_f(p: np.ndarray) -> np.ndarray:
    """f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6, PFTK eq. (28) (timeout back-off)."""
    return np.polynomial.polynomial.polyval(p, [1.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0])


@finite_result
def padhye_throughput_bps(mss_bytes: Numeric, rtt_s: Numeric, loss_rate: Numeric, t0_s: Numeric, w_max_segments: Numeric, b: Numeric = 2) -> Numeric:
    r"""Padhye-Firoiu-Towsley-Kurose (PFTK) full model of TCP Reno throughput.

    Parameters
    ----------
    mss_bytes : numeric
        Segment size used to turn segments/s into bit/s. [bytes]
    rtt_s : numeric
        Round-trip time, ``RTT``. [s]
    loss_rate : numeric
        ``p``, probability that a segment is the first loss of a round, in (0, 1). [-]
    t0_s : numeric
        ``T_0``, duration of the first retransmission timeout (before back-off), >= 0. [s]
    w_max_segments : numeric
        ``W_max``, largest window the receiver allows, >= 1; ``numpy.inf`` for no limit. [segments]
    b : numeric, default 2
        Segments acknowledged per ACK (2 with delayed ACKs), >= 1. [segments]

    Returns
    -------
    numeric
        Average send rate ``B(p) * MSS``. [bit/s]

    Notes
    -----
    Eq. (31) of [1]_, with
    :math:`E[W_u] = \frac{2+b}{3b} + \sqrt{\frac{8(1-p)}{3bp} + \left(\frac{2+b}{3b}\right)^2}` (eq. 13),
    :math:`\hat Q(w) = \min\left(1, \frac{(1-(1-p)^3)(1+(1-p)^3(1-(1-p)^{w-3}))}{1-(1-p)^w}\right)` (eq. 24),
    :math:`f(p) = 1+p+2p^2+4p^3+8p^4+16p^5+32p^6` (eq. 28):

    .. math::

        B(p) = \begin{cases}
        \dfrac{\frac{1-p}{p} + E[W_u] + \frac{\hat Q(E[W_u])}{1-p}}
              {RTT\left(\frac{b}{2}E[W_u] + 1\right) + \hat Q(E[W_u])\, T_0 \frac{f(p)}{1-p}}
        & E[W_u] < W_{max} \\[2ex]
        \dfrac{\frac{1-p}{p} + W_{max} + \frac{\hat Q(W_{max})}{1-p}}
              {RTT\left(\frac{b}{8}W_{max} + \frac{1-p}{p W_{max}} + 2\right) + \hat Q(W_{max})\, T_0 \frac{f(p)}{1-p}}
        & \text{otherwise}
        \end{cases}

    in segments per second. ``p = 1`` is outside the domain (every term in
    ``1/(1-p)`` diverges); use :func:`padhye_approx_throughput_bps` there.

    The two branches join continuously at ``E[W_u] = W_max`` only for
    ``b = 2`` (the paper's delayed-ACK case). For other ``b`` eq. (31) itself
    is discontinuous there, and it is kept as published: with ``b = 1`` the rate
    jumps *up* by as much as 3.2 % (at ``W_max`` = 10) as ``p`` rises across the
    switch, so ``B`` is not monotone in ``p``; with ``b = 3`` it drops by up to
    2.3 %. Within each branch ``B`` falls as ``p`` rises.

    ``B <= W_max / RTT`` holds for any realistic timer (``T_0 >= RTT``; in a
    random search it held for all ``T_0 >= RTT / 2``). Eq. (31) has no explicit
    ``min`` with ``W_max / RTT``, and with ``T_0`` far below ``RTT``, a window of
    a few segments and heavy loss it can exceed that ceiling, because the
    packets it counts in timeout sequences then cost almost no time.

    References
    ----------
    .. [1] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno
       performance: a simple model and its empirical validation", IEEE/ACM
       Transactions on Networking 8(2):133-145, 2000, eqs. (13), (24), (28), (31).

    Examples
    --------
    >>> round(padhye_throughput_bps(1460, 0.1, 0.01, 0.4, float("inf")) / 1e6, 3)
    0.909
    """
    p, rtt, t0, w_max, bb, mss, kind = _padhye_inputs(mss_bytes, rtt_s, loss_rate, t0_s, w_max_segments, b,
                                                      p_high_open=True)

    k = (2.0 + bb) / (3.0 * bb)
    with np.errstate(divide="ignore", invalid="ignore"):
        ew_u = k + np.sqrt(8.0 * (1.0 - p) / (3.0 * bb * p) + k * k)
        timeout_cost = t0 * _pftk_f(p) / (1.0 - p)  # E[Z^TO] / 1, eq. (28)
        segments_per_td = (1.0 - p) / p  # packets sent before the loss, eq. (5)

        q_u = _pftk_q_hat(p, ew_u)
        unlimited = (segments_per_td + ew_u + q_u / (1.0 - p)) / (
            rtt * (bb / 2.0 * ew_u + 1.0) + q_u * timeout_cost
        )
        q_w = _pftk_q_hat(p, w_max)
        limited = (segments_per_td + w_max + q_w / (1.0 - p)) / (
            rtt * (bb / 8.0 * w_max + segments_per_td / w_max + 2.0) + q_w * timeout_cost
        )
    # With W_max = inf the limited branch is inf/inf = NaN but never selected.
    rate = np.where(ew_u < w_max, unlimited, limited)
    rate = np.where(np.isnan(ew_u) | np.isnan(w_max), np.nan, rate)
    return wrap(rate * mss * _BITS_PER_BYTE, kind)


@_PARAMETERS.fill
@finite_result
def padhye_approx_throughput_bps(mss_bytes: Numeric, rtt_s: Numeric, loss_rate: Numeric, t0_s: Numeric, w_max_segments: Numeric, b: Numeric = 2) -> Numeric:
    r"""Closed-form approximation of the PFTK model (eq. (32) of the ToN paper).

    Parameters
    ----------
    mss_bytes : numeric
        Segment size. [bytes]
    {rtt_s}
    loss_rate : numeric
        ``p`` in (0, 1]. [-]
    t0_s : numeric
        First retransmission timeout, >= 0. [s]
    w_max_segments : numeric
        Receiver window limit, >= 1; ``numpy.inf`` for none. [segments]
    b : numeric, default 2
        Segments acknowledged per ACK, >= 1. [segments]

    Returns
    -------
    numeric
        Average send rate. [bit/s]

    Notes
    -----
    .. math::

        B(p) \approx \min\left(\frac{W_{max}}{RTT},
        \frac{1}{RTT\sqrt{\frac{2bp}{3}} + T_0 \min\left(1, 3\sqrt{\frac{3bp}{8}}\right) p (1 + 32p^2)}\right)

    segments per second. Without the window term and with
    ``3 sqrt(3bp/8) <= 1`` this is the TCP throughput equation of RFC 5348
    Sec. 3.1 (TFRC), which omits the ``min(1, .)``.

    References
    ----------
    .. [1] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, IEEE/ACM ToN 8(2), 2000, eq. (32).
    .. [2] RFC 5348, "TCP Friendly Rate Control (TFRC): Protocol Specification", Sec. 3.1.

    Examples
    --------
    >>> round(padhye_approx_throughput_bps(1460, 0.1, 0.01, 0.4, float("inf")) / 1e6, 3)
    0.928
    """
    p, rtt, t0, w_max, bb, mss, kind = _padhye_inputs(mss_bytes, rtt_s, loss_rate, t0_s, w_max_segments, b,
                                                      p_high_open=False)
    denominator = rtt * np.sqrt(2.0 * bb * p / 3.0) + t0 * np.minimum(
        1.0, 3.0 * np.sqrt(3.0 * bb * p / 8.0)
    ) * p * (1.0 + 32.0 * p * p)
    rate = np.minimum(w_max / rtt, 1.0 / denominator)
    return wrap(rate * mss * _BITS_PER_BYTE, kind)


@finite_result
def window_limited_throughput_bps(window_bytes: Numeric, rtt_s: Numeric) -> Numeric:
    r"""Largest rate a fixed window allows: one window per round trip.

    Parameters
    ----------
    window_bytes : numeric
        Bytes that may be in flight (the smaller of the congestion window, the
        receiver's advertised window and the send buffer), >= 0. [bytes]
    rtt_s : numeric
        Round-trip time, > 0. [s]

    Returns
    -------
    numeric
        ``8 * window / RTT``. [bit/s]

    Notes
    -----
    .. math:: B_{max} = \frac{W}{RTT}

    References
    ----------
    .. [1] RFC 7323, "TCP Extensions for High Performance", Sec. 1.1 and 2.
    .. [2] RFC 6349, "Framework for TCP Throughput Testing", Sec. 3.3.1.

    Examples
    --------
    >>> round(window_limited_throughput_bps(65535 * 2**14, 0.296) / 1e9, 2)
    29.02
    """
    args, kind = broadcast(window_bytes=window_bytes, rtt_s=rtt_s)
    check_range("window_bytes", args["window_bytes"], unit="bytes", low=0)
    check_range("rtt_s", args["rtt_s"], unit="s", low=0, low_open=True)
    return wrap(args["window_bytes"] * _BITS_PER_BYTE / args["rtt_s"], kind)
