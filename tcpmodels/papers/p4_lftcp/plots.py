"""P4's figures: the window ceiling against RTT, and the sizing table as a grid."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.bdp import WSCALE_SHIFT_MAX, max_window_ceiling_bps
from tcpmodels.papers.p4_lftcp.constants import LFTCP_RATE_BPS, LINK_RATE_BPS, RTT_S, STANDARD_TCP_RATE_BPS

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
""")


@_PARAMETERS.fill
def plot_ceiling_vs_rtt(
    ax: Axes | None = None,
    *,
    shifts: Sequence[int] = tuple(range(WSCALE_SHIFT_MAX + 1)),
    rtt_range_s: tuple[float, float] = (1e-3, 1.0),
    n_rtts: int = 200,
    link_rate_bps: float = LINK_RATE_BPS,
    rtt_mark_s: float = RTT_S,
) -> Figure:
    """Window-limited ceiling against RTT, one line per window-scale shift (log-log).

    Marks the link rate, the press release's RTT, the ceiling of the largest
    window there, and the two reported rates (29 and 73 Gbit/s).

    Parameters
    ----------
    {ax}
    shifts : sequence of int
        Window-scale shifts to draw (0-14).
    rtt_range_s : (float, float)
        RTT axis range. [s]
    n_rtts : int
        Points per line.
    link_rate_bps : float
        Horizontal reference line. [bit/s]
    rtt_mark_s : float
        RTT to mark. [s]

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``: ceiling [Gbit/s] against RTT [ms], with a colour bar of the shift.
    """
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 5.0))
    else:
        fig = ax.figure
    rtts = np.geomspace(rtt_range_s[0], rtt_range_s[1], int(n_rtts))
    norm = colors.Normalize(vmin=0, vmax=WSCALE_SHIFT_MAX)
    cmap = plt.get_cmap("viridis")
    for shift in shifts:
        ax.plot(rtts * 1e3, max_window_ceiling_bps(float(shift), rtts) / 1e9, color=cmap(norm(shift)), lw=1.2)
    ax.axhline(link_rate_bps / 1e9, color="black", ls="--", lw=1, label=f"link {link_rate_bps / 1e9:g} Gbit/s")
    ax.axvline(rtt_mark_s * 1e3, color="grey", ls=":", lw=1)
    ceiling = max_window_ceiling_bps(WSCALE_SHIFT_MAX, rtt_mark_s)
    ax.plot([rtt_mark_s * 1e3], [ceiling / 1e9], "o", color="tab:red", ms=7,
            label=f"shift 14 at {rtt_mark_s * 1e3:g} ms: {ceiling / 1e9:.1f} Gbit/s")
    ax.annotate(f"{ceiling / 1e9:.1f} Gbit/s", (rtt_mark_s * 1e3, ceiling / 1e9), xytext=(-70, -22),
                textcoords="offset points", color="tab:red", arrowprops={"arrowstyle": "->", "color": "tab:red"})
    ax.plot([rtt_mark_s * 1e3], [STANDARD_TCP_RATE_BPS / 1e9], "x", color="tab:orange", ms=9, mew=2,
            label="standard TCP, reported 29 Gbit/s")
    ax.plot([rtt_mark_s * 1e3], [LFTCP_RATE_BPS / 1e9], "*", color="tab:purple", ms=11,
            label="LFTCP, reported 73 Gbit/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("RTT [ms]")
    ax.set_ylabel("window-limited ceiling [Gbit/s]")
    ax.set_title("Largest-window ceiling 65535·2^shift B / RTT")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="window-scale shift")
    return fig


@_PARAMETERS.fill
def plot_sizing(sizing: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """The sizing table as a grid: share of the link one standard TCP stream can fill, RTT down, link rate across.

    Each cell is annotated with the share and the BDP; cells where the window-scale shift
    needed exceeds 14 (the link cannot be filled) are hatched.

    Parameters
    ----------
    sizing : pandas.DataFrame
        ``tables(...)["sizing"]`` (:func:`tcpmodels.models.bdp.sizing_table`).
    {ax}

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``, with a colour bar of the share.
    """
    import matplotlib.pyplot as plt

    from tcpmodels.papers.display import human

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.0, 4.6))
    else:
        fig = ax.figure
    share = sizing.pivot(index="rtt_s", columns="rate_bps", values="achievable_fraction")
    bdp = sizing.pivot(index="rtt_s", columns="rate_bps", values="bdp_bytes")
    ok = sizing.pivot(index="rtt_s", columns="rate_bps", values="wscale_sufficient")
    im = ax.imshow(share.to_numpy(float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for i in range(share.shape[0]):
        for j in range(share.shape[1]):
            ax.text(j, i, f"{share.iat[i, j]:.0%}\nBDP {human(bdp.iat[i, j], 'bytes')}", ha="center", va="center",
                    fontsize=7.5)
            if not bool(ok.iat[i, j]):
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//", lw=0, alpha=0.5))
    ax.set_xticks(range(share.shape[1]), [human(x, "bit/s") for x in share.columns])
    ax.set_yticks(range(share.shape[0]), [human(x, "s") for x in share.index])
    ax.set_xlabel("link rate")
    ax.set_ylabel("RTT")
    ax.set_title("Share of the link one TCP stream can fill\n(hatched: needs window-scale shift > 14)")
    fig.colorbar(im, ax=ax, label="largest-window ceiling / link rate")
    return fig
