r"""CUBIC and Reno congestion windows: closed forms and the Kozu–Yamaguchi x(RTT) variant.

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
* window trajectories under a deterministic loss process live in
  :mod:`tcpmodels.models.window_dynamics`, and the fluid model of one Reno and
  one CUBIC flow sharing a drop-tail bottleneck in :mod:`tcpmodels.models.bottleneck`.

Units: windows in segments, times in seconds, rates in bit/s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpmodels._arrays import broadcast, check_range, check_scalar, finite_result, wrap
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric
from tcpmodels.models.constants import BETA_CUBIC, C_CUBIC

__all__ = [
    "C_CUBIC",
    "BETA_CUBIC",
    "X_READINGS",
    "beta_cubic_from_reduction",
    "reduction_from_beta_cubic",
    "cubic_k_s",
    "kozu_k_factor",
    "cubic_window_segments",
    "cubic_alpha_reno_friendly",
    "cubic_reno_friendly_window_segments",
    "cubic_window_unchecked",
    "cubic_reno_friendly_window_unchecked",
    "reno_window_segments",
    "cubic_average_window_segments",
    "cubic_loss_rate_for_window",
    "PowerLawX",
    "kozu_x",
    "kozu_k_s",
    "x_power_law_params",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    c : float
        CUBIC scaling constant. [segments/s^3]
    rtt_s : numeric
        Round-trip time. [s]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]
    w_max_segments : numeric
        Window just before the reduction. [segments]
    t : numpy.ndarray
        Time since the window reduction. [s]
    w : numpy.ndarray
        W_max. [segments]
    t_s : numeric
        Time since the window reduction. [s]
""")

# C_CUBIC (RFC 9438 Sec. 4.2 / 5.1, [segments/s^3]) and BETA_CUBIC (Sec. 4.6, [-]): tcpmodels.models.constants
#: Readings of the Kozu–Yamaguchi eq. (4): unmodified CUBIC, x multiplies, x divides.
X_READINGS = ("none", "multiply", "divide")

#: Reno's average window under deterministic loss, ``1.2 / sqrt(p)`` (RFC 3649), as used
#: for the Reno column and the Reno-friendly floor of RFC 9438 Tables 1-3.
_RENO_WINDOW_CONSTANT = 1.2


# --------------------------------------------------------------------------------------
# conventions
# --------------------------------------------------------------------------------------
def beta_cubic_from_reduction(beta_reduction: Numeric) -> Numeric:
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


def reduction_from_beta_cubic(beta_cubic: Numeric) -> Numeric:
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
@_PARAMETERS.fill
@finite_result
def cubic_k_s(w_max_segments: Numeric, c: float = C_CUBIC, beta_cubic: float = BETA_CUBIC) -> Numeric:
    r"""Time for CUBIC to grow back to W_max after a window reduction.

    Parameters
    ----------
    w_max_segments : numeric
        Congestion window just before the reduction. [segments]
    {c}
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


@_PARAMETERS.fill
@finite_result
def cubic_window_segments(t_s: Numeric, w_max_segments: Numeric, c: float = C_CUBIC, beta_cubic: float = BETA_CUBIC, k_s: Numeric | None = None) -> Numeric:
    r"""CUBIC window growth function W_cubic(t) after a loss at W_max.

    Parameters
    ----------
    t_s : numeric
        Time since the window reduction (start of the congestion-avoidance epoch). [s]
    {w_max_segments, c, beta_cubic}
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
    return wrap(cubic_window_unchecked(t, w, cc, k), kind)


