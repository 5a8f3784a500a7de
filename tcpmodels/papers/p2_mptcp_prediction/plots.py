"""P2 figures: Fig. 4 (subflow shares), Figs. 5-6 (probe vs data), Figs. 7-8 (per-path surface)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from tcpmodels._docstrings import SharedEntries
from tcpmodels.papers.p2_mptcp_prediction.data import (
    KB_BYTES,
    PAPER_FIG4_SHARE_150_120_256MB,
    P2Dataset,
    check_dataset,
    x_proposed,
)
from tcpmodels.predict import PerPathProbeSVR, SingleProbeSVR, spearman_rho

__all__ = ["plot_fig4", "plot_probe_vs_data", "plot_per_path_surface"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    dataset : P2Dataset
        The campaign's data (complete samples only, see :func:`check_dataset`).
""")


def plot_fig4(fig4_table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Fig. 4: share of bytes on subflow 1 versus transfer size, one line per RTT pair.

    Parameters
    ----------
    fig4_table : pandas.DataFrame
        ``tables(...)["fig4"]`` (``rtt1_ms, rtt2_ms, size_bytes, share1_mean, share1_sd``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The panel: share on subflow 1 [%] against transfer size [KB of 1024 bytes, log 2 scale],
        with the paper's 33.9 % as a dotted line.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    for (r1, r2), g in fig4_table.groupby(["rtt1_ms", "rtt2_ms"], sort=False):
        g = g.sort_values("size_bytes")
        ax.errorbar(g["size_bytes"] / KB_BYTES, 100 * g["share1_mean"], yerr=100 * g["share1_sd"].fillna(0),
                    marker="o", capsize=3, label=f"RTT1 = {r1:g} ms, RTT2 = {r2:g} ms")
    ax.axhline(100 * PAPER_FIG4_SHARE_150_120_256MB, color="grey", ls=":", lw=1,
               label="paper: 33.9 % at 256 MB, (150, 120) ms")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("transfer size [KB]")
    ax.set_ylabel("bytes on subflow 1 [%]")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    ax.set_title("Fig. 4 (ours): subflow-1 share vs transfer size")
    return ax


@_PARAMETERS.fill
def plot_probe_vs_data(dataset: P2Dataset, axes: Sequence[Axes] | np.ndarray | None = None
                       ) -> Sequence[Axes] | np.ndarray:
    """Figs. 5-6: 64 KB probe throughput against data throughput with the fitted SVR, TCP and MPTCP.

    Parameters
    ----------
    {dataset}
    axes : sequence of two matplotlib.axes.Axes, optional
        TCP panel, MPTCP panel; default a new figure with two panels.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        The two panels (``axes`` itself when given): probe against data throughput [KB/s], the
        Spearman rho in the title.

    Raises
    ------
    TypeError, ValueError
        From :func:`check_dataset`.
    """
    import matplotlib.pyplot as plt

    df = check_dataset(dataset)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, (title, xcol, ycol) in zip(axes, (
            ("Fig. 5 (ours): TCP, 64 KB probe on path 1", "path_probe_128KB_path1_Bps", "tcp_data_Bps"),
            ("Fig. 6 (ours): MPTCP, 64 KB MPTCP probe", "mptcp_probe_64KB_Bps", "mptcp_data_Bps"))):
        x, y = df[xcol].to_numpy(float), df[ycol].to_numpy(float)
        model = SingleProbeSVR().fit(x[:, None] * 8, y * 8)
        grid = np.linspace(x.min(), x.max(), 200)
        ax.scatter(x / KB_BYTES, y / KB_BYTES, s=10, alpha=0.6, label="samples")
        ax.plot(grid / KB_BYTES, model.predict(grid[:, None] * 8) / 8 / KB_BYTES, color="C1", label="SVR (kernlab defaults)")
        rho = spearman_rho(x, y).rho
        ax.set_title(f"{title}\nSpearman rho = {rho:.2f}", fontsize=10)
        ax.set_xlabel("probe throughput [KB/s]")
        ax.set_ylabel("data throughput [KB/s]")
        ax.legend(fontsize=8)
    return axes


@_PARAMETERS.fill
def plot_per_path_surface(dataset: P2Dataset, total: str = "128KB", axes: Sequence[Axes] | np.ndarray | None = None
                          ) -> Sequence[Axes] | np.ndarray:
    """Figs. 7-8: MPTCP data throughput against the two per-path probes (measured points) and the
    proposed SVR's prediction surface over the probes' range.

    Parameters
    ----------
    {dataset}
    total : str
        Total per-path probe size, one of :data:`PROBE_TOTALS`.
    axes : sequence of two matplotlib.axes.Axes, optional
        Measured panel, surface panel; default a new figure with two panels.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        The two panels (``axes`` itself when given), probes on path 1 and 2 [KB/s] on the axes and
        data throughput [KB/s] as colour, each with a colour bar.

    Raises
    ------
    TypeError, ValueError
        From :func:`check_dataset`.
    """
    import matplotlib.pyplot as plt

    df = check_dataset(dataset)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    X = x_proposed(df, total) / 8
    y = df["mptcp_data_Bps"].to_numpy(float)
    model = PerPathProbeSVR().fit(X * 8, y * 8)
    g1 = np.linspace(X[:, 0].min(), X[:, 0].max(), 80)
    g2 = np.linspace(X[:, 1].min(), X[:, 1].max(), 80)
    G1, G2 = np.meshgrid(g1, g2)
    Z = model.predict(np.column_stack([G1.ravel(), G2.ravel()]) * 8).reshape(G1.shape) / 8
    vmin, vmax = min(y.min(), Z.min()) / KB_BYTES, max(y.max(), Z.max()) / KB_BYTES
    sc = axes[0].scatter(X[:, 0] / KB_BYTES, X[:, 1] / KB_BYTES, c=y / KB_BYTES, s=14, cmap="viridis",
                         vmin=vmin, vmax=vmax)
    axes[0].set_title(f"Fig. 7 (ours): measured MPTCP data throughput\nper-path probes, total {total}", fontsize=10)
    cs = axes[1].contourf(G1 / KB_BYTES, G2 / KB_BYTES, Z / KB_BYTES, levels=15, cmap="viridis", vmin=vmin, vmax=vmax)
    axes[1].scatter(X[:, 0] / KB_BYTES, X[:, 1] / KB_BYTES, c="k", s=3, alpha=0.4)
    axes[1].set_title("Fig. 8 (ours): proposed SVR's prediction surface", fontsize=10)
    for ax in axes:
        ax.set_xlabel("probe on path 1 [KB/s]")
        ax.set_ylabel("probe on path 2 [KB/s]")
    plt.colorbar(sc, ax=axes[0], label="data [KB/s]")
    plt.colorbar(cs, ax=axes[1], label="predicted data [KB/s]")
    return axes

