"""P3's figures: Figs. 3-5 redrawn, Jain's index against the x(RTT) exponent, and its widget."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.data import READINGS, P3Dataset
from tcpmodels.papers.p3_cubic_fairness.fairness import fairness_table
from tcpmodels.papers.p3_cubic_fairness.runs import fluid_at, kernel_rate_bps, ns3_duration_s, ns3_rate_bps, ns3_runs


@_PARAMETERS.fill
def plot_figure(ds: P3Dataset, reno_rtt_ms: float, axes: Sequence[Axes] | np.ndarray | None = None, *,
                exponent: float | None = None, table: pd.DataFrame | None = None) -> Sequence[Axes] | np.ndarray:
    """Figs. 3-5 for one Reno RTT: throughputs (left) and Jain's index (right) against the RTT ratio.

    Kernel standard CUBIC (solid), ns-3 standard (dashed) and ns-3 proposal in each reading
    (dotted), fluid model (x, at the kernel's rate); on Jain's index, error bars = sd over
    repetitions (kernel) and over seeds (ns-3 standard). The throughput panel has no error bars.
    Every label states its engine's rate (the engines may run at different rates).

    Parameters
    ----------
    {ds}
    reno_rtt_ms : float
        The Reno flow's RTT (1, 4 or 16 for the paper's Figs. 3, 4, 5). [ms]
    axes : sequence of two matplotlib.axes.Axes, optional
        Throughput panel, Jain panel; default a new figure with two panels.
    {exponent}
    table : pandas.DataFrame, optional
        ``fairness_table(ds, reno_rtt_ms, exponent=exponent)`` if already computed (:func:`tables`
        returns it as ``fairness_reno<RTT>``); default: computed here.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        The two panels (``axes`` itself when given): throughput [Mbit/s] and Jain's index [-]
        against the RTT ratio Reno:CUBIC.
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    t = fairness_table(ds, reno_rtt_ms, exponent=exponent) if table is None else table
    x = np.arange(len(t))
    # every engine runs at its own rate: the labels say which
    kr, nr, fr = (f"{t[c].iloc[0]:g} Mbit/s" if len(t) else "?"
                  for c in ("kernel_rate_mbps", "ns3_rate_mbps", "fluid_rate_mbps"))
    ax = axes[0]
    ax.errorbar(x, t["kernel_reno"], fmt="o-", color="C0", label=f"kernel ({kr}): Reno")
    ax.errorbar(x, t["kernel_cubic"], fmt="s-", color="C1", label=f"kernel ({kr}): CUBIC")
    ax.plot(x, t["ns3_standard_reno"], "o--", color="C0", alpha=0.6, label=f"ns-3 ({nr}): Reno vs TcpCubic")
    ax.plot(x, t["ns3_standard_cubic"], "s--", color="C1", alpha=0.6, label=f"ns-3 ({nr}): TcpCubic")
    for rd, c in zip(READINGS, ("C2", "C3")):
        ax.plot(x, t[f"ns3_{rd}_reno"], "o:", color=c, alpha=0.8, label=f"ns-3 ({nr}): Reno vs proposal ({rd})")
        ax.plot(x, t[f"ns3_{rd}_cubic"], "s:", color=c, label=f"ns-3 ({nr}): proposal ({rd})")
    ax.set_xticks(x, t["ratio"])
    ax.set_xlabel("RTT ratio Reno:CUBIC [ms:ms]")
    ax.set_ylabel("throughput [Mbit/s]")
    ax.set_title(f"Reno RTT {reno_rtt_ms:g} ms (paper Fig. {({1.0: 3, 4.0: 4, 16.0: 5}).get(float(reno_rtt_ms), '-')})")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.errorbar(x, t["kernel_J"], yerr=t["kernel_J_sd"].fillna(0), fmt="o-", color="k", capsize=3,
                label=f"kernel standard ({kr})")
    ax.errorbar(x, t["ns3_standard_J"], yerr=t["ns3_standard_J_sd"].fillna(0), fmt="o--", color="C7", capsize=3,
                label=f"ns-3 standard ({nr})")
    for rd, c in zip(READINGS, ("C2", "C3")):
        ax.plot(x, t[f"ns3_{rd}_J"], "s:", color=c, label=f"ns-3 proposal ({rd}, {nr})")
        ax.plot(x, t[f"fluid_{rd}_J"], "x", color=c, ms=8, label=f"fluid ({rd}, {fr})")
    ax.plot(x, t["fluid_none_J"], "x", color="k", ms=8, label=f"fluid standard ({fr})")
    ax.set_xticks(x, t["ratio"])
    ax.set_ylim(0.45, 1.02)
    ax.set_xlabel("RTT ratio Reno:CUBIC [ms:ms]")
    ax.set_ylabel("Jain's fairness index [-]")
    ax.legend(fontsize=7)
    return axes


