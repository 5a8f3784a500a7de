r"""Teaching figures: Pareto samples, self-similar ON/OFF traffic against Poisson, and Hurst estimators.

- :func:`plot_pareto_samples`: the empirical tail of Pareto file sizes against the
  exponential with the same mean, and how slowly the sample mean settles.
- :func:`plot_self_similarity`: the aggregate of N ON/OFF sources with Pareto periods
  (Willinger et al. 1997) and a Poisson packet stream of the same mean rate, each shown
  at several time scales (every row zooms into a tenth of the row above), the picture of
  Leland, Taqqu, Willinger and Wilson (1994, Fig. 1): the ON/OFF traffic looks equally
  bursty at every scale, Poisson smooths out.
- :func:`plot_hurst_estimates`: the variance-time plot of both series and the six
  estimators of :mod:`tcpmodels.models.hurst` beside H = (3 - alpha)/2.

References
----------
.. [1] W. E. Leland, M. S. Taqqu, W. Willinger, D. V. Wilson, "On the self-similar nature
   of Ethernet traffic", SIGCOMM 1993 / IEEE/ACM ToN 2(1), 1--15, 1994.
.. [2] W. Willinger, M. S. Taqqu, R. Sherman, D. V. Wilson, "Self-similarity through
   high-variability", IEEE/ACM ToN 5(1), 71--86, 1997.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, MultipleLocator

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.heavytail import Pareto, hurst_from_alpha, onoff_aggregate_rate, onoff_mean_rate
from tcpmodels.models.hurst import METHODS, estimate_all, hurst_aggvar
from tcpmodels.notebook.params import flag, folder, integer, real
from tcpmodels.notebook.widgets import figure_widget, float_slider, int_slider
from tcpmodels.teaching.style import legend, new_figure, panels, reuse_layout, suptitle, teaching_figure, title

__all__ = [
    "PARAMETERS",
    "BIN_S",
    "MEAN_PERIOD_S",
    "PEAK_RATE_PPS",
    "POINTS_PER_PANEL",
    "aggregate_series",
    "hurst_table",
    "plot_pareto_samples",
    "plot_self_similarity",
    "plot_hurst_estimates",
    "pareto_widget",
    "self_similarity_widget",
    "hurst_widget",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    seed : int
        Initial seed of the random generator.
    alpha : float
        Initial tail index of the ON and OFF periods. [-]
    n_sources : int
        Initial number of ON/OFF sources. [-]
""")

#: Width of the finest time bin. [s]
BIN_S = 0.1
#: Mean ON and mean OFF period of every source. [s]
MEAN_PERIOD_S = 1.0
#: Packet rate of one source while ON. [packets/s]
PEAK_RATE_PPS = 100.0
#: Points drawn per panel (bins at that panel's time scale).
POINTS_PER_PANEL = 100
#: Ranges of the sliders and parameters: alpha [-], mean size [KB], files [-], sources [-], seed.
ALPHA_RANGE = (1.05, 2.5)
MEAN_KB_RANGE = (1.0, 100.0)
N_SAMPLES_RANGE = (1_000, 200_000)
N_SOURCES_RANGE = (1, 200)
SEED_RANGE = (0, 2**32 - 1)
#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`).
PARAMETERS = {
    "quick": flag(),
    "figures_dir": folder(),
    "alpha": real(*ALPHA_RANGE),
    "mean_kb": real(*MEAN_KB_RANGE, "KB"),
    "n_samples": integer(*N_SAMPLES_RANGE),
    "n_sources": integer(*N_SOURCES_RANGE),
    "seed": integer(*SEED_RANGE),
}


def _seed_slider(seed: int):
    """Seeds 0 ... 20, or up to the given seed if it is larger."""
    return int_slider("seed", int(seed), 0, max(20, int(seed)))


def _check_alpha(alpha: float) -> None:
    check_range("alpha", alpha, unit="-", low=1, high=2.5, low_open=True)


def _check_scales(n_scales: int) -> None:
    if int(n_scales) != n_scales or not 2 <= n_scales <= 5:
        raise ValueError(f"n_scales [-] must be an integer in [2, 5]; got {n_scales}")


# --------------------------------------------------------------------------- Pareto samples


