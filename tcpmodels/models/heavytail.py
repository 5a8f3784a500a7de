r"""Heavy tails and long-range dependence: Pareto sizes, ON/OFF aggregates, exact fGn.

Web object sizes and ON/OFF periods are modelled as Pareto (type I):

.. math:: P(X > x) = (x_m / x)^{\alpha}, \quad x \ge x_m

with scale :math:`x_m` (``scale``) and shape / tail index :math:`\alpha` (``alpha``).
Superposing many ON/OFF sources whose ON or OFF periods are Pareto with
:math:`1 < \alpha < 2` gives, over long time scales, fractional Gaussian noise
with Hurst parameter :math:`H = (3 - \alpha_{min}) / 2` (Willinger, Taqqu,
Sherman and Wilson 1997). :func:`onoff_aggregate_rate` builds that aggregate,
:func:`fgn` generates exact fractional Gaussian noise (Davies--Harte) to test the
estimators in :mod:`tcpmodels.models.hurst` against.

Pareto quantities are unit-agnostic: ``scale``, ``mean`` and ``median`` share
whatever unit the caller uses (bytes for file sizes, seconds for periods); the
docstrings write that unit as ``[x]``.

References
----------
.. [1] W. Willinger, M. S. Taqqu, R. Sherman, D. V. Wilson, "Self-similarity
   through high-variability: statistical analysis of Ethernet LAN traffic at the
   source level", IEEE/ACM Trans. Networking 5(1), 71--86, 1997.
.. [2] M. E. Crovella, A. Bestavros, "Self-similarity in World Wide Web traffic:
   evidence and possible causes", IEEE/ACM Trans. Networking 5(6), 835--846, 1997.
.. [3] R. B. Davies, D. S. Harte, "Tests for Hurst effect", Biometrika 74(1),
   95--101, 1987.
.. [4] C. R. Dietrich, G. N. Newsam, "Fast and exact simulation of stationary
   Gaussian processes through circulant embedding of the covariance matrix",
   SIAM J. Sci. Comput. 18(4), 1088--1107, 1997.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from tcpmodels._arrays import broadcast, check_range, check_scalar, finite_result, wrap
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric

__all__ = [
    "pareto_scale",
    "pareto_mean",
    "pareto_median",
    "pareto_alpha_from_median_ratio",
    "hurst_from_alpha",
    "Pareto",
    "onoff_mean_rate",
    "onoff_aggregate_rate",
    "fgn_autocovariance",
    "circulant_gaussian",
    "fgn",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rng : numpy.random.Generator
        Source of randomness.
    scale : numeric
        Scale (minimum value) :math:`x_m`, > 0. [x]
    alpha : numeric
        Shape (tail index), > 0. [-]
    size : int or tuple of int
        Output shape.
""")


def _check_alpha(alpha: Any) -> None:
    check_range("alpha", alpha, unit="-", low=0, low_open=True, high=np.inf, high_open=True)


def _check_rng(rng: Any) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)); got {type(rng).__name__}"
        )


# --------------------------------------------------------------------------- Pareto formulas


@finite_result
def pareto_scale(mean: Numeric, alpha: Numeric) -> Numeric:
    r"""Pareto scale (minimum) :math:`x_m` that gives a mean for a shape.

    Parameters
    ----------
    mean : numeric
        Mean of the distribution, > 0. [x]
    alpha : numeric
        Shape (tail index), > 1; for alpha <= 1 the mean is infinite, so no
        scale gives a finite mean and a ``ValueError`` is raised. [-]

    Returns
    -------
    numeric
        :math:`x_m = \bar x (\alpha - 1) / \alpha`. [x]

    References
    ----------
    .. [1] N. L. Johnson, S. Kotz, N. Balakrishnan, *Continuous Univariate
       Distributions*, vol. 1, 2nd ed., ch. 20 (Pareto), 1994.

    Examples
    --------
    >>> round(pareto_scale(10_000.0, 1.2), 3)
    1666.667
    """
    args, kind = broadcast(mean=mean, alpha=alpha)
    check_range("mean", args["mean"], unit="x", low=0, low_open=True)
    check_range("alpha", args["alpha"], unit="-", low=1, low_open=True, high=np.inf, high_open=True)
    return wrap(args["mean"] * (args["alpha"] - 1.0) / args["alpha"], kind)


