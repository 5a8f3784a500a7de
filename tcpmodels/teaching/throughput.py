r"""Teaching figure: Mathis vs PFTK vs the window ceiling, and which term of PFTK dominates where.

The approximate PFTK model (Padhye et al. 2000, eq. (32)) is

.. math:: B = \min\left(\frac{W_{max}}{RTT},
          \frac{1}{\underbrace{RTT\sqrt{2bp/3}}_{\text{triple-dup losses}}
          + \underbrace{T_0 \min(1, 3\sqrt{3bp/8})\, p\,(1 + 32p^2)}_{\text{timeouts}}}\right)

so at every (p, RTT) one of three things sets the rate: the receiver window, the
square-root (fast-retransmit) term, or the timeout term. :func:`pftk_regime` names it;
:func:`plot_throughput_models` shades those regions behind the curves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure

from tcpmodels._arrays import broadcast, check_range, wrap
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric
from tcpmodels.models.throughput import (
    mathis_throughput_bps,
    padhye_approx_throughput_bps,
    padhye_throughput_bps,
    window_limited_throughput_bps,
)
from tcpmodels.notebook.params import choice, flag, folder, integer, real
from tcpmodels.notebook.widgets import dropdown, figure_widget, float_slider, int_slider, log_slider
from tcpmodels.teaching.style import legend, new_figure, panels, teaching_figure, title

__all__ = ["PARAMETERS", "REGIMES", "pftk_regime", "plot_throughput_models", "throughput_table", "throughput_widget"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt_ms : float
        Round-trip time. [ms]
    mss_bytes : float
        Segment size. [bytes]
""")

#: Ranges of the sliders and parameters: loss rate [-], RTT [ms], MSS [bytes], T0 [ms], W_max [segments].
LOSS_RATE_RANGE = (1e-6, 0.5)
RTT_MS_RANGE = (1.0, 2000.0)
MSS_BYTES_RANGE = (500, 9000)
T0_MS_RANGE = (0.0, 3000.0)
W_MAX_SEGMENTS_RANGE = (1.0, 1e5)
#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`).
PARAMETERS = {
    "quick": flag(),
    "figures_dir": folder(),
    "loss_rate": real(*LOSS_RATE_RANGE),
    "rtt_ms": real(*RTT_MS_RANGE, "ms"),
    "mss_bytes": integer(*MSS_BYTES_RANGE, "bytes"),
    "t0_ms": real(*T0_MS_RANGE, "ms"),
    "w_max_segments": real(*W_MAX_SEGMENTS_RANGE, "segments"),
    "b": choice((1, 2)),
}

#: Region names, in the order used for codes 0, 1, 2 of :func:`pftk_regime`.
REGIMES = ("window limit", "triple-dup losses (1/sqrt p)", "timeouts")
_REGIME_COLOURS = ("#d9e8f5", "#e3f1dc", "#f8e0d8")


def pftk_regime(rtt_s: Numeric, loss_rate: Numeric, t0_s: Numeric, w_max_segments: Numeric, b: Numeric = 2) -> Numeric:
    r"""Which term sets the approximate PFTK rate: 0 window limit, 1 triple-dup losses, 2 timeouts.

    Parameters
    ----------
    rtt_s : numeric
        Round-trip time, > 0. [s]
    loss_rate : numeric
        Loss-event probability p in (0, 1]. [-]
    t0_s : numeric
        First retransmission timeout, >= 0. [s]
    w_max_segments : numeric
        Receiver window, >= 1 (``inf`` for none). [segments]
    b : numeric
        Segments per ACK, >= 1. [segments]

    Returns
    -------
    numeric
        0 where ``W_max / RTT`` is the smaller argument of the min, else 1 where the
        square-root term ``RTT sqrt(2bp/3)`` is at least the timeout term, else 2.
        NaN where an input is NaN. [-]

    References
    ----------
    .. [1] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno performance:
       a simple model and its empirical validation", IEEE/ACM ToN 8(2), 2000, eq. (32).

    Examples
    --------
    >>> [int(pftk_regime(0.1, p, 0.4, 64)) for p in (1e-5, 1e-2, 0.2)]
    [0, 1, 2]
    """
    args, kind = broadcast(rtt_s=rtt_s, loss_rate=loss_rate, t0_s=t0_s, w_max_segments=w_max_segments, b=b)
    rtt, p, t0, w, bb = (args[k] for k in ("rtt_s", "loss_rate", "t0_s", "w_max_segments", "b"))
    check_range("rtt_s", rtt, unit="s", low=0, low_open=True)
    check_range("loss_rate", p, unit="-", low=0, high=1, low_open=True)
    check_range("t0_s", t0, unit="s", low=0)
    check_range("w_max_segments", w, unit="segments", low=1)
    check_range("b", bb, unit="segments", low=1)
    td = rtt * np.sqrt(2.0 * bb * p / 3.0)
    to = t0 * np.minimum(1.0, 3.0 * np.sqrt(3.0 * bb * p / 8.0)) * p * (1.0 + 32.0 * p * p)
    code = np.where(w / rtt <= 1.0 / (td + to), 0.0, np.where(td >= to, 1.0, 2.0))
    nan = np.isnan(rtt) | np.isnan(p) | np.isnan(t0) | np.isnan(w) | np.isnan(bb)
    return wrap(np.where(nan, np.nan, code), kind)