def available_exponents(ds: P3Dataset) -> list[float]:
    """x(RTT) exponents with cached proposal results (ns-3 runs or fluid model), sorted. [-]

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``ns3`` and ``fluid`` rows).

    Returns
    -------
    list of float
        The distinct exponents, rounded to 6 decimals, ascending; empty without proposal results. [-]
    """
    e = set()
    if len(ds.ns3):
        e |= {round(float(v), 6) for v in ds.ns3.loc[ds.ns3["kind"] != "standard", "x_exponent"]}
    if len(ds.fluid):
        e |= {round(float(v), 6) for v in ds.fluid.loc[ds.fluid["reading"] != "none", "x_exponent"]}
    return sorted(e)


@_PARAMETERS.fill
def plot_exponent_fairness(ds: P3Dataset, x_exponent: float = -1 / 3, *, seed: int | None = None) -> Figure:
    """Jain's index against the RTT ratio at one x(RTT) exponent, from cached results (the slider's figure).

    One panel per Reno RTT: ns-3 standard ``TcpCubic`` and ``TcpCubicX`` in each
    reading with x(RTT) = (RTT / 1 s)^x_exponent where the sweep cache holds
    those runs (only the runs of ``seed``, default the first seed, the one every
    exponent is run with, and of the ns-3 setting with most exponents, so exponents compare like
    for like), and the fluid
    model (proportional losses) in each reading for every exponent, at the ns-3 grid's rate
    (the kernel's without ns-3 runs; the title states it).

    Parameters
    ----------
    {ds}
    x_exponent : float
        Exponent of x(RTT); must be one of :func:`available_exponents`. [-]
    seed : int, optional
        ns-3 seed.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels (Reno RTT 1, 4, 16 ms), Jain's index [-] per RTT ratio; built without pyplot.

    Raises
    ------
    ValueError
        If the dataset has no proposal results, or ``x_exponent`` is not one of them.
    """
    exps = available_exponents(ds)
    if not exps:
        raise ValueError("the dataset has no proposal results (ns-3 or fluid)")
    if not any(abs(x_exponent - e) < 1e-5 for e in exps):
        raise ValueError(f"x_exponent [-] must be one of the computed exponents {[round(e, 4) for e in exps]}; "
                         f"got {x_exponent}")
    rate = ns3_rate_bps(ds)
    ns = ns3_runs(ds)
    setting = ""
    if len(ns):
        ns = ns[np.isclose(ns["rate_bps"], rate)]
        if ns["duration_s"].notna().any():  # one setting: the one the exponents were simulated in
            n_exp = ns[ns["kind"] != "standard"].groupby("duration_s")["x_exponent"].nunique()
            used = ns3_duration_s(ds)
            dur = max(n_exp.index, key=lambda d: (n_exp[d], bool(np.isclose(d, used)), d)) if len(n_exp) else used
            ns = ns[np.isclose(ns["duration_s"], dur)]
            setting = f" ({dur:g} s runs)"
        seed = int(ns["seed"].min()) if seed is None else seed
        ns = ns[ns["seed"] == seed]
    else:
        rate = kernel_rate_bps(ds)
    fl = fluid_at(ds, rate)  # the model at the ns-3 grid's rate, beside the ns-3 runs
    fig = Figure(figsize=(11, 3.8))
    axes = fig.subplots(1, 3, sharey=True)
    n_ns3 = 0
    for ax, reno in zip(axes, (1.0, 4.0, 16.0)):
        cubics = sorted({*fl.get("cubic_rtt_ms", []), *ns.get("cubic_rtt_ms", [])})
        x = np.arange(len(cubics))
        if len(ns):
            std = ns[(ns["kind"] == "standard") & (ns["reno_rtt_ms"] == reno)].set_index("cubic_rtt_ms")
            ax.plot(x, std["jain"].reindex(cubics), "o--", color="C7", label="ns-3 standard")
            for rd, c in zip(READINGS, ("C2", "C3")):
                p = ns[(ns["kind"] == rd) & (ns["reno_rtt_ms"] == reno) & np.isclose(ns["x_exponent"], x_exponent)]
                n_ns3 += len(p)
                ax.plot(x, p.set_index("cubic_rtt_ms")["jain"].reindex(cubics), "s:", color=c,
                        label=f"ns-3 proposal ({rd})")
        if len(fl):
            f0 = fl[(fl["reading"] == "none") & (fl["reno_rtt_ms"] == reno)].set_index("cubic_rtt_ms")
            ax.plot(x, f0["jain"].reindex(cubics), "x", color="k", ms=7, label="fluid standard")
            for rd, c in zip(READINGS, ("C2", "C3")):
                f = fl[(fl["reading"] == rd) & (fl["reno_rtt_ms"] == reno) & np.isclose(fl["x_exponent"], x_exponent)]
                ax.plot(x, f.set_index("cubic_rtt_ms")["jain"].reindex(cubics), "x", color=c, ms=8,
                        label=f"fluid ({rd})")
        ax.set_xticks(x, [f"{reno:g}:{c:g}" for c in cubics])
        ax.set_title(f"Reno {reno:g} ms")
        ax.set_ylim(0.45, 1.02)
        ax.set_xlabel("RTT ratio Reno:CUBIC")
    axes[0].set_ylabel("Jain's index [-]")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"x(RTT) = (RTT / 1 s)^{x_exponent:.3g}: x(1 ms) = {1000 ** (-x_exponent):.3g}, "
                 f"x(64 ms) = {0.064 ** x_exponent:.3g}; ns-3 proposal runs at this exponent: {n_ns3}{setting}; "
                 f"ns-3 and fluid model at {rate / 1e6:g} Mbit/s")
    fig.tight_layout()
    return fig


