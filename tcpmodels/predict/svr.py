r"""Support vector regression from probe throughput to data throughput (Lee et al.; Hamazaki et al.).

Two estimators share one implementation (:class:`ProbeSVRBase`) and differ in
what the input columns *are*:

- :class:`SingleProbeSVR` -- the existing method of Lee et al. (2012): one
  small probe transfer, then the data transfer; ``X`` has exactly one column,
  the probe throughput (for MPTCP, the probe goes over the MPTCP connection
  and, being small, almost entirely over subflow 1).
- :class:`PerPathProbeSVR` -- the method proposed by Hamazaki, Abe and Kato:
  one independent single-path TCP probe on each of the ``m`` paths; ``X`` has
  ``m >= 1`` columns, column *j* the probe throughput on path *j*
  (``probe_path1_bps``, ``probe_path2_bps``, ...); ``y`` is the MPTCP data
  throughput.

Model
-----
Both fit an epsilon-SVR with the RBF kernel
:math:`k(x, x') = \exp(-\gamma \lVert x - x' \rVert^2)` with
:class:`sklearn.svm.SVR`, inside a pipeline that (optionally) takes the
logarithm of the throughputs and standardises features and target::

    TransformedTargetRegressor(
        regressor=Pipeline([log?, StandardScaler, SVR(rbf)]),
        transformer=Pipeline([log?, StandardScaler]))

What R kernlab does by default, and what we do
----------------------------------------------
The paper fitted its SVR with R kernlab (``ksvm(x, y)``). For a numeric
``y`` kernlab's defaults are: ``type = "eps-svr"``, ``C = 1``,
``epsilon = 0.1``, ``tol = 0.001``, ``kernel = "rbfdot"`` and
``scaled = TRUE`` -- *both* x and y are centred and divided by their standard
deviation (R's ``scale``, denominator n - 1) before fitting, so ``epsilon``
is in units of the standard deviation of y -- and ``kpar = "automatic"``,
which sets the kernel width from the data with ``sigest``: it draws
``floor(0.5 n)`` random pairs of (scaled) rows with replacement, takes the
non-zero squared distances between them, and returns the reciprocals of
their 0.9, 0.5 and 0.1 quantiles; ``ksvm`` uses the mean of the first and
last, ``sigma = (1 / q_0.9 + 1 / q_0.1) / 2``. kernlab's ``rbfdot(sigma)``
is ``exp(-sigma |x - x'|^2)``, so ``sigma`` is scikit-learn's ``gamma``.

Our defaults reproduce this, with two deliberate differences:

1. ``gamma="sigest"`` computes the same statistic from *all* pairs of rows
   (:func:`kernlab_sigest_gamma`; evenly spaced rows if there are more than
   2000) instead of a random sample, so a fit is deterministic.
2. :class:`~sklearn.preprocessing.StandardScaler` divides by the population
   standard deviation (denominator n), R's ``scale`` by the sample one
   (n - 1). Since gamma is estimated on the same scaled features, the kernel
   is unaffected; only ``epsilon`` and ``C`` differ by the factor
   ``sqrt(n / (n - 1))`` (0.1 % at the paper's n = 512).

``C``, ``epsilon`` and ``gamma`` can also be chosen by cross-validation with
:func:`tune_svr`, which reports the whole grid.

Prediction
----------
After fitting, the estimator keeps only numbers -- scaler means and scales,
support vectors, dual coefficients, intercept and gamma -- and predicts with
numpy as the kernel expansion

.. math:: \hat y = s_y \Big(\sum_i \alpha_i\, k(z, sv_i) + b\Big) + m_y,
          \qquad z = (g(x) - m_x) / s_x

(``g`` the optional log, undone by ``exp`` on the way out). A model fitted here and
one loaded by :func:`tcpmodels.predict.load_json` thus run the same code on
the same float64 numbers and give bit-identical predictions. This agrees with
the fitted scikit-learn pipeline's ``predict`` (libsvm) to float64 rounding
but not bit for bit, since the kernel sum is added up in another order (on
512 samples the largest relative difference measured was 4.5e-15; the tests
require 1e-12). Re-populating an ``SVR`` object
from stored arrays would reproduce libsvm exactly but needs its private
attributes (``_dual_coef_``, ``_intercept_``, ``_n_support``, ...), which can
change between scikit-learn releases (we checked that copying them into a
fresh ``SVR`` reproduces libsvm's predictions bit for bit with scikit-learn
1.9.1, but chose not to depend on them).

References
----------
.. [1] C. Lee, H. Abe, T. Hirotsu, K. Umemura, "Analytical modeling of network
   throughput prediction on the internet", IEICE Trans. Inf. & Syst.
   E95-D(12):2870-2878, 2012.
.. [2] T. Hamazaki, H. Abe, K. Kato, "A study on prediction of network throughput
   by Linux MPTCP kernel" (in Japanese), IPSJ SIG technical report, 2015, Sec. 2 and 6.
.. [3] A. Karatzoglou, A. Smola, K. Hornik, A. Zeileis, "kernlab - An S4 package
   for kernel methods in R", Journal of Statistical Software 11(9), 2004;
   ``ksvm`` and ``sigest`` documentation.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, NamedTuple, Self

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.spatial.distance import cdist, pdist
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.compose import TransformedTargetRegressor
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.svm import SVR
from sklearn.utils.validation import check_is_fitted, validate_data

from tcpmodels._arrays import check_flag
from tcpmodels._docstrings import SharedEntries

__all__ = [
    "ProbeSVRBase",
    "SingleProbeSVR",
    "PerPathProbeSVR",
    "kernlab_sigest_gamma",
    "make_svr_pipeline",
    "probe_feature_names",
    "tune_svr",
    "TunedSVR",
    "DEFAULT_PARAM_GRID",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    C, epsilon, gamma, log_throughput, tol
        See :class:`ProbeSVRBase`; the defaults are R kernlab's.
""")

