r"""Hurst-parameter estimators that return one result object with the fit itself.

Six estimators of the Hurst parameter H of a stationary series x (e.g. packets
or bytes per time bin; for fractional Gaussian noise the autocovariance
decays like :math:`k^{2H-2}` and the spectrum like :math:`|\lambda|^{1-2H}`):

- :func:`hurst_local_whittle`: Robinson's local Whittle on the m lowest Fourier
  frequencies; standard error :math:`1/(2\sqrt m)` (asymptotic).
- :func:`hurst_wavelet`: Abry--Veitch weighted regression of the log2 mean
  squared detail coefficients on the octave; weighted-LS variance (asymptotic).
- :func:`hurst_periodogram`: log periodogram on log frequency (GPH type);
  regression variance with the known residual variance :math:`\pi^2/6`.
- :func:`hurst_dfa`: DFA-1 fluctuation on window size (log-log); calibrated sd.
- :func:`hurst_rs`: rescaled range R/S on window size (log-log); calibrated sd.
- :func:`hurst_aggvar`: variance of block means on block size (log-log); calibrated sd.

Every estimator returns a :class:`HurstResult` (estimate, standard error,
:meth:`HurstResult.confidence_interval`, and the points and line of the fit
so a notebook can plot it). :func:`hurst_exponent` dispatches by name and
:func:`estimate_all` tabulates all six.

The regression standard error of the three time-domain log-log fits (R/S,
aggregated variance, DFA) is badly calibrated (the points at different scales
are strongly correlated), so these report a standard deviation measured by
simulation of exact fGn with the same default settings (see
``_CALIBRATED_SD`` and ``benchmarks/hurst.py --calibrate``). R/S and the
aggregated variance are also biased for finite n (R/S high at low H and low
at high H, the aggregated variance low from H = 0.7); their intervals do not
cover the true H there, their docstrings say so, and their results carry
``biased=True`` with a ``bias_note`` when the interval reaches those ranges
(:data:`BIASED_RANGES`, measured by ``benchmarks/hurst_coverage.py`` on an
independent fGn generator). The
calibration holds for fGn-like input; on other processes (real traffic with
short-range structure, ON/OFF aggregates) read those intervals as indicative.

References
----------
.. [1] M. S. Taqqu, V. Teverovsky, W. Willinger, "Estimators for long-range
   dependence: an empirical study", Fractals 3(4), 785--798, 1995.
.. [2] P. M. Robinson, "Gaussian semiparametric estimation of long range
   dependence", Annals of Statistics 23(5), 1630--1661, 1995.
.. [3] P. Abry, D. Veitch, "Wavelet analysis of long-range-dependent traffic",
   IEEE Trans. Information Theory 44(1), 2--15, 1998.
.. [4] C.-K. Peng et al., "Mosaic organization of DNA nucleotides", Phys. Rev.
   E 49(2), 1685--1689, 1994.
.. [5] J. Geweke, S. Porter-Hudak, "The estimation and application of long
   memory time series models", J. Time Series Analysis 4(4), 221--238, 1983.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from tcpmodels._arrays import check_magnitude
from tcpmodels._docstrings import SharedEntries

__all__ = [
    "HurstResult",
    "hurst_rs",
    "hurst_aggvar",
    "hurst_periodogram",
    "hurst_dfa",
    "hurst_local_whittle",
    "hurst_wavelet",
    "hurst_exponent",
    "estimate_all",
    "METHODS",
    "BIASED_RANGES",
    "MAX_SQUARED_SUM",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    x : array_like or pandas.Series
        The series, at least 128 values, no NaN. [any]
    min_window, max_window : int
        Smallest and largest window, default 16 and n/4. [samples]
    n_windows : int
        Number of window sizes, log-spaced. [-]
""")

#: Largest ``n * max|x|`` the estimators accept for a series of n samples: they square sums of up to n
#: values, and (1e150)^2 stays far inside a float's range (1.8e308), with room for the sums of squares.
MAX_SQUARED_SUM = 1e150


