"""Teaching figure: the window a path needs (its BDP) against the largest window TCP can advertise.

The numbers come from :mod:`tcpmodels.models.bdp`; the LFTCP points (29 Gbit/s with
standard TCP, 73 Gbit/s with LFTCP, both at 296 ms) from :mod:`tcpmodels.papers.p4_lftcp`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.bdp import (
    WSCALE_SHIFT_MAX,
    bdp_bytes,
    max_window_bytes,
    max_window_ceiling_bps,
    sizing_table,
)
from tcpmodels.notebook.params import flag, folder, integer, real
from tcpmodels.notebook.widgets import figure_widget, int_slider, log_slider
from tcpmodels.papers import p4_lftcp
from tcpmodels.teaching.style import legend, new_figure, panels, teaching_figure, title

__all__ = ["PARAMETERS", "RATE_GBPS_RANGE", "RTT_MS_RANGE", "plot_bdp_window", "bdp_table", "bdp_widget"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rate_gbps : float
        Link rate. [Gbit/s]
""")

#: Range of the link-rate slider and parameter. [Gbit/s]
RATE_GBPS_RANGE = (0.01, 400.0)
#: Range of the RTT slider and parameter. [ms]
RTT_MS_RANGE = (0.1, 1000.0)
#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`).
PARAMETERS = {
    "quick": flag(),
    "figures_dir": folder(),
    "rate_gbps": real(*RATE_GBPS_RANGE, "Gbit/s"),
    "rtt_ms": real(*RTT_MS_RANGE, "ms"),
    "wscale_shift": integer(0, WSCALE_SHIFT_MAX),
}

#: Reference byte counts drawn as horizontal lines: label -> bytes.
_LIMITS = {
    "2^31 - 1 (signed 32 bit)": 2**31 - 1,
    "2^32 (sequence space)": 2**32,
}