#: Grid searched by :func:`tune_svr` unless told otherwise (kernlab's defaults C = 1,
#: epsilon = 0.1, gamma = sigest are in it).
DEFAULT_PARAM_GRID: dict[str, list] = {
    "C": [0.25, 1.0, 4.0, 16.0, 64.0],
    "epsilon": [0.01, 0.1, 0.3],
    "gamma": ["sigest", 0.1, 0.5, 2.0],
}

_SIGEST_MAX_ROWS = 2000


def probe_feature_names(n_paths: int) -> list[str]:
    """Column names for per-path probe throughputs: ``probe_path1_bps`` ... ``probe_path{m}_bps``.

    Parameters
    ----------
    n_paths : int
        Number of paths ``m``, >= 1.

    Returns
    -------
    list of str
        ``m`` names, path 1 first.

    Examples
    --------
    >>> probe_feature_names(2)
    ['probe_path1_bps', 'probe_path2_bps']
    """
    if isinstance(n_paths, bool) or not isinstance(n_paths, numbers.Integral) or n_paths < 1:
        raise ValueError(f"n_paths must be an integer >= 1; got {n_paths!r}")
    return [f"probe_path{j}_bps" for j in range(1, int(n_paths) + 1)]


def kernlab_sigest_gamma(X_scaled: ArrayLike) -> float:
    r"""RBF width from the spread of the data, kernlab's ``sigest`` made deterministic.

    Parameters
    ----------
    X_scaled : array-like of shape (n_samples, n_features)
        Features, already standardised as the SVR will see them. [-]

    Returns
    -------
    float
        :math:`\gamma = (1/q_{0.9} + 1/q_{0.1}) / 2`, where :math:`q_p` is the
        *p* quantile (linear interpolation, R's default type 7) of the non-zero
        squared distances between all pairs of rows. If there is no non-zero
        distance (fewer than two distinct rows) the value is ``1 / n_features``. [1/unit^2]

    Notes
    -----
    kernlab's ``sigest`` computes the same quantiles over ``floor(n/2)``
    randomly drawn pairs, so its value changes from run to run around this
    one. With more than 2000 rows we use 2000 evenly spaced rows.

    References
    ----------
    .. [1] kernlab, ``R/sigest.R`` and ``ksvm(kpar = "automatic")``.

    Examples
    --------
    >>> round(kernlab_sigest_gamma([[0.0], [1.0], [3.0]]), 4)  # d^2 = 1, 4, 9
    0.375
    """
    x = np.asarray(X_scaled, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"X_scaled must be 2-D (n_samples, n_features); got shape {x.shape}")
    _check_magnitude("X_scaled", x)
    if x.shape[0] > _SIGEST_MAX_ROWS:
        x = x[np.linspace(0, x.shape[0] - 1, _SIGEST_MAX_ROWS).round().astype(int)]
    d2 = pdist(x, "sqeuclidean") if x.shape[0] >= 2 else np.empty(0)
    d2 = d2[d2 > 0]
    if d2.size == 0:
        return 1.0 / max(x.shape[1], 1)
    q90, q10 = np.quantile(d2, [0.9, 0.1])
    return float(0.5 * (1.0 / q90 + 1.0 / q10))