@dataclass(frozen=True, kw_only=True, eq=False)
class HurstResult:
    r"""Estimate of the Hurst parameter with its uncertainty and the fit behind it.

    Attributes
    ----------
    hurst : float
        Estimated H. [-]
    stderr : float
        Standard error of ``hurst``. [-]
    stderr_kind : str
        Where ``stderr`` comes from: ``"asymptotic"`` (a theoretical variance
        from the literature), ``"calibrated"`` (standard deviation of this
        estimator measured on simulated fGn) or ``"regression"``.
    method : str
        Estimator name (a key of :data:`METHODS`).
    n : int
        Length of the series used. [samples]
    x, y : numpy.ndarray
        Points of the fit, e.g. log window size and log statistic.
    fit_mask : numpy.ndarray
        Boolean, which points entered the fit.
    slope, intercept : float
        The fitted line ``y = intercept + slope * x``.
    x_label, y_label : str
        What ``x`` and ``y`` are (for plot axes).
    params : dict
        Settings used (window sizes, bandwidth, wavelet, ...).
    biased : bool
        True when the estimator is biased enough at this estimate that its
        95% interval covers the true H less than 90% of the time on fGn
        (measured by ``benchmarks/hurst_coverage.py``; see :data:`BIASED_RANGES`).
        Read the interval as indicative only; prefer whittle, wavelet,
        periodogram or DFA.
    bias_note : str
        Why ``biased`` is set (empty when it is not), for notebooks to show.
    """

    hurst: float
    stderr: float
    stderr_kind: str
    method: str
    n: int
    x: np.ndarray
    y: np.ndarray
    fit_mask: np.ndarray
    slope: float
    intercept: float
    x_label: str
    y_label: str
    params: dict[str, Any] = field(default_factory=dict)
    biased: bool = False
    bias_note: str = ""

    @property
    def fitted(self) -> np.ndarray:
        """The fitted line evaluated at every ``x``."""
        return self.intercept + self.slope * self.x

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        """Normal-approximation interval ``hurst +/- z * stderr``.

        Parameters
        ----------
        confidence_level : float
            In (0, 1). [-]

        Returns
        -------
        tuple of float
            ``(low, high)``. [-]
        """
        if not 0.0 < confidence_level < 1.0:
            raise ValueError(f"confidence_level [-] must be in (0, 1); got {confidence_level:g}")
        z = stats.norm.ppf(0.5 + confidence_level / 2.0)
        return (self.hurst - z * self.stderr, self.hurst + z * self.stderr)

    def to_dict(self) -> dict[str, Any]:
        """Scalars as a plain dict (the fit arrays and array-valued params are left out), with the 95% interval.

        Returns
        -------
        dict of str to Any
            Method, estimate, standard error and its kind, the 95 % interval and scalar fit parameters.
        """
        low, high = self.confidence_interval(0.95)
        return {
            "method": self.method,
            "hurst": self.hurst,
            "stderr": self.stderr,
            "stderr_kind": self.stderr_kind,
            "ci95_low": low,
            "ci95_high": high,
            "n": self.n,
            "slope": self.slope,
            "intercept": self.intercept,
            "n_points": int(np.count_nonzero(self.fit_mask)),
            "biased": self.biased,
            "bias_note": self.bias_note,
            **{f"param_{k}": v for k, v in self.params.items() if np.ndim(v) == 0},
        }


# --------------------------------------------------------------------------- helpers


