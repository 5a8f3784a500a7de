r"""CUBIC and Reno congestion windows: closed forms, trajectories and a shared-bottleneck fluid model.

Two conventions for CUBIC's multiplicative decrease are in use and both appear
in this project:

* RFC 8312 / RFC 9438 write ``beta_cubic = 0.7``: the *fraction of the window kept*
  after a loss, so ``K = cbrt(W_max (1 - beta_cubic) / C)``.
* The original CUBIC paper (Ha, Rhee, Xu 2008) and paper P3 (Kozu & Yamaguchi,
  FIT2013) write ``beta = 0.2`` (2008 paper) as the *reduction*, so
  ``K = cbrt(W_max * beta / C)``.

Every function here takes the RFC parameter ``beta_cubic`` (fraction kept). Convert
the paper's reduction with :func:`beta_cubic_from_reduction` (``0.2 -> 0.8``), so
the paper's ``K = cbrt(W_max * 0.2 / 0.4)`` is
``cubic_k_s(w_max, c=0.4, beta_cubic=beta_cubic_from_reduction(0.2))``.

Contents
--------
* closed forms: :func:`cubic_k_s`, :func:`cubic_window_segments`,
  :func:`cubic_alpha_reno_friendly`, :func:`cubic_reno_friendly_window_segments`,
  :func:`reno_window_segments`, :func:`cubic_average_window_segments`,
  :func:`cubic_loss_rate_for_window`;
* the Kozu–Yamaguchi (P3) RTT-dependent K: :class:`PowerLawX`, :func:`kozu_x`,
  :func:`kozu_k_s`, with both readings of their garbled eq. (4);
* window trajectories under a deterministic loss process (teaching plots):
  :func:`reno_window_trajectory`, :func:`cubic_window_trajectory`;
* a deterministic discrete-time fluid model of one Reno and one CUBIC flow
  sharing a drop-tail bottleneck: :func:`reno_cubic_bottleneck`.

Units: windows in segments, times in seconds, rates in bit/s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tcpmodels._arrays import broadcast, check_range, wrap

__all__ = [
    "C_CUBIC",
    "BETA_CUBIC",
    "X_READINGS",
    "beta_cubic_from_reduction",
    "reduction_from_beta_cubic",
    "cubic_k_s",
    "cubic_window_segments",
    "cubic_alpha_reno_friendly",
    "cubic_reno_friendly_window_segments",
    "reno_window_segments",
    "cubic_average_window_segments",
    "cubic_loss_rate_for_window",
    "PowerLawX",
    "kozu_x",
    "kozu_k_s",
    "reno_window_trajectory",
    "cubic_window_trajectory",
    "BottleneckShare",
    "reno_cubic_bottleneck",
]

#: RFC 9438 Sec. 4.2 / 5.1: the CUBIC scaling constant C [segments/s^3].
C_CUBIC = 0.4
#: RFC 9438 Sec. 4.6: multiplicative decrease factor, fraction of the window kept [-].
BETA_CUBIC = 0.7
#: Readings of the Kozu–Yamaguchi eq. (4): unmodified CUBIC, x multiplies, x divides.
X_READINGS = ("none", "multiply", "divide")

#: Reno's average window under deterministic loss, ``1.2 / sqrt(p)`` (RFC 3649), as used
#: for the Reno column and the Reno-friendly floor of RFC 9438 Tables 1-3.
_RENO_WINDOW_CONSTANT = 1.2


# --------------------------------------------------------------------------------------
# conventions
# --------------------------------------------------------------------------------------
def beta_cubic_from_reduction(beta_reduction):
    r"""Convert the paper convention (fraction removed) to RFC 9438's ``beta_cubic`` (fraction kept).

    Parameters
    ----------
    beta_reduction : numeric
        Fraction of the window removed at a loss, the ``beta`` of Ha, Rhee & Xu (2008)
        and of paper P3 (0.2 there). [-]

    Returns
    -------
    numeric
        ``beta_cubic = 1 - beta_reduction``, the fraction kept. [-]

    References
    ----------
    .. [1] RFC 9438, Appendix "Since the Original Paper": the definition of beta_cubic
       was changed from the window decrease constant to the multiplicative decrease factor.
    .. [2] T. Kozu, S. Yamaguchi, FIT2013 L-033, eq. (2)-(3) (paper P3).

    Examples
    --------
    >>> beta_cubic_from_reduction(0.2)
    0.8
    """
    args, kind = broadcast(beta_reduction=beta_reduction)
    b = args["beta_reduction"]
    check_range("beta_reduction", b, unit="-", low=0.0, high=1.0, low_open=True, high_open=True)
    return wrap(1.0 - b, kind)


def reduction_from_beta_cubic(beta_cubic):
    r"""Convert RFC 9438's ``beta_cubic`` (fraction kept) to the paper's reduction (fraction removed).

    Parameters
    ----------
    beta_cubic : numeric
        Multiplicative decrease factor, fraction of the window kept. [-]

    Returns
    -------
    numeric
        ``1 - beta_cubic``. [-]

    Examples
    --------
    >>> round(reduction_from_beta_cubic(0.7), 12)
    0.3
    """
    args, kind = broadcast(beta_cubic=beta_cubic)
    b = args["beta_cubic"]
    _check_beta(b)
    return wrap(1.0 - b, kind)


def _check_beta(beta_cubic: np.ndarray) -> None:
    check_range("beta_cubic", beta_cubic, unit="-", low=0.0, high=1.0, low_open=True, high_open=True)


def _check_c(c: np.ndarray) -> None:
    check_range("c", c, unit="segments/s^3", low=0.0, low_open=True)


# --------------------------------------------------------------------------------------
# closed forms
# --------------------------------------------------------------------------------------
def cubic_k_s(w_max_segments, c=C_CUBIC, beta_cubic=BETA_CUBIC):
    r"""Time for CUBIC to grow back to W_max after a window reduction.

    Parameters
    ----------
    w_max_segments : numeric
        Congestion window just before the reduction. [segments]
    c : float
        CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Multiplicative decrease factor (fraction of the window kept). [-]
        For the paper convention (``beta = 0.2`` removed) pass
        ``beta_cubic_from_reduction(0.2)``.

    Returns
    -------
    numeric
        K, the time from the reduction until W(t) = W_max. [s]

    Notes
    -----
    .. math:: K = \sqrt[3]{W_{max} (1 - \beta_{cubic}) / C}

    ``W_max`` is ``w_max_segments``, ``C`` is ``c``, ``beta_cubic`` is ``beta_cubic``.
    RFC 9438 writes ``K = cbrt((W_max - cwnd_epoch) / C)`` with
    ``cwnd_epoch = beta_cubic * W_max`` after a loss, which is the same.

    References
    ----------
    .. [1] RFC 9438, "CUBIC for Fast and Long-Distance Networks", Sec. 4.2.

    Examples
    --------
    >>> round(cubic_k_s(100.0), 3)
    4.217
    """
    args, kind = broadcast(w_max_segments=w_max_segments, c=c, beta_cubic=beta_cubic)
    w, cc, b = args["w_max_segments"], args["c"], args["beta_cubic"]
    check_range("w_max_segments", w, unit="segments", low=0.0)
    _check_c(cc)
    _check_beta(b)
    return wrap(np.cbrt(w * (1.0 - b) / cc), kind)


def cubic_window_segments(t_s, w_max_segments, c=C_CUBIC, beta_cubic=BETA_CUBIC, k_s=None):
    r"""CUBIC window growth function W_cubic(t) after a loss at W_max.

    Parameters
    ----------
    t_s : numeric
        Time since the window reduction (start of the congestion-avoidance epoch). [s]
    w_max_segments : numeric
        Window just before the reduction. [segments]
    c : float
        CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]
    k_s : numeric, optional
        Use this K instead of :func:`cubic_k_s` (e.g. from :func:`kozu_k_s`). [s]

    Returns
    -------
    numeric
        W_cubic(t). [segments]

    Notes
    -----
    .. math:: W_{cubic}(t) = C (t - K)^3 + W_{max}

    With the standard K, ``W(0) = beta_cubic * W_max`` and ``W(K) = W_max``. This is the
    bare curve; the window a sender uses is bounded per RTT and floored by the
    Reno-friendly estimate (see :func:`cubic_window_trajectory`).

    References
    ----------
    .. [1] RFC 9438, Sec. 4.2, eq. (1)-(2).

    Examples
    --------
    >>> round(cubic_window_segments(0.0, 100.0), 6)
    70.0
    """
    kw = dict(t_s=t_s, w_max_segments=w_max_segments, c=c, beta_cubic=beta_cubic)
    if k_s is not None:
        kw["k_s"] = k_s
    args, kind = broadcast(**kw)
    t, w, cc, b = args["t_s"], args["w_max_segments"], args["c"], args["beta_cubic"]
    check_range("t_s", t, unit="s", low=0.0)
    check_range("w_max_segments", w, unit="segments", low=0.0)
    _check_c(cc)
    _check_beta(b)
    if k_s is None:
        k = np.cbrt(w * (1.0 - b) / cc)
    else:
        k = args["k_s"]
        check_range("k_s", k, unit="s", low=0.0)
    return wrap(cc * (t - k) ** 3 + w, kind)


def cubic_alpha_reno_friendly(beta_cubic=BETA_CUBIC):
    r"""Additive increase of CUBIC's Reno-friendly estimate, alpha_cubic.

    Parameters
    ----------
    beta_cubic : numeric
        Multiplicative decrease factor (fraction kept). [-]

    Returns
    -------
    numeric
        alpha_cubic, segments added to W_est per RTT. [segments/RTT]

    Notes
    -----
    .. math:: \alpha_{cubic} = 3 (1 - \beta_{cubic}) / (1 + \beta_{cubic})

    An AIMD flow with increase alpha_cubic and decrease beta_cubic has on average the
    same window as Reno (alpha 1, beta 0.5) at the same loss rate.

    References
    ----------
    .. [1] RFC 9438, Sec. 4.3, eq. (4).

    Examples
    --------
    >>> round(cubic_alpha_reno_friendly(0.7), 4)
    0.5294
    """
    args, kind = broadcast(beta_cubic=beta_cubic)
    b = args["beta_cubic"]
    _check_beta(b)
    return wrap(3.0 * (1.0 - b) / (1.0 + b), kind)


def cubic_reno_friendly_window_segments(t_s, w_max_segments, rtt_s, beta_cubic=BETA_CUBIC):
    r"""CUBIC's Reno-friendly window estimate W_est(t) after a loss at W_max.

    Parameters
    ----------
    t_s : numeric
        Time since the window reduction. [s]
    w_max_segments : numeric
        Window just before the reduction (``cwnd_prior``). [segments]
    rtt_s : numeric
        Round-trip time. [s]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]

    Returns
    -------
    numeric
        W_est(t). [segments]

    Notes
    -----
    Fluid form of the per-ACK rule ``W_est += alpha_cubic * acked / cwnd``: W_est starts
    at ``beta_cubic * W_max`` and grows by alpha_cubic segments per RTT; once it reaches
    ``cwnd_prior = W_max`` the RFC sets alpha_cubic to 1 (Reno's slope):

    .. math::
        W_{est}(t) = \begin{cases}
        \beta_{cubic} W_{max} + \alpha_{cubic}\, t / RTT & t < t_1 \\
        W_{max} + (t - t_1) / RTT & t \ge t_1
        \end{cases}, \quad t_1 = \frac{(1 - \beta_{cubic}) W_{max} RTT}{\alpha_{cubic}}

    When W_cubic(t) < W_est(t) CUBIC is in the Reno-friendly region and uses W_est.

    References
    ----------
    .. [1] RFC 9438, Sec. 4.3.

    Examples
    --------
    >>> round(cubic_reno_friendly_window_segments(1.0, 100.0, 0.1), 3)
    75.294
    """
    args, kind = broadcast(t_s=t_s, w_max_segments=w_max_segments, rtt_s=rtt_s, beta_cubic=beta_cubic)
    t, w, r, b = args["t_s"], args["w_max_segments"], args["rtt_s"], args["beta_cubic"]
    check_range("t_s", t, unit="s", low=0.0)
    check_range("w_max_segments", w, unit="segments", low=0.0)
    check_range("rtt_s", r, unit="s", low=0.0, low_open=True)
    _check_beta(b)
    alpha = 3.0 * (1.0 - b) / (1.0 + b)
    t1 = (1.0 - b) * w * r / alpha
    out = np.where(t < t1, b * w + alpha * t / r, w + (t - t1) / r)
    out = np.where(np.isnan(t) | np.isnan(t1), np.nan, out)
    return wrap(out, kind)


def reno_window_segments(t_s, w_max_segments, rtt_s, beta_reno=0.5):
    r"""Reno's congestion-avoidance window after a loss at W_max (additive increase).

    Parameters
    ----------
    t_s : numeric
        Time since the window reduction. [s]
    w_max_segments : numeric
        Window just before the reduction. [segments]
    rtt_s : numeric
        Round-trip time. [s]
    beta_reno : float
        Fraction of the window kept at a loss (0.5 for Reno). [-]

    Returns
    -------
    numeric
        W_reno(t) = beta_reno * W_max + t / RTT. [segments]

    Notes
    -----
    One segment per RTT: the fluid form of ``cwnd += 1/cwnd`` per ACK (RFC 5681 Sec. 3.1).
    Time to regain W_max is ``(1 - beta_reno) W_max RTT`` — linear in W_max and RTT,
    whereas CUBIC's K does not depend on RTT.

    References
    ----------
    .. [1] RFC 5681, "TCP Congestion Control", Sec. 3.1.

    Examples
    --------
    >>> reno_window_segments(1.0, 100.0, 0.1)
    60.0
    """
    args, kind = broadcast(t_s=t_s, w_max_segments=w_max_segments, rtt_s=rtt_s, beta_reno=beta_reno)
    t, w, r, b = args["t_s"], args["w_max_segments"], args["rtt_s"], args["beta_reno"]
    check_range("t_s", t, unit="s", low=0.0)
    check_range("w_max_segments", w, unit="segments", low=0.0)
    check_range("rtt_s", r, unit="s", low=0.0, low_open=True)
    check_range("beta_reno", b, unit="-", low=0.0, high=1.0, low_open=True, high_open=True)
    return wrap(b * w + t / r, kind)


def cubic_average_window_segments(loss_rate, rtt_s, c=C_CUBIC, beta_cubic=BETA_CUBIC):
    r"""CUBIC's average window under deterministic loss (response function), Reno-friendly floor included.

    Parameters
    ----------
    loss_rate : numeric
        Packet loss rate p, one loss every 1/p packets. [-]
    rtt_s : numeric
        Round-trip time. [s]
    c : float
        CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]

    Returns
    -------
    numeric
        Average window. [segments]

    Notes
    -----
    .. math::
        \overline{W} = \max\left(
        \sqrt[4]{\frac{C (3 + \beta_{cubic})}{4 (1 - \beta_{cubic})}}
        \frac{RTT^{3/4}}{p^{3/4}},\; \frac{1.2}{\sqrt{p}} \right)

    The first term is RFC 9438's eq. (5) (concave profile, deterministic loss);
    the second is Reno's average window ``1.2/sqrt(p)`` from RFC 3649, which
    RFC 9438 uses as the Reno-friendly region in its Tables 1-3.

    References
    ----------
    .. [1] RFC 9438, Sec. 5 eq. (5)-(7), Sec. 5.1 Tables 1-2.
    .. [2] RFC 3649, "HighSpeed TCP for Large Congestion Windows", Sec. 5.

    Examples
    --------
    >>> round(cubic_average_window_segments(1e-4, 0.1))
    187
    """
    args, kind = broadcast(loss_rate=loss_rate, rtt_s=rtt_s, c=c, beta_cubic=beta_cubic)
    p, r, cc, b = args["loss_rate"], args["rtt_s"], args["c"], args["beta_cubic"]
    check_range("loss_rate", p, unit="-", low=0.0, high=1.0, low_open=True)
    check_range("rtt_s", r, unit="s", low=0.0, low_open=True)
    _check_c(cc)
    _check_beta(b)
    cubic = (cc * (3.0 + b) / (4.0 * (1.0 - b))) ** 0.25 * r**0.75 / p**0.75
    reno = _RENO_WINDOW_CONSTANT / np.sqrt(p)
    out = np.fmax(cubic, reno)
    out = np.where(np.isnan(cubic) | np.isnan(reno), np.nan, out)
    return wrap(out, kind)


def cubic_loss_rate_for_window(window_segments, rtt_s, c=C_CUBIC, beta_cubic=BETA_CUBIC):
    r"""Loss rate at which CUBIC's average window equals ``window_segments`` (inverse response function).

    Parameters
    ----------
    window_segments : numeric
        Target average window, e.g. ``rate * RTT / (8 * packet size)``. [segments]
    rtt_s : numeric
        Round-trip time. [s]
    c : float
        CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]

    Returns
    -------
    numeric
        The loss rate p with ``cubic_average_window_segments(p, rtt_s) == window_segments``. [-]

    Notes
    -----
    Both terms of :func:`cubic_average_window_segments` fall with p, so the inverse of
    their maximum is the larger of the two single-term inverses:
    ``p = max((A RTT^{3/4} / W)^{4/3}, (1.2 / W)^2)`` with ``A = (C (3+b) / (4 (1-b)))^{1/4}``.
    The result may exceed 1 for windows below about 1.2 segments.

    References
    ----------
    .. [1] RFC 9438, Sec. 5.2, Table 3 ("Required packet loss rate ...").

    Examples
    --------
    >>> f"{cubic_loss_rate_for_window(83333.3, 0.1):.1e}"
    '2.9e-08'
    """
    args, kind = broadcast(window_segments=window_segments, rtt_s=rtt_s, c=c, beta_cubic=beta_cubic)
    w, r, cc, b = args["window_segments"], args["rtt_s"], args["c"], args["beta_cubic"]
    check_range("window_segments", w, unit="segments", low=0.0, low_open=True)
    check_range("rtt_s", r, unit="s", low=0.0, low_open=True)
    _check_c(cc)
    _check_beta(b)
    a = (cc * (3.0 + b) / (4.0 * (1.0 - b))) ** 0.25
    p_cubic = (a * r**0.75 / w) ** (4.0 / 3.0)
    p_reno = (_RENO_WINDOW_CONSTANT / w) ** 2
    out = np.fmax(p_cubic, p_reno)
    out = np.where(np.isnan(p_cubic) | np.isnan(p_reno), np.nan, out)
    return wrap(out, kind)


# --------------------------------------------------------------------------------------
# Kozu & Yamaguchi (P3): K modified by x(RTT)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class PowerLawX:
    r"""x(RTT) as a power law through two points, ``x = x1 * (RTT / rtt1)^k``.

    Parameters
    ----------
    rtt1_s, x1 : float
        First point. [s], [-]
    rtt2_s, x2 : float
        Second point. [s], [-]

    Notes
    -----
    The default is an **assumption**: P3's Fig. 2 plots x on a log axis from 1 to 10
    against RTT on a log axis from 1 to 1000 ms, with x larger for smaller RTT; the
    curve's values are not printed. We take the straight line (on log-log axes)
    through the corners (1 ms, 10) and (1000 ms, 1), i.e. ``x = 10 (RTT/1 ms)^(-1/3)``.
    Outside [1 ms, 1000 ms] the same power law is extrapolated (x < 1 above 1 s).

    Examples
    --------
    >>> x = PowerLawX()
    >>> round(x(0.001), 6), round(x(1.0), 6), round(x.exponent, 6)
    (10.0, 1.0, -0.333333)
    """

    rtt1_s: float = 0.001
    x1: float = 10.0
    rtt2_s: float = 1.0
    x2: float = 1.0

    def __post_init__(self) -> None:
        for name, value, unit in (
            ("rtt1_s", self.rtt1_s, "s"),
            ("x1", self.x1, "-"),
            ("rtt2_s", self.rtt2_s, "s"),
            ("x2", self.x2, "-"),
        ):
            check_range(name, value, unit=unit, low=0.0, low_open=True, high=np.inf, high_open=True)
        if self.rtt1_s == self.rtt2_s:
            raise ValueError(f"rtt1_s and rtt2_s [s] must differ; both are {self.rtt1_s:g}")

    @property
    def exponent(self) -> float:
        """Power-law exponent k = log(x2/x1) / log(rtt2/rtt1). [-]"""
        return math.log(self.x2 / self.x1) / math.log(self.rtt2_s / self.rtt1_s)

    def __call__(self, rtt_s):
        """x at ``rtt_s`` [s]; accepts float, array or Series like the model functions."""
        args, kind = broadcast(rtt_s=rtt_s)
        r = args["rtt_s"]
        check_range("rtt_s", r, unit="s", low=0.0, low_open=True)
        return wrap(self.x1 * (r / self.rtt1_s) ** self.exponent, kind)


def kozu_x(rtt_s, x_of_rtt: Callable[[Any], Any] | None = None):
    """Evaluate the x(RTT) hook: ``x_of_rtt(rtt_s)``, default :class:`PowerLawX` ``()``.

    Parameters
    ----------
    rtt_s : numeric
        Round-trip time. [s]
    x_of_rtt : callable, optional
        Function of RTT [s] returning x [-] (positive). Default: the power law through
        (1 ms, 10) and (1000 ms, 1) read from P3 Fig. 2 (an assumption, see :class:`PowerLawX`).

    Returns
    -------
    numeric
        x(RTT). [-]
    """
    args, kind = broadcast(rtt_s=rtt_s)
    r = args["rtt_s"]
    check_range("rtt_s", r, unit="s", low=0.0, low_open=True)
    fn = PowerLawX() if x_of_rtt is None else x_of_rtt
    if not callable(fn):
        raise TypeError(f"x_of_rtt must be a callable of rtt_s [s] (e.g. PowerLawX(...)); got {fn!r}")
    x = np.broadcast_to(np.asarray(fn(r), dtype=float), r.shape)
    check_range("x_of_rtt(rtt_s)", x, unit="-", low=0.0, low_open=True)
    return wrap(x, kind)


def _x_factor(reading: str, x: np.ndarray) -> np.ndarray:
    if reading == "none":
        return np.ones_like(x)
    if reading == "multiply":
        return x
    if reading == "divide":
        return 1.0 / x
    raise ValueError(f"reading must be one of {X_READINGS}; got {reading!r}")


def kozu_k_s(
    w_max_segments,
    rtt_s,
    reading: str = "multiply",
    x_of_rtt: Callable[[Any], Any] | None = None,
    c=C_CUBIC,
    beta_cubic=BETA_CUBIC,
):
    r"""K of the Kozu–Yamaguchi proposal (P3 eq. (4)): CUBIC's K scaled by an RTT-dependent x(RTT).

    Parameters
    ----------
    w_max_segments : numeric
        Window just before the reduction. [segments]
    rtt_s : numeric
        Round-trip time of the flow. [s]
    reading : {"multiply", "divide", "none"}
        How x enters the cube root (see Notes). ``"none"`` gives plain :func:`cubic_k_s`.
    x_of_rtt : callable, optional
        x(RTT) [-] as a function of RTT [s]; default :class:`PowerLawX` ``()``
        through (1 ms, 10) and (1000 ms, 1), an assumption read off P3 Fig. 2.
    c : float
        CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept); the paper's reduction beta = 0.2
        is ``beta_cubic_from_reduction(0.2)``. [-]

    Returns
    -------
    numeric
        The modified K. [s]

    Notes
    -----
    In the source text (``seeds/002_*.txt``) eq. (2) ``K = cbrt(W_max beta / C)`` and
    eq. (4) both survive only as the fragments ``W_max`` and ``K=√``: the symbols
    beta, C and x(RTT) and the fraction layout were lost in extraction, so it cannot be
    read whether x multiplies or divides. The text only says x(RTT) "changes with RTT and
    is larger for smaller RTT", and that smaller K means faster recovery and higher
    throughput. Both readings are implemented, with ``b = 1 - beta_cubic``:

    * ``"multiply"``: :math:`K = \sqrt[3]{x(RTT)\, W_{max} b / C}` — small-RTT flows
      (large x) recover *more slowly*, curbing them; K changes by the factor x^(1/3).
    * ``"divide"``: :math:`K = \sqrt[3]{W_{max} b / (C\, x(RTT))}` — small-RTT flows
      recover *faster*; K changes by x^(-1/3).

    With a modified K the curve no longer starts at the reduced window
    (``W_cubic(0) = W_max - C K^3 != beta_cubic W_max``); :func:`cubic_window_trajectory`
    and :func:`reno_cubic_bottleneck` apply RFC 9438's per-RTT bound on the target
    (between cwnd and 1.5 cwnd), which makes either reading well defined.

    References
    ----------
    .. [1] T. Kozu, S. Yamaguchi, "Improvement of TCP Fairness with Controlling Congestion
       Windows Size Recovery Time", FIT2013, L-033, eq. (4), Fig. 2 (paper P3).
    .. [2] RFC 9438, Sec. 4.2.

    Examples
    --------
    >>> round(kozu_k_s(100.0, 0.001, reading="multiply") / cubic_k_s(100.0), 4)  # 10**(1/3)
    2.1544
    """
    if reading not in X_READINGS:
        raise ValueError(f"reading must be one of {X_READINGS}; got {reading!r}")
    args, kind = broadcast(w_max_segments=w_max_segments, rtt_s=rtt_s, c=c, beta_cubic=beta_cubic)
    w, r, cc, b = args["w_max_segments"], args["rtt_s"], args["c"], args["beta_cubic"]
    check_range("w_max_segments", w, unit="segments", low=0.0)
    _check_c(cc)
    _check_beta(b)
    x = np.asarray(kozu_x(r, x_of_rtt), dtype=float)
    return wrap(np.cbrt(_x_factor(reading, x) * w * (1.0 - b) / cc), kind)


# --------------------------------------------------------------------------------------
# per-flow window dynamics shared by the trajectories and the bottleneck model
# --------------------------------------------------------------------------------------
class _Flow:
    """Mutable window state of one flow, advanced in small time steps (fluid per-ACK rules)."""

    __slots__ = ("cwnd", "ssthresh", "max_cwnd", "last_loss_t", "losses")

    def __init__(self, cwnd: float, ssthresh: float, max_cwnd: float) -> None:
        self.cwnd = cwnd
        self.ssthresh = ssthresh
        self.max_cwnd = max_cwnd
        self.last_loss_t = -math.inf
        self.losses = 0

    def _slow_start(self, frac: float) -> bool:
        if self.cwnd < self.ssthresh:
            self.cwnd = min(self.cwnd * 2.0**frac, self.ssthresh)  # doubling per RTT
            return True
        return False


class _RenoFlow(_Flow):
    """Reno: +1 segment per RTT in congestion avoidance, halve on loss (RFC 5681)."""

    __slots__ = ()

    def advance(self, t: float, dt: float, rtt: float) -> None:
        frac = dt / rtt
        if not self._slow_start(frac):
            self.cwnd += frac
        if self.cwnd > self.max_cwnd:
            self.cwnd = self.max_cwnd

    def on_loss(self, t: float) -> None:
        self.ssthresh = max(self.cwnd / 2.0, 2.0)
        self.cwnd = self.ssthresh
        self.last_loss_t = t
        self.losses += 1

    def columns(self) -> tuple[float, float, float, bool]:
        return (math.nan, math.nan, math.nan, False)


class _CubicFlow(_Flow):
    """CUBIC per RFC 9438: cubic target bounded to [cwnd, 1.5 cwnd] per RTT, Reno-friendly W_est floor."""

    __slots__ = ("c", "beta", "alpha", "k_factor", "fast_convergence", "w_max", "k", "epoch_t", "w_est", "cwnd_prior", "w_cubic_now", "reno_region")

    def __init__(
        self,
        cwnd: float,
        ssthresh: float,
        max_cwnd: float,
        *,
        c: float,
        beta: float,
        k_factor: float,
        fast_convergence: bool,
        w_max: float | None = None,
    ) -> None:
        super().__init__(cwnd, ssthresh, max_cwnd)
        self.c, self.beta, self.k_factor = c, beta, k_factor
        self.alpha = 3.0 * (1.0 - beta) / (1.0 + beta)
        self.fast_convergence = fast_convergence
        self.w_max = cwnd if w_max is None else w_max
        self.k = 0.0
        self.epoch_t = math.nan  # set when congestion avoidance starts
        self.w_est = cwnd
        self.cwnd_prior = self.w_max
        self.w_cubic_now = math.nan
        self.reno_region = False

    def start_epoch(self, t: float) -> None:
        """Begin a congestion-avoidance epoch at time t with the current cwnd as cwnd_epoch."""
        self.epoch_t = t
        gap = max(self.w_max - self.cwnd, 0.0)
        self.k = (self.k_factor * gap / self.c) ** (1.0 / 3.0)
        self.w_est = self.cwnd

    def advance(self, t: float, dt: float, rtt: float) -> None:
        frac = dt / rtt
        if self._slow_start(frac):
            if self.cwnd > self.max_cwnd:
                self.cwnd = self.max_cwnd
            return
        if math.isnan(self.epoch_t):
            # first congestion avoidance without a loss: RFC 9438 Sec. 4.10, K = 0, W_max = cwnd
            self.w_max = self.cwnd
            self.cwnd_prior = self.cwnd
            self.start_epoch(t)
        elapsed = t + dt - self.epoch_t
        w_cubic_next = self.c * (elapsed + rtt - self.k) ** 3 + self.w_max
        target = min(max(w_cubic_next, self.cwnd), 1.5 * self.cwnd)
        cubic_cwnd = self.cwnd + (target - self.cwnd) * min(frac, 1.0)
        alpha = 1.0 if self.w_est >= self.cwnd_prior else self.alpha
        self.w_est += alpha * frac
        self.w_cubic_now = self.c * (elapsed - self.k) ** 3 + self.w_max
        if self.w_cubic_now < self.w_est:
            self.reno_region = True
            self.cwnd = self.w_est  # RFC 9438 Sec. 4.3: cwnd SHOULD be set to W_est
        else:
            self.reno_region = False
            self.cwnd = cubic_cwnd
        if self.cwnd > self.max_cwnd:
            self.cwnd = self.max_cwnd

    def on_loss(self, t: float) -> None:
        prior = self.cwnd
        if self.fast_convergence and prior < self.w_max:
            self.w_max = prior * (1.0 + self.beta) / 2.0
        else:
            self.w_max = prior
        self.cwnd_prior = prior
        self.ssthresh = max(prior * self.beta, 2.0)
        self.cwnd = self.ssthresh
        self.last_loss_t = t
        self.losses += 1
        self.start_epoch(t)

    def columns(self) -> tuple[float, float, float, bool]:
        return (self.w_cubic_now, self.w_est, self.w_max, self.reno_region)


def _check_reading_and_k_factor(x_reading: str, x_of_rtt, rtt_s: float) -> float:
    if x_reading not in X_READINGS:
        raise ValueError(f"x_reading must be one of {X_READINGS}; got {x_reading!r}")
    if x_reading == "none":
        return 1.0
    return float(_x_factor(x_reading, np.asarray(kozu_x(rtt_s, x_of_rtt))))


def _scalar(name: str, value: Any, unit: str, **rng: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not np.isscalar(value):
        raise TypeError(f"{name} [{unit}] must be a single number; got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} [{unit}] must be a number, not NaN")
    check_range(name, v, unit=unit, **rng)
    return v


def _trajectory(
    flow: _Flow,
    *,
    rtt_s: float,
    duration_s: float,
    dt_s: float,
    loss_interval_s: float | None,
    cap_segments: float | None,
) -> pd.DataFrame:
    n = int(math.floor(duration_s / dt_s + 1e-9))
    rows_t = np.empty(n + 1)
    rows_w = np.empty(n + 1)
    rows_loss = np.zeros(n + 1, dtype=bool)
    extra = np.full((n + 1, 3), np.nan)
    region = np.zeros(n + 1, dtype=bool)
    rows_t[0], rows_w[0], rows_loss[0] = 0.0, flow.cwnd, True
    extra[0] = flow.columns()[:3]
    next_loss = loss_interval_s if loss_interval_s is not None else math.inf
    for i in range(1, n + 1):
        t_prev = (i - 1) * dt_s
        t = i * dt_s
        flow.advance(t_prev, dt_s, rtt_s)
        lost = False
        if t >= next_loss - 1e-12:
            lost = True
            next_loss += loss_interval_s
        if cap_segments is not None and flow.cwnd >= cap_segments:
            flow.cwnd = cap_segments
            lost = True
        cols = flow.columns()
        rows_t[i], rows_w[i] = t, flow.cwnd
        extra[i] = cols[:3]
        region[i] = cols[3]
        if lost:
            flow.on_loss(t)
            rows_loss[i] = True
    return pd.DataFrame(
        {
            "t_s": rows_t,
            "cwnd_segments": rows_w,
            "loss": rows_loss,
            "w_cubic_segments": extra[:, 0],
            "w_est_segments": extra[:, 1],
            "w_max_segments": extra[:, 2],
            "reno_friendly": region,
        }
    )


def _trajectory_args(rtt_s, duration_s, w_max_segments, loss_interval_s, cap_segments, dt_s):
    rtt = _scalar("rtt_s", rtt_s, "s", low=0.0, low_open=True)
    dur = _scalar("duration_s", duration_s, "s", low=0.0, low_open=True)
    w_max = _scalar("w_max_segments", w_max_segments, "segments", low=2.0)
    if loss_interval_s is None and cap_segments is None:
        raise ValueError("give a loss process: loss_interval_s [s] (periodic losses) and/or cap_segments [segments]")
    interval = None if loss_interval_s is None else _scalar("loss_interval_s", loss_interval_s, "s", low=0.0, low_open=True)
    cap = None if cap_segments is None else _scalar("cap_segments", cap_segments, "segments", low=2.0, low_open=True)
    dt = min(rtt / 10.0, dur / 200.0) if dt_s is None else _scalar("dt_s", dt_s, "s", low=0.0, low_open=True)
    if dur / dt > 2_000_000:
        raise ValueError(f"duration_s / dt_s must be at most 2e6 steps; got {dur / dt:.3g} (raise dt_s)")
    return rtt, dur, w_max, interval, cap, dt


def reno_window_trajectory(
    *,
    rtt_s: float,
    duration_s: float,
    w_max_segments: float,
    loss_interval_s: float | None = None,
    cap_segments: float | None = None,
    dt_s: float | None = None,
) -> pd.DataFrame:
    r"""Reno's congestion window over time under a deterministic loss process.

    Parameters
    ----------
    rtt_s : float
        Round-trip time (constant; no queueing). [s]
    duration_s : float
        Length of the trajectory. [s]
    w_max_segments : float
        Window at a loss just before t = 0; the trajectory starts at ``W_max / 2``. [segments]
    loss_interval_s : float, optional
        Periodic losses at t = T, 2T, ... [s]
    cap_segments : float, optional
        A loss whenever the window reaches this value, e.g. BDP + buffer in segments. [segments]
    dt_s : float, optional
        Time step; default ``min(rtt_s / 10, duration_s / 200)``. [s]

    Returns
    -------
    pandas.DataFrame
        ``t_s`` [s], ``cwnd_segments`` [segments], ``loss`` (True where a loss happened;
        the row holds the window just before the reduction, the loss at t = 0 is marked),
        and, for the same columns as :func:`cubic_window_trajectory`, NaN
        ``w_cubic_segments``, ``w_est_segments``, ``w_max_segments`` and False ``reno_friendly``.

    Notes
    -----
    Congestion avoidance only (``cwnd += dt / RTT``), halving at each loss
    (fast retransmit / fast recovery, no timeouts), window floored at 2 segments.

    References
    ----------
    .. [1] RFC 5681, Sec. 3.1-3.2.
    """
    rtt, dur, w_max, interval, cap, dt = _trajectory_args(rtt_s, duration_s, w_max_segments, loss_interval_s, cap_segments, dt_s)
    flow = _RenoFlow(w_max / 2.0, w_max / 2.0, math.inf)
    return _trajectory(flow, rtt_s=rtt, duration_s=dur, dt_s=dt, loss_interval_s=interval, cap_segments=cap)


def cubic_window_trajectory(
    *,
    rtt_s: float,
    duration_s: float,
    w_max_segments: float,
    loss_interval_s: float | None = None,
    cap_segments: float | None = None,
    c: float = C_CUBIC,
    beta_cubic: float = BETA_CUBIC,
    x_reading: str = "none",
    x_of_rtt: Callable[[Any], Any] | None = None,
    fast_convergence: bool = True,
    dt_s: float | None = None,
) -> pd.DataFrame:
    r"""CUBIC's congestion window over time under a deterministic loss process (RFC 9438 rules).

    Parameters
    ----------
    rtt_s : float
        Round-trip time (constant; no queueing). [s]
    duration_s : float
        Length of the trajectory. [s]
    w_max_segments : float
        Window at a loss just before t = 0; the trajectory starts at ``beta_cubic * W_max``. [segments]
    loss_interval_s : float, optional
        Periodic losses at t = T, 2T, ... [s]
    cap_segments : float, optional
        A loss whenever the window reaches this value (e.g. BDP + buffer). [segments]
    c : float
        CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]
    x_reading : {"none", "multiply", "divide"}
        Kozu–Yamaguchi modification of K (see :func:`kozu_k_s`); ``"none"`` is RFC CUBIC.
    x_of_rtt : callable, optional
        x(RTT) for the modification; default :class:`PowerLawX` ``()``.
    fast_convergence : bool
        RFC 9438 Sec. 4.7: if a loss comes before W_max is regained, W_max is set to
        ``cwnd (1 + beta_cubic) / 2``. Linux enables it by default.
    dt_s : float, optional
        Time step; default ``min(rtt_s / 10, duration_s / 200)``. [s]

    Returns
    -------
    pandas.DataFrame
        ``t_s`` [s], ``cwnd_segments`` [segments] (the window used), ``loss`` (bool),
        ``w_cubic_segments`` (the bare cubic curve W_cubic(t)), ``w_est_segments``
        (the Reno-friendly estimate), ``w_max_segments`` and ``reno_friendly``
        (True where W_cubic(t) < W_est, where the window used is W_est).

    Notes
    -----
    Each step of length dt (at most one RTT) applies the per-ACK rules integrated over
    the ACKs of that step: ``target = clip(W_cubic(t + RTT), cwnd, 1.5 cwnd)``,
    ``cwnd += (target - cwnd) dt / RTT``; ``W_est += alpha_cubic dt / RTT``
    (alpha_cubic -> 1 once W_est >= cwnd_prior); if ``W_cubic(t) < W_est`` then
    ``cwnd = W_est`` (Reno-friendly region). At a loss: W_max (with fast convergence),
    ``cwnd = beta_cubic * cwnd``, a new epoch with
    ``K = cbrt(x^{±1} (W_max - cwnd) / C)``.

    References
    ----------
    .. [1] RFC 9438, Sec. 4.2-4.7.
    """
    rtt, dur, w_max, interval, cap, dt = _trajectory_args(rtt_s, duration_s, w_max_segments, loss_interval_s, cap_segments, dt_s)
    c_ = _scalar("c", c, "segments/s^3", low=0.0, low_open=True)
    beta = _scalar("beta_cubic", beta_cubic, "-", low=0.0, high=1.0, low_open=True, high_open=True)
    k_factor = _check_reading_and_k_factor(x_reading, x_of_rtt, rtt)
    flow = _CubicFlow(
        beta * w_max,
        beta * w_max,
        math.inf,
        c=c_,
        beta=beta,
        k_factor=k_factor,
        fast_convergence=bool(fast_convergence),
        w_max=w_max,
    )
    flow.cwnd_prior = w_max
    flow.start_epoch(0.0)
    flow.w_cubic_now = flow.c * (0.0 - flow.k) ** 3 + flow.w_max
    return _trajectory(flow, rtt_s=rtt, duration_s=dur, dt_s=dt, loss_interval_s=interval, cap_segments=cap)


# --------------------------------------------------------------------------------------
# Reno and CUBIC sharing a drop-tail bottleneck
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class BottleneckShare:
    """Result of :func:`reno_cubic_bottleneck`: average throughputs after warm-up.

    Attributes
    ----------
    reno_throughput_bps, cubic_throughput_bps : float
        Average delivered rate of each flow over [warmup_s, duration_s]. [bit/s]
    total_throughput_bps : float
        Their sum. [bit/s]
    utilization : float
        total / capacity. [-]
    cubic_share : float
        cubic / total. [-]
    jain_index : float
        Jain's fairness index of the two throughputs, 0.5 (one flow takes all) .. 1. [-]
    reno_loss_events, cubic_loss_events : int
        Window reductions of each flow after warm-up. [-]
    mean_queue_delay_s : float
        Time-average queueing delay after warm-up. [s]
    params : dict
        The inputs, for provenance.
    trace : pandas.DataFrame
        Sampled time series: ``t_s``, ``reno_cwnd_segments``, ``cubic_cwnd_segments``,
        ``queue_segments``, ``reno_rate_bps``, ``cubic_rate_bps``, ``loss`` (a loss event
        since the previous sample).
    """

    reno_throughput_bps: float
    cubic_throughput_bps: float
    total_throughput_bps: float
    utilization: float
    cubic_share: float
    jain_index: float
    reno_loss_events: int
    cubic_loss_events: int
    mean_queue_delay_s: float
    params: dict = field(default_factory=dict)
    trace: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The scalar results and ``params`` as a plain dict (the trace is left out)."""
        d = {k: v for k, v in asdict(self).items() if k != "trace"}
        d["params"] = dict(self.params)
        return d