def _bytes_label(size_bytes: float) -> str:
    """``65.5 kB``, ``1.07 GB``: three digits and a decimal prefix."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size_bytes >= factor:
            return f"{size_bytes / factor:.3g} {prefix}B"
    return f"{size_bytes:.0f} B"


def _check(rate_gbps: float, rtt_ms: float, wscale_shift: int) -> None:
    check_range("rate_gbps", rate_gbps, unit="Gbit/s", low=0, low_open=True)
    check_range("rtt_ms", rtt_ms, unit="ms", low=0, low_open=True)
    if int(wscale_shift) != wscale_shift or not 0 <= wscale_shift <= WSCALE_SHIFT_MAX:
        raise ValueError(f"wscale_shift [-] must be an integer in [0, {WSCALE_SHIFT_MAX}]; got {wscale_shift}")


@_PARAMETERS.fill
def bdp_table(rate_gbps: float = 100.0, rtt_ms: float = 296.0, wscale_shift: int = WSCALE_SHIFT_MAX) -> pd.DataFrame:
    """One path's sizing as ``quantity, value, unit`` rows (from :func:`tcpmodels.models.bdp.sizing_table`).

    Parameters
    ----------
    {rate_gbps}
    rtt_ms : float
        Round-trip time. [ms]
    wscale_shift : int
        Negotiated window-scale shift, 0 ... 14. [-]

    Returns
    -------
    pandas.DataFrame
        Columns ``quantity``, ``value``, ``unit``.
    """
    _check(rate_gbps, rtt_ms, wscale_shift)
    row = sizing_table([rate_gbps * 1e9], [rtt_ms / 1e3], wscale_shift=int(wscale_shift)).iloc[0]
    rows = [
        ("bandwidth-delay product", row.bdp_bytes / 1e6, "MB"),
        ("smallest window-scale shift that covers it", row.min_wscale_shift, "-"),
        ("standard TCP can fill the link (shift <= 14)", bool(row.wscale_sufficient), "-"),
        (f"largest window with shift {int(wscale_shift)}", row.max_window_bytes / 1e6, "MB"),
        ("ceiling: that window per RTT", row.ceiling_bps / 1e9, "Gbit/s"),
        ("share of the link one connection can use", row.achievable_fraction, "-"),
        ("BDP / (2^31 - 1)", row.bdp_bytes / (2**31 - 1), "-"),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value", "unit"])


@_PARAMETERS.fill
@teaching_figure
def plot_bdp_window(
    rate_gbps: float = 100.0,
    rtt_ms: float = 296.0,
    wscale_shift: int = WSCALE_SHIFT_MAX,
    *,
    n_points: int = 200,
) -> Figure:
    """The window a path needs and the rate the largest advertisable window allows.

    Parameters
    ----------
    {rate_gbps}
    rtt_ms : float
        Round-trip time of the marked path. [ms]
    wscale_shift : int
        Window-scale shift, 0 ... 14 (RFC 7323). [-]
    n_points : int
        Points per curve.

    Returns
    -------
    matplotlib.figure.Figure
        Left: BDP against RTT for the chosen rate (and 1/10/100 Gbit/s for reference)
        with the largest windows of shift 0, the chosen shift and 14, and 32-bit limits.
        Right: the link rate, the ceiling ``largest window / RTT`` and what one connection
        achieves, against RTT, with the LFTCP press-release points at 296 ms.
    """
    _check(rate_gbps, rtt_ms, wscale_shift)
    if int(n_points) < 10:
        raise ValueError(f"n_points [-] must be >= 10; got {n_points}")
    shift = int(wscale_shift)
    rate_bps, rtt_s = rate_gbps * 1e9, rtt_ms / 1e3
    rtt_grid_s = np.logspace(-4, 0, int(n_points))
    fig = new_figure(11, 4.3, lecture_height_in=6.2)
    ax_w, ax_r = panels(fig, 2)

    # -- left: bytes
    for ref in (1.0, 10.0, 100.0):
        if not np.isclose(ref, rate_gbps):
            ax_w.plot(rtt_grid_s * 1e3, bdp_bytes(ref * 1e9, rtt_grid_s), color="0.75", lw=1)
            ax_w.annotate(f"{ref:g} Gbit/s", (1e3, float(bdp_bytes(ref * 1e9, 1.0))), xytext=(-4, -2),
                          textcoords="offset points", ha="right", va="top", fontsize="small", color="0.4")  # fmt: skip
    ax_w.plot(rtt_grid_s * 1e3, bdp_bytes(rate_bps, rtt_grid_s), color="C0", lw=2.2, label=f"BDP at {rate_gbps:.3g} Gbit/s")
    need = float(bdp_bytes(rate_bps, rtt_s))
    ax_w.plot([rtt_ms], [need], "o", color="C0", ms=7)
    shifts = sorted({0, shift, WSCALE_SHIFT_MAX})
    for s in shifts:
        ax_w.axhline(float(max_window_bytes(s)), color="C3" if s == shift else "C1", lw=1.6 if s == shift else 0.9,
                     ls="-" if s == shift else "--", label=f"max. window, shift {s}: {_bytes_label(float(max_window_bytes(s)))}")  # fmt: skip
    for (label, value), ls in zip(_LIMITS.items(), (":", "-.")):
        ax_w.axhline(value, color="0.3", lw=0.8, ls=ls, label=label)
    ax_w.set_xscale("log")
    ax_w.set_yscale("log")
    ax_w.set_xlim(rtt_grid_s[0] * 1e3, rtt_grid_s[-1] * 1e3)
    ax_w.set_ylim(1e3, 1e11)
    ax_w.set_xlabel("RTT [ms]")
    ax_w.set_ylabel("bytes in flight [B]")
    table = bdp_table(rate_gbps, rtt_ms, shift).set_index("quantity")["value"]
    needed_shift = int(table["smallest window-scale shift that covers it"])
    title(ax_w, f"{rate_gbps:.3g} Gbit/s x {rtt_ms:.3g} ms needs {need / 1e6:.4g} MB in flight: shift {needed_shift}"
          + (" (> 14: impossible)" if needed_shift > WSCALE_SHIFT_MAX else ""))  # fmt: skip
    legend(ax_w, loc="upper left", lecture_columns=2)

    # -- right: rates
    ceiling = max_window_ceiling_bps(float(shift), rtt_grid_s)
    ax_r.plot(rtt_grid_s * 1e3, np.full_like(rtt_grid_s, rate_gbps), color="0.3", lw=1, ls="--", label="link rate")
    ax_r.plot(rtt_grid_s * 1e3, ceiling / 1e9, color="C3", lw=1, ls=":", label=f"ceiling, shift {shift}: window / RTT")
    if shift != WSCALE_SHIFT_MAX:
        ax_r.plot(rtt_grid_s * 1e3, max_window_ceiling_bps(float(WSCALE_SHIFT_MAX), rtt_grid_s) / 1e9, color="C1",
                  lw=0.9, ls=":", label=f"ceiling, shift {WSCALE_SHIFT_MAX}")  # fmt: skip
    achievable = np.minimum(rate_bps, ceiling)
    ax_r.plot(rtt_grid_s * 1e3, achievable / 1e9, color="C0", lw=2.2, label="one connection")
    here = min(rate_bps, float(max_window_ceiling_bps(float(shift), rtt_s)))
    ax_r.plot([rtt_ms], [here / 1e9], "o", color="C0", ms=7)
    lf_rtt_ms = p4_lftcp.RTT_S * 1e3
    ax_r.plot([lf_rtt_ms], [p4_lftcp.STANDARD_TCP_RATE_BPS / 1e9], "s", color="k", ms=6, label="standard TCP: 29 Gbit/s")
    ax_r.plot([lf_rtt_ms], [p4_lftcp.LFTCP_RATE_BPS / 1e9], "*", color="C2", ms=11, label="LFTCP: 73 Gbit/s")
    ax_r.set_xscale("log")
    ax_r.set_yscale("log")
    ax_r.set_xlim(rtt_grid_s[0] * 1e3, rtt_grid_s[-1] * 1e3)
    ax_r.set_ylim(0.3 * float(achievable.min()) / 1e9, 2 * max(rate_gbps, 100.0))
    ax_r.set_xlabel("RTT [ms]")
    ax_r.set_ylabel("rate [Gbit/s]")
    title(ax_r, f"at {rtt_ms:.3g} ms one connection gets {here / 1e9:.4g} Gbit/s = {here / rate_bps:.1%} of the link")
    legend(ax_r, loc="lower left", lecture_columns=2)
    for ax in (ax_w, ax_r):
        ax.axvline(rtt_ms, color="k", lw=0.6)
        ax.grid(True, lw=0.3)
    return fig


def bdp_widget(rate_gbps: float = 100.0, rtt_ms: float = 296.0, wscale_shift: int = WSCALE_SHIFT_MAX, *, n_points: int = 200) -> VBox:
    """Sliders for the link rate, the RTT and the window-scale shift above :func:`plot_bdp_window`.

    Parameters
    ----------
    rate_gbps : float
        Initial link rate. [Gbit/s]
    rtt_ms : float
        Initial round-trip time. [ms]
    wscale_shift : int
        Initial window-scale shift, 0 ... 14. [-]
    n_points : int
        Points per curve (fixed). [-]

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`: controls above the redrawn figure.
    """
    controls = {
        "rate_gbps": log_slider("link rate [Gbit/s]", rate_gbps, *RATE_GBPS_RANGE),
        "rtt_ms": log_slider("RTT [ms]", rtt_ms, *RTT_MS_RANGE),
        "wscale_shift": int_slider("window-scale shift [-]", int(wscale_shift), 0, WSCALE_SHIFT_MAX),
    }
    return figure_widget(plot_bdp_window, controls, fixed={"n_points": n_points})

