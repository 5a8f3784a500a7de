"""Teaching figure: MPTCP LIA (RFC 6356) at equilibrium on two paths, against uncoupled TCP.

All numbers come from :func:`tcpmodels.models.mptcp.lia_equilibrium` (a fluid model
with loss rates fixed by other traffic on each path).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.mptcp import lia_equilibrium
from tcpmodels.notebook.params import flag, folder, integer, real
from tcpmodels.notebook.widgets import figure_widget, log_slider
from tcpmodels.teaching.style import legend, new_figure, panels, teaching_figure, title

__all__ = ["PARAMETERS", "plot_lia_two_paths", "lia_table", "lia_widget"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt1_ms, rtt2_ms : float
        RTT of path 1 and 2. [ms]
    mss_bytes : float
        Packet size. [bytes]
""")

#: Range of the RTT sliders and parameters. [ms]
RTT_MS_RANGE = (1.0, 1000.0)
#: Range of the loss-rate sliders and parameters. [-]
LOSS_RATE_RANGE = (1e-5, 0.2)
#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`).
PARAMETERS = {
    "quick": flag(),
    "figures_dir": folder(),
    "rtt1_ms": real(*RTT_MS_RANGE, "ms"),
    "rtt2_ms": real(*RTT_MS_RANGE, "ms"),
    "loss_rate1": real(*LOSS_RATE_RANGE),
    "loss_rate2": real(*LOSS_RATE_RANGE),
    "mss_bytes": integer(100, 65535, "bytes"),
}


def _check(rtt1_ms, rtt2_ms, loss_rate1, loss_rate2) -> None:
    for name, value in (("rtt1_ms", rtt1_ms), ("rtt2_ms", rtt2_ms)):
        check_range(name, value, unit="ms", low=0, low_open=True)
    for name, value in (("loss_rate1", loss_rate1), ("loss_rate2", loss_rate2)):
        check_range(name, value, unit="-", low=0, high=1, low_open=True)


@_PARAMETERS.fill
def lia_table(
    rtt1_ms: float = 20.0,
    rtt2_ms: float = 80.0,
    loss_rate1: float = 0.01,
    loss_rate2: float = 0.001,
    mss_bytes: float = 1460.0,
    window_constant: float = math.sqrt(2.0),
) -> pd.DataFrame:
    """Per-path and total windows and rates, LIA beside uncoupled TCP (one row per path, then ``total``).

    Parameters
    ----------
    {rtt1_ms, rtt2_ms}
    loss_rate1, loss_rate2 : float
        Loss rate of path 1 and 2, in (0, 1]. [-]
    {mss_bytes}
    window_constant : float
        k in TCP's window k / sqrt(p) (see :func:`tcpmodels.models.mptcp.lia_equilibrium`). [-]

    Returns
    -------
    pandas.DataFrame
        Index ``path 1``, ``path 2``, ``total``; columns ``lia_window_segments``,
        ``lia_mbps``, ``tcp_window_segments``, ``tcp_mbps``, ``coupled``. ``attrs`` hold
        ``alpha`` and ``best_single_path_mbps``.
    """
    _check(rtt1_ms, rtt2_ms, loss_rate1, loss_rate2)
    eq = lia_equilibrium([rtt1_ms / 1e3, rtt2_ms / 1e3], [loss_rate1, loss_rate2], mss_bytes=mss_bytes,
                         window_constant=window_constant)  # fmt: skip
    table = pd.DataFrame(
        {
            "lia_window_segments": [*eq.windows_segments, eq.windows_segments.sum()],
            "lia_mbps": [*(eq.rates_bps / 1e6), eq.total_rate_bps / 1e6],
            "tcp_window_segments": [*eq.uncoupled_windows_segments, eq.uncoupled_windows_segments.sum()],
            "tcp_mbps": [*(eq.uncoupled_rates_bps / 1e6), eq.uncoupled_rates_bps.sum() / 1e6],
            "coupled": [*eq.coupled, bool(eq.coupled.any())],
        },
        index=["path 1", "path 2", "total"],
    )
    table.attrs.update(alpha=eq.alpha, best_single_path_mbps=eq.best_single_path_rate_bps / 1e6)
    return table