@teaching_figure
def plot_pareto_samples(alpha: float = 1.2, mean_kb: float = 10.0, n_samples: int = 20_000, seed: int = 0) -> Figure:
    """Pareto file sizes with a given mean: their tail and their running mean, against the exponential.

    Parameters
    ----------
    alpha : float
        Tail index, in (1, 2.5]. [-]
    mean_kb : float
        Mean file size. [KB] (1 KB = 1000 bytes)
    n_samples : int
        Number of files drawn, >= 100. [-]
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    matplotlib.figure.Figure
        Left: empirical P(X > x) of the sample (log-log) with the Pareto and exponential
        survival functions of the same mean. Right: running sample mean against the
        number of files, for both.
    """
    _check_alpha(alpha)
    check_range("mean_kb", mean_kb, unit="KB", low=0, low_open=True)
    if int(n_samples) != n_samples or n_samples < 100:
        raise ValueError(f"n_samples [-] must be an integer >= 100; got {n_samples}")
    rng = np.random.default_rng(int(seed))
    dist = Pareto.from_mean(mean_kb * 1e3, alpha)
    x = dist.sample(int(n_samples), rng)
    expo = rng.exponential(mean_kb * 1e3, int(n_samples))
    fig = new_figure(11, 4.2, lecture_height_in=6.3)
    ax_t, ax_m = panels(fig, 2)

    xs = np.sort(x)
    ccdf = 1.0 - np.arange(xs.size) / xs.size
    ax_t.plot(xs / 1e3, ccdf, ".", ms=2, color="C0", label=f"{int(n_samples):,} Pareto samples")
    grid = np.logspace(np.log10(dist.scale), np.log10(max(xs[-1], 10 * dist.scale)), 200)
    ax_t.plot(grid / 1e3, dist.sf(grid), color="C0", lw=1.2, label=f"Pareto: (x_m / x)^{alpha:.3g}, x_m = {dist.scale / 1e3:.3g} KB")
    ax_t.plot(grid / 1e3, np.exp(-grid / (mean_kb * 1e3)), color="C1", lw=1.2, ls="--", label="exponential, same mean")
    ax_t.axvline(mean_kb, color="k", lw=0.7, ls=":")
    ax_t.axvline(dist.median / 1e3, color="C2", lw=0.9, ls="-.", label=f"median {dist.median / 1e3:.3g} KB")
    ax_t.set_xscale("log")
    ax_t.set_yscale("log")
    ax_t.set_ylim(0.5 / xs.size, 1.5)
    ax_t.set_xlabel("file size x [KB]")
    ax_t.set_ylabel("P(X > x) [-]")
    top = xs[-max(1, xs.size // 100) :].sum() / xs.sum()
    title(ax_t, f"alpha = {alpha:.3g}: the largest 1% of files carry {top:.0%} of the bytes")
    legend(ax_t, loc="lower left")

    n = np.arange(1, x.size + 1)
    ax_m.plot(n, np.cumsum(x) / n / 1e3, color="C0", lw=1.3, label="Pareto running mean")
    ax_m.plot(n, np.cumsum(expo) / n / 1e3, color="C1", lw=1.1, ls="--", label="exponential running mean")
    ax_m.axhline(mean_kb, color="k", lw=0.8, ls=":", label=f"true mean {mean_kb:.3g} KB")
    ax_m.set_xscale("log")
    ax_m.set_xlabel("number of files n [-]")
    ax_m.set_ylabel("mean of the first n files [KB]")
    ax_m.set_ylim(0, 3 * mean_kb)
    title(ax_m, f"sample mean {x.mean() / 1e3:.3g} KB (true {mean_kb:.3g}); variance {'infinite' if alpha <= 2 else 'finite'}")
    legend(ax_m, loc="upper right")
    for ax in (ax_t, ax_m):
        ax.grid(True, lw=0.3)
    return fig


@_PARAMETERS.fill
def pareto_widget(alpha: float = 1.2, mean_kb: float = 10.0, n_samples: int = 20_000, seed: int = 0) -> VBox:
    """Sliders for alpha, the mean, the sample size and the seed above :func:`plot_pareto_samples`.

    Parameters
    ----------
    alpha : float
        Initial tail index. [-]
    mean_kb : float
        Initial mean file size. [KB]
    n_samples : int
        Initial number of files drawn. [-]
    {seed}

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`: controls above the redrawn figure.
    """
    controls = {
        "alpha": float_slider("tail index alpha [-]", alpha, *ALPHA_RANGE, 0.05),
        "mean_kb": float_slider("mean file size [KB]", mean_kb, *MEAN_KB_RANGE, 1.0),
        "n_samples": int_slider("files drawn [-]", int(n_samples), *N_SAMPLES_RANGE, 1_000),
        "seed": _seed_slider(seed),
    }
    return figure_widget(plot_pareto_samples, controls)


# --------------------------------------------------------------------------- ON/OFF aggregate


@functools.lru_cache(maxsize=8)
def _series(alpha: float, n_sources: int, seed: int, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(int(seed))
    onoff = onoff_aggregate_rate(
        n_sources=int(n_sources), alpha_on=float(alpha), alpha_off=float(alpha), mean_on_s=MEAN_PERIOD_S,
        mean_off_s=MEAN_PERIOD_S, bin_s=BIN_S, n_bins=int(n_bins), rng=rng, peak_rate=PEAK_RATE_PPS,
    )  # fmt: skip
    mean = float(onoff_mean_rate(int(n_sources), MEAN_PERIOD_S, MEAN_PERIOD_S, PEAK_RATE_PPS))
    poisson = rng.poisson(mean * BIN_S, int(n_bins)) / BIN_S
    onoff.setflags(write=False)
    poisson.setflags(write=False)
    return onoff, poisson


def aggregate_series(alpha: float = 1.4, n_sources: int = 50, seed: int = 0, *, n_scales: int = 4) -> pd.DataFrame:
    """Packet rate per finest bin of the ON/OFF aggregate and of Poisson traffic with the same mean.

    Parameters
    ----------
    alpha : float
        Tail index of the ON and OFF periods (Pareto, mean :data:`MEAN_PERIOD_S`), in (1, 2.5]. [-]
    n_sources : int
        Number of ON/OFF sources, each sending :data:`PEAK_RATE_PPS` while ON. [-]
    seed : int
        Seed of :func:`numpy.random.default_rng`.
    n_scales : int
        Time scales shown later (2 ... 5); the series has ``POINTS_PER_PANEL * 10**(n_scales-1)``
        bins of :data:`BIN_S`.

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start), ``onoff_pps``, ``poisson_pps``. Cached per argument tuple
        so that moving one slider does not redraw the other figure's random numbers.
    """
    _check_alpha(alpha)
    _check_scales(n_scales)
    if int(n_sources) != n_sources or n_sources < 1:
        raise ValueError(f"n_sources [-] must be an integer >= 1; got {n_sources}")
    n_bins = POINTS_PER_PANEL * 10 ** (int(n_scales) - 1)
    onoff, poisson = _series(float(alpha), int(n_sources), int(seed), n_bins)
    return pd.DataFrame({"t_s": np.arange(n_bins) * BIN_S, "onoff_pps": onoff, "poisson_pps": poisson})


def _block_means(x: np.ndarray, m: int) -> np.ndarray:
    k = x.size // m
    return x[: k * m].reshape(k, m).mean(axis=1)


@teaching_figure
def plot_self_similarity(alpha: float = 1.4, n_sources: int = 50, seed: int = 0, *, n_scales: int = 4) -> Figure:
    """ON/OFF aggregate and Poisson traffic at ``n_scales`` time scales, each row zooming into the one above.

    Parameters
    ----------
    alpha, n_sources, seed, n_scales
        See :func:`aggregate_series`.

    Returns
    -------
    matplotlib.figure.Figure
        ``n_scales`` rows, two columns (ON/OFF, Poisson). Row 0 shows the whole series
        in :data:`POINTS_PER_PANEL` bins of ``BIN_S * 10**(n_scales-1)``; each next row
        shows, in bins ten times shorter, the tenth of the row above shaded there. The
        y axis is the rate divided by the long-run mean, with the same limits everywhere.
    """
    data = aggregate_series(alpha, n_sources, seed, n_scales=n_scales)
    mean = float(onoff_mean_rate(int(n_sources), MEAN_PERIOD_S, MEAN_PERIOD_S, PEAK_RATE_PPS))
    pick = np.random.default_rng([int(seed), 1]).integers(0, 10, size=n_scales)
    fig = new_figure(11, 1.45 * n_scales + 0.8, lecture_height_in=1.25 * n_scales + 0.9)
    axes = fig.subplots(n_scales, 2, sharey=True, squeeze=False)
    start = 0  # first finest bin of the window shown in the current row
    ymax = 0.0
    for row in range(n_scales):
        m = 10 ** (n_scales - 1 - row)
        width = POINTS_PER_PANEL * m  # finest bins covered by this row
        for col, name in enumerate(("onoff_pps", "poisson_pps")):
            y = _block_means(data[name].to_numpy()[start : start + width], m) / mean
            t = (start + np.arange(y.size) * m) * BIN_S
            ax = axes[row, col]
            ax.step(t, y, where="post", lw=0.9, color="C0" if col == 0 else "C1")
            ax.axhline(1.0, color="0.5", lw=0.6)
            ax.set_xlim(start * BIN_S, (start + width) * BIN_S)
            ax.set_ylabel(f"bin {m * BIN_S:g} s", fontsize="small")
            ymax = max(ymax, float(y.max()))
        if row + 1 < n_scales:
            sub = start + int(pick[row]) * (width // 10)
            for ax in axes[row]:
                ax.axvspan(sub * BIN_S, (sub + width // 10) * BIN_S, color="C2", alpha=0.2, lw=0)
            start = sub
    # y ticks chosen here, not by the locator, so that the labels' width (and the layout) follows from the step
    y_step = 1.0 if 1.05 * ymax > 2.0 else 0.5
    for ax in axes.ravel():
        ax.set_ylim(0, 1.05 * ymax)
        ax.yaxis.set_major_locator(MultipleLocator(y_step))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.0f" if y_step == 1.0 else "%.1f"))
    h = float(hurst_from_alpha(alpha)) if alpha < 2 else 0.5
    axes[0, 0].set_title(f"ON/OFF, alpha = {alpha:.3g} (H = {h:.3g})")
    axes[0, 1].set_title("Poisson (H = 0.5)")
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    for ax in axes[:, 1]:
        ax.tick_params(labelleft=False)  # shared y axis: the left column's labels are enough
    suptitle(fig, f"{int(n_sources)} ON/OFF sources with Pareto periods and Poisson packets of the same mean rate, "
                  "as rate / mean rate; each row zooms into the shaded tenth of the row above")  # fmt: skip
    # the margins depend on the grid, the y labels' step and width and the title's length: laid out once per combination
    return reuse_layout(fig, ("plot_self_similarity", n_scales, y_step, len(f"{1.05 * ymax:.0f}"), len(str(int(n_sources)))))


def hurst_table(alpha: float = 1.4, n_sources: int = 50, seed: int = 0, *, n_scales: int = 4) -> pd.DataFrame:
    """The six estimators of :mod:`tcpmodels.models.hurst` on both series (finest bins).

    Parameters
    ----------
    alpha : float
        Tail index of the ON and OFF periods. [-]
    n_sources : int
        Number of ON/OFF sources. [-]
    seed : int
        Seed of the random generator.
    n_scales : int
        Time scales of :func:`aggregate_series` (sets the series length). [-]

    Returns
    -------
    pandas.DataFrame
        One row per (``series``, ``method``) with ``hurst``, ``ci95_low``, ``ci95_high``,
        ``stderr_kind`` and ``theory`` ((3 - alpha)/2 for ON/OFF with alpha < 2, 0.5 otherwise).
    """
    data = aggregate_series(alpha, n_sources, seed, n_scales=n_scales)
    theory = {"ON/OFF": float(hurst_from_alpha(alpha)) if alpha < 2 else 0.5, "Poisson": 0.5}
    parts = []
    for label, col in (("ON/OFF", "onoff_pps"), ("Poisson", "poisson_pps")):
        est = estimate_all(data[col].to_numpy()).reset_index()
        parts.append(est.assign(series=label, theory=theory[label]))
    table = pd.concat(parts, ignore_index=True)
    return table[["series", "method", "hurst", "ci95_low", "ci95_high", "stderr_kind", "theory"]]


@teaching_figure
def plot_hurst_estimates(alpha: float = 1.4, n_sources: int = 50, seed: int = 0, *, n_scales: int = 4) -> Figure:
    """Variance-time plot of both series and the six Hurst estimates with 95% intervals.

    Parameters
    ----------
    alpha, n_sources, seed, n_scales
        See :func:`aggregate_series`.

    Returns
    -------
    matplotlib.figure.Figure
        Left: log10 variance of block means of rate/mean against log10 block size
        (slope 2H - 2: -1 for Poisson, shallower for long-range dependence), with the
        aggregated-variance fits. Right: H by each method for both series, with the
        theoretical values as lines.
    """
    data = aggregate_series(alpha, n_sources, seed, n_scales=n_scales)
    table = hurst_table(alpha, n_sources, seed, n_scales=n_scales)
    fig = new_figure(11, 4.0, lecture_height_in=6.3)
    ax_v, ax_h = panels(fig, 2)
    for label, col, colour in (("ON/OFF", "onoff_pps", "C0"), ("Poisson", "poisson_pps", "C1")):
        x = data[col].to_numpy()
        fit = hurst_aggvar(x / x.mean())
        ax_v.plot(fit.x, fit.y, "o", ms=3.5, color=colour, label=f"{label}: slope {fit.slope:.2f} -> H = {fit.hurst:.2f}")
        ax_v.plot(fit.x, fit.fitted, color=colour, lw=1)
    ref = ax_v.get_lines()[3]  # Poisson's fitted line: start the slope -1 guide there
    x0, y0 = ref.get_xdata()[0], ref.get_ydata()[0]
    xs = np.array([x0, ref.get_xdata()[-1]])
    ax_v.plot(xs, y0 - (xs - x0), color="0.4", lw=0.8, ls=":", label="slope -1 (short-range dependence)")
    ax_v.set_xlabel("log10 block size m [bins]")
    ax_v.set_ylabel("log10 variance [-]")
    title(ax_v, "variance-time plot (rate / mean)")
    legend(ax_v, loc="lower left")

    methods = list(METHODS)
    pos = np.arange(len(methods))
    for k, (label, colour) in enumerate((("ON/OFF", "C0"), ("Poisson", "C1"))):
        part = table[table.series == label].set_index("method").loc[methods]
        yerr = np.vstack([part.hurst - part.ci95_low, part.ci95_high - part.hurst])
        ax_h.errorbar(pos + (k - 0.5) * 0.25, part.hurst, yerr=yerr, fmt="o", color=colour, capsize=3, label=label)
        ax_h.axhline(float(part.theory.iloc[0]), color=colour, lw=1, ls="--")
    ax_h.set_xticks(pos, methods)
    ax_h.set_ylabel("Hurst parameter H [-]")
    h = table.loc[table.series == "ON/OFF", "theory"].iloc[0]
    title(ax_h, f"estimates with 95% intervals; dashed: theory ({h:.3g} and 0.5)")
    ax_h.set_ylim(0.3, 1.1)
    legend(ax_h, loc="lower right", lecture_columns=2)
    for ax in (ax_v, ax_h):
        ax.grid(True, lw=0.3)
    return fig


@_PARAMETERS.fill
def self_similarity_widget(alpha: float = 1.4, n_sources: int = 50, seed: int = 0, *, n_scales: int = 4) -> VBox:
    """Sliders for alpha, the number of sources and the seed above :func:`plot_self_similarity`.

    Parameters
    ----------
    {alpha, n_sources, seed}
    n_scales : int
        Time scales shown (fixed). [-]

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`: controls above the redrawn figure.
    """
    return figure_widget(plot_self_similarity, _traffic_controls(alpha, n_sources, seed), fixed={"n_scales": n_scales})


@_PARAMETERS.fill
def hurst_widget(alpha: float = 1.4, n_sources: int = 50, seed: int = 0, *, n_scales: int = 4) -> VBox:
    """Sliders for alpha, the number of sources and the seed above :func:`plot_hurst_estimates`.

    Parameters
    ----------
    {alpha, n_sources, seed}
    n_scales : int
        Sets the series length, as in :func:`aggregate_series` (fixed). [-]

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`: controls above the redrawn figure.
    """
    return figure_widget(plot_hurst_estimates, _traffic_controls(alpha, n_sources, seed), fixed={"n_scales": n_scales})


def _traffic_controls(alpha: float, n_sources: int, seed: int) -> dict:
    return {
        "alpha": float_slider("tail index alpha [-]", alpha, *ALPHA_RANGE, 0.05),
        "n_sources": int_slider("ON/OFF sources [-]", int(n_sources), *N_SOURCES_RANGE),
        "seed": _seed_slider(seed),
    }