#: Largest magnitude accepted in a feature or target: squares of larger values overflow float64.
MAX_ABS_VALUE = 1e150


def _check_magnitude(name: str, arr: np.ndarray) -> None:
    """Raise ValueError naming the first non-finite value, or one whose square overflows (> 1e150)."""
    bad = ~np.isfinite(arr)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ValueError(f"{name} must be finite; got {arr[tuple(where)]} at index {tuple(int(i) for i in where)} "
                         f"({int(bad.sum())} non-finite)")
    big = np.abs(arr) > MAX_ABS_VALUE
    if big.any():
        where = np.argwhere(big)[0]
        raise ValueError(f"{name} must be at most {MAX_ABS_VALUE:g} in magnitude (squared distances overflow "
                         f"beyond it; is the unit right?); got {arr[tuple(where)]:g} at index "
                         f"{tuple(int(i) for i in where)} ({int(big.sum())} values)")


def _finite_real(value: numbers.Real) -> bool:
    """Whether a real number is finite as a float (an integer too large for one is not)."""
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False


def _check_svr_numbers(owner: str, C, epsilon, tol, gamma, gamma_words: tuple[str, ...]) -> None:
    """C > 0, epsilon >= 0, tol > 0, gamma a number > 0 or one of ``gamma_words``, all finite reals."""
    for pname, value, low_ok in (("C", C, False), ("epsilon", epsilon, True), ("tol", tol, False)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite_real(value) \
                or value < 0 or (value == 0 and not low_ok):
            rng = "[0, inf)" if low_ok else "(0, inf)"
            raise ValueError(f"{owner}: {pname} [-] must be a number in {rng}; got {value!r}")
    words = ", ".join(repr(w) for w in gamma_words)
    if isinstance(gamma, str):
        if gamma not in gamma_words:
            raise ValueError(f"{owner}: gamma must be {words} or a number > 0; got {gamma!r}")
    elif isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not _finite_real(gamma) or gamma <= 0:
        raise ValueError(f"{owner}: gamma [-] must be {words} or a number in (0, inf); got {gamma!r}")


def _log_step(log_throughput: bool):
    if log_throughput:
        return FunctionTransformer(np.log, inverse_func=np.exp, check_inverse=False)
    return "passthrough"


def make_svr_pipeline(
    *, C: float = 1.0, epsilon: float = 0.1, gamma: float | str = "scale",
    log_throughput: bool = False, tol: float = 1e-3,
) -> TransformedTargetRegressor:
    """The unfitted scikit-learn pipeline that :class:`ProbeSVRBase` fits.

    ``[log] -> StandardScaler -> SVR(kernel="rbf")`` on the features, and
    ``[log] -> StandardScaler`` on the target (undone after prediction).
    ``gamma`` must be a number or ``"scale"``/``"auto"`` here; the estimators
    resolve ``"sigest"`` before building the pipeline.

    Parameters
    ----------
    C : float
        SVR regularisation (penalty on points outside the tube). [-]
    epsilon : float
        Half-width of the SVR's insensitive tube, in standardised target units. [-]
    gamma : float or {"scale", "auto"}
        RBF kernel width on the standardised features. [-]
    log_throughput : bool
        Take the logarithm of features and target before scaling (throughputs span decades).
    tol : float
        libsvm stopping tolerance. [-]

    Returns
    -------
    sklearn.compose.TransformedTargetRegressor
        Unfitted; the regressor is the feature pipeline, the transformer the target scaling.

    Raises
    ------
    ValueError, TypeError
        For a parameter out of its range or of the wrong type, naming it (here, not at fit time
        inside scikit-learn).
    """
    _check_svr_numbers("make_svr_pipeline", C, epsilon, tol, gamma, ("scale", "auto"))
    log_throughput = check_flag("log_throughput", log_throughput)
    regressor = Pipeline([
        ("log", _log_step(log_throughput)),
        ("scale", StandardScaler()),
        ("svr", SVR(kernel="rbf", C=C, epsilon=epsilon, gamma=gamma, tol=tol)),
    ])
    target = Pipeline([("log", _log_step(log_throughput)), ("scale", StandardScaler())])
    return TransformedTargetRegressor(regressor=regressor, transformer=target, check_inverse=False)


class ProbeSVRBase(RegressorMixin, BaseEstimator):
    """Shared implementation of the probe-to-data SVR predictors; use a subclass.

    Subclasses define what the columns of ``X`` are by overriding
    :meth:`_check_columns` and :meth:`_default_probe_names`.

    Parameters
    ----------
    C : float, default 1.0
        Regularisation constant of the epsilon-SVR, > 0 (kernlab default 1). [-]
    epsilon : float, default 0.1
        Half-width of the insensitive tube in units of the standard deviation of
        the (log-)target, >= 0 (kernlab default 0.1). [-]
    gamma : float or {"sigest", "scale"}, default "sigest"
        RBF width on the standardised features. ``"sigest"``: kernlab's
        automatic estimate (:func:`kernlab_sigest_gamma`); ``"scale"``:
        scikit-learn's ``1 / (n_features * X.var())``; or a number > 0. [-]
    log_throughput : bool, default False
        Fit on ``log`` of the probe and data throughputs (then all must be > 0);
        predictions are ``exp`` of the SVR output and hence always positive.
    tol : float, default 1e-3
        Stopping tolerance of libsvm (kernlab default 0.001). [-]

    Attributes
    ----------
    gamma_ : float
        The RBF width used. [-]
    x_mean_, x_scale_ : ndarray of shape (n_features,)
        Mean and scale of the (log-)features. [bit/s or log(bit/s)]
    y_mean_, y_scale_ : float
        Mean and scale of the (log-)target. [bit/s or log(bit/s)]
    support_vectors_ : ndarray of shape (n_support, n_features)
        Support vectors, in standardised units. [-]
    dual_coef_ : ndarray of shape (n_support,)
        Dual coefficients ``alpha_i - alpha_i*``. [-]
    intercept_ : float
        Constant of the decision function, standardised units. [-]
    n_features_in_ : int
        Number of columns of ``X``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    probe_names_ : list of str
        The column names, or the class's default names for array input.
    """

    def __init__(self, *, C=1.0, epsilon=0.1, gamma="sigest", log_throughput=False, tol=1e-3):
        self.C = C
        self.epsilon = epsilon
        self.gamma = gamma
        self.log_throughput = log_throughput
        self.tol = tol

    # --- hooks for subclasses -------------------------------------------------
    def _check_columns(self, n_columns: int, shape: tuple) -> None:
        """Raise ValueError if ``X`` with this many columns is not valid input."""

    def _default_probe_names(self, n_columns: int) -> list[str]:
        return [f"x{j}" for j in range(n_columns)]

    # --- sklearn API -------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.log_throughput:
            tags.input_tags.positive_only = True
            tags.target_tags.positive_only = True
        return tags

    def _check_params(self) -> None:
        name = type(self).__name__
        _check_svr_numbers(name, self.C, self.epsilon, self.tol, self.gamma, ("sigest", "scale"))
        try:
            check_flag("log_throughput", self.log_throughput)
        except TypeError as exc:  # a saved model with log_throughput="x" predicted inf everywhere
            raise ValueError(f"{name}: {exc}") from None

    def _check_positive(self, arr: np.ndarray, what: str) -> None:
        _check_magnitude(f"{type(self).__name__}: {what}", arr)
        if self.log_throughput and np.any(arr <= 0):
            bad = arr[arr <= 0].ravel()[0]
            raise ValueError(
                f"{type(self).__name__}(log_throughput=True): {what} [bit/s] must be > 0 "
                f"to take its logarithm; got {bad:g}"
            )

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Fit the SVR on probe throughputs ``X`` and data throughputs ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_columns)
            Probe throughput(s); see the subclass for the columns. [bit/s]
        y : array-like of shape (n_samples,)
            Data-transfer throughput. [bit/s]

        Returns
        -------
        self
        """
        self._check_params()
        # ensure_min_features=0: _check_columns explains a missing column in this class's terms.
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64, ensure_min_features=0)
        self._check_columns(X.shape[1], X.shape)
        self._check_positive(X, "probe throughput X")
        self._check_positive(y, "data throughput y")

        x_steps = Pipeline([("log", _log_step(self.log_throughput)), ("scale", StandardScaler())])
        x_scaled = x_steps.fit_transform(X)
        if self.gamma == "sigest":
            gamma = kernlab_sigest_gamma(x_scaled)
        elif self.gamma == "scale":
            var = float(x_scaled.var())
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        else:
            gamma = float(self.gamma)

        model = make_svr_pipeline(
            C=float(self.C), epsilon=float(self.epsilon), gamma=gamma,
            log_throughput=bool(self.log_throughput), tol=float(self.tol),
        ).fit(X, y)
        x_scaler = model.regressor_.named_steps["scale"]
        svr = model.regressor_.named_steps["svr"]
        y_scaler = model.transformer_.named_steps["scale"]

        self.gamma_ = float(gamma)
        self.x_mean_ = np.asarray(x_scaler.mean_, dtype=float).copy()
        self.x_scale_ = np.asarray(x_scaler.scale_, dtype=float).copy()
        self.y_mean_ = float(y_scaler.mean_[0])
        self.y_scale_ = float(y_scaler.scale_[0])
        self.support_vectors_ = np.asarray(svr.support_vectors_, dtype=float).copy()
        self.dual_coef_ = np.asarray(svr.dual_coef_, dtype=float)[0].copy()
        self.intercept_ = float(svr.intercept_[0])
        names = getattr(self, "feature_names_in_", None)
        self.probe_names_ = [str(n) for n in names] if names is not None else self._default_probe_names(X.shape[1])
        return self

    def _svr_output(self, X) -> np.ndarray:
        """Kernel expansion in standardised (log-)target units, before un-scaling. [-]"""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        self._check_positive(X, "probe throughput X")
        z = np.log(X) if self.log_throughput else X
        z = (z - self.x_mean_) / self.x_scale_
        kernel = np.exp(-self.gamma_ * cdist(z, self.support_vectors_, "sqeuclidean"))
        return kernel @ self.dual_coef_ + self.intercept_

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted data-transfer throughput.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_columns)
            Probe throughput(s), same columns as in :meth:`fit`. [bit/s]

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted throughput. [bit/s]
        """
        out = self._svr_output(X) * self.y_scale_ + self.y_mean_
        return np.exp(out) if self.log_throughput else out

    # --- persistence (used by tcpmodels.predict.persist) ---------------------
    _FITTED_ARRAYS = ("x_mean_", "x_scale_", "support_vectors_", "dual_coef_")
    _FITTED_FLOATS = ("gamma_", "y_mean_", "y_scale_", "intercept_")

    def _get_fitted_state(self) -> dict[str, Any]:
        check_is_fitted(self)
        state: dict[str, Any] = {k: getattr(self, k).tolist() for k in self._FITTED_ARRAYS}
        state.update({k: float(getattr(self, k)) for k in self._FITTED_FLOATS})
        state["n_features_in_"] = int(self.n_features_in_)
        state["probe_names_"] = list(self.probe_names_)
        names = getattr(self, "feature_names_in_", None)
        state["feature_names_in_"] = None if names is None else [str(n) for n in names]
        return state

    def _set_fitted_state(self, state: dict[str, Any]) -> None:
        n = int(state["n_features_in_"])
        for k in self._FITTED_ARRAYS:
            setattr(self, k, np.asarray(state[k], dtype=float))
        for k in self._FITTED_FLOATS:
            setattr(self, k, float(state[k]))
        self.support_vectors_ = self.support_vectors_.reshape(-1, n)
        if not (self.x_mean_.shape == self.x_scale_.shape == (n,)
                and self.dual_coef_.shape == (self.support_vectors_.shape[0],)):
            raise ValueError(
                f"inconsistent fitted state: n_features_in_={n}, x_mean_ {self.x_mean_.shape}, "
                f"x_scale_ {self.x_scale_.shape}, support_vectors_ {self.support_vectors_.shape}, "
                f"dual_coef_ {self.dual_coef_.shape}"
            )
        self.n_features_in_ = n
        self.probe_names_ = list(state["probe_names_"])
        if state.get("feature_names_in_") is not None:
            self.feature_names_in_ = np.asarray(state["feature_names_in_"], dtype=object)


