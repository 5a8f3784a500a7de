"""Figures for the fit notebook (matplotlib; each function draws on the axes it is given and returns them)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from tcpmodels._docstrings import SharedEntries
from tcpmodels.fit.cubic import cubic_epoch_window_segments
from tcpmodels.fit.throughput import REGIMES
from tcpmodels.fit.trace import FlowEstimates

__all__ = ["measured_vs_predicted", "window_vs_loss", "epoch_trajectory", "k_observed_vs_predicted", "lia_paths"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    ax : matplotlib.axes.Axes
        Where to draw.
""")

_MARKERS = {"reno": "o", "cubic": "^"}
_COLORS = dict(zip(REGIMES, ["0.6", "tab:purple", "tab:red", "tab:orange", "tab:blue", "tab:green", "tab:brown"],
                   strict=True))


@_PARAMETERS.fill
def measured_vs_predicted(ax: Axes, flows: pd.DataFrame, model: str, title: str = "") -> Axes:
    """Log-log scatter of predicted against measured throughput, by regime and congestion control.

    Parameters
    ----------
    {ax}
    flows : pandas.DataFrame
        Flows with ``throughput_bps``, ``cc``, ``regime`` and the ``model`` column
        (:func:`~tcpmodels.fit.throughput.add_predictions`,
        :func:`~tcpmodels.fit.throughput.classify_regime`); rows where either rate is not
        positive are left out. [bit/s]
    model : str
        The prediction column, e.g. ``"mathis_bps"``.
    title : str
        Axes title; ``model`` if empty.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, in Mbit/s on both log axes, with the identity line and factor-2 lines.
    """
    f = flows[flows[model].gt(0) & flows["throughput_bps"].gt(0)]
    for (cc, reg), g in f.groupby(["cc", "regime"], observed=True):
        ax.scatter(g["throughput_bps"] / 1e6, g[model] / 1e6, s=22, marker=_MARKERS.get(cc, "o"),
                   color=_COLORS.get(reg, "k"), label=f"{cc}, {reg}", alpha=0.8)
    lo = 0.5 * min(f["throughput_bps"].min(), f[model].min()) / 1e6 if len(f) else 0.01
    hi = 2 * max(f["throughput_bps"].max(), f[model].max()) / 1e6 if len(f) else 100
    x = np.array([lo, hi])
    ax.plot(x, x, "k-", lw=1, label="prediction = measured")
    ax.plot(x, 2 * x, "k:", lw=0.8, label="factor 2")
    ax.plot(x, x / 2, "k:", lw=0.8)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="measured goodput [Mbit/s]",
           ylabel="predicted [Mbit/s]", title=title or model)
    _plain_log_ticks(ax)
    return ax


def _plain_log_ticks(ax):
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(mticker.NullFormatter())


@_PARAMETERS.fill
def window_vs_loss(ax: Axes, flows: pd.DataFrame, c_fit: float | None = None) -> Axes:
    """Measured window ``B RTT / MSS`` against the loss-event rate, with ``C / sqrt(p)`` lines.

    Parameters
    ----------
    {ax}
    flows : pandas.DataFrame
        Flows with ``loss_event_rate``, ``throughput_bps``, ``rtt_mean_s``, ``mss_bytes``,
        ``cc`` and ``regime``; rows without loss or throughput are left out.
    c_fit : float, optional
        A fitted Mathis constant, drawn as a third line. [-]

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``: window [segments] against p [-], log-log, with the b = 1 and b = 2 lines.
    """
    f = flows[flows["loss_event_rate"].gt(0) & flows["throughput_bps"].gt(0)]
    w = f["throughput_bps"] * f["rtt_mean_s"] / (8 * f["mss_bytes"])
    for (cc, reg), g in f.groupby(["cc", "regime"], observed=True):
        ax.scatter(g["loss_event_rate"], w[g.index], s=22, marker=_MARKERS.get(cc, "o"), color=_COLORS.get(reg, "k"),
                   label=f"{cc}, {reg}", alpha=0.8)
    p = np.logspace(np.log10(max(f["loss_event_rate"].min() / 2, 1e-6)), np.log10(min(f["loss_event_rate"].max() * 2, 1)),
                    50) if len(f) else np.logspace(-5, -1, 50)
    ax.plot(p, np.sqrt(1.5) / np.sqrt(p), "k-", lw=1.2, label="sqrt(3/2) / sqrt(p)  (Mathis, b = 1)")
    ax.plot(p, np.sqrt(0.75) / np.sqrt(p), "k--", lw=1, label="sqrt(3/4) / sqrt(p)  (b = 2)")
    if c_fit is not None:
        ax.plot(p, c_fit / np.sqrt(p), "-", color="tab:brown", lw=1.2, label=f"fitted C = {c_fit:.2f}")
    ax.set(xscale="log", yscale="log", xlabel="loss-event rate p [-]", ylabel="B RTT / MSS [segments]")
    return ax