@_PARAMETERS.fill
def cubic_window_unchecked(t: np.ndarray, w: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The formula of :func:`cubic_window_segments` without input checks, for arrays already validated.

    A least-squares fit calls the model thousands of times on the same validated
    data; it checks once through :func:`cubic_window_segments` and then calls this.

    Parameters
    ----------
    {t, w}
    c : numpy.ndarray
        CUBIC constant C. [segments/s^3]
    k : numpy.ndarray
        K. [s]

    Returns
    -------
    numpy.ndarray
        :math:`C (t - K)^3 + W_{max}`. [segments]
    """
    return c * (t - k) ** 3 + w


def cubic_alpha_reno_friendly(beta_cubic: Numeric = BETA_CUBIC) -> Numeric:
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


@_PARAMETERS.fill
@finite_result
def cubic_reno_friendly_window_segments(t_s: Numeric, w_max_segments: Numeric, rtt_s: Numeric, beta_cubic: float = BETA_CUBIC) -> Numeric:
    r"""CUBIC's Reno-friendly window estimate W_est(t) after a loss at W_max.

    Parameters
    ----------
    {t_s}
    w_max_segments : numeric
        Window just before the reduction (``cwnd_prior``). [segments]
    {rtt_s, beta_cubic}

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
    return wrap(cubic_reno_friendly_window_unchecked(t, w, r, b), kind)


@_PARAMETERS.fill
def cubic_reno_friendly_window_unchecked(t: np.ndarray, w: np.ndarray, r: np.ndarray,
                                         b: np.ndarray) -> np.ndarray:
    """The formula of :func:`cubic_reno_friendly_window_segments` without input checks (arrays already validated).

    Parameters
    ----------
    {t, w}
    r : numpy.ndarray
        RTT. [s]
    b : numpy.ndarray
        beta_cubic. [-]

    Returns
    -------
    numpy.ndarray
        W_est, NaN where ``t`` or the crossover time is NaN. [segments]
    """
    alpha = 3.0 * (1.0 - b) / (1.0 + b)
    t1 = (1.0 - b) * w * r / alpha
    out = np.where(t < t1, b * w + alpha * t / r, w + (t - t1) / r)
    return np.where(np.isnan(t) | np.isnan(t1), np.nan, out)


@_PARAMETERS.fill
@finite_result
def reno_window_segments(t_s: Numeric, w_max_segments: Numeric, rtt_s: Numeric, beta_reno: float = 0.5) -> Numeric:
    r"""Reno's congestion-avoidance window after a loss at W_max (additive increase).

    Parameters
    ----------
    {t_s, w_max_segments, rtt_s}
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


@_PARAMETERS.fill
@finite_result
def cubic_average_window_segments(loss_rate: Numeric, rtt_s: Numeric, c: float = C_CUBIC, beta_cubic: float = BETA_CUBIC) -> Numeric:
    r"""CUBIC's average window under deterministic loss (response function), Reno-friendly floor included.

    Parameters
    ----------
    loss_rate : numeric
        Packet loss rate p, one loss every 1/p packets. [-]
    {rtt_s, c, beta_cubic}

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


@_PARAMETERS.fill
@finite_result
def cubic_loss_rate_for_window(window_segments: Numeric, rtt_s: Numeric, c: float = C_CUBIC, beta_cubic: float = BETA_CUBIC) -> Numeric:
    r"""Loss rate at which CUBIC's average window equals ``window_segments`` (inverse response function).

    Parameters
    ----------
    window_segments : numeric
        Target average window, e.g. ``rate * RTT / (8 * packet size)``. [segments]
    {rtt_s, c, beta_cubic}

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
            object.__setattr__(self, name, check_scalar(name, value, unit, low=0.0, low_open=True, high=np.inf,
                                                        high_open=True))
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


@_PARAMETERS.fill
def kozu_x(rtt_s: Numeric, x_of_rtt: Callable[[Any], Any] | None = None) -> Numeric:
    """Evaluate the x(RTT) hook: ``x_of_rtt(rtt_s)``, default :class:`PowerLawX` ``()``.

    Parameters
    ----------
    {rtt_s}
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


def kozu_k_factor(rtt_s: float, reading: str = "multiply", x_of_rtt: Callable[[Any], Any] | None = None) -> float:
    """Factor by which eq. (4) of P3 multiplies ``W_max b / C`` under the cube root, for one flow. [-]

    Parameters
    ----------
    rtt_s : float
        Round-trip time of the flow. [s]
    reading : {"multiply", "divide", "none"}
        How x(RTT) enters K (see :func:`kozu_k_s`); ``"none"`` gives 1 without evaluating x.
    x_of_rtt : callable, optional
        x(RTT) [-] as a function of RTT [s]; default :class:`PowerLawX` ``()``.

    Returns
    -------
    float
        x(RTT), 1/x(RTT) or 1. [-]

    Examples
    --------
    >>> round(kozu_k_factor(0.001, "divide"), 6)
    0.1
    """
    if reading not in X_READINGS:
        raise ValueError(f"x_reading must be one of {X_READINGS}; got {reading!r}")
    if reading == "none":
        return 1.0
    return float(_x_factor(reading, np.asarray(kozu_x(rtt_s, x_of_rtt))))


def _x_factor(reading: str, x: np.ndarray) -> np.ndarray:
    if reading == "none":
        return np.ones_like(x)
    if reading == "multiply":
        return x
    if reading == "divide":
        return 1.0 / x
    raise ValueError(f"reading must be one of {X_READINGS}; got {reading!r}")


@_PARAMETERS.fill
@finite_result
def kozu_k_s(
    w_max_segments: Numeric,
    rtt_s: Numeric,
    reading: str = "multiply",
    x_of_rtt: Callable[[Any], Any] | None = None,
    c: float = C_CUBIC,
    beta_cubic: float = BETA_CUBIC,
) -> Numeric:
    r"""K of the Kozu–Yamaguchi proposal (P3 eq. (4)): CUBIC's K scaled by an RTT-dependent x(RTT).

    Parameters
    ----------
    {w_max_segments}
    rtt_s : numeric
        Round-trip time of the flow. [s]
    reading : {"multiply", "divide", "none"}
        How x enters the cube root (see Notes). ``"none"`` gives plain :func:`cubic_k_s`.
    x_of_rtt : callable, optional
        x(RTT) [-] as a function of RTT [s]; default :class:`PowerLawX` ``()``
        through (1 ms, 10) and (1000 ms, 1), an assumption read off P3 Fig. 2.
    {c}
    beta_cubic : float
        Multiplicative decrease factor (fraction kept); the paper's reduction beta = 0.2
        is ``beta_cubic_from_reduction(0.2)``. [-]

    Returns
    -------
    numeric
        The modified K. [s]

    Notes
    -----
    In the text of Kozu and Yamaguchi's paper as we have it, eq. (2) ``K = cbrt(W_max beta / C)`` and
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


def x_power_law_params(x_exponent: float) -> dict:
    """Parameters of :class:`PowerLawX` for x(RTT) = (RTT / 1 s)^k: through (1 s, 1) with exponent ``k``. [-]

    ``k = -1/3`` gives x(1 ms) = 10, the default read off P3 Fig. 2 (an assumption).

    Parameters
    ----------
    x_exponent : float
        Exponent k of the power law, in [-2, 0). [-]

    Returns
    -------
    dict
        Keyword arguments of :class:`PowerLawX` (``rtt1_s``, ``x1``, ``rtt2_s``, ``x2``); also the
        ``x_power_law`` parameter of the ns-3 ``TcpCubicX``.

    Examples
    --------
    >>> round(x_power_law_params(-1 / 3)["x1"], 9)
    10.0
    """
    if not -2.0 <= x_exponent < 0.0:
        raise ValueError(f"x_exponent [-] must be in [-2, 0) (x larger for smaller RTT); got {x_exponent}")
    return {"rtt1_s": 0.001, "x1": float(1000.0 ** (-x_exponent)), "rtt2_s": 1.0, "x2": 1.0}
