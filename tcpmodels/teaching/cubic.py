"""Figures and small tables for the teaching notebooks (kept here so the notebooks stay thin).

Every plot function returns a :class:`matplotlib.figure.Figure` built without pyplot,
so it can be redrawn by :func:`cubic_vs_reno_widget` (through
:func:`tcpmodels.notebook.widgets.figure_widget`; nothing accumulates in pyplot's figure list) and saved
with :func:`save_figure`. The models come from :mod:`tcpmodels.models`; nothing here is
computed that a model function does not already test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.cubic import (
    X_READINGS,
    cubic_alpha_reno_friendly,
    cubic_k_s,
    cubic_reno_friendly_window_segments,
    cubic_window_segments,
    kozu_k_s,
    kozu_x,
    reno_window_segments,
)
from tcpmodels.models.window_dynamics import cubic_window_trajectory, reno_window_trajectory
from tcpmodels.notebook.params import choice, flag, folder, real
from tcpmodels.notebook.widgets import save_figure
from tcpmodels.teaching.style import legend, new_figure, panels, teaching_figure, title

__all__ = ["PARAMETERS", "bottleneck_table", "cubic_vs_reno_summary", "cubic_vs_reno_widget", "plot_cubic_vs_reno",
           "save_figure"]  # fmt: skip

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    c : float
        CUBIC scaling constant. [segments/s^3]
    rtt_s : float
        Round-trip time. [s]
    x_of_rtt : callable, optional
        x(RTT); default the power law through (1 ms, 10) and (1 s, 1).
""")

#: Ranges of the sliders and parameters: W_max [segments], C [segments/s^3], beta_cubic [-], RTT [s].
W_MAX_SEGMENTS_RANGE = (3.0, 1e4)
C_RANGE = (0.05, 4.0)
BETA_CUBIC_RANGE = (0.5, 0.9)
RTT_S_RANGE = (1e-3, 1.0)
#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`).
PARAMETERS = {
    "quick": flag(),
    "w_max_segments": real(*W_MAX_SEGMENTS_RANGE, "segments"),
    "c": real(*C_RANGE, "segments/s^3"),
    "beta_cubic": real(*BETA_CUBIC_RANGE),
    "rtt_s": real(*RTT_S_RANGE, "s"),
    "x_reading": choice(X_READINGS),
    "figures_dir": folder(),
}

_MAX_STEPS = 15_000


def _check_reading(x_reading: str) -> None:
    if x_reading not in X_READINGS:
        raise ValueError(f"x_reading must be one of {X_READINGS}; got {x_reading!r}")


def _horizon_s(w_max_segments: float, c: float, beta_cubic: float, rtt_s: float, k_mod_s: float) -> float:
    """Long enough to show K (standard and modified) and Reno's recovery, with margin."""
    k = cubic_k_s(w_max_segments, c, beta_cubic)
    reno = 0.5 * w_max_segments * rtt_s
    return 1.6 * max(k, k_mod_s, reno, 10 * rtt_s)


def _dt_s(rtt_s: float, duration_s: float) -> float:
    """Step of the window trajectories: a quarter RTT, or duration/1500 if shorter, but at most _MAX_STEPS steps,
    and never above 1 s (the trajectories' limit; reached at W_max = 10^4 and RTT = 1 s)."""
    return min(max(min(rtt_s / 4.0, duration_s / 1500.0), duration_s / _MAX_STEPS), 1.0)


