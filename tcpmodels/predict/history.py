r"""History-based throughput predictors: moving average, EWMA and Holt-Winters.

He, Dovrolis and Ammar (2005) predict the throughput of the next large TCP
transfer on a path from the throughputs of the previous transfers on the same
path, with simple time-series predictors: the *n*-sample moving average (MA),
the exponentially weighted moving average (EWMA) and non-seasonal
Holt-Winters (HW, exponential smoothing with a trend). They found such
history-based predictors more accurate than formula-based ones
(:mod:`tcpmodels.predict.formula`) when a history is available.

Each function here takes a time-ordered series of past throughputs
(optionally with a path id per sample, ``by``, to keep a separate history per
path) and returns the **one-step-ahead** prediction for every sample,
aligned with the input: the prediction for sample *i* uses only samples
``< i`` of the same path, and the first sample of each path gets NaN (no
history). Pair the result with the series and drop the NaN to evaluate, e.g.
``rmse(y[1:], pred[1:])``.

Recursions (``x_i`` the throughput of sample *i*, ``\hat x_i`` its prediction):

- MA(n): :math:`\hat x_i = \frac{1}{k}\sum_{j=i-k}^{i-1} x_j`, :math:`k = \min(n, i)`.
- EWMA(alpha): :math:`\hat x_1 = x_0`, :math:`\hat x_{i+1} = \alpha x_i + (1-\alpha)\hat x_i`.
- HW(alpha, beta): level :math:`l_i = \alpha x_i + (1-\alpha)(l_{i-1} + b_{i-1})`,
  trend :math:`b_i = \beta (l_i - l_{i-1}) + (1-\beta) b_{i-1}`,
  :math:`\hat x_{i+1} = l_i + b_i`, started from :math:`l_{-1} = x_0`, :math:`b_{-1} = 0`
  (so :math:`\hat x_1 = x_0`).

The smoothing parameters are fixed by the caller, not fitted: fitting them
to the whole series (statsmodels' default) would let every prediction see
the future.

References
----------
.. [1] Q. He, C. Dovrolis, M. Ammar, "On the predictability of large transfer
   TCP throughput", ACM SIGCOMM 2005 (Computer Networks 51(14), 2007).
.. [2] C. C. Holt, "Forecasting seasonals and trends by exponentially weighted
   moving averages", 1957; statsmodels ``ExponentialSmoothing``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from statsmodels.tsa.holtwinters import ExponentialSmoothing

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries

__all__ = ["moving_average_forecast", "ewma_forecast", "holt_winters_forecast"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    series : array-like or pandas.Series of shape (n,)
        Throughputs of past transfers in time order, finite, >= 0. [bit/s]
    by : array-like of shape (n,), optional
        Path id of each sample; each path gets its own history.
""")


def _by_group(series, by, one_path: Callable[[np.ndarray], np.ndarray], name: str):
    """Validate, apply ``one_path`` to each path's sub-series in order, re-align, re-wrap."""
    is_series = isinstance(series, pd.Series)
    try:
        values = np.asarray(series.to_numpy() if is_series else series, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: series must be numeric (list, array or Series)") from exc
    if values.ndim != 1:
        raise ValueError(f"{name}: series must be one-dimensional (time-ordered throughputs); got shape {values.shape}")
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}: series [bit/s] must be finite; got {values[i]} at position {i} "
            "(drop failed transfers before forecasting)"
        )
    check_range("series", values, unit="bit/s", low=0)
    out = np.full(values.shape, np.nan)
    if by is None:
        if values.size:
            out[:] = one_path(values)
    else:
        keys = by.to_numpy() if isinstance(by, pd.Series) else np.asarray(by)
        if keys.shape != values.shape:
            raise ValueError(f"{name}: by must have one path id per sample; got {keys.shape} for series {values.shape}")
        if pd.isna(keys).any():
            raise ValueError(f"{name}: by (path id) must not contain missing values")
        for positions in pd.Series(np.arange(values.size)).groupby(keys, sort=False).indices.values():
            out[positions] = one_path(values[positions])
    if is_series:
        return pd.Series(out, index=series.index, name=series.name)
    return out


def _check_fraction(name: str, value: float, *, low_open: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{name} [-] must be a number in {'(' if low_open else '['}0, 1]; got {value!r}")
    check_range(name, float(value), unit="-", low=0, high=1, low_open=low_open)
    if np.isnan(value):
        raise ValueError(f"{name} [-] must be a number in (0, 1]; got nan")
    return float(value)


