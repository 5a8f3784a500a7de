"""Teaching figures: bufferbloat, and BBR's share against CUBIC as the buffer grows (``teach_bufferbloat_bbr``).

The model numbers come from :mod:`tcpmodels.models.bbr` (Ware et al., IMC 2019); the measured points
from the shipped BBR dataset (:mod:`tcpmodels.papers.bbr_coexistence`, runs on this machine's kernel and
in ns-3); a live run from :func:`tcpmodels.experiments.bbr.live.live_run` when the notebook runs as root.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.bbr import SCHEMA
from tcpmodels.models.bbr import (
    BBR_MIN_RTT_WINDOW_S,
    BBR_PROBE_RTT_DURATION_S,
    bbr_standing_queue_packets,
    queue_packets_for_bdp,
    rate_pps,
    ware_bbr_share,
    ware_inflight_cap_packets,
    ware_loss_based_share,
    ware_rtt_estimate_s,
    ware_simple_inflight_cap_packets,
)
from tcpmodels.notebook.params import flag, folder, integer, real
from tcpmodels.notebook.widgets import figure_widget, int_slider, log_slider
from tcpmodels.teaching.style import legend, new_figure, panels, reuse_layout, teaching_figure, title

__all__ = ["PARAMETERS", "queueing_delay_table", "bbr_numbers", "shipped_runs", "plot_bufferbloat", "plot_bbr_simple_model", "bufferbloat_widget",
           "live_or_shipped"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rate_mbps : float
        Bottleneck rate. [Mbit/s]
    base_rtt_ms : float
        Base RTT. [ms]
    data_dir : str or Path
        The project's ``data`` directory.
    n_bbr : int
        N. [-]
    n_points : int
        Points per curve (>= 10).
""")


#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`).
PARAMETERS = {
    "quick": flag(),
    "figures_dir": folder(),
    "data_dir": folder(),
    "rate_mbps": real(1.0, 1000.0, "Mbit/s"),
    "base_rtt_ms": real(5.0, 300.0, "ms"),
    "queue_bdp": real(0.25, 64.0, "BDP"),
    "n_bbr": integer(1, 32),
    "live_run": flag(),
}


def _check(rate_mbps: float, base_rtt_ms: float, queue_bdp: float, n_bbr: int) -> None:
    check_range("rate_mbps", rate_mbps, unit="Mbit/s", low=0, low_open=True, high=10_000)
    check_range("base_rtt_ms", base_rtt_ms, unit="ms", low=0, low_open=True, high=10_000)
    check_range("queue_bdp", queue_bdp, unit="-", low=0, low_open=True, high=1024)
    if int(n_bbr) != n_bbr or not 1 <= n_bbr <= 64:
        raise ValueError(f"n_bbr [-] must be a whole number in [1, 64]; got {n_bbr}")


def queueing_delay_table(rates_mbps: tuple[float, ...] = (1.0, 10.0, 100.0, 1000.0),
                         buffers_kb: tuple[float, ...] = (64.0, 256.0, 1024.0, 4096.0)) -> pd.DataFrame:
    """The delay a full buffer adds, B / C, for a few link rates and buffer sizes. [ms]

    Parameters
    ----------
    rates_mbps : tuple of float
        Link rates C. [Mbit/s]
    buffers_kb : tuple of float
        Buffer sizes B. [KB = 1000 bytes]

    Returns
    -------
    pandas.DataFrame
        Rows: buffer [KB]; columns: rate [Mbit/s]; values: ``B * 8 / C`` [ms].

    Examples
    --------
    >>> float(queueing_delay_table((10.0,), (1000.0,)).iloc[0, 0])   # 1 MB at 10 Mbit/s: 0.8 s
    800.0
    """
    for r in rates_mbps:
        check_range("rates_mbps", r, unit="Mbit/s", low=0, low_open=True)
    for b in buffers_kb:
        check_range("buffers_kb", b, unit="KB", low=0)
    data = {f"{r:g} Mbit/s": [b * 1e3 * 8 / (r * 1e6) * 1e3 for b in buffers_kb] for r in rates_mbps}
    return pd.DataFrame(data, index=pd.Index([f"{b:g} KB" for b in buffers_kb], name="buffer"))