@_PARAMETERS.fill
def pareto_mean(scale: Numeric, alpha: Numeric) -> Numeric:
    r"""Mean of a Pareto distribution, :math:`\alpha x_m / (\alpha - 1)`.

    Parameters
    ----------
    {scale, alpha}

    Returns
    -------
    numeric
        The mean [x]; ``inf`` where alpha <= 1 (the mean does not exist).

    References
    ----------
    .. [1] Johnson, Kotz, Balakrishnan, *Continuous Univariate Distributions*,
       vol. 1, ch. 20, 1994.
    """
    args, kind = broadcast(scale=scale, alpha=alpha)
    check_range("scale", args["scale"], unit="x", low=0, low_open=True)
    _check_alpha(args["alpha"])
    a, xm = args["alpha"], args["scale"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.where(a > 1, a * xm / (a - 1.0), np.inf)
    overflow = (a > 1) & np.isinf(out) & np.isfinite(xm)
    if overflow.any():
        i = tuple(np.argwhere(np.broadcast_to(overflow, out.shape))[0]) if out.ndim else ()
        xm_i, a_i = np.broadcast_to(xm, out.shape)[i], np.broadcast_to(a, out.shape)[i]
        raise ValueError(f"pareto_mean: the mean overflows a 64-bit float for scale={xm_i:g}, alpha={a_i:g} "
                         "(check the unit of scale)")
    out = np.where(np.isnan(a) | np.isnan(xm), np.nan, out)
    return wrap(out, kind)


@_PARAMETERS.fill
@finite_result
def pareto_median(scale: Numeric, alpha: Numeric) -> Numeric:
    r"""Median of a Pareto distribution, :math:`x_m 2^{1/\alpha}`.

    Parameters
    ----------
    {scale, alpha}

    Returns
    -------
    numeric
        The median. [x]

    Examples
    --------
    A mean of 10 KB with alpha = 1.2 (Ono and Nakashima's "about 2.5 KB"):

    >>> round(pareto_median(pareto_scale(10_000.0, 1.2), 1.2))
    2970
    """
    args, kind = broadcast(scale=scale, alpha=alpha)
    check_range("scale", args["scale"], unit="x", low=0, low_open=True)
    _check_alpha(args["alpha"])
    return wrap(args["scale"] * 2.0 ** (1.0 / args["alpha"]), kind)


def pareto_alpha_from_median_ratio(median_over_mean: Numeric) -> Numeric:
    r"""Shape alpha for which the median of a Pareto is a given fraction of its mean.

    The ratio :math:`r = \text{median}/\text{mean} = (1 - 1/\alpha)\,2^{1/\alpha}`
    rises monotonically from 0 (alpha -> 1) to 1 (alpha -> inf). With
    :math:`v = 1 - 1/\alpha` it reads :math:`v\,2^{-v} = r/2`, solved exactly by
    the principal branch of the Lambert W function:
    :math:`v = -W_0(-r \ln 2 / 2) / \ln 2`.

    Parameters
    ----------
    median_over_mean : numeric
        Ratio of median to mean, in (0, 1). [-]

    Returns
    -------
    numeric
        alpha > 1. [-]

    Examples
    --------
    Mean 10 KB and median 2.5 KB (Ono and Nakashima, P5, Sec. 2):

    >>> round(pareto_alpha_from_median_ratio(0.25), 4)
    1.1594
    """
    args, kind = broadcast(median_over_mean=median_over_mean)
    r = args["median_over_mean"]
    check_range("median_over_mean", r, unit="-", low=0, high=1, low_open=True, high_open=True)
    v = -special.lambertw(-r * np.log(2.0) / 2.0, k=0).real / np.log(2.0)
    return wrap(1.0 / (1.0 - v), kind)


@finite_result
def hurst_from_alpha(alpha: Numeric) -> Numeric:
    r"""Hurst parameter of an aggregate of ON/OFF sources with Pareto periods.

    Parameters
    ----------
    alpha : numeric
        The smallest tail index of the ON and OFF period distributions,
        :math:`\alpha_{min} = \min(\alpha_{on}, \alpha_{off})`, > 1. [-]

    Returns
    -------
    numeric
        :math:`H = (3 - \alpha)/2` for :math:`1 < \alpha < 2` (long-range
        dependent, 0.5 < H < 1); 0.5 for :math:`\alpha \ge 2` (finite variance:
        short-range dependent). [-]

    Notes
    -----
    The limit theorem of [1]_ (Theorem 1): the cumulative traffic of N
    independent ON/OFF sources, as N -> inf and then time is rescaled, tends
    to fractional Brownian motion with :math:`H = (3 - \alpha_{min})/2`, where
    :math:`\alpha_{min}` is the heavier tail of the ON and OFF periods. With
    alpha <= 1 the periods have infinite mean and the construction has no
    stationary version, so that is an error here.

    References
    ----------
    .. [1] W. Willinger, M. S. Taqqu, R. Sherman, D. V. Wilson, IEEE/ACM Trans.
       Networking 5(1), 71--86, 1997.

    Examples
    --------
    >>> hurst_from_alpha(1.2)
    0.9
    """
    args, kind = broadcast(alpha=alpha)
    a = args["alpha"]
    check_range("alpha", a, unit="-", low=1, low_open=True, high=np.inf, high_open=True)
    out = np.where(a < 2.0, (3.0 - a) / 2.0, 0.5)
    out = np.where(np.isnan(a), np.nan, out)
    return wrap(out, kind)


@dataclass(frozen=True, kw_only=True)
class Pareto:
    r"""A Pareto (type I) distribution with scale :math:`x_m` and shape alpha.

    Build it from a scale (``Pareto(scale=..., alpha=...)``) or from a mean
    (``Pareto.from_mean(mean, alpha)``, alpha > 1).

    Parameters
    ----------
    scale : float
        Scale (the minimum value) :math:`x_m`, > 0. [x]
    alpha : float
        Shape (tail index), > 0. [-]

    Notes
    -----
    :math:`P(X > x) = (x_m/x)^{\alpha}` for :math:`x \ge x_m`. Same
    distribution as ``scipy.stats.pareto(b=alpha, scale=scale)``
    (:meth:`to_scipy`).
    """

    scale: float
    alpha: float

    def __post_init__(self) -> None:
        for name, unit in (("scale", "x"), ("alpha", "-")):
            value = check_scalar(name, getattr(self, name), unit, low=0, low_open=True, high=np.inf, high_open=True)
            object.__setattr__(self, name, value)

    @classmethod
    def from_mean(cls, mean: float, alpha: float) -> "Pareto":
        """The Pareto with a given mean and shape.

        Parameters
        ----------
        mean : float
            Mean, > 0. [x]
        alpha : float
            Tail index, > 1 (a finite mean). [-]

        Returns
        -------
        Pareto
            With ``scale = mean (alpha - 1) / alpha``.
        """
        return cls(scale=float(pareto_scale(float(mean), float(alpha))), alpha=float(alpha))

    @property
    def mean(self) -> float:
        """Mean [x]; ``inf`` if alpha <= 1."""
        return float(pareto_mean(self.scale, self.alpha))

    @property
    def median(self) -> float:
        """Median :math:`x_m 2^{1/\\alpha}` [x]."""
        return float(pareto_median(self.scale, self.alpha))

    @property
    def variance(self) -> float:
        """Variance [x^2]; ``inf`` if alpha <= 2."""
        a, xm = self.alpha, self.scale
        if a <= 2:
            return float("inf")
        return xm**2 * a / ((a - 1.0) ** 2 * (a - 2.0))

    @property
    def hurst(self) -> float:
        """H = (3 - alpha)/2 of an ON/OFF aggregate with these periods (see :func:`hurst_from_alpha`)."""
        return float(hurst_from_alpha(self.alpha))

    def sf(self, x: ArrayLike) -> np.ndarray:
        """Survival function P(X > x).

        Parameters
        ----------
        x : array_like
            Values of the variable. [x]

        Returns
        -------
        numpy.ndarray or float
            P(X > x), 1 below the scale. [-]
        """
        return stats.pareto.sf(x, self.alpha, scale=self.scale)

    def to_scipy(self) -> Any:
        """The same distribution as a frozen ``scipy.stats.pareto``.

        Returns
        -------
        scipy.stats.rv_frozen
            ``scipy.stats.pareto(b=alpha, scale=scale)``.
        """
        return stats.pareto(self.alpha, scale=self.scale)

    @_PARAMETERS.fill
    def sample(self, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Draw independent values using ``rng`` (no global random state).

        Parameters
        ----------
        {size, rng}

        Returns
        -------
        numpy.ndarray
            Samples of shape ``size``. [x]
        """
        _check_rng(rng)
        return self.scale * (1.0 + rng.pareto(self.alpha, size))

    @_PARAMETERS.fill
    def sample_equilibrium(self, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        r"""Draw from the equilibrium (residual-life) distribution; needs alpha > 1.

        The remaining length of the period in progress at a random time, with
        density :math:`P(X > x)/E[X]`. Its CDF is :math:`x/E[X]` below
        :math:`x_m` and :math:`1 - (x_m/x)^{\alpha-1}/\alpha` above, inverted here.
        Starting each ON/OFF source with this makes the superposition
        stationary from time 0.

        Parameters
        ----------
        {size, rng}

        Returns
        -------
        numpy.ndarray
            Residual lengths of shape ``size`` (``inf`` where longer than any float). [x]
        """
        _check_rng(rng)
        a, xm = self.alpha, self.scale
        if a <= 1:
            raise ValueError(f"alpha [-] must be > 1 for an equilibrium distribution (finite mean); got {a:g}")
        u = rng.random(size)
        knee = (a - 1.0) / a
        with np.errstate(divide="ignore", over="ignore"):  # inf: a period longer than any horizon
            tail = xm * (a * (1.0 - u)) ** (-1.0 / (a - 1.0))
        return np.where(u < knee, u * a * xm / (a - 1.0), tail)

    def to_dict(self) -> dict[str, float]:
        """Parameters and derived quantities as a plain dict.

        Returns
        -------
        dict of str to float
            ``scale``, ``alpha``, ``mean``, ``median``, ``variance``.
        """
        return {**asdict(self), "mean": self.mean, "median": self.median, "variance": self.variance}


# --------------------------------------------------------------------------- ON/OFF aggregate


@finite_result
def onoff_mean_rate(n_sources: Numeric, mean_on_s: Numeric, mean_off_s: Numeric, peak_rate: Numeric = 1.0) -> Numeric:
    r"""Long-run mean rate of N independent ON/OFF sources.

    Parameters
    ----------
    n_sources : numeric
        Number of sources, >= 1. [-]
    mean_on_s, mean_off_s : numeric
        Mean ON and OFF period, > 0. [s]
    peak_rate : numeric
        Rate of one source while ON, > 0 (e.g. bytes/s or packets/s). [unit/s]

    Returns
    -------
    numeric
        :math:`N r\,\mu_{on}/(\mu_{on} + \mu_{off})`. [unit/s]
    """
    args, kind = broadcast(n_sources=n_sources, mean_on_s=mean_on_s, mean_off_s=mean_off_s, peak_rate=peak_rate)
    check_range("n_sources", args["n_sources"], unit="-", low=1)
    check_range("mean_on_s", args["mean_on_s"], unit="s", low=0, low_open=True)
    check_range("mean_off_s", args["mean_off_s"], unit="s", low=0, low_open=True)
    check_range("peak_rate", args["peak_rate"], unit="unit/s", low=0, low_open=True)
    on, off = args["mean_on_s"], args["mean_off_s"]
    return wrap(args["n_sources"] * args["peak_rate"] * on / (on + off), kind)


@_PARAMETERS.fill
def onoff_aggregate_rate(
    *,
    n_sources: int,
    alpha_on: float,
    alpha_off: float,
    mean_on_s: float,
    mean_off_s: float,
    bin_s: float,
    n_bins: int,
    rng: np.random.Generator,
    peak_rate: float = 1.0,
) -> np.ndarray:
    r"""Rate per time bin of N independent ON/OFF sources with Pareto periods.

    Each source alternates ON periods (sending at ``peak_rate``) and OFF
    periods (silent), all independent, ON ~ Pareto(mean_on_s, alpha_on) and
    OFF ~ Pareto(mean_off_s, alpha_off). The superposition is the
    construction of Willinger, Taqqu, Sherman and Wilson [1]_; its Hurst
    parameter is :math:`H = (3 - \min(\alpha_{on}, \alpha_{off}))/2` for
    :math:`1 < \alpha_{min} < 2` (:func:`hurst_from_alpha`).

    Parameters
    ----------
    n_sources : int
        Number of sources N, >= 1. [-]
    alpha_on, alpha_off : float
        Tail index of the ON and OFF periods, > 1. [-]
    mean_on_s, mean_off_s : float
        Mean ON and OFF period, > 0. [s]
    bin_s : float
        Width of a time bin, > 0. [s]
    n_bins : int
        Number of bins, >= 1; the series covers [0, n_bins * bin_s). [-]
    {rng}
    peak_rate : float
        Rate of one source while ON, > 0. [unit/s]

    Returns
    -------
    numpy.ndarray
        Mean aggregate rate in each bin (ON time of all sources in the bin,
        times ``peak_rate``, divided by ``bin_s``), shape ``(n_bins,)``.
        Multiply by ``bin_s`` for the amount per bin. [unit/s]

    Notes
    -----
    The process is stationary from time 0: each source starts ON with
    probability :math:`\mu_{on}/(\mu_{on}+\mu_{off})`, and its first period is
    drawn from the equilibrium distribution (:meth:`Pareto.sample_equilibrium`),
    so the expected rate in every bin is :func:`onoff_mean_rate`. The ON time in
    each bin is integrated exactly from the period boundaries (no sub-bin
    sampling). Periods are drawn for all sources at once, in rounds, until
    every source covers the whole horizon.

    References
    ----------
    .. [1] W. Willinger, M. S. Taqqu, R. Sherman, D. V. Wilson, "Self-similarity
       through high-variability", IEEE/ACM Trans. Networking 5(1), 71--86, 1997.
    """
    _check_rng(rng)
    _count("n_sources", n_sources)
    _count("n_bins", n_bins)
    finite = dict(low=0, low_open=True, high=np.inf, high_open=True)
    alpha_on = check_scalar("alpha_on", alpha_on, "-", **{**finite, "low": 1})
    alpha_off = check_scalar("alpha_off", alpha_off, "-", **{**finite, "low": 1})
    mean_on_s = check_scalar("mean_on_s", mean_on_s, "s", **finite)
    mean_off_s = check_scalar("mean_off_s", mean_off_s, "s", **finite)
    bin_s = check_scalar("bin_s", bin_s, "s", **finite)
    peak_rate = check_scalar("peak_rate", peak_rate, "unit/s", **finite)
    expected_periods = 2.0 * int(n_sources) * n_bins * bin_s / (mean_on_s + mean_off_s)
    if not expected_periods <= MAX_ONOFF_PERIODS:
        raise ValueError(
            f"the horizon n_bins * bin_s = {n_bins * bin_s:g} s holds about {expected_periods:.3g} ON and OFF "
            f"periods of {n_sources} sources (mean cycle {mean_on_s + mean_off_s:g} s); at most "
            f"{MAX_ONOFF_PERIODS:.0e} fit in memory: use fewer or shorter bins, or longer periods")

    on = Pareto.from_mean(mean_on_s, alpha_on)
    off = Pareto.from_mean(mean_off_s, alpha_off)
    horizon_s = n_bins * bin_s
    n = int(n_sources)

    # Stationary start: state at t = 0 and the residual length of the current period.
    start_on = rng.random(n) < mean_on_s / (mean_on_s + mean_off_s)
    first = np.where(start_on, on.sample_equilibrium(n, rng), off.sample_equilibrium(n, rng))

    # Event list: +1 when a source turns ON, -1 when it turns OFF (times in s).
    times = [np.zeros(int(start_on.sum())), first[start_on], first[~start_on]]
    signs = [np.ones(int(start_on.sum())), -np.ones(int(start_on.sum())), np.ones(int((~start_on).sum()))]
    clock = first.copy()
    state_on = ~start_on  # state of the period that starts at `clock`
    cycle_s = mean_on_s + mean_off_s
    active = np.flatnonzero(clock < horizon_s)
    while active.size:
        remaining = horizon_s - clock[active]
        k = int(np.ceil(1.2 * remaining.max() / cycle_s)) + 4
        k = min(k, max(8, 2_000_000 // active.size))
        on_p = on.sample((active.size, k), rng)
        off_p = off.sample((active.size, k), rng)
        first_on = state_on[active][:, None]
        # Interleave so that column 2i is the period starting now-ish and 2i+1 the next.
        periods = np.empty((active.size, 2 * k))
        periods[:, 0::2] = np.where(first_on, on_p, off_p)
        periods[:, 1::2] = np.where(first_on, off_p, on_p)
        ends = clock[active][:, None] + np.cumsum(periods, axis=1)
        # Period j ends at ends[:, j]: an ON period ends with -1, an OFF period with +1.
        sign_row = np.where(first_on, -1.0, 1.0) * np.tile([1.0, -1.0], k)[None, :]
        before = ends < horizon_s
        times.append(ends[before])
        signs.append(np.broadcast_to(sign_row, ends.shape)[before])
        clock[active] = ends[:, -1]  # an even number of periods: the state at `clock` is unchanged
        active = np.flatnonzero(clock < horizon_s)

    on_time_s = _on_time_per_bin(np.concatenate(times), np.concatenate(signs), bin_s, n_bins)
    return peak_rate * on_time_s / bin_s


#: Largest expected number of ON and OFF periods :func:`onoff_aggregate_rate` draws (16 bytes each, twice). [-]
MAX_ONOFF_PERIODS = 2e8


def _on_time_per_bin(times_s: np.ndarray, signs: np.ndarray, bin_s: float, n_bins: int) -> np.ndarray:
    """Integral over each bin of the step function that jumps by ``signs`` at ``times_s``.

    The function is 0 before the first event; events at or after the horizon
    ``n_bins * bin_s`` are ignored. Exact (no sampling): the integral over bin i
    is ``bin_s`` times the level at the bin start plus, for each event inside
    the bin, ``sign * (bin end - event time)``. [s per bin, times the level]
    """
    inside = times_s < n_bins * bin_s
    t, d = times_s[inside], signs[inside]
    b = np.minimum((t / bin_s).astype(np.int64), n_bins - 1)
    level_change = np.bincount(b, weights=d, minlength=n_bins)
    level_at_start = np.concatenate([[0.0], np.cumsum(level_change)[:-1]])
    partial = np.bincount(b, weights=d * ((b + 1) * bin_s - t), minlength=n_bins)
    return level_at_start * bin_s + partial


# --------------------------------------------------------------------------- fractional Gaussian noise


@finite_result
def fgn_autocovariance(lag: Numeric, hurst: Numeric) -> Numeric:
    r"""Autocovariance of unit-variance fractional Gaussian noise.

    Parameters
    ----------
    lag : numeric
        Lag k (any real; the formula is even in k). [samples]
    hurst : numeric
        Hurst parameter H in (0, 1). [-]

    Returns
    -------
    numeric
        :math:`\gamma(k) = \tfrac12(|k+1|^{2H} - 2|k|^{2H} + |k-1|^{2H})`. [-]

    References
    ----------
    .. [1] B. B. Mandelbrot, J. W. Van Ness, "Fractional Brownian motions,
       fractional noises and applications", SIAM Review 10(4), 422--437, 1968.

    Examples
    --------
    >>> fgn_autocovariance(1, 0.75)  # 2^(2H-1) - 1
    0.41421356237309515
    """
    args, kind = broadcast(lag=lag, hurst=hurst)
    check_range("hurst", args["hurst"], unit="-", low=0, high=1, low_open=True, high_open=True)
    k, two_h = np.abs(args["lag"]), 2.0 * args["hurst"]
    out = 0.5 * (np.abs(k + 1.0) ** two_h - 2.0 * k**two_h + np.abs(k - 1.0) ** two_h)
    return wrap(out, kind)


@_PARAMETERS.fill
def circulant_gaussian(
    autocovariance: ArrayLike, rng: np.random.Generator, *, n_series: int | None = None, tolerance: float = 1e-9
) -> np.ndarray:
    r"""Exact sample of a stationary Gaussian series by circulant embedding.

    Parameters
    ----------
    autocovariance : array_like
        :math:`\gamma(0), \dots, \gamma(n-1)` of the wanted series (n >= 2). [x^2]
    {rng}
    n_series : int, optional
        Number of independent series to draw at once; default one. [-]
    tolerance : float
        Eigenvalues of the embedding above ``-tolerance * max eigenvalue`` are
        rounding noise and set to 0; anything more negative is an error. [-]

    Returns
    -------
    numpy.ndarray
        One series of length n with exactly that autocovariance, or an array of
        shape ``(n_series, n)`` of independent ones. [x]

    Raises
    ------
    ValueError
        If the circulant embedding (size 2(n-1)) is not non-negative
        definite; the method is then not exact for this covariance.

    Notes
    -----
    The first row :math:`c = (\gamma_0, \dots, \gamma_{n-1}, \gamma_{n-2},
    \dots, \gamma_1)` of a circulant of size m = 2(n-1) has eigenvalues
    :math:`\lambda = \mathrm{FFT}(c)`. If all are >= 0, with
    :math:`\xi` a vector of independent complex normals (real and imaginary
    parts N(0, 1)), the real part of :math:`\mathrm{FFT}(\sqrt{\lambda/m}\,\xi)`
    has covariance matrix exactly the circulant, whose leading n x n block is
    the wanted Toeplitz matrix [1]_ [2]_.

    References
    ----------
    .. [1] R. B. Davies, D. S. Harte, Biometrika 74(1), 95--101, 1987.
    .. [2] C. R. Dietrich, G. N. Newsam, SIAM J. Sci. Comput. 18(4), 1088--1107, 1997.
    """
    _check_rng(rng)
    acov = np.asarray(autocovariance, dtype=float)
    if acov.ndim != 1 or acov.size < 2:
        raise ValueError(f"autocovariance must be a 1-D array of length >= 2; got shape {acov.shape}")
    if not np.all(np.isfinite(acov)):
        raise ValueError("autocovariance must be finite (no NaN or inf)")
    n = acov.size
    row = np.concatenate([acov, acov[-2:0:-1]])
    m = row.size
    eig = np.fft.rfft(row).real  # real and symmetric row: eigenvalues are real
    lowest = eig.min()
    if lowest < -tolerance * max(eig.max(), np.finfo(float).tiny):
        raise ValueError(
            "circulant embedding of this autocovariance is not non-negative definite "
            f"(smallest eigenvalue {lowest:.3g}, largest {eig.max():.3g}); "
            "the Davies-Harte method cannot generate this series exactly"
        )
    eig = np.clip(eig, 0.0, None)
    full = np.concatenate([eig, eig[-2:0:-1]])  # length m
    shape = (m,) if n_series is None else (_count("n_series", n_series), m)
    xi = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    y = np.fft.fft(np.sqrt(full / m) * xi, axis=-1)
    return y.real[..., :n].copy()


#: Longest fGn series :func:`fgn` draws: 2^30 samples (the circulant embedding then holds 32 GiB). [samples]
MAX_FGN_SAMPLES = 1 << 30
#: Largest ``sigma`` of :func:`fgn`: a Gaussian sample is below 40 sigma in magnitude, so 1e300 stays a float. [x]
MAX_FGN_SIGMA = 1e300


def _count(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} [-] must be an integer >= {low}; got {value!r}")
    return int(value)


@_PARAMETERS.fill
@finite_result
def fgn(
    n: int, hurst: float, rng: np.random.Generator, *, sigma: float = 1.0, n_series: int | None = None
) -> np.ndarray:
    r"""Exact fractional Gaussian noise of length n (Davies--Harte).

    Parameters
    ----------
    n : int
        Length of the series, >= 2. [samples]
    hurst : float
        Hurst parameter H in (0, 1); H = 0.5 is white noise. [-]
    {rng}
    sigma : float
        Standard deviation of each sample, > 0. [x]
    n_series : int, optional
        Draw this many independent series at once (shape ``(n_series, n)``). [-]

    Returns
    -------
    numpy.ndarray
        Zero-mean stationary Gaussian series with autocovariance
        :math:`\sigma^2 \gamma(k)` (:func:`fgn_autocovariance`). [x]

    Notes
    -----
    Uses :func:`circulant_gaussian`, which checks that the embedding is
    non-negative definite (it is for fGn with 0 < H < 1; Craigmile 2003).
    Cost: two FFTs of length 2n; n = 2^20 takes about 0.2 s.

    References
    ----------
    .. [1] R. B. Davies, D. S. Harte, Biometrika 74(1), 95--101, 1987.
    .. [2] P. F. Craigmile, "Simulating a class of stationary Gaussian processes
       using the Davies--Harte algorithm", J. Time Ser. Anal. 24(5), 505--511, 2003.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= MAX_FGN_SAMPLES:
        shown = f"an integer of {len(str(abs(n)))} digits" if isinstance(n, int) and abs(n) > 10**18 else repr(n)
        raise ValueError(f"n [samples] must be an integer >= 2 and at most {MAX_FGN_SAMPLES} (the embedding holds "
                         f"2n complex numbers); got {shown}")
    hurst = check_scalar("hurst", hurst, "-", low=0, high=1, low_open=True, high_open=True)
    sigma = check_scalar("sigma", sigma, "x", low=0, low_open=True, high=MAX_FGN_SIGMA)
    # Embed n + 1 lags (circulant of size 2n: a power of two when n is) and keep n samples.
    acov = fgn_autocovariance(np.arange(n + 1, dtype=float), float(hurst))
    return sigma * circulant_gaussian(acov, rng, n_series=n_series)[..., :n]