def _validate(x: Any, *, min_length: int, name: str = "x") -> np.ndarray:
    """1-D finite float array of at least ``min_length`` values that is not constant."""
    if isinstance(x, pd.DataFrame):
        raise ValueError(f"{name} must be one series (1-D); got a DataFrame with {x.shape[1]} columns")
    try:
        arr = np.asarray(x.to_numpy() if isinstance(x, pd.Series) else x, dtype=float)
    except OverflowError:
        raise ValueError(f"{name} holds a number no 64-bit float holds (magnitude above 1.8e308)") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 1-D array or Series; got {type(x).__name__}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    n_nan = int(np.isnan(arr).sum())
    if n_nan:
        raise ValueError(
            f"{name} contains {n_nan} NaN value(s) (first at index {int(np.flatnonzero(np.isnan(arr))[0])}); "
            "Hurst estimators need a gap-free series: drop or fill them first"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains infinite values")
    if arr.size < min_length:
        raise ValueError(f"{name} is too short: {arr.size} samples; this estimator needs at least {min_length}")
    # the estimators square cumulative sums of up to n values: (n * max|x|)^2 must stay a float
    check_magnitude(name, arr, max_abs=MAX_SQUARED_SUM / arr.size)
    if np.ptp(arr) == 0:
        raise ValueError(f"{name} is constant (all values {arr[0]:g}); H is undefined for a constant series")
    return arr


def _window_sizes(lo: int, hi: int, count: int) -> np.ndarray:
    """Up to ``count`` distinct integers spaced evenly in log between lo and hi."""
    return np.unique(np.round(np.geomspace(lo, hi, count)).astype(np.int64))


def _window_grid(n: int, min_window: int, max_window: int | None, n_windows: int) -> np.ndarray:
    """The window sizes of :func:`hurst_rs` and :func:`hurst_dfa` on ``n`` samples (``max_window`` default n/4),
    checked: 4 <= min_window < max_window <= n."""
    hi = n // 4 if max_window is None else int(max_window)
    if not 4 <= min_window < hi <= n:
        raise ValueError(f"need 4 <= min_window < max_window <= n; got min_window={min_window}, max_window={hi}, n={n}")
    return _window_sizes(min_window, hi, n_windows)


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Slope, intercept and slope standard error of ordinary least squares."""
    res = stats.linregress(x, y)
    return float(res.slope), float(res.intercept), float(res.stderr)


def _periodogram(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fourier frequencies lambda_j = 2 pi j / n, j = 1..floor((n-1)/2), and I(lambda_j)."""
    n = x.size
    spec = np.fft.rfft(x - x.mean())
    j = np.arange(1, (n - 1) // 2 + 1)
    freq = 2.0 * np.pi * j / n
    power = np.abs(spec[j]) ** 2 / (2.0 * np.pi * n)
    return freq, power


# Standard deviation of the time-domain estimators with their default settings,
# measured on exact fGn (tcpmodels.models.heavytail.fgn) for H in {0.6, 0.75, 0.9}
# and n = 2^10, 2^12, ..., 2^18, 100 replicates per cell (benchmarks/hurst.py
# --calibrate, 2026-11-22): least squares of ln sd = a + b ln n + c H over the
# 15 cells; largest relative misfit 14% (rs), 22% (aggvar, at n = 2^10), 16% (dfa).
# sd falls only like n^-0.2..-0.27 because the largest window grows with n.
_CALIBRATED_SD: dict[str, tuple[float, float, float]] = {
    "rs": (-1.7625, -0.2563, 0.4944),
    "aggvar": (-1.2256, -0.2042, 0.0232),
    "dfa": (-1.5663, -0.2696, 0.8655),
}


def _calibrated_sd(method: str, n: int, hurst: float) -> float:
    """Calibrated sd at length n and (plug-in) H, with H clipped to [0.5, 1] for the formula."""
    a, b, c = _CALIBRATED_SD[method]
    return float(np.exp(a + b * np.log(n) + c * np.clip(hurst, 0.5, 1.0)))


# Ranges of true H where the 95% interval of an estimator with its default settings
# covers less than 90% of the time on fGn from an independent generator
# (benchmarks/hurst_coverage.py, 400 replicates per cell at n = 2^12 and 2^16,
# H = 0.5 .. 0.9 in steps of 0.1; results in benchmarks/results/hurst_coverage.csv).
# The bias is a property of the estimator at finite n (Taqqu, Teverovsky and
# Willinger 1995), depends on H and n, and is not corrected: results whose 95%
# interval reaches into a range are flagged ``biased``.
# R/S: coverage 0.69 (H = 0.5), 0.85 (0.6), 0.89 (0.8), 0.58 (0.9) at 2^12:
#      high at low H, low at high H; only H near 0.7 is covered.
#      At 2^16: 0.43, 0.76, 0.85, 0.28 (H = 0.7: 0.94).
# aggvar: coverage 0.89 (H = 0.7), 0.83 (0.8), 0.61 (0.9) at 2^12; reads low from H = 0.7.
#      At 2^16: 0.89, 0.82, 0.53. Whittle, wavelet, periodogram and DFA cover 0.91-0.98 in
#      every cell (DFA 0.98 at H = 0.5, within one binomial SE of 0.97): not flagged, not rescaled.
BIASED_RANGES: dict[str, tuple[tuple[float, float], ...]] = {
    "rs": ((0.0, 0.65), (0.75, 1.0)),
    "aggvar": ((0.65, 1.0),),
}


def _bias_flag(method: str, hurst: float, stderr: float) -> tuple[bool, str]:
    ranges = BIASED_RANGES.get(method, ())
    z = float(stats.norm.ppf(0.975))
    lo, hi = hurst - z * stderr, hurst + z * stderr
    hit = [r for r in ranges if lo < r[1] and hi > r[0]]
    if not hit:
        return False, ""
    where = ", ".join(f"{a:g}-{b:g}" for a, b in hit)
    return True, (f"{method}: biased for true H in {where} on fGn (95% interval covered < 90% in "
                  "benchmarks/hurst_coverage.py); the interval is indicative only")


def _loglog_result(
    *,
    method: str,
    n: int,
    sizes: np.ndarray,
    stat: np.ndarray,
    slope_to_h: Callable[[float], float],
    h_per_slope: float,
    x_label: str,
    y_label: str,
    params: dict[str, Any],
) -> HurstResult:
    x = np.log10(sizes.astype(float))
    with np.errstate(divide="ignore"):
        y = np.log10(stat)
    mask = np.isfinite(y)
    if mask.sum() < 3:
        raise ValueError(f"{method}: fewer than 3 usable scales; the series is too short or degenerate")
    slope, intercept, _ = _ols(x[mask], y[mask])
    h = float(slope_to_h(slope))
    sd = _calibrated_sd(method, n, h)
    biased, note = _bias_flag(method, h, sd)
    return HurstResult(
        hurst=h,
        stderr=sd,
        biased=biased,
        bias_note=note,
        stderr_kind="calibrated",
        method=method,
        n=n,
        x=x,
        y=y,
        fit_mask=mask,
        slope=slope,
        intercept=intercept,
        x_label=x_label,
        y_label=y_label,
        params={**params, "h_per_unit_slope": h_per_slope},
    )


# --------------------------------------------------------------------------- time-domain estimators


@_PARAMETERS.fill
def hurst_rs(x: ArrayLike, *, min_window: int = 16, max_window: int | None = None, n_windows: int = 20) -> HurstResult:
    r"""Hurst parameter by rescaled-range (R/S) analysis.

    For each window size s the series is cut into :math:`\lfloor n/s \rfloor`
    non-overlapping windows; in each, R is the range of the cumulative sum of
    the deviations from the window mean and S the standard deviation; R/S is
    averaged over windows. H is the slope of :math:`\log_{10} R/S` on
    :math:`\log_{10} s`.

    Parameters
    ----------
    x : array_like or pandas.Series
        The series (e.g. bytes per bin), at least 128 values, no NaN. [any]
    {min_window, max_window, n_windows}

    Returns
    -------
    HurstResult
        ``x`` = log10 window size, ``y`` = log10 mean R/S.

    Notes
    -----
    R/S is biased for finite windows (Anis and Lloyd 1976): it reads high at
    H = 0.5 and low at high H (on fGn with n = 2^16: +0.016 at H = 0.6,
    -0.040 at H = 0.9; see ``benchmarks/hurst.py``). ``stderr`` is the standard deviation of this
    estimator measured on exact fGn (``stderr_kind="calibrated"``); it does
    not include the bias, so the interval does **not** cover the true H at
    its nominal rate: measured on independent fGn (``benchmarks/hurst_coverage.py``,
    n = 2^12) the 95% interval covers 69% at H = 0.5, 85% at 0.6, 89% at 0.8
    and 58% at 0.9. Results whose interval reaches those ranges
    (:data:`BIASED_RANGES`) carry ``biased=True`` and a ``bias_note``.

    References
    ----------
    .. [1] H. E. Hurst, "Long-term storage capacity of reservoirs", Trans. Am.
       Soc. Civil Engineers 116, 770--799, 1951.
    .. [2] B. B. Mandelbrot, J. R. Wallis, "Robustness of the rescaled range
       R/S in the measurement of noncyclic long run statistical dependence",
       Water Resources Research 5(5), 967--988, 1969.
    .. [3] A. A. Anis, E. H. Lloyd, "The expected value of the adjusted
       rescaled Hurst range of independent normal summands", Biometrika 63,
       111--116, 1976.
    """
    arr = _validate(x, min_length=128)
    n = arr.size
    sizes = _window_grid(n, min_window, max_window, n_windows)
    dev = arr - arr.mean()
    csum = np.concatenate([[0.0], np.cumsum(dev)])  # csum[i] = sum of the first i values
    csq = np.concatenate([[0.0], np.cumsum(dev * dev)])
    buf = np.empty(n)  # work space reused at every window size
    stat = np.empty(sizes.size)
    for i, s in enumerate(sizes):
        k = n // s
        start, end = csum[0 : k * s : s], csum[s : k * s + 1 : s]
        mean_w = (end - start) / s
        var_w = (csq[s : k * s + 1 : s] - csq[0 : k * s : s]) / s - mean_w**2
        # Partial sums of deviations from the window mean are z_j = C(start + j) - C(start) - j * mean;
        # the per-window constant C(start) does not change the range, so it is left out.
        part = csum[1 : k * s + 1].reshape(k, s)
        steps = np.arange(1.0, s + 1.0)
        if s < 100:  # short windows: lay out (s, k) so the max/min run over long contiguous rows
            z = buf[: k * s].reshape(s, k)
            np.multiply(steps[:, None], mean_w[None, :], out=z)
            np.subtract(part.T, z, out=z)
            hi_z, lo_z = z.max(axis=0), z.min(axis=0)
        else:
            z = buf[: k * s].reshape(k, s)
            np.multiply(mean_w[:, None], steps, out=z)
            np.subtract(part, z, out=z)
            hi_z, lo_z = z.max(axis=1), z.min(axis=1)
        ok = var_w > 1e-12 * max(float(np.max(var_w)), np.finfo(float).tiny)
        stat[i] = np.mean((hi_z[ok] - lo_z[ok]) / np.sqrt(var_w[ok])) if ok.any() else np.nan
    return _loglog_result(
        method="rs", n=n, sizes=sizes, stat=stat, slope_to_h=lambda b: b, h_per_slope=1.0,
        x_label="log10 window size [samples]", y_label="log10 R/S [-]",
        params={"min_window": int(sizes[0]), "max_window": int(sizes[-1]), "n_windows": int(sizes.size)},
    )


@_PARAMETERS.fill
def hurst_aggvar(x: ArrayLike, *, min_block: int = 10, max_block: int | None = None, n_blocks: int = 20) -> HurstResult:
    r"""Hurst parameter by the aggregated-variance method.

    The series is averaged over non-overlapping blocks of m samples; the
    sample variance of the block means falls like :math:`m^{2H-2}`, so
    :math:`H = 1 + \beta/2` with :math:`\beta` the slope of
    :math:`\log_{10}` variance on :math:`\log_{10} m`.

    Parameters
    ----------
    {x}
    min_block, max_block : int
        Smallest and largest block, default 10 and n/10 (at least 10 blocks). [samples]
    n_blocks : int
        Number of block sizes, log-spaced. [-]

    Returns
    -------
    HurstResult
        ``x`` = log10 block size, ``y`` = log10 variance of block means.

    Notes
    -----
    The variance is taken around the sample mean, which under long-range
    dependence is itself far from the true mean; this makes the method read
    low at high H (on fGn with n = 2^16: -0.027 at H = 0.75, -0.066 at
    H = 0.9; compare Taqqu, Teverovsky and Willinger 1995).
    ``stderr`` is calibrated on simulated fGn and excludes the bias, so
    intervals under-cover from H = 0.7 up: measured on independent fGn
    (``benchmarks/hurst_coverage.py``, n = 2^12) the 95% interval covers 89%
    at H = 0.7, 83% at 0.8 and 61% at 0.9. Results whose interval reaches
    H >= 0.65 (:data:`BIASED_RANGES`) carry ``biased=True`` and a ``bias_note``.

    References
    ----------
    .. [1] M. S. Taqqu, V. Teverovsky, W. Willinger, Fractals 3(4), 785--798, 1995.
    .. [2] J. Beran, *Statistics for Long-Memory Processes*, Chapman & Hall, 1994, Sec. 4.4.
    """
    arr = _validate(x, min_length=128)
    n = arr.size
    hi = n // 10 if max_block is None else int(max_block)
    if not 2 <= min_block < hi <= n // 2:
        raise ValueError(f"need 2 <= min_block < max_block <= n/2; got min_block={min_block}, max_block={hi}, n={n}")
    sizes = _window_sizes(min_block, hi, n_blocks)
    csum = np.concatenate([[0.0], np.cumsum(arr - arr.mean())])
    stat = np.empty(sizes.size)
    for i, m in enumerate(sizes):
        k = n // m
        means = np.diff(csum[: k * m + 1 : m]) / m
        stat[i] = np.var(means, ddof=1)
    return _loglog_result(
        method="aggvar", n=n, sizes=sizes, stat=stat, slope_to_h=lambda b: 1.0 + b / 2.0, h_per_slope=0.5,
        x_label="log10 block size [samples]", y_label="log10 variance of block means [x^2]",
        params={"min_block": int(sizes[0]), "max_block": int(sizes[-1]), "n_blocks": int(sizes.size)},
    )


@_PARAMETERS.fill
def hurst_dfa(x: ArrayLike, *, min_window: int = 16, max_window: int | None = None, n_windows: int = 20) -> HurstResult:
    r"""Hurst parameter by detrended fluctuation analysis of order 1 (DFA-1).

    The profile :math:`Y_t = \sum_{i \le t} (x_i - \bar x)` is cut into
    non-overlapping windows of s samples; a straight line is fitted in each
    window and F(s) is the root mean square of the residuals over all
    windows. :math:`F(s) \propto s^H`: H is the slope of :math:`\log_{10} F`
    on :math:`\log_{10} s`.

    Parameters
    ----------
    x : array_like or pandas.Series
        The series (the increments, e.g. bytes per bin), at least 128 values. [any]
    {min_window, max_window, n_windows}

    Returns
    -------
    HurstResult
        ``x`` = log10 window size, ``y`` = log10 F(s).

    Notes
    -----
    The residual sum of squares of each window's line is computed in closed
    form from the window sums (no per-window loop). ``stderr`` is the
    standard deviation of this estimator measured on exact fGn
    (``stderr_kind="calibrated"``), because the regression standard error of
    the correlated log-log points is several times too small.

    References
    ----------
    .. [1] C.-K. Peng, S. V. Buldyrev, S. Havlin, M. Simons, H. E. Stanley,
       A. L. Goldberger, Phys. Rev. E 49(2), 1685--1689, 1994.
    .. [2] R. Weron, "Estimating long-range dependence: finite sample
       properties and confidence intervals", Physica A 312, 285--299, 2002.
    """
    arr = _validate(x, min_length=128)
    n = arr.size
    sizes = _window_grid(n, min_window, max_window, n_windows)
    profile = np.cumsum(arr - arr.mean())
    stat = np.empty(sizes.size)
    for i, s in enumerate(sizes):
        k = n // s
        w = profile[: k * s].reshape(k, s)
        t = np.arange(s, dtype=float) - (s - 1) / 2.0  # centred time in the window
        stt = s * (s * s - 1) / 12.0  # sum of t^2
        # einsum, not BLAS matmul: a multithreaded gemv on a busy machine is 10x slower.
        sy = np.einsum("ij->i", w)
        sty = np.einsum("ij,j->i", w, t)
        syy = np.einsum("ij,ij->i", w, w)
        rss = syy - sy**2 / s - sty**2 / stt
        stat[i] = np.sqrt(max(float(np.mean(rss)), 0.0) / s)
    return _loglog_result(
        method="dfa", n=n, sizes=sizes, stat=stat, slope_to_h=lambda b: b, h_per_slope=1.0,
        x_label="log10 window size [samples]", y_label="log10 F(s) [x]",
        params={"min_window": int(sizes[0]), "max_window": int(sizes[-1]), "n_windows": int(sizes.size)},
    )


# --------------------------------------------------------------------------- spectral estimators


def _bandwidth(n: int, n_freq: int | None, exponent: float, name: str) -> int:
    n_avail = (n - 1) // 2
    m = int(np.floor(n**exponent)) if n_freq is None else int(n_freq)
    if not 8 <= m <= n_avail:
        raise ValueError(f"{name}: n_freq must be in [8, {n_avail}] for n = {n}; got {m}")
    return m


@_PARAMETERS.fill
def hurst_periodogram(x: ArrayLike, *, n_freq: int | None = None) -> HurstResult:
    r"""Hurst parameter by regression of the log periodogram at low frequencies.

    The periodogram :math:`I(\lambda_j)` at the m lowest Fourier frequencies
    :math:`\lambda_j = 2\pi j/n` behaves like :math:`c\,\lambda_j^{1-2H}`;
    H = (1 - slope)/2 from the least-squares slope of :math:`\log I` on
    :math:`\log \lambda`.

    Parameters
    ----------
    {x}
    n_freq : int, optional
        Number m of frequencies used; default :math:`\lfloor n^{0.6} \rfloor`. [-]

    Returns
    -------
    HurstResult
        ``x`` = :math:`\ln \lambda_j`, ``y`` = :math:`\ln I(\lambda_j)`.

    Notes
    -----
    ``stderr`` uses the known variance :math:`\pi^2/6` of a log periodogram
    ordinate instead of the residual variance:
    :math:`\mathrm{se}(H) = \tfrac12\sqrt{(\pi^2/6) / \sum_j (\ln\lambda_j - \overline{\ln\lambda})^2}`,
    asymptotically :math:`\pi/\sqrt{24 m}` (Geweke and Porter-Hudak 1983;
    Hurvich, Deo and Brodsky 1998).

    References
    ----------
    .. [1] J. Geweke, S. Porter-Hudak, J. Time Series Analysis 4(4), 221--238, 1983.
    .. [2] C. M. Hurvich, R. Deo, J. Brodsky, "The mean squared error of Geweke
       and Porter-Hudak's estimator of the memory parameter of a long-memory
       time series", J. Time Series Analysis 19(1), 19--46, 1998.
    .. [3] M. S. Taqqu, V. Teverovsky, W. Willinger, Fractals 3(4), 785--798, 1995.
    """
    arr = _validate(x, min_length=128)
    n = arr.size
    m = _bandwidth(n, n_freq, 0.6, "hurst_periodogram")
    freq, power = _periodogram(arr)
    lx, ly = np.log(freq[:m]), np.log(power[:m])
    mask = np.isfinite(ly)
    slope, intercept, _ = _ols(lx[mask], ly[mask])
    sxx = np.sum((lx[mask] - lx[mask].mean()) ** 2)
    se = 0.5 * np.sqrt(np.pi**2 / 6.0 / sxx)
    return HurstResult(
        hurst=(1.0 - slope) / 2.0, stderr=float(se), stderr_kind="asymptotic", method="periodogram", n=n,
        x=lx, y=ly, fit_mask=mask, slope=slope, intercept=intercept,
        x_label="ln frequency [rad/sample]", y_label="ln periodogram [x^2 sample/rad]",
        params={"n_freq": m, "h_per_unit_slope": -0.5},
    )


@_PARAMETERS.fill
def hurst_local_whittle(x: ArrayLike, *, n_freq: int | None = None, bounds: tuple[float, float] = (0.001, 1.499)) -> HurstResult:
    r"""Hurst parameter by Robinson's local Whittle (Gaussian semiparametric) estimator.

    Minimises over H

    .. math:: R(H) = \ln\Big(\frac1m \sum_{j=1}^m \lambda_j^{2H-1} I(\lambda_j)\Big)
              - \frac{2H-1}{m} \sum_{j=1}^m \ln \lambda_j

    with ``scipy.optimize.minimize_scalar`` (bounded) over ``bounds``.

    Parameters
    ----------
    {x}
    n_freq : int, optional
        Bandwidth m (number of lowest Fourier frequencies); default
        :math:`\lfloor n^{0.65} \rfloor`. [-]
    bounds : tuple of float
        Search interval for H. [-]

    Returns
    -------
    HurstResult
        ``x`` = :math:`\ln \lambda_j`, ``y`` = :math:`\ln I(\lambda_j)`,
        line :math:`\ln \hat G + (1 - 2\hat H)\ln\lambda` with
        :math:`\hat G = \frac1m\sum \lambda_j^{2\hat H-1} I_j`.

    Notes
    -----
    ``stderr`` is the asymptotic :math:`1/(2\sqrt m)` of Robinson (1995),
    Theorem 2 (valid for 0 < H < 1, m -> inf, m/n -> 0). An estimate at an
    end of ``bounds`` means the minimum lies outside them (e.g. a trend or a
    non-stationary series); the standard error is then meaningless.

    References
    ----------
    .. [1] P. M. Robinson, "Gaussian semiparametric estimation of long range
       dependence", Annals of Statistics 23(5), 1630--1661, 1995.
    """
    arr = _validate(x, min_length=128)
    n = arr.size
    m = _bandwidth(n, n_freq, 0.65, "hurst_local_whittle")
    freq, power = _periodogram(arr)
    lam, per = freq[:m], power[:m]
    log_lam = np.log(lam)
    mean_log = log_lam.mean()
    # Work with lambda relative to its geometric mean: the same minimiser, no overflow.
    rel = log_lam - mean_log

    def objective(h: float) -> float:
        return float(np.log(np.mean(np.exp((2.0 * h - 1.0) * rel) * per)))

    opt = optimize.minimize_scalar(objective, bounds=bounds, method="bounded", options={"xatol": 1e-7})
    h = float(opt.x)
    g_hat = float(np.mean(lam ** (2.0 * h - 1.0) * per))
    with np.errstate(divide="ignore"):
        ly = np.log(per)
    return HurstResult(
        hurst=h, stderr=1.0 / (2.0 * np.sqrt(m)), stderr_kind="asymptotic", method="whittle", n=n,
        x=log_lam, y=ly, fit_mask=np.isfinite(ly), slope=1.0 - 2.0 * h, intercept=float(np.log(g_hat)),
        x_label="ln frequency [rad/sample]", y_label="ln periodogram [x^2 sample/rad]",
        params={"n_freq": m, "bounds": tuple(bounds), "h_per_unit_slope": -0.5},
    )


# --------------------------------------------------------------------------- wavelet estimator


def _wavelet_filters(wavelet: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        import pywt
    except ImportError as exc:  # pragma: no cover - pywt is an install requirement
        raise ImportError("hurst_wavelet needs PyWavelets (pip install PyWavelets)") from exc
    try:
        w = pywt.Wavelet(wavelet)
    except ValueError as exc:
        raise ValueError(
            f"wavelet must be a discrete wavelet name known to PyWavelets (e.g. 'db3'); got {wavelet!r}"
        ) from exc
    if not w.orthogonal:
        raise ValueError(f"wavelet must be orthogonal (e.g. 'haar', 'db2', 'db3'); got {wavelet!r}")
    return np.asarray(w.dec_lo), np.asarray(w.dec_hi)


def hurst_wavelet(
    x: ArrayLike, *, wavelet: str = "db3", j1: int | None = None, j2: int | None = None, min_coefficients: int = 16
) -> HurstResult:
    r"""Hurst parameter by the Abry--Veitch wavelet (logscale diagram) estimator.

    A discrete wavelet transform gives detail coefficients :math:`d_{j,k}` at
    octaves j = 1, 2, ...; with :math:`\mu_j = \frac1{n_j}\sum_k d_{j,k}^2`,

    .. math:: y_j = \log_2 \mu_j - g_j, \quad
              g_j = \psi(n_j/2)/\ln 2 - \log_2(n_j/2),

    removes the bias of the log of a chi-square mean, and
    :math:`\mathrm{Var}\,y_j \approx \zeta(2, n_j/2)/\ln^2 2`. The slope
    :math:`\alpha` of the weighted (1/Var) regression of :math:`y_j` on j over
    :math:`j_1..j_2` gives :math:`H = (\alpha + 1)/2`, with variance
    :math:`S_0/(S_0 S_2 - S_1^2)/4` where :math:`S_p = \sum_j j^p/\mathrm{Var}\,y_j`.

    Parameters
    ----------
    x : array_like or pandas.Series
        The series, at least 256 values, no NaN. [any]
    wavelet : str
        Orthogonal wavelet known to PyWavelets; default Daubechies 3 (3
        vanishing moments). [-]
    j1 : int, optional
        Finest octave in the fit, >= 1. Default :math:`\max(4, \mathrm{round}(\log_2(n)/4))`
        (4 up to n = 2^18, 5 at 2^20): the finest octaves of fGn sit off the
        power law (about +0.005 in H from j1 = 3, +0.0015 from j1 = 4 on
        fGn), a bias that must stay small against a standard error shrinking
        like :math:`n^{-1/2}`. Series too short for three octaves from there
        (n below about 2^12) start at ``j2 - 2`` instead. [-]
    j2 : int, optional
        Coarsest octave in the fit; default the coarsest with at least
        ``min_coefficients`` coefficients. [-]
    min_coefficients : int
        See ``j2``. [-]

    Returns
    -------
    HurstResult
        ``x`` = octave j, ``y`` = :math:`y_j` (bias-corrected log2 energy);
        ``params["var_y"]`` holds the variances used as weights.

    Notes
    -----
    The transform is a pyramid of 'valid' convolutions with the filters of
    ``wavelet`` (taken from PyWavelets) followed by decimation, so no detail
    coefficient touches a boundary extension. ``stderr`` is the weighted-LS
    variance above (asymptotic, assumes independent coefficients).

    References
    ----------
    .. [1] P. Abry, D. Veitch, "Wavelet analysis of long-range-dependent
       traffic", IEEE Trans. Information Theory 44(1), 2--15, 1998.
    .. [2] D. Veitch, P. Abry, "A wavelet-based joint estimator of the
       parameters of long-range dependence", IEEE Trans. Information Theory
       45(3), 878--897, 1999.
    """
    arr = _validate(x, min_length=256)
    n = arr.size
    lo, hi = _wavelet_filters(wavelet)
    if j1 is not None and j1 < 1:
        raise ValueError(f"j1 [-] must be >= 1; got {j1}")
    approx = arr - arr.mean()
    octaves, energy, counts = [], [], []
    j = 0
    while True:
        j += 1
        if approx.size < lo.size:
            break
        detail = np.convolve(approx, hi, mode="valid")[::2]
        approx = np.convolve(approx, lo, mode="valid")[::2]
        if detail.size < 2:
            break
        octaves.append(j)
        energy.append(np.mean(detail**2))
        counts.append(detail.size)
    octaves_a = np.asarray(octaves, dtype=float)
    counts_a = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore"):
        y = np.log2(np.asarray(energy)) - (special.digamma(counts_a / 2.0) / np.log(2.0) - np.log2(counts_a / 2.0))
    var_y = special.zeta(2.0, counts_a / 2.0) / np.log(2.0) ** 2
    top = int(octaves_a[counts_a >= min_coefficients].max()) if np.any(counts_a >= min_coefficients) else 0
    j_hi = top if j2 is None else int(j2)
    if j1 is None:  # see the docstring; short series fall back to finer octaves to keep 3
        j1 = max(1, min(max(4, int(round(np.log2(n) / 4.0))), j_hi - 2))
    if j_hi > top:
        raise ValueError(
            f"j2 [-] must be <= {top} (octaves with >= {min_coefficients} coefficients) for n = {n}; got {j_hi}"
        )
    if j_hi - j1 + 1 < 3:
        raise ValueError(
            f"hurst_wavelet needs at least 3 octaves in [j1, j2]; got j1={j1}, j2={j_hi} for n = {n} "
            "(series too short or j1 too large)"
        )
    mask = (octaves_a >= j1) & (octaves_a <= j_hi) & np.isfinite(y)
    w = 1.0 / var_y[mask]
    xj, yj = octaves_a[mask], y[mask]
    s0, s1, s2 = w.sum(), (w * xj).sum(), (w * xj**2).sum()
    det = s0 * s2 - s1**2
    slope = float(((w * xj * yj).sum() * s0 - s1 * (w * yj).sum()) / det)
    intercept = float(((w * yj).sum() - slope * s1) / s0)
    se_slope = float(np.sqrt(s0 / det))
    return HurstResult(
        hurst=(slope + 1.0) / 2.0, stderr=se_slope / 2.0, stderr_kind="asymptotic", method="wavelet", n=n,
        x=octaves_a, y=y, fit_mask=mask, slope=slope, intercept=intercept,
        x_label="octave j [-]", y_label="log2 mean squared detail, bias-corrected [-]",
        params={"wavelet": wavelet, "j1": int(j1), "j2": j_hi, "var_y": var_y, "h_per_unit_slope": 0.5},
    )


# --------------------------------------------------------------------------- dispatch

METHODS: dict[str, Callable[..., HurstResult]] = {
    "whittle": hurst_local_whittle,
    "wavelet": hurst_wavelet,
    "periodogram": hurst_periodogram,
    "dfa": hurst_dfa,
    "rs": hurst_rs,
    "aggvar": hurst_aggvar,
}


def hurst_exponent(x: ArrayLike, method: str = "whittle", **kwargs: Any) -> HurstResult:
    """Estimate H with the named method (a key of :data:`METHODS`); keyword arguments go to it.

    Parameters
    ----------
    x : array_like or pandas.Series
        The series (e.g. packets or bytes per bin), 1-D.
    method : str
        A key of :data:`METHODS`: ``rs``, ``aggvar``, ``dfa``, ``periodogram``, ``whittle``, ``wavelet``.
    **kwargs
        Passed to the estimator (e.g. ``min_window``).

    Returns
    -------
    HurstResult
        The estimate with its standard error.

    Examples
    --------
    >>> import numpy as np
    >>> from tcpmodels.models.heavytail import fgn
    >>> r = hurst_exponent(fgn(2**14, 0.8, np.random.default_rng(1)))
    >>> bool(abs(r.hurst - 0.8) < 4 * r.stderr)
    True
    """
    try:
        func = METHODS[method]
    except KeyError:
        raise ValueError(f"method must be one of {sorted(METHODS)}; got {method!r}") from None
    return func(x, **kwargs)


def estimate_all(x: ArrayLike, methods: tuple[str, ...] | None = None) -> pd.DataFrame:
    """All estimators on one series.

    Parameters
    ----------
    x : array_like or pandas.Series
        The series, 1-D.
    methods : tuple of str, optional
        Keys of :data:`METHODS`; all of them if omitted.

    Returns
    -------
    pandas.DataFrame
        One row per method, indexed by ``method``, with the :meth:`HurstResult.to_dict` columns.
    """
    names = tuple(METHODS) if methods is None else tuple(methods)
    rows = [hurst_exponent(x, m).to_dict() for m in names]
    return pd.DataFrame(rows).set_index("method")