@_PARAMETERS.fill
def cubic_vs_reno_summary(
    w_max_segments: float = 100.0,
    c: float = 0.4,
    beta_cubic: float = 0.7,
    rtt_s: float = 0.1,
    x_reading: str = "none",
    x_of_rtt: Callable[[Any], Any] | None = None,
) -> pd.DataFrame:
    """The numbers behind :func:`plot_cubic_vs_reno`, one row per quantity.

    Parameters
    ----------
    w_max_segments : float
        Window at the loss. [segments]
    {c}
    beta_cubic : float
        Fraction of the window CUBIC keeps at a loss (RFC 9438). [-]
    {rtt_s}
    x_reading : {"none", "multiply", "divide"}
        Kozu–Yamaguchi modification of K (see :func:`tcpmodels.models.cubic.kozu_k_s`).
    {x_of_rtt}

    Returns
    -------
    pandas.DataFrame
        Columns ``quantity``, ``value``, ``unit``, ``formula``.
    """
    _check_reading(x_reading)
    k = cubic_k_s(w_max_segments, c, beta_cubic)
    alpha = cubic_alpha_reno_friendly(beta_cubic)
    rows = [
        ("K (RFC 9438)", k, "s", "cbrt(W_max (1 - beta_cubic) / C)"),
        ("Reno recovery time", 0.5 * w_max_segments * rtt_s, "s", "(W_max / 2) RTT"),
        ("W_est recovery time", (1 - beta_cubic) * w_max_segments * rtt_s / alpha, "s", "(1 - beta_cubic) W_max RTT / alpha_cubic"),
        ("alpha_cubic", alpha, "segments/RTT", "3 (1 - beta_cubic) / (1 + beta_cubic)"),
        ("window after loss, CUBIC", beta_cubic * w_max_segments, "segments", "beta_cubic W_max"),
        ("window after loss, Reno", 0.5 * w_max_segments, "segments", "W_max / 2"),
    ]
    if x_reading != "none":
        x = kozu_x(rtt_s, x_of_rtt)
        k_mod = kozu_k_s(w_max_segments, rtt_s, reading=x_reading, x_of_rtt=x_of_rtt, c=c, beta_cubic=beta_cubic)
        op = "x" if x_reading == "multiply" else "1/x"
        rows += [
            ("x(RTT)", x, "-", "P3 Fig. 2 (assumed power law unless given)"),
            (f"K, Kozu-Yamaguchi ({x_reading})", k_mod, "s", f"cbrt({op} W_max (1 - beta_cubic) / C)"),
        ]
    return pd.DataFrame(rows, columns=["quantity", "value", "unit", "formula"])


