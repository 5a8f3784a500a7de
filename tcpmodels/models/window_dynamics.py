r"""Reno and CUBIC congestion windows over time under a deterministic loss process.

Per-flow window state machines (slow start, congestion avoidance, multiplicative
decrease; CUBIC with the RFC 9438 Reno-friendly floor, fast convergence and the
Kozu–Yamaguchi x(RTT) modification of K) advanced in small time steps, and
trajectories built from them for teaching plots: :func:`reno_window_trajectory`,
:func:`cubic_window_trajectory`. The same state machines drive the
shared-bottleneck model in :mod:`tcpmodels.models.bottleneck`.

Units: windows in segments, times in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from tcpmodels._arrays import check_flag, check_scalar
from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.cubic import BETA_CUBIC, C_CUBIC, kozu_k_factor

__all__ = ["reno_window_trajectory", "cubic_window_trajectory", "FluidFlow", "RenoFlow", "CubicFlow", "MAX_RTT_S",
           "MAX_MSS_BYTES"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt_s : float
        Round-trip time (constant; no queueing). [s]
    duration_s : float
        Length of the trajectory. [s]
    loss_interval_s : float, optional
        Periodic losses at t = T, 2T, ... [s]
    dt_s : float, optional
        Time step; default ``min(rtt_s / 10, duration_s / 200)``. [s]
""")

#: Longest round-trip time the window models accept: an hour, beyond any path (Earth-Mars is at most
#: about 44 minutes); larger values only overflow the cubic term. [s]
MAX_RTT_S = 3600.0
#: Largest MSS: the TCP MSS option is a 16-bit field (RFC 9293 Sec. 3.7.1). [bytes]
MAX_MSS_BYTES = 65535.0

# --------------------------------------------------------------------------------------
# per-flow window dynamics shared by the trajectories and the bottleneck model
# --------------------------------------------------------------------------------------
class FluidFlow:
    """Mutable window state of one flow, advanced in small time steps (fluid per-ACK rules).

    Parameters
    ----------
    cwnd : float
        Initial congestion window, finite and > 0. [segments]
    ssthresh : float
        Slow-start threshold, > 0 (``math.inf``: slow start until the first loss). [segments]
    max_cwnd : float
        Cap on the window (a receive window), > 0 (``math.inf``: none). [segments]

    Raises
    ------
    TypeError, ValueError
        For a parameter that is not a number, NaN or out of range (naming it, its unit and the range).
    """

    __slots__ = ("cwnd", "ssthresh", "max_cwnd", "last_loss_t", "losses")

    def __init__(self, cwnd: float, ssthresh: float, max_cwnd: float) -> None:
        self.cwnd = check_scalar("cwnd", cwnd, "segments", low=0.0, low_open=True, high=math.inf, high_open=True)
        self.ssthresh = check_scalar("ssthresh", ssthresh, "segments", low=0.0, low_open=True)
        self.max_cwnd = check_scalar("max_cwnd", max_cwnd, "segments", low=0.0, low_open=True)
        self.last_loss_t = -math.inf
        self.losses = 0

    def advance(self, t: float, dt: float, rtt: float) -> None:
        """Advance the window by one time step of the fluid per-ACK rule.

        Slow start (doubling per RTT up to ``ssthresh``) is common to every algorithm; above it
        the subclass's congestion-avoidance rule applies; the window never exceeds ``max_cwnd``.

        Parameters
        ----------
        t : float
            Time at the start of the step. [s]
        dt : float
            Length of the step. [s]
        rtt : float
            Round-trip time during the step. [s]

        Returns
        -------
        None
            ``cwnd`` (and the algorithm's state) is updated in place. [segments]
        """
        frac = dt / rtt
        if self.cwnd < self.ssthresh:
            self.cwnd = min(self.cwnd * 2.0**frac, self.ssthresh)  # doubling per RTT
        else:
            self._avoid(t, dt, rtt, frac)
        if self.cwnd > self.max_cwnd:
            self.cwnd = self.max_cwnd

    def on_loss(self, t: float) -> None:
        """Apply a loss event at time ``t`` (multiplicative decrease; a new epoch for CUBIC).

        ``ssthresh`` becomes the subclass's reduced window (at least 2 segments) and ``cwnd`` starts
        again from it.

        Parameters
        ----------
        t : float
            Time of the loss. [s]

        Returns
        -------
        None
            ``cwnd``, ``ssthresh``, ``last_loss_t`` and ``losses`` are updated in place.
        """
        self.ssthresh = max(self._reduced_window(), 2.0)
        self.cwnd = self.ssthresh
        self.last_loss_t = t
        self.losses += 1
        self._after_loss(t)

    def columns(self) -> tuple[float, float, float, bool]:
        """The algorithm's extra trajectory columns at the current step.

        Returns
        -------
        tuple of (float, float, float, bool)
            ``(w_cubic, w_est, w_max, reno_region)``: CUBIC's W(t) and W_est and
            W_max [segments], and whether the Reno-friendly region applies; NaN and
            False for Reno, which has none of them.
        """
        return self._columns()

    def _avoid(self, t: float, dt: float, rtt: float, frac: float) -> None:
        """Congestion avoidance over one step (``frac`` = dt / rtt of a round trip); the subclass's rule."""
        raise NotImplementedError

    def _reduced_window(self) -> float:
        """The window kept after a loss, before the 2-segment floor [segments]; the subclass's rule."""
        raise NotImplementedError

    def _after_loss(self, t: float) -> None:
        """What the algorithm does after the decrease at time ``t`` (nothing by default)."""

    def _columns(self) -> tuple[float, float, float, bool]:
        """:meth:`columns` of an algorithm without CUBIC's quantities."""
        return (math.nan, math.nan, math.nan, False)


