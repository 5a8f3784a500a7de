"""P5's figures: loss and throughput over time, H against alpha, counts at several scales."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries
from tcpmodels.papers.p5_selfsimilar.data import PAPER_FIGURES

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.
""")


@_PARAMETERS.fill
def plot_over_time(table: pd.DataFrame, ax: Axes | None = None, *, ylabel: str = "", title: str = "") -> Axes:
    """Step plot of one :func:`over_time` table (one line per client count); returns the axes.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`over_time`'s table: window end [s] as index, one column per client count.
    {ax}
    ylabel, title : str
        Axis label (with the unit) and title.

    Returns
    -------
    matplotlib.axes.Axes
        The panel; each step holds the value of the window ending there.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.2))
    for col in table.columns:
        ax.step(table.index, table[col], where="pre", label=col)  # value of the window ending there
    ax.set_xlabel("time [s]")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return ax


def plot_figures(tables_: dict[str, pd.DataFrame], figures: list[str], *, suffix: str = "", ncols: int = 2,
                 note: str = "") -> Figure:
    """Draw the named figures (``"Fig. 2"`` ...) of :func:`tables` in a grid; returns the matplotlib figure.

    ``suffix`` picks a variant (``"_altq"``: the 50-packet queue at S); a figure missing from the
    tables gets an empty panel saying so.

    Parameters
    ----------
    tables_ : dict of str to pandas.DataFrame
        :func:`tables`' result (keys ``fig2`` ... ``fig11`` and their ``_altq`` variants).
    figures : list of str
        Figure names among :data:`PAPER_FIGURES`, e.g. ``["Fig. 2", "Fig. 3"]``.
    suffix : str
        Table-key suffix of the variant to draw (``""`` or ``"_altq"``).
    ncols : int
        Panels per row.
    note : str
        Appended to every panel title.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per figure, in order, time [s] on a shared x axis.

    Raises
    ------
    ValueError
        If a name is not one of the paper's figures.
    """
    import matplotlib.pyplot as plt

    spec = {f: (q, a, bw) for f, q, a, bw, _ in PAPER_FIGURES}
    unknown = [f for f in figures if f not in spec]
    if unknown:
        raise ValueError(f"figures must be among {list(spec)}; got {unknown}")
    nrows = int(np.ceil(len(figures) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.5 * ncols, 3.2 * nrows), sharex=True, squeeze=False)
    units = {"loss_s": "%", "loss_g1": "%", "thr_g1": "Mbit/s", "sessions": "per s"}
    for ax, name in zip(axes.ravel(), figures):
        q, a, bw = spec[name]
        key = name.replace("Fig. ", "fig") + suffix
        title = f"{name}: alpha {a:g}, {bw:g} Mbit/s{note}"
        if key in tables_:
            plot_over_time(tables_[key], ax, ylabel=f"{q} [{units[q]}]", title=title)
        else:
            ax.set_title(f"{title}: not in the dataset", fontsize=9)
    fig.tight_layout()
    return fig


@_PARAMETERS.fill
def plot_hurst_vs_alpha(hurst_long: pd.DataFrame, ax: Axes | None = None, *,
                        bellcore: pd.DataFrame | None = None) -> Axes:
    """Measured H (each estimator, 95 % interval) against alpha, with the line (3 - alpha)/2; returns the axes.

    Parameters
    ----------
    hurst_long : pandas.DataFrame
        :func:`hurst_long` (or :func:`hurst_testbed`): ``alpha, method, hurst, ci95_low, ci95_high``.
    {ax}
    bellcore : pandas.DataFrame, optional
        :func:`hurst_bellcore`; its median H is drawn as a dashed line.

    Returns
    -------
    matplotlib.axes.Axes
        The panel: H [-] against alpha [-], the estimators side by side at each alpha.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4))
    methods = sorted(hurst_long["method"].unique())
    width = 0.04
    for i, m in enumerate(methods):
        d = hurst_long[hurst_long["method"] == m]
        x = d["alpha"].to_numpy() + (i - (len(methods) - 1) / 2) * width / len(methods) * 2
        ax.errorbar(x, d["hurst"], yerr=[d["hurst"] - d["ci95_low"], d["ci95_high"] - d["hurst"]], fmt="o",
                    ms=4, capsize=2, label=m)
    a = np.linspace(1.0, 2.0, 50)
    ax.plot(a, (3 - a) / 2, "k-", lw=1, label="(3 - alpha)/2")
    if bellcore is not None and len(bellcore):
        ax.axhline(float(bellcore["hurst"].median()), color="grey", ls="--", lw=1, label="Bellcore 25 s (median)")
    ax.set_xlabel("alpha [-]")
    ax.set_ylabel("H [-]")
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_counts_scales(counts: pd.DataFrame, run_ids: list[str], *, scales: tuple[int, ...] = (1, 10, 100),
                       axes: Sequence[Sequence[Axes]] | np.ndarray | None = None) -> Sequence[Sequence[Axes]] | np.ndarray:
    """Packet counts of each series at several aggregation levels (Leland et al.'s Fig. 1 style); returns the axes.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``p5_counts`` rows (``run_id``, ``t_s``, ``packets``).
    run_ids : list of str
        Series to draw, one row of panels each.
    scales : tuple of int
        Aggregation factors of the series' bins (10 ms in ``p5_counts``).
    axes : 2-d array of matplotlib.axes.Axes, optional
        One row per series, one column per scale; default a new figure.

    Returns
    -------
    2-d array of matplotlib.axes.Axes
        The panels (``axes`` itself when given): packets per aggregated bin, the last 250 bins at
        each scale, as bars.
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(len(run_ids), len(scales), figsize=(3.2 * len(scales), 2.2 * len(run_ids)),
                               squeeze=False)
    for r, rid in enumerate(run_ids):
        c = counts[counts["run_id"] == rid].sort_values("t_s")
        x = c["packets"].to_numpy()
        bin_s = float(np.diff(c["t_s"].to_numpy()[:2])[0])
        for k, m in enumerate(scales):
            n = len(x) // m
            y = x[: n * m].reshape(n, m).sum(axis=1)
            y = y[-min(n, 250):]  # the last 250 points at every scale
            ax = axes[r][k]
            # the bars of ax.bar(arange(len(y)), y, width=1) as one filled step patch, not 250 Rectangles
            ax.stairs(y, np.arange(len(y) + 1) - 0.5, fill=True, color="C0")
            ax.set_title(f"{rid}: {bin_s * m:g} s bins", fontsize=8)
            ax.set_xticks([])
    return axes