@_PARAMETERS.fill
@teaching_figure
def plot_cubic_vs_reno(
    w_max_segments: float = 100.0,
    c: float = 0.4,
    beta_cubic: float = 0.7,
    rtt_s: float = 0.1,
    x_reading: str = "none",
    *,
    x_of_rtt: Callable[[Any], Any] | None = None,
    cycles: int = 3,
) -> Figure:
    """CUBIC's W(t), K, the Reno line and the Reno-friendly window after one loss, and repeated cycles.

    Parameters
    ----------
    w_max_segments : float
        Window at the loss (and, in the right panel, the cap where every loss happens,
        e.g. BDP + buffer). [segments]
    {c}
    beta_cubic : float
        Fraction of the window CUBIC keeps (RFC 9438; the paper's reduction 0.2 is 0.8). [-]
    {rtt_s}
    x_reading : {"none", "multiply", "divide"}
        Also draw the Kozu–Yamaguchi curve with K scaled by x(RTT) or 1/x(RTT).
    x_of_rtt : callable, optional
        x(RTT); default the power law through (1 ms, 10) and (1 s, 1) (P3 Fig. 2, assumed).
    cycles : int
        About how many Reno/CUBIC loss cycles the right panel shows.

    Returns
    -------
    matplotlib.figure.Figure
        Left: one epoch after a loss at W_max — the bare curve W_cubic(t) with K, the
        window CUBIC actually uses (RFC 9438: bounded growth, max with W_est), W_est,
        and Reno's line. Right: both algorithms losing whenever they reach W_max, with
        their average windows.
    """
    _check_reading(x_reading)
    if not isinstance(cycles, (int, np.integer)) or cycles < 1:
        raise ValueError(f"cycles [-] must be an integer >= 1; got {cycles!r}")
    k = cubic_k_s(w_max_segments, c, beta_cubic)  # also validates the inputs
    k_mod = (
        kozu_k_s(w_max_segments, rtt_s, reading=x_reading, x_of_rtt=x_of_rtt, c=c, beta_cubic=beta_cubic)
        if x_reading != "none"
        else k
    )
    horizon = _horizon_s(w_max_segments, c, beta_cubic, rtt_s, k_mod)
    t = np.linspace(0.0, horizon, 600)

    fig = new_figure(11, 4.2, lecture_height_in=6.4)
    ax, ax2 = panels(fig, 2)

    # -- left: one epoch
    ax.plot(t, cubic_window_segments(t, w_max_segments, c, beta_cubic), color="C0", lw=1, ls="--", label="W_cubic(t) (bare curve)")
    used = cubic_window_trajectory(
        rtt_s=rtt_s, duration_s=horizon, w_max_segments=w_max_segments, loss_interval_s=10 * horizon,
        c=c, beta_cubic=beta_cubic, dt_s=_dt_s(rtt_s, horizon),
    )  # fmt: skip
    ax.plot(used.t_s, used.cwnd_segments, color="C0", lw=2.2, label="CUBIC cwnd (RFC 9438)")
    ax.plot(t, cubic_reno_friendly_window_segments(t, w_max_segments, rtt_s, beta_cubic), color="C2", lw=1.2, ls=":", label="W_est (Reno-friendly)")
    ax.plot(t, reno_window_segments(t, w_max_segments, rtt_s), color="C3", lw=1.8, label="Reno (W_max/2 + t/RTT)")
    ax.axvline(k, color="C0", lw=0.8, ls="-.")
    ax.annotate(f"K = {k:.3g} s", (k, 1.32 * w_max_segments), xytext=(4, 0), textcoords="offset points", color="C0",
                fontsize="small", va="top")  # fmt: skip
    if x_reading != "none":
        mod = cubic_window_trajectory(
            rtt_s=rtt_s, duration_s=horizon, w_max_segments=w_max_segments, loss_interval_s=10 * horizon,
            c=c, beta_cubic=beta_cubic, x_reading=x_reading, x_of_rtt=x_of_rtt, dt_s=_dt_s(rtt_s, horizon),
        )  # fmt: skip
        ax.plot(mod.t_s, mod.cwnd_segments, color="C1", lw=2, label=f"Kozu-Yamaguchi cwnd ({x_reading} x)")
        ax.axvline(k_mod, color="C1", lw=0.8, ls="-.")
        ax.annotate(f"K' = {k_mod:.3g} s", (k_mod, 1.32 * w_max_segments), xytext=(4 if k_mod >= k else -4, -15),
                    textcoords="offset points", color="C1", fontsize="small", va="top", ha="left" if k_mod >= k else "right")  # fmt: skip
    ax.axhline(w_max_segments, color="0.5", lw=0.8)
    ax.set_xlim(0, horizon)
    ax.set_ylim(0, 1.35 * w_max_segments)  # at small RTT the linear laws leave the plot: that is the lesson
    ax.set_xlabel("time since the loss [s]")
    ax.set_ylabel("cwnd [segments]")
    title(ax, f"One epoch: W_max = {w_max_segments:.4g}, C = {c:g}, beta_cubic = {beta_cubic:g}, RTT = {rtt_s * 1e3:.3g} ms")
    legend(ax, loc="lower right", lecture_columns=2)

    # -- right: repeated losses at the cap W_max
    # cycle lengths: Reno (W_max/2) RTT; CUBIC K, unless W_est gets back to W_max first
    west_back = (1 - beta_cubic) * w_max_segments * rtt_s / cubic_alpha_reno_friendly(beta_cubic)
    period = max(0.5 * w_max_segments * rtt_s, min(max(k, k_mod), west_back), 2 * rtt_s)
    duration = (cycles + 0.5) * period
    dt = _dt_s(rtt_s, duration)
    reno = reno_window_trajectory(rtt_s=rtt_s, duration_s=duration, w_max_segments=w_max_segments, cap_segments=w_max_segments, dt_s=dt)
    cub = cubic_window_trajectory(rtt_s=rtt_s, duration_s=duration, w_max_segments=w_max_segments, cap_segments=w_max_segments, c=c, beta_cubic=beta_cubic, dt_s=dt)
    ax2.plot(reno.t_s, reno.cwnd_segments, color="C3", lw=1.5, label=f"Reno, mean {reno.cwnd_segments.mean():.3g}")
    ax2.plot(cub.t_s, cub.cwnd_segments, color="C0", lw=1.5, label=f"CUBIC, mean {cub.cwnd_segments.mean():.3g}")
    if x_reading != "none":
        kz = cubic_window_trajectory(
            rtt_s=rtt_s, duration_s=duration, w_max_segments=w_max_segments, cap_segments=w_max_segments,
            c=c, beta_cubic=beta_cubic, x_reading=x_reading, x_of_rtt=x_of_rtt, dt_s=dt,
        )  # fmt: skip
        ax2.plot(kz.t_s, kz.cwnd_segments, color="C1", lw=1.5, label=f"Kozu-Yamaguchi ({x_reading}), mean {kz.cwnd_segments.mean():.3g}")
    friendly = cub.reno_friendly.mean()
    ax2.axhline(w_max_segments, color="0.5", lw=0.8)
    ax2.set_ylim(0, 1.15 * w_max_segments)
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("cwnd [segments]")
    title(ax2, f"Loss at cwnd = {w_max_segments:.4g}; CUBIC Reno-friendly {friendly:.0%} of the time")
    legend(ax2, loc="lower right")
    return fig