class RenoFlow(FluidFlow):
    """Reno: +1 segment per RTT in congestion avoidance, halve on loss (RFC 5681)."""

    __slots__ = ()

    def _avoid(self, t: float, dt: float, rtt: float, frac: float) -> None:
        self.cwnd += frac

    def _reduced_window(self) -> float:
        return self.cwnd / 2.0


class CubicFlow(FluidFlow):
    """CUBIC per RFC 9438: cubic target bounded to [cwnd, 1.5 cwnd] per RTT, Reno-friendly W_est floor.

    Parameters
    ----------
    cwnd, ssthresh, max_cwnd : float
        As for :class:`FluidFlow`. [segments]
    c : float
        CUBIC's C, finite and > 0. [segments/s^3]
    beta : float
        beta_cubic, in (0, 1). [-]
    k_factor : float
        Factor on K^3 (the Kozu–Yamaguchi x(RTT) or its inverse; 1 for RFC 9438), finite and > 0. [-]
    fast_convergence : bool
        RFC 9438 Sec. 4.7.
    w_max : float, optional
        W_max before the first loss, finite and > 0 (default ``cwnd``). [segments]
    """

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
        self.c = check_scalar("c", c, "segments/s^3", low=0.0, low_open=True, high=math.inf, high_open=True)
        self.beta = check_scalar("beta", beta, "-", low=0.0, high=1.0, low_open=True, high_open=True)
        self.k_factor = check_scalar("k_factor", k_factor, "-", low=0.0, low_open=True, high=math.inf, high_open=True)
        self.alpha = 3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        self.fast_convergence = check_flag("fast_convergence", fast_convergence)
        self.w_max = self.cwnd if w_max is None else check_scalar("w_max", w_max, "segments", low=0.0, low_open=True,
                                                                  high=math.inf, high_open=True)
        self.k = 0.0
        self.epoch_t = math.nan  # set when congestion avoidance starts
        self.w_est = cwnd
        self.cwnd_prior = self.w_max
        self.w_cubic_now = math.nan
        self.reno_region = False

    def start_epoch(self, t: float) -> None:
        """Begin a congestion-avoidance epoch at time t with the current cwnd as cwnd_epoch.

        Parameters
        ----------
        t : float
            Start of the epoch. [s]

        Returns
        -------
        None
            ``epoch_t``, ``k`` (K, scaled by ``k_factor``) and ``w_est`` are set in place.
        """
        self.epoch_t = t
        gap = max(self.w_max - self.cwnd, 0.0)
        self.k = (self.k_factor * gap / self.c) ** (1.0 / 3.0)
        self.w_est = self.cwnd

    def _avoid(self, t: float, dt: float, rtt: float, frac: float) -> None:
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

    def _reduced_window(self) -> float:
        prior = self.cwnd
        if self.fast_convergence and prior < self.w_max:
            self.w_max = prior * (1.0 + self.beta) / 2.0
        else:
            self.w_max = prior
        self.cwnd_prior = prior
        return prior * self.beta

    def _after_loss(self, t: float) -> None:
        self.start_epoch(t)

    def _columns(self) -> tuple[float, float, float, bool]:
        return (self.w_cubic_now, self.w_est, self.w_max, self.reno_region)


