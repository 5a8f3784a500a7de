"""P1's figures: Fig. 7 (FCT CDFs) and Figs. 8-10 (FCT by size)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from tcpmodels.papers.p1_datacenter_fct.data import ENGINE_LABELS


def plot_fig7(cdf: pd.DataFrame, axes: Sequence[Axes] | np.ndarray | None = None) -> Sequence[Axes] | np.ndarray:
    """Fig. 7: CDF of the 70 KB FCTs under TCP and each MPTCP background, one panel per engine (log x).

    Parameters
    ----------
    cdf : pandas.DataFrame
        :func:`fig7_cdf` (``tables(...)["fig7_cdf"]``).
    axes : sequence of matplotlib.axes.Axes, optional
        One panel per engine present (kernel, then ns-3); default: a new figure with one row of panels.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        The panels drawn on (``axes`` itself when given): FCT [ms] on a log x axis, cumulative probability.
    """
    import matplotlib.pyplot as plt

    engines = [e for e in ("kernel", "ns3") if e in set(cdf["engine"])]
    if axes is None:
        _, axes = plt.subplots(1, max(1, len(engines)), figsize=(5.5 * max(1, len(engines)), 4), squeeze=False)
        axes = axes[0]
    for ax, eng in zip(np.atleast_1d(axes), engines):
        present = list(dict.fromkeys(cdf.loc[cdf["engine"] == eng, "background"]))
        for bg, style in zip(present, ("-", "--", "-.", ":")):
            g = cdf[(cdf["engine"] == eng) & (cdf["background"] == bg)]
            ax.step(g["fct_ms"], g["cdf"], style, where="post", label=f"{bg} background (n = {len(g)})")
        ax.set_xscale("log")
        ax.set_xlabel("flow completion time of 70 KB flows [ms]")
        ax.set_ylabel("cumulative probability")
        ax.set_title(ENGINE_LABELS[eng], fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    return axes


def plot_figs8_10(table: pd.DataFrame, axes: Sequence[Sequence[Axes]] | np.ndarray | None = None
                  ) -> Sequence[Sequence[Axes]] | np.ndarray:
    """Figs. 8-10: mean FCT per size with 99 % CI error bars, TCP vs each MPTCP control, one row per engine.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`figs8_10` (``tables(...)["figs8_10"]``); the error bars are its ``ci_low_ms`` and
        ``ci_high_ms``, at whatever confidence level it was computed (99 % by default).
    axes : 2-d array of matplotlib.axes.Axes, optional
        One row per engine present (kernel, then ns-3), three columns (Figs. 8, 9, 10); default: a new figure.

    Returns
    -------
    2-d array of matplotlib.axes.Axes
        The panels drawn on (``axes`` itself when given): mean FCT [ms] against flow size [KB].
    """
    import matplotlib.pyplot as plt

    engines = [e for e in ("kernel", "ns3") if e in set(table["engine"])]
    figs = ["Fig. 8", "Fig. 9", "Fig. 10"]
    if axes is None:
        _, axes = plt.subplots(max(1, len(engines)), 3, figsize=(14, 3.8 * max(1, len(engines))), squeeze=False)
    titles = {"Fig. 8": "queries, no background", "Fig. 9": "queries, with background",
              "Fig. 10": "short messages, with background"}
    for i, eng in enumerate(engines):
        for j, fig in enumerate(figs):
            ax = axes[i][j]
            panel = table[(table["engine"] == eng) & (table["figure"] == fig)]
            sizes = sorted(panel["size_kb"].unique())
            protos = list(dict.fromkeys(panel["protocol"]))
            for k, proto in enumerate(protos):
                g = panel[panel["protocol"] == proto].sort_values("size_kb")
                x = np.searchsorted(sizes, g["size_kb"]) + (k - (len(protos) - 1) / 2) * 0.2
                ax.errorbar(x, g["mean_ms"], yerr=[g["mean_ms"] - g["ci_low_ms"], g["ci_high_ms"] - g["mean_ms"]],
                            fmt="osD^"[k % 4], capsize=3, label=f"{proto} (n = {int(g['n'].sum())})")
            ax.set_xticks(np.arange(len(sizes)), [f"{v:g}" for v in sizes])
            if not len(panel):
                ax.text(0.5, 0.5, "not run", transform=ax.transAxes, ha="center")
            ax.set_xlabel("flow size [KB]")
            ax.set_ylabel("mean FCT [ms] (99 % CI)")
            ax.set_title(f"{fig} {titles[fig]} — {eng}", fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    return axes