def cubic_vs_reno_widget(
    w_max_segments: float = 100.0,
    c: float = 0.4,
    beta_cubic: float = 0.7,
    rtt_s: float = 0.1,
    x_reading: str = "none",
    *,
    cycles: int = 3,
) -> VBox:
    """Sliders for W_max, C, beta_cubic and the RTT and a menu for P3's reading above :func:`plot_cubic_vs_reno`.

    Parameters
    ----------
    w_max_segments : float
        Initial window at the loss. [segments]
    c : float
        Initial CUBIC scaling constant. [segments/s^3]
    beta_cubic : float
        Initial fraction of the window kept at a loss. [-]
    rtt_s : float
        Initial round-trip time. [s]
    x_reading : {"none", "multiply", "divide"}
        Initial reading of P3's eq. (4).
    cycles : int
        Loss cycles in the right panel (fixed, not a slider). [-]

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`; it redraws the figure on every change
        (the figure is built without pyplot, so ``ipywidgets.interactive`` would show nothing).
    """
    from tcpmodels.notebook.widgets import dropdown, figure_widget, float_slider, log_slider

    _check_reading(x_reading)
    controls = {
        "w_max_segments": log_slider("W_max [segments]", w_max_segments, *W_MAX_SEGMENTS_RANGE),
        "c": float_slider("C [segments/s^3]", c, *C_RANGE, 0.05),
        "beta_cubic": float_slider("beta_cubic [-]", beta_cubic, *BETA_CUBIC_RANGE, 0.05),
        "rtt_s": log_slider("RTT [s]", rtt_s, *RTT_S_RANGE),
        "x_reading": dropdown("x(RTT) reading", X_READINGS, x_reading),
    }
    return figure_widget(plot_cubic_vs_reno, controls, fixed={"cycles": cycles})


@_PARAMETERS.fill
def bottleneck_table(
    rtt_pairs_s: list[tuple[float, float]],
    *,
    capacity_bps: float = 1e9,
    buffer_bytes: float = 1e6,
    duration_s: float = 20.0,
    warmup_s: float = 5.0,
    x_reading: str = "none",
    x_of_rtt: Callable[[Any], Any] | None = None,
    loss_sharing: str = "synchronized",
) -> pd.DataFrame:
    """Average throughput of a Reno and a CUBIC flow sharing a drop-tail link, one row per RTT pair.

    Parameters
    ----------
    rtt_pairs_s : list of (float, float)
        ``(reno_rtt_s, cubic_rtt_s)`` pairs. [s]
    capacity_bps : float
        Bottleneck rate. [bit/s]
    buffer_bytes : float
        Drop-tail buffer. [bytes]
    duration_s, warmup_s : float
        Simulated time and the part excluded from the averages. [s]
    x_reading : {"none", "multiply", "divide"}
        Kozu–Yamaguchi modification of the CUBIC flow's K.
    {x_of_rtt}
    loss_sharing : {"synchronized", "proportional"}
        Who sees a loss at a buffer overflow (see ``reno_cubic_bottleneck``).

    Returns
    -------
    pandas.DataFrame
        ``reno_rtt_ms``, ``cubic_rtt_ms``, ``reno_mbps``, ``cubic_mbps``, ``cubic_share``,
        ``jain_index``, ``reno_loss_events``, ``cubic_loss_events`` from
        :func:`tcpmodels.models.bottleneck.reno_cubic_bottleneck` (a fluid model; see its Notes).
    """
    from tcpmodels.models.bottleneck import reno_cubic_bottleneck

    rows = []
    for reno_rtt, cubic_rtt in rtt_pairs_s:
        res = reno_cubic_bottleneck(
            capacity_bps=capacity_bps, buffer_bytes=buffer_bytes, reno_rtt_s=reno_rtt, cubic_rtt_s=cubic_rtt,
            duration_s=duration_s, warmup_s=warmup_s, x_reading=x_reading, x_of_rtt=x_of_rtt,
            loss_sharing=loss_sharing,
        )  # fmt: skip
        rows.append(
            dict(
                reno_rtt_ms=reno_rtt * 1e3,
                cubic_rtt_ms=cubic_rtt * 1e3,
                reno_mbps=res.reno_throughput_bps / 1e6,
                cubic_mbps=res.cubic_throughput_bps / 1e6,
                cubic_share=res.cubic_share,
                jain_index=res.jain_index,
                reno_loss_events=res.reno_loss_events,
                cubic_loss_events=res.cubic_loss_events,
            )
        )
    return pd.DataFrame(rows)