@_PARAMETERS.fill
class SingleProbeSVR(ProbeSVRBase):
    """Lee et al.'s predictor: one probe throughput -> data throughput.

    ``X`` has exactly one column, the throughput of a small probe transfer
    sent just before the data (for an MPTCP target, the probe is sent over
    the MPTCP connection itself -- the case the paper shows to fail, because a
    small probe travels almost only on subflow 1). ``y`` is the throughput of
    the data transfer. Without column names the column is called
    ``probe_bps``.

    Parameters
    ----------
    {C, epsilon, gamma, log_throughput, tol}

    References
    ----------
    .. [1] C. Lee, H. Abe, T. Hirotsu, K. Umemura, IEICE Trans. Inf. & Syst.
       E95-D(12):2870-2878, 2012.
    .. [2] Hamazaki, Abe, Kato (2015), Sec. 2 (the "existing method").

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(1e6, 1e7, 40)[:, None]
    >>> model = SingleProbeSVR().fit(x, 2.0 * x[:, 0])
    >>> model.probe_names_
    ['probe_bps']
    """

    def _check_columns(self, n_columns: int, shape: tuple) -> None:
        if n_columns != 1:
            minimum = " while a minimum of 1 is required" if n_columns == 0 else ""
            raise ValueError(
                f"SingleProbeSVR takes exactly one column, the probe throughput [bit/s]; got "
                f"{n_columns} feature(s) (shape={shape}){minimum}. For one probe per path use PerPathProbeSVR."
            )

    def _default_probe_names(self, n_columns: int) -> list[str]:
        return ["probe_bps"]