def _trajectory(
    flow: FluidFlow,
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
    rtt = check_scalar("rtt_s", rtt_s, "s", low=0.0, low_open=True, high=MAX_RTT_S)
    dur = check_scalar("duration_s", duration_s, "s", low=0.0, low_open=True)
    w_max = check_scalar("w_max_segments", w_max_segments, "segments", low=2.0, high=math.inf, high_open=True)
    if loss_interval_s is None and cap_segments is None:
        raise ValueError("give a loss process: loss_interval_s [s] (periodic losses) and/or cap_segments [segments]")
    interval = None if loss_interval_s is None else check_scalar("loss_interval_s", loss_interval_s, "s", low=0.0, low_open=True)
    cap = None if cap_segments is None else check_scalar("cap_segments", cap_segments, "segments", low=2.0, low_open=True)
    dt = min(rtt / 10.0, dur / 200.0) if dt_s is None else check_scalar(
        "dt_s", dt_s, "s", low=0.0, low_open=True, high=min(rtt, dur))  # the fluid rules step within an RTT
    if dur / dt > 2_000_000:
        raise ValueError(f"duration_s / dt_s must be at most 2e6 steps; got {dur / dt:.3g} (raise dt_s)")
    return rtt, dur, w_max, interval, cap, dt


@_PARAMETERS.fill
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
    {rtt_s, duration_s}
    w_max_segments : float
        Window at a loss just before t = 0; the trajectory starts at ``W_max / 2``. [segments]
    {loss_interval_s}
    cap_segments : float, optional
        A loss whenever the window reaches this value, e.g. BDP + buffer in segments. [segments]
    {dt_s}

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
    flow = RenoFlow(w_max / 2.0, w_max / 2.0, math.inf)
    return _trajectory(flow, rtt_s=rtt, duration_s=dur, dt_s=dt, loss_interval_s=interval, cap_segments=cap)


@_PARAMETERS.fill
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
    {rtt_s, duration_s}
    w_max_segments : float
        Window at a loss just before t = 0; the trajectory starts at ``beta_cubic * W_max``. [segments]
    {loss_interval_s}
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
    {dt_s}

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
    c_ = check_scalar("c", c, "segments/s^3", low=0.0, low_open=True)
    beta = check_scalar("beta_cubic", beta_cubic, "-", low=0.0, high=1.0, low_open=True, high_open=True)
    k_factor = kozu_k_factor(rtt, x_reading, x_of_rtt)
    flow = CubicFlow(
        beta * w_max,
        beta * w_max,
        math.inf,
        c=c_,
        beta=beta,
        k_factor=k_factor,
        fast_convergence=check_flag("fast_convergence", fast_convergence),
        w_max=w_max,
    )
    flow.cwnd_prior = w_max
    flow.start_epoch(0.0)
    flow.w_cubic_now = flow.c * (0.0 - flow.k) ** 3 + flow.w_max
    return _trajectory(flow, rtt_s=rtt, duration_s=dur, dt_s=dt, loss_interval_s=interval, cap_segments=cap)