def _curves(mss_bytes, rtt_s, loss_rate, t0_s, w_max_segments, b) -> dict[str, np.ndarray]:
    """Rate [bit/s] of each model, broadcast to the common shape of ``rtt_s`` and ``loss_rate``."""
    shape = np.broadcast(np.asarray(rtt_s), np.asarray(loss_rate)).shape
    rates = {
        "Mathis (C = sqrt(3/2b))": mathis_throughput_bps(mss_bytes, rtt_s, loss_rate, b=b),
        "PFTK full (eq. 31)": padhye_throughput_bps(mss_bytes, rtt_s, loss_rate, t0_s, w_max_segments, b=b),
        "PFTK approx. (eq. 32)": padhye_approx_throughput_bps(mss_bytes, rtt_s, loss_rate, t0_s, w_max_segments, b=b),
        "window ceiling W_max MSS / RTT": window_limited_throughput_bps(w_max_segments * mss_bytes, rtt_s),
    }
    return {name: np.broadcast_to(np.asarray(rate, dtype=float), shape) for name, rate in rates.items()}


_STYLES = {
    "Mathis (C = sqrt(3/2b))": dict(color="C0", lw=1.8),
    "PFTK full (eq. 31)": dict(color="C3", lw=2.2),
    "PFTK approx. (eq. 32)": dict(color="C1", lw=1.4, ls="--"),
    "window ceiling W_max MSS / RTT": dict(color="0.3", lw=1.2, ls=":"),
}


def _shade(ax, x: np.ndarray, codes: np.ndarray) -> None:
    """Shade contiguous runs of equal regime code behind the curves, with a label at each run."""
    edges = np.sqrt(x[1:] * x[:-1])  # geometric midpoints (log axes)
    bounds = np.concatenate([[x[0]], edges, [x[-1]]])
    start = 0
    for i in range(1, len(codes) + 1):
        if i == len(codes) or codes[i] != codes[start]:
            code = int(codes[start])
            lo, hi = bounds[start], bounds[i]
            ax.axvspan(lo, hi, color=_REGIME_COLOURS[code], zorder=0, lw=0)
            if hi / lo > 3:
                ax.text(np.sqrt(lo * hi), 0.97, REGIMES[code], transform=ax.get_xaxis_transform(), ha="center",
                        va="top", fontsize="small", color="0.25")  # fmt: skip
            start = i


@_PARAMETERS.fill
@teaching_figure
def plot_throughput_models(
    loss_rate: float = 0.01,
    rtt_ms: float = 100.0,
    mss_bytes: float = 1460.0,
    t0_ms: float = 400.0,
    w_max_segments: float = 64.0,
    b: int = 2,
    *,
    n_points: int = 240,
) -> Figure:
    """Throughput of the Mathis, PFTK (full and approximate) and window-limited models.

    Parameters
    ----------
    loss_rate : float
        Loss-event probability p at the marked point, in (0, 1). [-]
    {rtt_ms, mss_bytes}
    t0_ms : float
        First retransmission timeout T0. [ms]
    w_max_segments : float
        Receiver window W_max. [segments]
    b : int
        Segments per ACK (2 with delayed ACKs). [segments]
    n_points : int
        Points per curve.

    Returns
    -------
    matplotlib.figure.Figure
        Left: rate against p (1e-6 ... 0.5) at the chosen RTT; right: rate against RTT
        (1 ms ... 2 s) at the chosen p. Both log-log, shaded by the term of PFTK that
        dominates (:func:`pftk_regime`); the chosen point is marked on every curve.
    """
    check_range("loss_rate", loss_rate, unit="-", low=0, high=1, low_open=True, high_open=True)
    check_range("rtt_ms", rtt_ms, unit="ms", low=0, low_open=True)
    check_range("t0_ms", t0_ms, unit="ms", low=0)
    check_range("w_max_segments", w_max_segments, unit="segments", low=1)
    if int(n_points) < 10:
        raise ValueError(f"n_points [-] must be >= 10; got {n_points}")
    rtt_s, t0_s = rtt_ms / 1e3, t0_ms / 1e3
    p_grid = np.logspace(-6, np.log10(0.5), int(n_points))
    rtt_grid = np.logspace(-3, np.log10(2.0), int(n_points))

    fig = new_figure(11, 4.3, lecture_height_in=6.2)
    ax_p, ax_r = panels(fig, 2)
    here = _curves(mss_bytes, rtt_s, loss_rate, t0_s, w_max_segments, b)
    for ax, x, curves, x_here, xlabel in (
        (ax_p, p_grid, _curves(mss_bytes, rtt_s, p_grid, t0_s, w_max_segments, b), loss_rate, "loss-event rate p [-]"),
        (ax_r, rtt_grid * 1e3, _curves(mss_bytes, rtt_grid, loss_rate, t0_s, w_max_segments, b), rtt_ms, "RTT [ms]"),
    ):  # fmt: skip
        for name, rate in curves.items():
            ax.plot(x, rate / 1e6, label=name, **_STYLES[name])
            ax.plot([x_here], [here[name] / 1e6], "o", ms=5, color=_STYLES[name]["color"])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(x[0], x[-1])
        ax.axvline(x_here, color="k", lw=0.7)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("throughput [Mbit/s]")
        ax.grid(True, which="major", lw=0.3)
    _shade(ax_p, p_grid, np.asarray(pftk_regime(rtt_s, p_grid, t0_s, w_max_segments, b)))
    _shade(ax_r, rtt_grid * 1e3, np.asarray(pftk_regime(rtt_grid, loss_rate, t0_s, w_max_segments, b)))
    regime = REGIMES[int(pftk_regime(rtt_s, loss_rate, t0_s, w_max_segments, b))]
    title(ax_p, f"RTT {rtt_ms:.3g} ms, T0 {t0_ms:.3g} ms, W_max {w_max_segments:.3g} seg, MSS {mss_bytes:.0f} B, b = {b}")
    title(ax_r, f"p = {loss_rate:.3g}: Mathis {here['Mathis (C = sqrt(3/2b))'] / 1e6:.3g}, "
                f"PFTK {here['PFTK full (eq. 31)'] / 1e6:.3g} Mbit/s ({regime})")  # fmt: skip
    legend(ax_p, loc="lower left", lecture_columns=2)
    return fig


