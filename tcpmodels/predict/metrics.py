r"""Accuracy metrics for throughput prediction, as defined by Hamazaki, Abe and Kato (P2).

With :math:`\hat R_i` the predicted and :math:`R_i` the measured throughput of
sample *i* and *n* samples:

.. math::

    RMSE = \sqrt{\frac{1}{n}\sum_{i=1}^{n} (\hat R_i - R_i)^2}

    RPE = \frac{\hat R - R}{\min(\hat R, R)}

    \text{Fraction of RPE} = \frac{\#\{\, r \mid -0.1 < RPE(r) < 0.1 \,\}}{n}

RPE (relative prediction error, from Lee et al. 2012) divides by the *smaller*
of the two rates, so over- and under-prediction by the same factor give errors
of equal size and opposite sign: predicting 2 for a true 1 gives +1.0,
predicting 1 for a true 2 gives -1.0. The interval of the Fraction of RPE is
open, as printed in the paper.

All functions take ``(y_true, y_pred)`` in the order of :mod:`sklearn.metrics`
(measured first), accept lists, arrays or pandas Series, and raise
``ValueError`` for inputs of different length, two Series with different
indexes (as the formula models do: align them first), empty inputs, non-finite
values and (for RPE and the Fraction of RPE) rates that are not strictly positive.

References
----------
.. [1] T. Hamazaki, H. Abe, K. Kato, "A study on prediction of network
   throughput by Linux MPTCP kernel" (in Japanese), IPSJ SIG technical report, 2015, Sec. 5.3.
.. [2] C. Lee, H. Abe, T. Hirotsu, K. Umemura, "Analytical modeling of network
   throughput prediction on the internet", IEICE Trans. Inf. & Syst. E95-D(12):2870-2878, 2012.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats
from sklearn.metrics import make_scorer

from tcpmodels._arrays import check_same_index

__all__ = [
    "rmse",
    "rpe",
    "fraction_rpe_within",
    "spearman_rho",
    "SpearmanResult",
    "make_fraction_rpe_scorer",
    "fraction_rpe_scorer",
]


def _as_1d(name: str, values) -> np.ndarray:
    if values is None:
        raise TypeError(f"{name} must be numeric (list, array or Series); got None")
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(f"{name} must be one-dimensional; got a DataFrame with {values.shape[1]} columns")
        values = values.iloc[:, 0]
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric (list, array or Series); got {type(values).__name__}") from exc
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    return arr


def _pair(y_true, y_pred, *, positive: bool) -> tuple[np.ndarray, np.ndarray]:
    """Validate two rate vectors: 1-D, same non-zero length, equal Series indexes, finite, optionally > 0."""
    check_same_index(y_true=y_true, y_pred=y_pred)
    t = _as_1d("y_true", y_true)
    p = _as_1d("y_pred", y_pred)
    if t.shape[0] != p.shape[0]:
        raise ValueError(f"y_true and y_pred must have the same length; got {t.shape[0]} and {p.shape[0]}")
    if t.shape[0] == 0:
        raise ValueError("y_true and y_pred are empty; need at least one sample")
    for name, arr in (("y_true", t), ("y_pred", p)):
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} must be finite; got {arr[i]} at position {i} ({int(bad.sum())} non-finite)")
        if positive:
            low = arr <= 0
            if low.any():
                i = int(np.flatnonzero(low)[0])
                raise ValueError(
                    f"{name} [rate] must be > 0 for RPE (it divides by min(predicted, measured)); "
                    f"got {arr[i]:g} at position {i} ({int(low.sum())} values <= 0)"
                )
    return t, p


def rmse(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    r"""Root mean square error of a throughput prediction.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Measured throughput :math:`R`. [any rate unit; the result has the same unit]
    y_pred : array-like of shape (n,)
        Predicted throughput :math:`\hat R`. [same unit as ``y_true``]

    Returns
    -------
    float
        :math:`\sqrt{\operatorname{mean}((\hat R - R)^2)}`. [unit of the inputs]

    References
    ----------
    .. [1] Hamazaki, Abe, Kato (2015), Sec. 5.3.

    Examples
    --------
    >>> rmse([1.0, 2.0], [2.0, 2.0])  # sqrt((1 + 0) / 2)
    0.7071067811865476
    """
    t, p = _pair(y_true, y_pred, positive=False)
    return float(np.sqrt(np.mean((p - t) ** 2)))


def rpe(y_true: ArrayLike, y_pred: ArrayLike) -> np.ndarray:
    r"""Relative prediction error of each sample, :math:`(\hat R - R) / \min(\hat R, R)`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Measured throughput :math:`R`, > 0. [any rate unit]
    y_pred : array-like of shape (n,)
        Predicted throughput :math:`\hat R`, > 0. [same unit as ``y_true``]

    Returns
    -------
    numpy.ndarray of shape (n,)
        RPE of each sample; positive for over-prediction. [-]

    Notes
    -----
    Dividing by the smaller rate makes the error symmetric in the ratio: a
    prediction twice the truth gives +1, half the truth gives -1.

    References
    ----------
    .. [1] Hamazaki, Abe, Kato (2015), Sec. 5.3; Lee et al. (2012).

    Examples
    --------
    >>> rpe([1.0, 2.0], [2.0, 1.0]).tolist()
    [1.0, -1.0]
    """
    t, p = _pair(y_true, y_pred, positive=True)
    return (p - t) / np.minimum(p, t)


def fraction_rpe_within(y_true: ArrayLike, y_pred: ArrayLike, threshold: float = 0.1) -> float:
    r"""Fraction of samples whose RPE lies in the open interval (-threshold, threshold).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Measured throughput, > 0. [any rate unit]
    y_pred : array-like of shape (n,)
        Predicted throughput, > 0. [same unit as ``y_true``]
    threshold : float, default 0.1
        Half-width of the interval, > 0; the paper uses 0.1. [-]

    Returns
    -------
    float
        :math:`\#\{-t < RPE < t\} / n`, in [0, 1]. [-]

    References
    ----------
    .. [1] Hamazaki, Abe, Kato (2015), Sec. 5.3 ("Fraction of RPE").

    Examples
    --------
    >>> fraction_rpe_within([1.0, 1.0, 1.0], [1.05, 1.1, 2.0])  # 1.1 is on the edge: excluded
    0.3333333333333333
    """
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold <= 0:
        raise ValueError(f"threshold [-] must be in (0, inf); got {threshold:g}")
    errors = rpe(y_true, y_pred)
    return float(np.mean((errors > -threshold) & (errors < threshold)))


@dataclass(frozen=True, kw_only=True)
class SpearmanResult:
    """Spearman rank correlation of two samples (from :func:`scipy.stats.spearmanr`).

    Attributes
    ----------
    rho : float
        Spearman's rank correlation coefficient. [-]
    pvalue : float
        Two-sided p-value of the test that the ranks are uncorrelated. [-]
    n : int
        Number of pairs.
    """

    rho: float
    pvalue: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """All fields as a plain dict.

        Returns
        -------
        dict of str to Any
            ``rho``, ``pvalue`` and the other fields.
        """
        return asdict(self)


def spearman_rho(x: ArrayLike, y: ArrayLike) -> SpearmanResult:
    r"""Spearman rank correlation, e.g. of probe throughput against data throughput.

    The paper finds :math:`\rho = 0.87` between 64 KB probe and 256 MB data
    throughput for TCP and :math:`\rho = 0.16` for MPTCP.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired samples, finite, n >= 2. [any unit]

    Returns
    -------
    SpearmanResult
        ``rho``, ``pvalue`` and ``n``; ``rho`` is NaN if either input is constant.

    References
    ----------
    .. [1] Hamazaki, Abe, Kato (2015), Sec. 5.3.
    .. [2] :func:`scipy.stats.spearmanr`.

    Examples
    --------
    >>> spearman_rho([1, 2, 3, 4], [10, 20, 25, 100]).rho
    1.0
    """
    check_same_index(x=x, y=y)
    a = _as_1d("x", x)
    b = _as_1d("y", y)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"x and y must have the same length; got {a.shape[0]} and {b.shape[0]}")
    if a.shape[0] < 2:
        raise ValueError(f"need at least 2 pairs for a rank correlation; got {a.shape[0]}")
    for name, arr in (("x", a), ("y", b)):
        if not np.isfinite(arr).all():
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ValueError(f"{name} must be finite; got {arr[i]} at position {i}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        # scipy warns (ConstantInputWarning) and returns NaN; say it without a warning.
        return SpearmanResult(rho=float("nan"), pvalue=float("nan"), n=int(a.shape[0]))
    res = stats.spearmanr(a, b)
    return SpearmanResult(rho=float(res.statistic), pvalue=float(res.pvalue), n=int(a.shape[0]))


def make_fraction_rpe_scorer(threshold: float = 0.1) -> Callable[..., Any]:
    """A scikit-learn scorer for :func:`fraction_rpe_within` (greater is better).

    Parameters
    ----------
    threshold : float, default 0.1
        Half-width of the RPE interval. [-]

    Returns
    -------
    callable
        ``scorer(estimator, X, y)`` for ``GridSearchCV(scoring=...)`` or
        :func:`sklearn.model_selection.cross_val_score`. Predictions must be
        > 0 (use ``log_throughput=True`` on the SVR predictors to guarantee it).
    """
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold <= 0:
        raise ValueError(f"threshold [-] must be in (0, inf); got {threshold:g}")
    return make_scorer(fraction_rpe_within, greater_is_better=True, threshold=threshold)


#: Scorer for the paper's Fraction of RPE within +-0.1.
fraction_rpe_scorer = make_fraction_rpe_scorer(0.1)