@_PARAMETERS.fill
class PerPathProbeSVR(ProbeSVRBase):
    """Hamazaki et al.'s predictor: one single-path TCP probe per path -> MPTCP data throughput.

    Column *j* of ``X`` is the throughput of an independent single-path TCP
    probe on path *j* (``probe_path{j}_bps``; for MPTCP with ``m`` subflows,
    ``m`` columns in subflow order); ``y`` is the throughput of the MPTCP data
    transfer. Because each probe is a separate TCP connection, every path is
    measured, including those whose subflow an MPTCP probe would set up too
    late to carry any of a small probe's bytes.

    Parameters
    ----------
    n_paths : int or None, default None
        Number of paths ``m``. ``None`` takes it from ``X``; an integer makes
        :meth:`fit` reject ``X`` with a different number of columns.
    {C, epsilon, gamma, log_throughput, tol}

    Attributes
    ----------
    n_paths_ : int
        Number of paths (columns) seen in :meth:`fit`.

    References
    ----------
    .. [1] Hamazaki, Abe, Kato (2015), Sec. 6.1 (the proposed method).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(1e6, 1e7, size=(60, 2))
    >>> model = PerPathProbeSVR().fit(x, x.sum(axis=1))
    >>> model.probe_names_, model.n_paths_
    (['probe_path1_bps', 'probe_path2_bps'], 2)
    """

    def __init__(self, *, n_paths=None, C=1.0, epsilon=0.1, gamma="sigest", log_throughput=False, tol=1e-3):
        super().__init__(C=C, epsilon=epsilon, gamma=gamma, log_throughput=log_throughput, tol=tol)
        self.n_paths = n_paths

    def _check_params(self) -> None:
        super()._check_params()
        if self.n_paths is not None:
            if isinstance(self.n_paths, bool) or not isinstance(self.n_paths, numbers.Integral) \
                    or self.n_paths < 1:
                raise ValueError(f"PerPathProbeSVR: n_paths must be None or an integer >= 1; got {self.n_paths!r}")

    def _check_columns(self, n_columns: int, shape: tuple) -> None:
        if n_columns < 1:
            raise ValueError(
                "PerPathProbeSVR needs one probe-throughput column per path (m >= 1 paths); got "
                f"0 feature(s) (shape={shape}) while a minimum of 1 is required."
            )
        if self.n_paths is not None and n_columns != self.n_paths:
            raise ValueError(
                f"PerPathProbeSVR(n_paths={self.n_paths}) needs one probe-throughput column per path; "
                f"got X with {n_columns} columns (shape={shape})"
            )

    def _default_probe_names(self, n_columns: int) -> list[str]:
        return probe_feature_names(n_columns)

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Fit on per-path probe throughputs ``X`` (one column per path) and MPTCP throughput ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, m)
            Probe throughput on each path, m >= 1. [bit/s]
        y : array-like of shape (n_samples,)
            MPTCP data-transfer throughput. [bit/s]

        Returns
        -------
        self
        """
        super().fit(X, y)
        self.n_paths_ = int(self.n_features_in_)
        return self

    def _set_fitted_state(self, state: dict[str, Any]) -> None:
        super()._set_fitted_state(state)
        self.n_paths_ = int(self.n_features_in_)


class TunedSVR(NamedTuple):
    """Result of :func:`tune_svr`: the refitted best estimator and the whole grid.

    Attributes
    ----------
    estimator : ProbeSVRBase
        The estimator with the best parameters, refitted on all data.
    cv_results : pandas.DataFrame
        ``GridSearchCV.cv_results_`` as a table, one row per parameter set.
    """

    estimator: Any
    cv_results: pd.DataFrame

    @property
    def best_params(self) -> dict[str, Any]:
        """The chosen parameters (those of the grid row ranked 1)."""
        row = self.cv_results.loc[self.cv_results["rank_test_score"].idxmin()]
        return dict(row["params"])

    @property
    def best_score(self) -> float:
        """Mean cross-validated score of the chosen parameters (greater is better)."""
        return float(self.cv_results["mean_test_score"].max())


def _check_grid(estimator: ProbeSVRBase, param_grid: Any) -> None:
    """Every grid point a valid estimator, checked before the search (not inside scikit-learn at fit time)."""
    grids = [param_grid] if isinstance(param_grid, dict) else param_grid
    if not isinstance(grids, (list, tuple)) or not grids or not all(isinstance(g, dict) for g in grids):
        raise TypeError(f"param_grid must be a dict or a non-empty list of dicts; got {param_grid!r}")
    known = set(estimator.get_params(deep=False))
    for grid in grids:
        for key, values in grid.items():
            if key not in known:
                raise ValueError(f"param_grid: {key!r} is not a parameter of {type(estimator).__name__} "
                                 f"(its parameters: {sorted(known)})")
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
                raise ValueError(f"param_grid[{key!r}] must be a non-empty list of values; got {values!r}")
            for value in values:
                try:
                    estimator.__class__(**{**estimator.get_params(deep=False), key: value})._check_params()
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"param_grid[{key!r}] holds {value!r}: {exc}") from None


def tune_svr(X: ArrayLike, y: ArrayLike, *, estimator: ProbeSVRBase | None = None,
             param_grid: dict[str, Any] | list[dict[str, Any]] | None = None, cv: Any = None,
             scoring: str | Callable[..., float] = "neg_root_mean_squared_error", n_jobs: int | None = None) -> TunedSVR:
    """Choose ``C``, ``epsilon`` and ``gamma`` of a probe SVR by grid-search cross-validation.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_columns)
        Probe throughput(s). [bit/s]
    y : array-like of shape (n_samples,)
        Data throughput. [bit/s]
    estimator : ProbeSVRBase, optional
        Estimator to tune (its other parameters are kept); default ``PerPathProbeSVR()``.
    param_grid : dict or list of dict, optional
        Grid for :class:`~sklearn.model_selection.GridSearchCV`; default
        :data:`DEFAULT_PARAM_GRID` (60 combinations).
    cv : int, splitter or iterable, optional
        Default ``KFold(5, shuffle=True, random_state=0)``: shuffled, because
        measurement campaigns are usually ordered by their settings (e.g. by RTT),
        and unshuffled folds would then ask the model to extrapolate.
    scoring : str or callable, default "neg_root_mean_squared_error"
        Any scikit-learn scoring, e.g. :data:`tcpmodels.predict.metrics.fraction_rpe_scorer`.
    n_jobs : int, optional
        Parallel jobs for the search (default one).

    Returns
    -------
    TunedSVR
        ``estimator`` (refitted with the best parameters) and ``cv_results``;
        ``best_params`` and ``best_score`` as properties.

    Raises
    ------
    ValueError, TypeError
        Before any fit: a grid naming an unknown parameter or holding a value out of range (named
        with the parameter), ``cv`` below 2 folds, ``n_jobs`` of 0, an unknown ``scoring`` name.
    """
    if estimator is None:
        estimator = PerPathProbeSVR()
    if not isinstance(estimator, ProbeSVRBase):
        raise TypeError(f"estimator must be a SingleProbeSVR or PerPathProbeSVR; got {type(estimator).__name__}")
    _check_grid(estimator, DEFAULT_PARAM_GRID if param_grid is None else param_grid)
    if cv is None:
        cv = KFold(n_splits=5, shuffle=True, random_state=0)
    elif isinstance(cv, bool) or (isinstance(cv, numbers.Integral) and cv < 2):
        raise ValueError(f"cv must be a number of folds >= 2, a splitter or an iterable of splits; got {cv!r}")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer (-1: all cores); got {n_jobs!r}")
    if isinstance(scoring, str):
        from sklearn.metrics import get_scorer_names

        if scoring not in get_scorer_names():
            raise ValueError(f"scoring {scoring!r} is not a scikit-learn scorer name (e.g. "
                             "'neg_root_mean_squared_error', 'r2'), nor a callable")
    elif not callable(scoring):
        raise TypeError(f"scoring must be a scorer name or a callable; got {type(scoring).__name__}")
    search = GridSearchCV(
        estimator, param_grid=DEFAULT_PARAM_GRID if param_grid is None else param_grid,
        scoring=scoring, cv=cv, n_jobs=n_jobs, refit=True, error_score="raise",
    )
    search.fit(X, y)
    return TunedSVR(estimator=search.best_estimator_, cv_results=pd.DataFrame(search.cv_results_))