def reno_cubic_bottleneck(
    *,
    capacity_bps: float,
    buffer_bytes: float,
    reno_rtt_s: float,
    cubic_rtt_s: float,
    mss_bytes: float = 1500.0,
    duration_s: float = 30.0,
    warmup_s: float = 5.0,
    max_window_bytes: float | None = None,
    c: float = C_CUBIC,
    beta_cubic: float = BETA_CUBIC,
    x_reading: str = "none",
    x_of_rtt: Callable[[Any], Any] | None = None,
    fast_convergence: bool = True,
    loss_sharing: str = "synchronized",
    dt_s: float | None = None,
    trace_interval_s: float = 0.01,
) -> BottleneckShare:
    r"""One Reno and one CUBIC flow sharing a drop-tail bottleneck: a deterministic discrete-time fluid model.

    Parameters
    ----------
    capacity_bps : float
        Bottleneck rate. [bit/s]
    buffer_bytes : float
        Drop-tail buffer at the bottleneck. [bytes]
    reno_rtt_s, cubic_rtt_s : float
        Base (propagation) round-trip time of each flow, without queueing. [s]
    mss_bytes : float
        Packet size used to convert windows to bytes. [bytes]
    duration_s : float
        Simulated time. [s]
    warmup_s : float
        Start of the averaging window (slow start and first losses excluded). [s]
    max_window_bytes : float, optional
        Receive-window cap on both flows (P3 used 10 MB). [bytes]
    c, beta_cubic : float
        CUBIC constants. [segments/s^3], [-]
    x_reading : {"none", "multiply", "divide"}
        Kozu–Yamaguchi modification of the CUBIC flow's K (see :func:`kozu_k_s`),
        x evaluated at the CUBIC flow's base RTT.
    x_of_rtt : callable, optional
        x(RTT); default :class:`PowerLawX` ``()``.
    fast_convergence : bool
        CUBIC fast convergence (RFC 9438 Sec. 4.7).
    loss_sharing : {"synchronized", "proportional"}
        Which flows see a loss when the buffer overflows (see Notes).
    dt_s : float, optional
        Time step; default a tenth of the smaller base RTT. [s]
    trace_interval_s : float
        Sampling interval of the returned trace. [s]

    Returns
    -------
    BottleneckShare

    Notes
    -----
    State: each flow's window ``w_i`` [segments] and the queue ``q`` [segments]. Per step dt:

    * RTT_i = base RTT_i + q / C (C in segments/s); sending rate ``x_i = w_i / RTT_i``;
    * ``q += (sum x_i - C) dt``, clipped to [0, B];
    * throughput: while the queue is non-empty the link serves C, split in proportion
      to the arrival rates (fluid FIFO); otherwise each flow gets x_i;
    * windows follow the per-ACK rules integrated over dt/RTT_i ACK rounds
      (Reno +1 per RTT; CUBIC per RFC 9438 with the Reno-friendly floor,
      see :func:`cubic_window_trajectory`); both start in slow start at 10 segments;
    * when the queue is full and arrivals exceed C the excess is dropped.
      ``loss_sharing="synchronized"``: **every** flow takes a loss at each overflow
      (synchronised drop-tail losses, the assumption of Lakshman & Madhow).
      ``"proportional"``: the dropped fluid is charged to the flows in proportion to
      their arrival rates, and a flow reduces its window once a whole packet of its
      own has been dropped (equal per-packet loss probability, Mathis-style: a small
      flow often escapes an overflow). Either way at most one window reduction per flow
      per RTT_i (one fast recovery per window of data); no timeouts, no HyStart, no
      delayed ACKs.

    Under synchronised losses two Reno flows share in the ratio (RTT_2/RTT_1)^2,
    the classic RTT unfairness, and a flow with a small share is hit as often as a
    large one, which penalises it hard; proportional losses are milder. The model is an
    explanation aid, not a replacement for the testbed: it has no packet-level
    burstiness, so who loses at an overflow is idealised — compare both settings.

    References
    ----------
    .. [1] RFC 9438, Sec. 4; RFC 5681, Sec. 3.
    .. [2] T. V. Lakshman, U. Madhow, "The performance of TCP/IP for networks with high
       bandwidth-delay products and random loss", IEEE/ACM ToN 5(3), 1997.
    .. [3] V. Misra, W.-B. Gong, D. Towsley, "Fluid-based analysis of a network of AQM
       routers supporting TCP flows", SIGCOMM 2000 (the fluid queue).
    """
    cap_bps = _scalar("capacity_bps", capacity_bps, "bit/s", low=0.0, low_open=True)
    buf = _scalar("buffer_bytes", buffer_bytes, "bytes", low=0.0)
    r_reno = _scalar("reno_rtt_s", reno_rtt_s, "s", low=0.0, low_open=True)
    r_cubic = _scalar("cubic_rtt_s", cubic_rtt_s, "s", low=0.0, low_open=True)
    mss = _scalar("mss_bytes", mss_bytes, "bytes", low=0.0, low_open=True)
    dur = _scalar("duration_s", duration_s, "s", low=0.0, low_open=True)
    warm = _scalar("warmup_s", warmup_s, "s", low=0.0, high=dur, high_open=True)
    c_ = _scalar("c", c, "segments/s^3", low=0.0, low_open=True)
    beta = _scalar("beta_cubic", beta_cubic, "-", low=0.0, high=1.0, low_open=True, high_open=True)
    tr_int = _scalar("trace_interval_s", trace_interval_s, "s", low=0.0, low_open=True)
    dt = min(r_reno, r_cubic) / 10.0 if dt_s is None else _scalar("dt_s", dt_s, "s", low=0.0, low_open=True)
    if dur / dt > 5_000_000:
        raise ValueError(f"duration_s / dt_s must be at most 5e6 steps; got {dur / dt:.3g} (raise dt_s or shorten duration_s)")
    max_w = math.inf if max_window_bytes is None else _scalar("max_window_bytes", max_window_bytes, "bytes", low=2 * mss) / mss
    k_factor = _check_reading_and_k_factor(x_reading, x_of_rtt, r_cubic)
    if loss_sharing not in ("synchronized", "proportional"):
        raise ValueError(f"loss_sharing must be 'synchronized' or 'proportional'; got {loss_sharing!r}")
    proportional = loss_sharing == "proportional"

    cap = cap_bps / (8.0 * mss)  # segments/s
    b_seg = buf / mss
    flows: list[_Flow] = [
        _RenoFlow(10.0, math.inf, max_w),
        _CubicFlow(10.0, math.inf, max_w, c=c_, beta=beta, k_factor=k_factor, fast_convergence=bool(fast_convergence)),
    ]
    base = (r_reno, r_cubic)
    q = 0.0
    n = int(math.floor(dur / dt + 1e-9))
    i_warm = int(math.ceil(warm / dt - 1e-9))
    sample_every = max(1, int(round(tr_int / dt)))
    delivered = [0.0, 0.0]
    losses_at_warm = [0, 0]
    q_integral = 0.0
    trace: list[tuple[float, float, float, float, float, float, bool]] = []
    lost_since_sample = False
    dropped = [0.0, 0.0]  # packets of each flow dropped since its last window reduction
    for i in range(n):
        t = i * dt
        if i == i_warm:
            losses_at_warm = [f.losses for f in flows]
        qdelay = q / cap
        rtt0 = base[0] + qdelay
        rtt1 = base[1] + qdelay
        x0 = flows[0].cwnd / rtt0
        x1 = flows[1].cwnd / rtt1
        arr = x0 + x1
        q_new = q + (arr - cap) * dt
        if q > 0.0 or arr > cap:
            share = cap / arr if arr > 0 else 0.0
            d0, d1 = x0 * share, x1 * share
            if q_new < 0.0:  # queue drains within the step: served rate is below C for part of it
                served = (q + arr * dt) / dt
                d0, d1 = x0 * served / arr, x1 * served / arr
        else:
            d0, d1 = x0, x1
        if i >= i_warm:
            delivered[0] += d0 * dt
            delivered[1] += d1 * dt
            q_integral += qdelay * dt
        overflow = q_new > b_seg and arr > cap
        q = min(max(q_new, 0.0), b_seg)
        flows[0].advance(t, dt, rtt0)
        flows[1].advance(t, dt, rtt1)
        if overflow:
            t_next = t + dt
            excess = q_new - b_seg
            for j, (f, rtt, x) in enumerate(((flows[0], rtt0, x0), (flows[1], rtt1, x1))):
                if t_next - f.last_loss_t < rtt:
                    continue  # still recovering from the previous reduction: same window of data
                if proportional:
                    dropped[j] += excess * x / arr
                    if dropped[j] < 1.0:
                        continue
                dropped[j] = 0.0
                f.on_loss(t_next)
                lost_since_sample = True
        if i % sample_every == 0:
            trace.append((t, flows[0].cwnd, flows[1].cwnd, q, x0 * 8 * mss, x1 * 8 * mss, lost_since_sample))
            lost_since_sample = False

    span = (n - i_warm) * dt
    reno_bps = delivered[0] / span * 8.0 * mss
    cubic_bps = delivered[1] / span * 8.0 * mss
    total = reno_bps + cubic_bps
    jain = total**2 / (2.0 * (reno_bps**2 + cubic_bps**2)) if total > 0 else math.nan
    params = dict(
        capacity_bps=cap_bps,
        buffer_bytes=buf,
        reno_rtt_s=r_reno,
        cubic_rtt_s=r_cubic,
        mss_bytes=mss,
        duration_s=dur,
        warmup_s=warm,
        max_window_bytes=None if max_window_bytes is None else float(max_window_bytes),
        c=c_,
        beta_cubic=beta,
        x_reading=x_reading,
        x_of_rtt=repr(x_of_rtt if x_of_rtt is not None else PowerLawX()) if x_reading != "none" else None,
        fast_convergence=bool(fast_convergence),
        loss_sharing=loss_sharing,
        dt_s=dt,
    )
    return BottleneckShare(
        reno_throughput_bps=reno_bps,
        cubic_throughput_bps=cubic_bps,
        total_throughput_bps=total,
        utilization=total / cap_bps,
        cubic_share=cubic_bps / total if total > 0 else math.nan,
        jain_index=jain,
        reno_loss_events=flows[0].losses - losses_at_warm[0],
        cubic_loss_events=flows[1].losses - losses_at_warm[1],
        mean_queue_delay_s=q_integral / span,
        params=params,
        trace=pd.DataFrame(
            trace,
            columns=["t_s", "reno_cwnd_segments", "cubic_cwnd_segments", "queue_segments", "reno_rate_bps", "cubic_rate_bps", "loss"],
        ),
    )