@_PARAMETERS.fill
def throughput_table(
    loss_rate: float = 0.01,
    rtt_ms: float = 100.0,
    mss_bytes: float = 1460.0,
    t0_ms: float = 400.0,
    w_max_segments: float = 64.0,
    b: int = 2,
) -> pd.DataFrame:
    """The four models at one point, and which PFTK term sets the rate.

    Parameters
    ----------
    loss_rate : float
        Loss-event rate p in (0, 1). [-]
    {rtt_ms, mss_bytes}
    t0_ms : float
        First retransmission timeout. [ms]
    w_max_segments : float
        Receiver window. [segments]
    b : int
        Segments per ACK. [segments]

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``rate_mbps`` and ``ratio_to_pftk_full``; ``attrs["regime"]``
        names the PFTK term (window, triple-duplicate or timeout).
    """
    check_range("loss_rate", loss_rate, unit="-", low=0, high=1, low_open=True, high_open=True)
    rates = _curves(mss_bytes, rtt_ms / 1e3, loss_rate, t0_ms / 1e3, w_max_segments, b)
    full = rates["PFTK full (eq. 31)"]
    table = pd.DataFrame(
        {"model": list(rates), "rate_mbps": [float(r) / 1e6 for r in rates.values()],
         "ratio_to_pftk_full": [float(r / full) for r in rates.values()]}
    )  # fmt: skip
    table.attrs["regime"] = REGIMES[int(pftk_regime(rtt_ms / 1e3, loss_rate, t0_ms / 1e3, w_max_segments, b))]
    return table


def throughput_widget(
    loss_rate: float = 0.01,
    rtt_ms: float = 100.0,
    mss_bytes: float = 1460.0,
    t0_ms: float = 400.0,
    w_max_segments: float = 64.0,
    b: int = 2,
    *,
    n_points: int = 240,
) -> VBox:
    """Sliders for p, RTT, MSS, T0 and W_max (and b) above :func:`plot_throughput_models`.

    Parameters
    ----------
    loss_rate : float
        Initial loss-event rate. [-]
    rtt_ms : float
        Initial round-trip time. [ms]
    mss_bytes : float
        Initial segment size. [bytes]
    t0_ms : float
        Initial first retransmission timeout. [ms]
    w_max_segments : float
        Initial receiver window. [segments]
    b : int
        Initial segments per ACK, 1 or 2. [segments]
    n_points : int
        Points per curve (fixed). [-]

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`: controls above the redrawn figure.
    """
    controls = {
        "loss_rate": log_slider("loss rate p [-]", loss_rate, *LOSS_RATE_RANGE),
        "rtt_ms": log_slider("RTT [ms]", rtt_ms, *RTT_MS_RANGE),
        "mss_bytes": int_slider("MSS [bytes]", int(mss_bytes), *MSS_BYTES_RANGE, 20),
        "t0_ms": float_slider("T0 [ms]", t0_ms, *T0_MS_RANGE, 50.0),
        "w_max_segments": log_slider("W_max [segments]", w_max_segments, *W_MAX_SEGMENTS_RANGE),
        "b": dropdown("segments per ACK b", [1, 2], int(b)),
    }
    return figure_widget(plot_throughput_models, controls, fixed={"n_points": n_points})