@_PARAMETERS.fill
def exponent_widget(ds: P3Dataset, value: float = -1 / 3) -> ipywidgets.VBox:
    """A slider over the simulated x(RTT) exponents that redraws :func:`plot_exponent_fairness` from the dataset.

    Parameters
    ----------
    {ds}
    value : float
        Exponent to start at; the slider starts at the nearest computed one. [-]

    Returns
    -------
    ipywidgets.VBox
        :func:`tcpmodels.notebook.widgets.figure_widget`'s panel: the slider above the figure's output area.

    Raises
    ------
    ValueError
        If the dataset has no proposal results.
    """
    import functools

    import ipywidgets as widgets

    from tcpmodels.notebook.widgets import figure_widget

    exps = available_exponents(ds)
    if not exps:
        raise ValueError("the dataset has no proposal results (ns-3 or fluid)")
    options = [(f"{e:.3g}", e) for e in exps]
    start = min(exps, key=lambda e: abs(e - value))
    slider = widgets.SelectionSlider(options=options, value=start, description="x(RTT) exponent",
                                     style={"description_width": "13em"}, layout={"width": "34em"},
                                     continuous_update=False)
    plot = functools.update_wrapper(functools.partial(plot_exponent_fairness, ds), plot_exponent_fairness)
    return figure_widget(plot, {"x_exponent": slider})