@_PARAMETERS.fill
def epoch_trajectory(ax: Axes, samples: pd.DataFrame, epochs: pd.DataFrame, *, c: float, beta_cubic: float,
                     flight: pd.Series | None = None, mss_bytes: float = 1448.0,
                     t_max_s: float | None = None) -> Axes:
    """cwnd (TCP_INFO) and bytes in flight (capture) of one run, with the RFC 9438 curve at (c, beta) per epoch.

    Parameters
    ----------
    {ax}
    samples : pandas.DataFrame
        TCP_INFO samples with ``t_s`` (since connect) [s] and ``cwnd_segments``.
    epochs : pandas.DataFrame
        Epochs (:func:`~tcpmodels.fit.cubic.cwnd_epochs`) with ``w_origin_segments``
        added; epochs without a start are skipped.
    c : float
        CUBIC constant of the drawn curves. [segments/s^3]
    beta_cubic : float
        Fraction of the window kept. [-]
    flight : pandas.Series, optional
        Bytes in flight from the capture, indexed by time on the same clock. [bytes]
    mss_bytes : float
        Divides ``flight`` into segments. [bytes]
    t_max_s : float, optional
        Draw only up to this time. [s]

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.
    """
    s = samples if t_max_s is None else samples[samples["t_s"] <= t_max_s]
    ax.step(s["t_s"], s["cwnd_segments"], where="post", lw=1, color="tab:blue", label="cwnd (TCP_INFO)")
    if flight is not None:
        fl = flight if t_max_s is None else flight[flight.index <= t_max_s]
        ax.plot(fl.index, fl.to_numpy() / mss_bytes, lw=0.5, color="0.5", alpha=0.7, label="bytes in flight / MSS (capture)")
    first = True
    for _, e in epochs.iterrows():
        if not np.isfinite(e.get("start_s", np.nan)) or (t_max_s is not None and e["start_s"] > t_max_s):
            continue
        tt = np.linspace(0, max(e["end_s"] - e["start_s"], 1e-3), 200)
        w = cubic_epoch_window_segments(tt, e["w_prior_segments"], e["w_origin_segments"], e["rtt_s"], c, beta_cubic)
        ax.plot(e["start_s"] + tt, w, "--", color="tab:red", lw=1.2, label="RFC 9438 at fitted C, beta" if first else None)
        ax.axhline(e["w_prior_segments"], color="tab:red", lw=0.4, alpha=0.3)
        first = False
    ax.set(xlabel="time since connect [s]", ylabel="window [segments]")
    return ax


@_PARAMETERS.fill
def k_observed_vs_predicted(ax: Axes, ktab: pd.DataFrame) -> Axes:
    """Observed regrowth time against K = cbrt(W (1 - beta) / C) and the full RFC 9438 prediction;
    per-epoch fitted inflection time against K with fast convergence.

    Parameters
    ----------
    {ax}
    ktab : pandas.DataFrame
        :func:`tcpmodels.fit.report.k_table`: ``k_obs_s``, ``k_rfc_s``, ``k_model_s``,
        ``k_fc_s``, ``k_fit_s`` [s] and ``reno_friendly``.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, log-log in seconds, with the identity line.
    """
    lim = [0.01, 1.5 * max(ktab["k_rfc_s"].max(), ktab["k_obs_s"].max(), ktab["k_fit_s"].max(), 0.1)]
    if ktab["k_fit_s"].notna().any():
        ax.scatter(ktab["k_fc_s"], ktab["k_fit_s"], s=30, marker="D", facecolors="none", edgecolors="k",
                   label="fitted inflection K vs K with fast convergence")
    for rf, g in ktab.groupby("reno_friendly"):
        label = "Reno-friendly region (W_est wins)" if rf else "cubic region"
        ax.scatter(g["k_rfc_s"], g["k_obs_s"], s=16, alpha=0.6, label=f"{label}: vs cubic_k_s",
                   color="tab:orange" if rf else "tab:blue")
        ax.scatter(g["k_model_s"], g["k_obs_s"], s=16, alpha=0.6, marker="x",
                   label=f"{label}: vs RFC 9438 with FC + W_est", color="tab:red" if rf else "tab:green")
    ax.plot(lim, lim, "k-", lw=1)
    ax.set(xscale="log", yscale="log", xlim=lim, ylim=lim, xlabel="K predicted [s]", ylabel="K observed [s]")
    _plain_log_ticks(ax)
    return ax


