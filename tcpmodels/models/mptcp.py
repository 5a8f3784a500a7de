r"""MPTCP coupled congestion control, RFC 6356 Linked Increases (LIA): alpha, per-ACK increase, equilibrium.

RFC 6356 couples the congestion-avoidance increase of an MPTCP connection's subflows:

* per ACK on subflow r: ``w_r += min(alpha / w_total, 1 / w_r)`` [segments];
* on a loss on subflow r: ``w_r = w_r / 2``;
* ``alpha = w_total * max_r(w_r / RTT_r^2) / (sum_r w_r / RTT_r)^2``  (P1 eq. (1)).

Its design goals (RFC 6356 Sec. 2): (1) improve throughput — a multipath flow
should get at least as much as a single-path TCP on the best of its paths;
(2) do no harm — on any path take no more than a single TCP would; (3) balance
congestion — move traffic off more congested paths.

Windows are in segments and RTTs in seconds; :func:`lia_equilibrium` also gives
rates in bit/s for a packet size ``mss_bytes``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from tcpmodels._arrays import broadcast, check_range, check_scalar, finite_result, wrap

__all__ = ["lia_alpha", "lia_increase_segments", "LiaEquilibrium", "lia_equilibrium", "MIN_RTT_S", "MAX_RTT_S"]

#: Shortest path RTT accepted: a nanosecond (light crosses 30 cm); shorter ones only overflow w / RTT^2. [s]
MIN_RTT_S = 1e-9
#: Longest path RTT accepted: an hour, as for the window models. [s]
MAX_RTT_S = 3600.0


def _windows_rtts(windows_segments, rtts_s):
    args, kind = broadcast(windows_segments=windows_segments, rtts_s=rtts_s)
    w, r = args["windows_segments"], args["rtts_s"]
    if w.size == 0:
        raise ValueError("windows_segments and rtts_s must hold at least one path; got none")
    check_range("windows_segments", w, unit="segments", low=0.0, low_open=True, high=np.inf, high_open=True)
    check_range("rtts_s", r, unit="s", low=MIN_RTT_S, high=MAX_RTT_S)
    if w.ndim == 0:  # a single path
        w, r = w.reshape(1), r.reshape(1)
    return w, r, kind


def _alpha(w: np.ndarray, r: np.ndarray) -> np.ndarray:
    # alpha is unchanged when every window, or every RTT, is scaled: computed on windows over the largest and
    # RTTs over the smallest, no square overflows whatever the magnitudes
    w = w / np.max(w, axis=-1, keepdims=True)
    r = r / np.min(r, axis=-1, keepdims=True)
    total = w.sum(axis=-1)
    return total * np.max(w / r**2, axis=-1) / np.sum(w / r, axis=-1) ** 2


def lia_alpha(windows_segments: ArrayLike, rtts_s: ArrayLike) -> float | np.ndarray:
    r"""RFC 6356 aggressiveness parameter alpha of one MPTCP connection (or many).

    Parameters
    ----------
    windows_segments : array_like
        Congestion window of each subflow; subflows along the **last** axis. [segments]
    rtts_s : array_like
        Smoothed RTT of each subflow, broadcast against ``windows_segments``, in [MIN_RTT_S, MAX_RTT_S]. [s]

    Returns
    -------
    float or numpy.ndarray
        alpha [-]: a float for one connection (1-D input, a Series of subflows, or a
        scalar = one path), an array of shape ``windows.shape[:-1]`` for several.

    Notes
    -----
    .. math:: \alpha = w_{total} \frac{\max_r (w_r / RTT_r^2)}{\left(\sum_r w_r / RTT_r\right)^2}

    (RFC 6356 Sec. 3; P1 eq. (1)). alpha is dimensionless and unchanged when all
    windows or all RTTs are scaled by one factor; it is 1 for a single path and
    1/n for n subflows with equal windows and RTTs. Windows may be in bytes or
    segments alike.

    References
    ----------
    .. [1] C. Raiciu, M. Handley, D. Wischik, RFC 6356, "Coupled Congestion Control
       for Multipath Transport Protocols", Sec. 3, 2011.
    .. [2] Fujii, Tazaki, Sekiya (paper P1), eq. (1).

    Examples
    --------
    >>> round(lia_alpha([10.0, 10.0], [0.1, 0.1]), 12)
    0.5
    """
    w, r, _ = _windows_rtts(windows_segments, rtts_s)
    a = _alpha(w, r)
    return float(a) if np.ndim(a) == 0 else a


def lia_increase_segments(windows_segments: ArrayLike, rtts_s: ArrayLike) -> np.ndarray | pd.Series:
    r"""Window increase per ACK on each subflow under RFC 6356 LIA.

    Parameters
    ----------
    windows_segments : array_like
        Congestion window of each subflow; subflows along the last axis. [segments]
    rtts_s : array_like
        RTT of each subflow, broadcast against ``windows_segments``, in [MIN_RTT_S, MAX_RTT_S]. [s]

    Returns
    -------
    same kind as ``windows_segments``
        ``min(alpha / w_total, 1 / w_r)`` for every subflow r, the increase of w_r
        for one acknowledged segment. [segments per ACK]

    Notes
    -----
    The second term caps each subflow at uncoupled Reno's increase (goal 2, do no
    harm). RFC 6356 writes it in bytes as
    ``min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i / cwnd_i)``;
    with windows in segments and one segment acknowledged this is the formula above.

    References
    ----------
    .. [1] RFC 6356, Sec. 3.

    Examples
    --------
    >>> lia_increase_segments([10.0, 10.0], [0.1, 0.1]).round(4).tolist()
    [0.025, 0.025]
    """
    args, kind = broadcast(windows_segments=windows_segments, rtts_s=rtts_s)
    w, r, _ = _windows_rtts(args["windows_segments"], args["rtts_s"])
    alpha = _alpha(w, r)
    total = w.sum(axis=-1)
    inc = np.minimum(np.expand_dims(alpha / total, -1), 1.0 / w)
    return wrap(inc.reshape(args["windows_segments"].shape), kind)


@dataclass(frozen=True, kw_only=True)
class LiaEquilibrium:
    """Fluid equilibrium of one LIA connection over independent paths, beside uncoupled TCP.

    All per-path fields are 1-D arrays in the order of the inputs.

    Attributes
    ----------
    rtts_s : numpy.ndarray
        RTT of each path. [s]
    loss_rates : numpy.ndarray
        Loss rate of each path. [-]
    windows_segments : numpy.ndarray
        LIA equilibrium window on each path. [segments]
    rates_segments_per_s, rates_bps : numpy.ndarray
        LIA rate on each path, ``w_r / RTT_r``. [segments/s], [bit/s]
    total_rate_segments_per_s, total_rate_bps : float
        Sum over the paths. [segments/s], [bit/s]
    uncoupled_windows_segments : numpy.ndarray
        Window of a single-path TCP on each path, ``window_constant / sqrt(p_r)``. [segments]
    uncoupled_rates_segments_per_s, uncoupled_rates_bps : numpy.ndarray
        Its rate. [segments/s], [bit/s]
    best_single_path_rate_bps : float
        The largest uncoupled rate (RFC 6356 goal 1 benchmark). [bit/s]
    alpha : float
        RFC 6356 alpha at the equilibrium windows. [-]
    coupled : numpy.ndarray of bool
        True where the coupled term ``alpha / w_total`` is the active one (False: the
        path is capped at uncoupled TCP's increase 1/w_r and gets exactly TCP's window).
    window_constant : float
        k in TCP's window ``k / sqrt(p)``. [-]
    mss_bytes : float
        Packet size for the bit/s fields. [bytes]
    """

    rtts_s: np.ndarray
    loss_rates: np.ndarray
    windows_segments: np.ndarray
    rates_segments_per_s: np.ndarray
    rates_bps: np.ndarray
    total_rate_segments_per_s: float
    total_rate_bps: float
    uncoupled_windows_segments: np.ndarray
    uncoupled_rates_segments_per_s: np.ndarray
    uncoupled_rates_bps: np.ndarray
    best_single_path_rate_bps: float
    alpha: float
    coupled: np.ndarray
    window_constant: float
    mss_bytes: float

    def to_dict(self) -> dict[str, Any]:
        """All fields as plain Python values (arrays become lists).

        Returns
        -------
        dict of str to Any
            One entry per field.
        """
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = value.tolist() if isinstance(value, np.ndarray) else value
        return out


@finite_result
def lia_equilibrium(rtts_s: ArrayLike, loss_rates: ArrayLike, *, mss_bytes: float = 1460.0, window_constant: float = math.sqrt(2.0)) -> LiaEquilibrium:
    r"""Windows and rates at which RFC 6356 LIA settles on paths with given RTTs and loss rates.

    Parameters
    ----------
    rtts_s : array_like
        RTT of each path (1-D, one entry per subflow), in [MIN_RTT_S, MAX_RTT_S]. [s]
    loss_rates : array_like
        Packet loss rate of each path, taken as independent of the MPTCP flow's own
        rate (paths shared with other traffic). [-]
    mss_bytes : float
        Packet size for the bit/s fields. [bytes]
    window_constant : float
        k in single-path TCP's equilibrium window ``k / sqrt(p)``: ``sqrt(2)`` (default)
        from the mean-value fluid balance used in RFC 6356's design; ``sqrt(3/2)``
        (Mathis et al.) for the deterministic sawtooth with one loss every 1/p packets. [-]

    Returns
    -------
    LiaEquilibrium

    Notes
    -----
    Fluid balance on each path r (ACK rate ``w_r / RTT_r``, loss events
    ``p_r w_r / RTT_r`` per second, each removing ``w_r / 2``; written with the
    constant k so that a single path gives ``w = k / sqrt(p)``):

    .. math:: \min\left(\frac{\alpha}{w_{total}}, \frac{1}{w_r}\right) = \frac{p_r w_r}{k^2}

    For a given ``s = alpha / w_total`` each path's equation has the single solution
    ``w_r(s) = min(k^2 s / p_r, k / sqrt(p_r))`` (coupled, or capped at TCP's window);
    the equilibrium is the root of ``alpha(w(s)) / sum w(s) = s``, found with
    :func:`scipy.optimize.brentq`. When no path is capped this has the closed form

    .. math:: s = \frac{\max_r 1 / (\sqrt{p_r}\, RTT_r)}{k \sum_r 1 / (p_r RTT_r)},
              \qquad \sum_r \frac{w_r}{RTT_r} = \max_r \frac{k}{\sqrt{p_r}\, RTT_r}

    i.e. the total equals the best single-path TCP rate (goal 1) and ``w_r ∝ 1/p_r``
    (traffic moves to the less congested paths, goal 3); n identical paths each get
    ``w_TCP / n``; one path gives alpha = 1 and Reno's ``k / sqrt(p)``. A capped path
    carries exactly TCP's window. The total equals the best single-path rate in every
    case: at the path m maximising ``w_r / RTT_r^2`` the definition of alpha gives
    ``(sum w_r/RTT_r)^2 = w_m / (RTT_m^2 s)``, which is ``k^2 / (p_m RTT_m^2)`` when m
    is coupled, and m is the best path among the coupled ones; a capped path cannot
    be m for n > 1. No path exceeds uncoupled TCP on it (goal 2).

    References
    ----------
    .. [1] RFC 6356, Sec. 2-3 and the derivation of alpha in Appendix A.
    .. [2] D. Wischik, C. Raiciu, A. Greenhalgh, M. Handley, "Design, implementation and
       evaluation of congestion control for multipath TCP", NSDI 2011.
    .. [3] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP
       congestion avoidance algorithm", CCR 27(3), 1997.

    Examples
    --------
    >>> eq = lia_equilibrium([0.1, 0.1], [0.01, 0.01])
    >>> eq.windows_segments.round(4).tolist(), round(eq.alpha, 4)
    ([7.0711, 7.0711], 0.5)
    """
    args, _ = broadcast(rtts_s=rtts_s, loss_rates=loss_rates)
    r = np.atleast_1d(args["rtts_s"])
    p = np.atleast_1d(args["loss_rates"])
    if r.ndim != 1:
        raise ValueError(f"rtts_s and loss_rates must be 1-D (one entry per path); got shape {r.shape}")
    if r.size == 0:
        raise ValueError("rtts_s and loss_rates must hold at least one path; got none")
    check_range("rtts_s", r, unit="s", low=MIN_RTT_S, high=MAX_RTT_S)
    check_range("loss_rates", p, unit="-", low=0.0, high=1.0, low_open=True)
    mss = check_scalar("mss_bytes", mss_bytes, "bytes", low=0.0, low_open=True, high=np.inf, high_open=True)
    k = check_scalar("window_constant", window_constant, "-", low=0.0, low_open=True, high=np.inf, high_open=True)

    w_tcp = k / np.sqrt(p)
    to_bps = 8.0 * mss
    if np.isnan(r).any() or np.isnan(p).any():
        nan = np.full(r.shape, np.nan)
        return LiaEquilibrium(
            rtts_s=r, loss_rates=p, windows_segments=nan, rates_segments_per_s=nan, rates_bps=nan,
            total_rate_segments_per_s=math.nan, total_rate_bps=math.nan,
            uncoupled_windows_segments=w_tcp, uncoupled_rates_segments_per_s=w_tcp / r,
            uncoupled_rates_bps=w_tcp / r * to_bps, best_single_path_rate_bps=float(np.max(w_tcp / r) * to_bps),
            alpha=math.nan, coupled=np.zeros(r.shape, dtype=bool), window_constant=k, mss_bytes=mss,
        )  # fmt: skip

    def windows(s: float) -> np.ndarray:
        return np.minimum(k * k * s / p, w_tcp)

    def g(s: float) -> float:
        w = windows(s)
        return float(_alpha(w, r) / w.sum()) - s

    s_max = float(np.max(1.0 / w_tcp))  # above this every path is capped at TCP's window
    if g(s_max) >= 0.0:
        s = s_max  # all paths capped: each subflow behaves as uncoupled TCP (e.g. a single path)
    else:
        inv = 1.0 / p
        s_coupled = math.sqrt(float(_alpha(inv, r) / (k * k * inv.sum())))
        s_lo = 0.5 * min(float(np.min(1.0 / w_tcp)), s_coupled)
        try:
            s = brentq(g, s_lo, s_max, xtol=1e-15, rtol=1e-13, maxiter=200)
        except (ValueError, RuntimeError) as exc:
            raise ValueError(f"lia_equilibrium: no equilibrium found for rtts_s={r.tolist()}, loss_rates="
                             f"{p.tolist()} ({exc}): rates this far apart are beyond 64-bit floats") from None
    w = windows(s)
    alpha = float(_alpha(w, r))
    coupled = (k * k * s / p) < w_tcp * (1.0 - 1e-9)
    rates = w / r
    if not (np.isfinite(rates * to_bps).all() and np.isfinite(w_tcp / r * to_bps).all() and math.isfinite(alpha)):
        raise ValueError(f"lia_equilibrium: the rates overflow a 64-bit float for rtts_s={r.tolist()}, loss_rates="
                         f"{p.tolist()}, mss_bytes={mss:g}: inputs beyond any physical range (check their units)")
    return LiaEquilibrium(
        rtts_s=r,
        loss_rates=p,
        windows_segments=w,
        rates_segments_per_s=rates,
        rates_bps=rates * to_bps,
        total_rate_segments_per_s=float(rates.sum()),
        total_rate_bps=float(rates.sum() * to_bps),
        uncoupled_windows_segments=w_tcp,
        uncoupled_rates_segments_per_s=w_tcp / r,
        uncoupled_rates_bps=w_tcp / r * to_bps,
        best_single_path_rate_bps=float(np.max(w_tcp / r) * to_bps),
        alpha=alpha,
        coupled=coupled,
        window_constant=k,
        mss_bytes=mss,
    )