@_PARAMETERS.fill
def moving_average_forecast(series: ArrayLike, window: int, *, by: ArrayLike | None = None) -> np.ndarray | pd.Series:
    """One-step-ahead prediction by the mean of the last ``window`` samples (MA).

    Parameters
    ----------
    {series}
    window : int
        Number of past samples averaged, >= 1; the first ``window - 1``
        predictions average the fewer samples available.
    {by}

    Returns
    -------
    numpy.ndarray or pandas.Series of shape (n,)
        Prediction for each sample from the samples before it (same kind and
        index as ``series``); NaN for the first sample of each path. [bit/s]

    References
    ----------
    .. [1] He, Dovrolis, Ammar, SIGCOMM 2005 (MA predictor).

    Examples
    --------
    >>> moving_average_forecast([1.0, 2.0, 3.0, 4.0, 5.0], 3).tolist()
    [nan, 1.0, 1.5, 2.0, 3.0]
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window [samples] must be an integer >= 1; got {window!r}")

    def one_path(v: np.ndarray) -> np.ndarray:
        return pd.Series(v).shift(1).rolling(int(window), min_periods=1).mean().to_numpy()

    return _by_group(series, by, one_path, "moving_average_forecast")


@_PARAMETERS.fill
def ewma_forecast(series: ArrayLike, alpha: float, *, by: ArrayLike | None = None) -> np.ndarray | pd.Series:
    r"""One-step-ahead prediction by an exponentially weighted moving average (EWMA).

    Parameters
    ----------
    {series}
    alpha : float
        Weight of the newest sample, in (0, 1]; ``alpha = 1`` predicts the last value. [-]
    {by}

    Returns
    -------
    numpy.ndarray or pandas.Series of shape (n,)
        :math:`\hat x_i`, NaN for the first sample of each path. [bit/s]

    Notes
    -----
    :math:`\hat x_1 = x_0,\ \hat x_{i+1} = \alpha x_i + (1 - \alpha) \hat x_i`
    (pandas ``ewm(alpha=alpha, adjust=False)``, shifted by one sample).

    References
    ----------
    .. [1] He, Dovrolis, Ammar, SIGCOMM 2005 (EWMA predictor).

    Examples
    --------
    >>> ewma_forecast([1.0, 2.0, 3.0, 4.0], 0.5).tolist()
    [nan, 1.0, 1.5, 2.25]
    """
    a = _check_fraction("alpha", alpha, low_open=True)

    def one_path(v: np.ndarray) -> np.ndarray:
        return pd.Series(v).ewm(alpha=a, adjust=False).mean().shift(1).to_numpy()

    return _by_group(series, by, one_path, "ewma_forecast")


@_PARAMETERS.fill
def holt_winters_forecast(series: ArrayLike, alpha: float, beta: float, *, by: ArrayLike | None = None) -> np.ndarray | pd.Series:
    r"""One-step-ahead prediction by non-seasonal Holt-Winters (level + additive trend).

    Parameters
    ----------
    {series}
    alpha : float
        Level smoothing, in (0, 1]. [-]
    beta : float
        Trend smoothing, in [0, 1]; 0 keeps the trend at its start value 0. [-]
    {by}

    Returns
    -------
    numpy.ndarray or pandas.Series of shape (n,)
        :math:`\hat x_i = l_{i-1} + b_{i-1}`, NaN for the first sample of each
        path. With a trend the prediction can fall below 0 after a steep
        decline; it is returned as computed. [bit/s]

    Notes
    -----
    Computed with statsmodels ``ExponentialSmoothing(trend="add")`` with the
    given (not optimised) parameters and the known start ``l = x_0, b = 0``,
    whose in-sample fitted values are one-step-ahead forecasts that use only
    earlier samples. The first fitted value equals ``x_0`` itself and is
    replaced by NaN.

    References
    ----------
    .. [1] He, Dovrolis, Ammar, SIGCOMM 2005 (HW predictor).
    .. [2] statsmodels, ``statsmodels.tsa.holtwinters.ExponentialSmoothing``.

    Examples
    --------
    >>> holt_winters_forecast([1.0, 2.0, 4.0, 3.0], 0.5, 0.3).round(4).tolist()
    [nan, 1.0, 1.65, 3.3275]
    """
    a = _check_fraction("alpha", alpha, low_open=True)
    b = _check_fraction("beta", beta, low_open=False)

    def one_path(v: np.ndarray) -> np.ndarray:
        out = np.full(v.shape, np.nan)
        if v.size >= 2:
            # statsmodels also computes information criteria from log(SSE), which divide by
            # zero for a perfectly predicted series; they are not used here.
            with np.errstate(divide="ignore", invalid="ignore"):
                fit = ExponentialSmoothing(
                    v, trend="add", initialization_method="known", initial_level=float(v[0]), initial_trend=0.0,
                ).fit(smoothing_level=a, smoothing_trend=b, optimized=False)
            out[1:] = np.asarray(fit.fittedvalues, dtype=float)[1:]
        return out

    return _by_group(series, by, one_path, "holt_winters_forecast")