def lia_paths(axes: Sequence[Axes], tcpinfo: pd.DataFrame, series: pd.DataFrame) -> Sequence[Axes]:
    """Per-subflow cwnd and srtt over time (kernel, uncoupled), and LIA's alpha on the same windows.

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
        Three axes: cwnd [segments], srtt [ms], and alpha with the LIA / uncoupled
        increase ratios [-].
    tcpinfo : pandas.DataFrame
        MPTCP subflow samples with ``path``, ``t_s``, ``cwnd_segments`` and ``srtt_s``.
    series : pandas.DataFrame
        :func:`~tcpmodels.fit.lia.lia_counterfactual`'s series: ``t_s``, ``alpha``,
        ``lia_increase_i`` and ``reno_increase_i``.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        ``axes``, each with a legend.
    """
    for path, g in tcpinfo.groupby("path"):
        axes[0].plot(g["t_s"], g["cwnd_segments"], lw=0.8, label=f"path {path} cwnd")
        axes[1].plot(g["t_s"], g["srtt_s"] * 1e3, lw=0.8, label=f"path {path} srtt")
    axes[0].set(ylabel="cwnd [segments]")
    axes[1].set(ylabel="srtt [ms]")
    if "alpha" in series:
        axes[2].plot(series["t_s"], series["alpha"], lw=0.8, color="k", label="LIA alpha on the kernel's windows")
        for col in [c for c in series if c.startswith("lia_increase_")]:
            i = col.rsplit("_", 1)[1]
            ratio = series[col] / series[f"reno_increase_{i}"]
            axes[2].plot(series["t_s"], ratio, lw=0.6, label=f"subflow {i}: LIA / uncoupled increase per ACK")
    axes[2].set(xlabel="time [s]", ylabel="[-]")
    for ax in axes:
        ax.legend(fontsize=7)
    return axes


@_PARAMETERS.fill
def loss_events(ax: Axes, packets: pd.DataFrame, *, t_min_s: float = 0.0,
                t_max_s: float | None = None) -> tuple[Axes, FlowEstimates]:
    """Time-sequence graph of one flow with its retransmissions grouped into loss events (shaded spans).

    Parameters
    ----------
    {ax}
    packets : pandas.DataFrame
        A packet table (:func:`tcpmodels.traces.read_pcap`); the flow is the one
        :func:`~tcpmodels.fit.trace.flow_estimates` picks (the most payload).
    t_min_s : float
        Start of the drawn window, since the first packet (the SYN). [s]
    t_max_s : float, optional
        End of the window; the last data segment if omitted. [s]

    Returns
    -------
    tuple of (matplotlib.axes.Axes, FlowEstimates)
        ``ax`` (sequence [MB] against time [s]) and the flow's estimates, whose
        ``events`` are the shaded spans (red: timeouts, orange: the others).

    Raises
    ------
    ValueError
        If the capture holds no TCP payload.
    """
    from tcpmodels.fit.trace import flow_estimates
    from tcpmodels.traces import time_sequence

    est = flow_estimates(packets)
    ts = time_sequence(packets, est.flow_id)
    seg, acks = ts["segments"], ts["acks"]
    t0 = float(packets["timestamp_s"].min())  # the SYN: flow_estimates' time origin
    t_max_s = (seg["time_s"].max() - t0) if t_max_s is None else t_max_s
    s = seg[(seg["time_s"] - t0 >= t_min_s) & (seg["time_s"] - t0 <= t_max_s)]
    a = acks[(acks["time_s"] - t0 >= t_min_s) & (acks["time_s"] - t0 <= t_max_s)]
    new = s[~s["is_retransmission"]]
    ax.plot(new["time_s"] - t0, new["seq_bytes"] / 1e6, ".", ms=1.5, color="tab:blue", label="data segment")
    ax.plot(a["time_s"] - t0, a["ack_bytes"] / 1e6, "-", lw=0.6, color="0.4", label="cumulative ACK")
    rtx = s[s["is_retransmission"]]
    ax.plot(rtx["time_s"] - t0, rtx["seq_bytes"] / 1e6, "o", ms=4, mfc="none", color="tab:red", label="retransmission")
    first = True
    for _, e in est.events.iterrows():
        if e["end_s"] < t_min_s or e["start_s"] > t_max_s:
            continue
        ax.axvspan(e["start_s"], e["end_s"], color="tab:red" if e["is_timeout"] else "tab:orange", alpha=0.15,
                   label="loss event (span)" if first else None)
        first = False
    ax.set(xlim=(t_min_s, t_max_s), xlabel="time since SYN [s]", ylabel="sequence [MB]")
    return ax, est