@_PARAMETERS.fill
@teaching_figure
def plot_lia_two_paths(
    rtt1_ms: float = 20.0,
    rtt2_ms: float = 80.0,
    loss_rate1: float = 0.01,
    loss_rate2: float = 0.001,
    mss_bytes: float = 1460.0,
    *,
    n_points: int = 60,
) -> Figure:
    """LIA's per-path windows and rates at equilibrium, beside uncoupled TCP, and a sweep of path 2's loss.

    Parameters
    ----------
    {rtt1_ms, rtt2_ms}
    loss_rate1, loss_rate2 : float
        Loss rate of path 1 and 2. [-]
    {mss_bytes}
    n_points : int
        Points of the sweep.

    Returns
    -------
    matplotlib.figure.Figure
        Left: bars of the rate on each path and in total, LIA against one uncoupled TCP
        per path, with the windows written on the bars and the best single path (RFC 6356
        goal 1) as a line. Right: the same rates as path 2's loss rate sweeps 1e-4 ... 0.1.
    """
    _check(rtt1_ms, rtt2_ms, loss_rate1, loss_rate2)
    if int(n_points) < 5:
        raise ValueError(f"n_points [-] must be >= 5; got {n_points}")
    table = lia_table(rtt1_ms, rtt2_ms, loss_rate1, loss_rate2, mss_bytes)
    fig = new_figure(11, 4.3, lecture_height_in=6.4)
    ax_b, ax_s = panels(fig, 2, width_ratios=[1, 1.2])

    x = np.arange(3)
    width = 0.38
    for offset, col, wcol, colour, label in (
        (-width / 2, "lia_mbps", "lia_window_segments", "C0", "MPTCP LIA subflow"),
        (width / 2, "tcp_mbps", "tcp_window_segments", "C7", "uncoupled TCP (one per path)"),
    ):
        bars = ax_b.bar(x + offset, table[col], width, color=colour, label=label)
        for bar, w in zip(bars, table[wcol]):
            ax_b.annotate(f"w={w:.3g}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 2),
                          textcoords="offset points", ha="center", fontsize="small")  # fmt: skip
    best = table.attrs["best_single_path_mbps"]
    ax_b.axhline(best, color="C3", lw=1.2, ls="--", zorder=3, label=f"best single path {best:.3g} Mbit/s")
    ax_b.set_xticks(x, [f"path 1\n{rtt1_ms:.3g} ms, p={loss_rate1:.2g}", f"path 2\n{rtt2_ms:.3g} ms, p={loss_rate2:.2g}", "total"])
    ax_b.set_ylabel("rate [Mbit/s]")
    ax_b.set_ylim(0, 1.2 * max(table["tcp_mbps"].max(), table["lia_mbps"].max()))
    title(ax_b, f"alpha = {table.attrs['alpha']:.3g}; LIA total {table.loc['total', 'lia_mbps']:.3g} Mbit/s "
                f"vs uncoupled {table.loc['total', 'tcp_mbps']:.3g}")  # fmt: skip
    legend(ax_b, loc="upper left")

    p2 = np.logspace(-4, -1, int(n_points))
    # the equilibria themselves, not lia_table's frames: a third of a redraw's time went into 60 DataFrames
    sweep = [lia_equilibrium([rtt1_ms / 1e3, rtt2_ms / 1e3], [loss_rate1, q], mss_bytes=mss_bytes) for q in p2]
    lia1, lia2 = (np.array([eq.rates_bps[k] / 1e6 for eq in sweep]) for k in (0, 1))
    tcp2 = np.array([eq.uncoupled_rates_bps[1] / 1e6 for eq in sweep])
    ax_s.plot(p2, lia1 + lia2, color="C0", lw=2.4, label="LIA total")
    ax_s.plot(p2, lia1, color="C0", lw=1.2, ls="--", label="LIA on path 1")
    ax_s.plot(p2, lia2, color="C0", lw=1.2, ls=":", label="LIA on path 2")
    ax_s.plot(p2, np.full_like(p2, table.loc["path 1", "tcp_mbps"]) + tcp2, color="C7", lw=2, label="uncoupled total")
    ax_s.plot(p2, np.maximum(table.loc["path 1", "tcp_mbps"], tcp2), color="C3", lw=1, ls="--", zorder=3, label="best single path = LIA total (goal 1)")
    ax_s.axvline(loss_rate2, color="k", lw=0.7)
    ax_s.set_xscale("log")
    ax_s.set_yscale("log")
    ax_s.grid(True, lw=0.3)
    ax_s.set_xlabel("loss rate of path 2 [-]")
    ax_s.set_ylabel("rate [Mbit/s]")
    title(ax_s, f"path 1 fixed at {rtt1_ms:.3g} ms, p={loss_rate1:.2g}; path 2 at {rtt2_ms:.3g} ms")
    legend(ax_s, loc="lower left", lecture_columns=2)
    return fig


def lia_widget(
    rtt1_ms: float = 20.0,
    rtt2_ms: float = 80.0,
    loss_rate1: float = 0.01,
    loss_rate2: float = 0.001,
    mss_bytes: float = 1460.0,
    *,
    n_points: int = 60,
) -> VBox:
    """Sliders for both paths' RTT and loss rate above :func:`plot_lia_two_paths`.

    Parameters
    ----------
    rtt1_ms, rtt2_ms : float
        Initial round-trip times of paths 1 and 2. [ms]
    loss_rate1, loss_rate2 : float
        Initial loss-event rates of paths 1 and 2. [-]
    mss_bytes : float
        Segment size (fixed). [bytes]
    n_points : int
        Points of the loss-rate sweep (fixed). [-]

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`: controls above the redrawn figure.
    """
    controls = {
        "rtt1_ms": log_slider("path 1 RTT [ms]", rtt1_ms, *RTT_MS_RANGE),
        "rtt2_ms": log_slider("path 2 RTT [ms]", rtt2_ms, *RTT_MS_RANGE),
        "loss_rate1": log_slider("path 1 loss rate [-]", loss_rate1, *LOSS_RATE_RANGE),
        "loss_rate2": log_slider("path 2 loss rate [-]", loss_rate2, *LOSS_RATE_RANGE),
    }
    return figure_widget(plot_lia_two_paths, controls, fixed={"n_points": n_points, "mss_bytes": mss_bytes})