@_PARAMETERS.fill
def bbr_numbers(rate_mbps: float = 10.0, base_rtt_ms: float = 40.0, queue_bdp: float = 8.0, n_bbr: int = 1,
                packet_bytes: int = 1500) -> pd.DataFrame:
    """Ware et al.'s model, step by step, for one setting: ``quantity, value, unit`` rows.

    Parameters
    ----------
    {rate_mbps, base_rtt_ms}
    queue_bdp : float
        X, the buffer in BDPs. [-]
    n_bbr : int
        N, BBR flows. [-]
    packet_bytes : int
        Packet size. [bytes]

    Returns
    -------
    pandas.DataFrame
        BDP, buffer, the queueing delay of a full buffer, p (eq. 9), RTT_est (eq. 7), the in-flight cap
        (eq. 8), one ProbeRTT (eq. 11), BBR's share (eq. 10), and the standing queue of N BBR flows alone.
    """
    _check(rate_mbps, base_rtt_ms, queue_bdp, n_bbr)
    c = float(rate_pps(rate_mbps * 1e6, packet_bytes))
    l_s = base_rtt_ms / 1e3
    q = float(queue_packets_for_bdp(queue_bdp, c, l_s))
    rows = [
        ("BDP c l", c * l_s, "packets"),
        ("buffer q = X c l", q, "packets"),
        ("queueing delay of a full buffer q / c", q / c * 1e3, "ms"),
        ("loss-based flows' share p (eq. 9)", float(ware_loss_based_share(c, l_s, q, n_bbr)), "-"),
        ("BBR's RTT estimate (eq. 7)", float(ware_rtt_estimate_s(c, l_s, q, n_bbr)) * 1e3, "ms"),
        ("BBR's in-flight cap, all N flows (eq. 8)", float(ware_inflight_cap_packets(c, l_s, q, n_bbr)), "packets"),
        ("one ProbeRTT: q/c + 0.2 s + l (eq. 11)", (q / c + BBR_PROBE_RTT_DURATION_S + l_s) * 1e3, "ms"),
        ("BBR's share of the link (eq. 10)", float(ware_bbr_share(c, l_s, q, n_bbr)), "-"),
        ("standing queue of the N BBR flows alone", float(bbr_standing_queue_packets(c, l_s, n_bbr, q)), "packets"),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value", "unit"])


@_PARAMETERS.fill
def shipped_runs(data_dir: str | Path) -> pd.DataFrame | None:
    """The shipped kernel and ns-3 runs of the BBR campaign (table ``runs`` of :data:`tcpmodels.datasets.bbr.SCHEMA`,
    ``bbr_runs.parquet``), or None if absent.

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    pandas.DataFrame or None
        One row per run (see :mod:`tcpmodels.experiments.bbr.dataset`), without the pilot.
    """
    if not SCHEMA.present(data_dir, ("runs",)):
        return None
    runs = SCHEMA.read(data_dir, ("runs",))["runs"]
    return runs[runs["campaign"] != "bbr_pilot"]


@_PARAMETERS.fill
@teaching_figure
def plot_bufferbloat(rate_mbps: float = 10.0, base_rtt_ms: float = 40.0, queue_bdp: float = 8.0, n_bbr: int = 1,
                     *, runs: pd.DataFrame | None = None, n_points: int = 200) -> Figure:
    """Two panels: the RTT a full buffer costs, and BBR's share against the buffer X.

    Parameters
    ----------
    {rate_mbps, base_rtt_ms}
    queue_bdp : float
        X, the marked buffer. [-]
    {n_bbr}
    runs : pandas.DataFrame, optional
        :func:`shipped_runs` (measured points at 10 Mbit/s x 40 ms; drawn only at that setting).
    {n_points}

    Returns
    -------
    matplotlib.figure.Figure
        Left (top in lecture mode): RTT with a full buffer, ``l + q/c``, in base RTTs against X, with the
        median RTT the kernel flows saw (with a CUBIC flow: it fills the buffer; BBR alone: about a BDP of
        queue).
        Right (bottom): BBR's share (eq. 10) for N and for N = 1 against X, with the kernel's and ns-3's
        runs. The simple model behind it is :func:`plot_bbr_simple_model`.
    """
    _check(rate_mbps, base_rtt_ms, queue_bdp, n_bbr)
    if int(n_points) < 10:
        raise ValueError(f"n_points [-] must be >= 10; got {n_points}")
    c = float(rate_pps(rate_mbps * 1e6))
    l_s = base_rtt_ms / 1e3
    xs = np.geomspace(0.25, 64, int(n_points))
    measured = runs is not None and np.isclose(rate_mbps, 10.0) and np.isclose(base_rtt_ms, 40.0)
    fig = new_figure(11, 4.2, lecture_height_in=6.5)
    ax_d, ax_s = panels(fig, 2)

    # -- left: the delay of a full buffer
    # RTT in base RTTs: the same axis at every rate and base RTT (1 + X with a full buffer), so the
    # figure's margins do not change with the sliders and its layout is computed once (reuse_layout)
    ax_d.plot(xs, 1.0 + xs, color="C3", lw=2, label="full buffer: (l + q/c) / l")
    ax_d.axhline(1.0, color="0.4", ls="--", lw=1, label="base RTT l")
    alone = float(bbr_standing_queue_packets(c, l_s, max(int(n_bbr), 2), np.inf)) / c
    ax_d.axhline(1.0 + alone / l_s, color="C0", lw=1.5, label=f"BBR alone, N = {max(int(n_bbr), 2)}")
    if measured:
        k = runs[runs["engine"] == "kernel"]
        withc = k[k["competitor"] != "none"]
        ax_d.plot(withc["queue_bdp"], 1.0 + withc["queue_delay_s"] / l_s, "o", color="C3", alpha=0.5,
                  label="kernel, with CUBIC/Reno")
        bbr_alone = k[k["competitor"] == "none"]
        ax_d.plot(bbr_alone["queue_bdp"], 1.0 + bbr_alone["queue_delay_s"] / l_s, "s", color="C0",
                  label="kernel, BBR alone")
    ax_d.axvline(queue_bdp, color="0.6", lw=0.8)
    ax_d.set_xscale("log", base=2)
    ax_d.set_yscale("log")
    ax_d.set_xlim(xs[0], xs[-1])
    ax_d.set_ylim(0.8, 100.0)
    ax_d.set_xlabel("buffer X [BDP]")
    ax_d.set_ylabel("RTT / base RTT [-]")
    title(ax_d, f"bufferbloat at {rate_mbps:g} Mbit/s x {base_rtt_ms:g} ms: X = {queue_bdp:.3g} adds "
                f"{queue_bdp * base_rtt_ms:.0f} ms")
    legend(ax_d, loc="upper left", lecture_columns=2)

    # -- right: the share against X, where eq. (10) holds: one ProbeRTT (q/c + 0.2 s + l) inside its 10 s window
    x_limit = (BBR_MIN_RTT_WINDOW_S - BBR_PROBE_RTT_DURATION_S - l_s) / l_s
    xs_model = xs[xs < x_limit]
    curves = [(int(n_bbr), "-", "C0", 2.0)] + ([(1, ":", "0.4", 1.0)] if int(n_bbr) != 1 else [])
    for n, style, colour, width in curves:
        share = ware_bbr_share(c, l_s, queue_packets_for_bdp(xs_model, c, l_s), n)
        ax_s.plot(xs_model, share, style, color=colour, lw=width, label=f"model (eq. 10), N = {n}")
    if measured:
        for eng, mark in (("kernel", "o"), ("ns3", "x")):
            pts = runs[(runs["engine"] == eng) & (runs["n_bbr"] == int(n_bbr)) & (runs["n_loss"] == 1)
                       & (runs["competitor"] == "cubic")]
            ax_s.plot(pts["queue_bdp"], pts["share_bbr"], mark, color="C1" if eng == "kernel" else "C2", ms=7,
                      label=f"{'kernel bbr' if eng == 'kernel' else 'ns-3 TcpBbr'} vs 1 CUBIC, N = {n_bbr}")
    ax_s.axhline(0.5, color="0.7", lw=0.8, ls="--")
    ax_s.set_xscale("log", base=2)
    ax_s.set_xlim(xs[0], xs[-1])
    ax_s.set_ylim(0, 1.02)
    ax_s.set_xlabel("buffer X [BDP]")
    ax_s.set_ylabel("BBR's share [-]")
    if queue_bdp < x_limit:
        mark = float(ware_bbr_share(c, l_s, float(queue_packets_for_bdp(queue_bdp, c, l_s)), int(n_bbr)))
        ax_s.plot([queue_bdp], [mark], "ko")
        title(ax_s, f"N = {n_bbr} BBR vs CUBIC: model {mark:.2f} at X = {queue_bdp:.3g}")
    else:
        title(ax_s, f"N = {n_bbr} BBR vs CUBIC: eq. (10) holds up to X = {x_limit:.3g} (a ProbeRTT must fit in 10 s)")
    legend(ax_s, loc="lower left", lecture_columns=2)
    # what decides the margins besides the mode and size: the legends' entries and the titles' lines
    lines = tuple(ax.get_title().count("\n") for ax in (ax_d, ax_s))
    return reuse_layout(fig, ("plot_bufferbloat", bool(measured), int(n_bbr) == 1, len(str(int(n_bbr))), lines))


@_PARAMETERS.fill
@teaching_figure
def plot_bbr_simple_model(rate_mbps: float = 10.0, base_rtt_ms: float = 40.0, queue_bdp: float = 8.0, *,
                          n_points: int = 200) -> Figure:
    """Ware et al.'s simple model: one BBR flow against loss-based flows in a deep buffer (eq. 5).

    Parameters
    ----------
    {rate_mbps, base_rtt_ms}
    queue_bdp : float
        X, the buffer. [-]
    {n_points}

    Returns
    -------
    matplotlib.figure.Figure
        BBR's data in flight ``(1 - p) q`` and its in-flight cap ``2 q p (1 - p)`` against p, the
        loss-based flows' share of the queue: they meet at p = 1/2.
    """
    _check(rate_mbps, base_rtt_ms, queue_bdp, 1)
    if int(n_points) < 10:
        raise ValueError(f"n_points [-] must be >= 10; got {n_points}")
    c = float(rate_pps(rate_mbps * 1e6))
    q = float(queue_packets_for_bdp(queue_bdp, c, base_rtt_ms / 1e3))
    fig = new_figure(11, 3.4, lecture_height_in=3.6)
    ax_c = fig.subplots()
    p = np.linspace(0, 1, int(n_points))
    ax_c.plot(p, (1 - p) * q, color="C0", lw=2, label="BBR's data in flight (1 - p) q")
    ax_c.plot(p, ware_simple_inflight_cap_packets(q, p), color="C2", lw=2, label="in-flight cap 2 q p (1 - p)")
    ax_c.plot([0.5], [0.5 * q], "ko")
    ax_c.annotate("they meet at p = 1/2", (0.5, 0.5 * q), xytext=(8, 8), textcoords="offset points")
    ax_c.set_xlabel("p, the loss-based flows' share of the queue [-]")
    ax_c.set_ylabel("packets")
    title(ax_c, f"why one BBR flow stops at half (eq. 5), q = {q:.0f} packets")
    legend(ax_c, loc="upper right")
    return fig


def bufferbloat_widget(rate_mbps: float = 10.0, base_rtt_ms: float = 40.0, queue_bdp: float = 8.0, n_bbr: int = 1,
                       *, runs: pd.DataFrame | None = None, n_points: int = 200) -> VBox:
    """Sliders on X, N, the rate and the base RTT above :func:`plot_bufferbloat`.

    Parameters
    ----------
    rate_mbps, base_rtt_ms, queue_bdp, n_bbr : float, float, float, int
        Initial slider values (see :func:`plot_bufferbloat`). [Mbit/s], [ms], [-], [-]
    runs : pandas.DataFrame, optional
        Measured runs (fixed).
    n_points : int
        Points per curve (fixed).

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`.
    """
    controls = {
        "queue_bdp": log_slider("buffer X [BDP]", queue_bdp, 0.25, 64.0),
        "n_bbr": int_slider("BBR flows N [-]", int(n_bbr), 1, 32),
        "rate_mbps": log_slider("rate [Mbit/s]", rate_mbps, 1.0, 1000.0),
        "base_rtt_ms": log_slider("base RTT [ms]", base_rtt_ms, 5.0, 300.0),
    }
    # the simple model (plot_bbr_simple_model) stays a static figure: it does not depend on N, and a panel
    # redraws every figure it holds on every move
    return figure_widget(plot_bufferbloat, controls, fixed={"runs": runs, "n_points": n_points})


@_PARAMETERS.fill
def live_or_shipped(data_dir: str | Path, queue_bdp: float, n_bbr: int, *, live: bool) -> pd.DataFrame:
    """A run of N BBR flows against one CUBIC flow: live on the testbed (root, ``live``) or the shipped ones.

    Parameters
    ----------
    {data_dir}
    queue_bdp : float
        X. [-]
    {n_bbr}
    live : bool
        Run it now (about 30 s plus set-up) if the process is root; otherwise, or if False, show the
        shipped kernel runs at the grid point nearest (X, N).

    Returns
    -------
    pandas.DataFrame
        ``source`` (``live run`` or ``shipped``), ``queue_bdp``, ``n_bbr``, ``share_bbr``, ``model_share_bbr``,
        ``queue_delay_s`` [s], ``warmup_s``, ``measure_s`` [s]; empty if neither is available.
    """
    cols = ["source", "engine", "queue_bdp", "n_bbr", "share_bbr", "model_share_bbr", "queue_delay_s", "warmup_s",
            "measure_s"]
    if live and os.geteuid() == 0:
        from tcpmodels.experiments.bbr.live import live_run

        return live_run(queue_bdp, int(n_bbr))[cols]
    runs = shipped_runs(data_dir)
    if runs is None:
        return pd.DataFrame(columns=cols)
    k = runs[(runs["engine"] == "kernel") & (runs["competitor"] == "cubic") & (runs["n_loss"] == 1)].copy()
    if k.empty:
        return pd.DataFrame(columns=cols)
    dist = (np.log2(k["queue_bdp"]) - np.log2(queue_bdp)).abs() + (k["n_bbr"] - n_bbr).abs()
    near = k[dist == dist.min()].assign(source="shipped")
    return near[cols].reset_index(drop=True)
