r"""Formula-based throughput prediction (Mathis, PFTK) as a scikit-learn regressor.

He, Dovrolis and Ammar (2005) compare *formula-based* predictors, which
compute throughput from the RTT and loss rate measured on a path, with
*history-based* ones, which extrapolate past transfers
(:mod:`tcpmodels.predict.history`) or learn from them
(:mod:`tcpmodels.predict.svr`). :class:`FormulaThroughputRegressor` is the
formula side, computed with :mod:`tcpmodels.models.throughput`, so it can sit
in the same evaluation code (``fit``/``predict``/``score``, the metrics of
:mod:`tcpmodels.predict.metrics`) as the learned predictors.

References
----------
.. [1] Q. He, C. Dovrolis, M. Ammar, "On the predictability of large transfer
   TCP throughput", ACM SIGCOMM 2005.
.. [2] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the
   TCP congestion avoidance algorithm", ACM SIGCOMM CCR 27(3), 1997.
.. [3] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno
   performance: a simple model and its empirical validation", IEEE/ACM ToN 8(2), 2000.
"""

from __future__ import annotations

import numbers
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from tcpmodels._arrays import check_range
from tcpmodels.models.throughput import (
    mathis_throughput_bps,
    padhye_throughput_bps,
    window_limited_throughput_bps,
)

__all__ = ["FormulaThroughputRegressor", "FORMULA_COLUMNS"]

#: Names of the columns of ``X``: the first two always, the last two optionally.
FORMULA_COLUMNS = ("rtt_s", "loss_rate", "t0_s", "w_max_segments")

_MODELS = ("mathis", "padhye")


class FormulaThroughputRegressor(RegressorMixin, BaseEstimator):
    r"""Throughput from RTT and loss rate by the Mathis or the PFTK formula.

    ``X`` has two columns ``(rtt_s, loss_rate)`` or four
    ``(rtt_s, loss_rate, t0_s, w_max_segments)``, measured on a probe or on a
    trace of the path; with two columns ``t0_s`` and ``w_max_segments`` come
    from the parameters of the same names. A DataFrame must name its columns
    exactly so, in this order (a swapped RTT and loss rate would otherwise
    give a silently wrong answer).

    Parameters
    ----------
    model : {"mathis", "padhye"}, default "mathis"
        :func:`~tcpmodels.models.throughput.mathis_throughput_bps` (square-root
        law) or :func:`~tcpmodels.models.throughput.padhye_throughput_bps`
        (PFTK full model with timeouts and window limit).
    mss_bytes : float, default 1460
        Segment size. [bytes]
    b : float or None, default None
        Segments per ACK; ``None`` keeps each model function's default (1 for
        Mathis, 2 for PFTK). [segments]
    c : float or None, default None
        Mathis constant ``C`` (``None``: ``sqrt(3 / (2 b))``); only with ``model="mathis"``. [-]
    t0_s : float or None, default None
        PFTK's first retransmission timeout ``T0`` when ``X`` has no ``t0_s``
        column; required for ``model="padhye"`` with two columns. [s]
    w_max_segments : float or None, default None
        Window limit ``W_max`` when ``X`` has no ``w_max_segments`` column;
        ``None`` means no window limit. [segments]
    capacity_bps : float or None, default None
        Ceiling on every prediction, e.g. the bottleneck capacity; ``None`` for none. [bit/s]
    calibrate : bool, default False
        If True, :meth:`fit` learns one multiplicative constant ``scale_``
        (the geometric mean of measured / formula throughput over the samples
        with ``loss_rate > 0``, i.e. the least-squares fit in log space); if
        False, ``fit`` learns nothing and ``scale_ = 1``.

    Attributes
    ----------
    scale_ : float
        Multiplicative calibration constant (1.0 unless ``calibrate=True``). [-]
    n_features_in_ : int
        2 or 4.

    Notes
    -----
    The prediction is

    .. math:: \hat R = \min\big(k\, B(RTT, p),\ W_{max}\, MSS / RTT,\ capacity\big)

    with ``k = scale_`` and ``B`` the chosen formula. The ceilings matter at
    low loss: Mathis' law grows without bound as ``p -> 0`` and is infinite at
    ``p = 0``, where a lossless transfer is limited by its window or by the
    link instead. PFTK's own limit for ``p -> 0`` is ``W_max / RTT``, which
    is exactly the window ceiling. Samples with ``loss_rate = 0`` therefore
    predict the ceiling; if there is none (no ``w_max_segments`` and no
    ``capacity_bps``), :meth:`predict` raises ``ValueError`` rather than
    return infinity. Out-of-domain columns (``rtt_s <= 0``, ``loss_rate``
    outside [0, 1] -- [0, 1) for PFTK --, ``t0_s < 0``, ``w_max_segments < 1``)
    raise ``ValueError`` naming the column, unit, value and range.

    References
    ----------
    .. [1] He, Dovrolis, Ammar, ACM SIGCOMM 2005 (formula- vs history-based prediction).
    .. [2] Mathis et al. 1997; Padhye et al. 2000 (see :mod:`tcpmodels.models.throughput`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.1, 0.01], [0.1, 0.0]])
    >>> model = FormulaThroughputRegressor(w_max_segments=100).fit(X)
    >>> (model.predict(X) / 1e6).round(4).tolist()  # Mathis; window 100 * 1460 B / 0.1 s at p = 0
    [1.4305, 11.68]
    """

    def __init__(self, *, model="mathis", mss_bytes=1460.0, b=None, c=None, t0_s=None,
                 w_max_segments=None, capacity_bps=None, calibrate=False):
        self.model = model
        self.mss_bytes = mss_bytes
        self.b = b
        self.c = c
        self.t0_s = t0_s
        self.w_max_segments = w_max_segments
        self.capacity_bps = capacity_bps
        self.calibrate = calibrate

    def _check_params(self) -> None:
        if not isinstance(self.calibrate, (bool, np.bool_)):
            raise ValueError(f"calibrate must be True or False; got {self.calibrate!r}")
        if self.model not in _MODELS:
            raise ValueError(f"model must be one of {_MODELS}; got {self.model!r}")
        if self.c is not None and self.model != "mathis":
            raise ValueError(f"c (the Mathis constant) only applies to model='mathis'; got model={self.model!r}")
        for name, unit, low, low_open in (
            ("mss_bytes", "bytes", 0.0, True), ("b", "segments", 1.0, False), ("c", "-", 0.0, True),
            ("t0_s", "s", 0.0, False), ("w_max_segments", "segments", 1.0, False),
            ("capacity_bps", "bit/s", 0.0, True),
        ):
            value = getattr(self, name)
            if value is None:
                if name == "mss_bytes":
                    raise ValueError("mss_bytes [bytes] must be a number in (0, inf]; got None")
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"{name} [{unit}] must be a number or None; got {value!r}")
            try:
                if np.isnan(float(value)):
                    raise ValueError(f"{name} [{unit}] must be a number or None; got {value!r}")
            except OverflowError:
                raise ValueError(f"{name} [{unit}] must be a number a 64-bit float holds; got an integer of "
                                 f"{len(str(abs(int(value))))} digits") from None
            check_range(name, value, unit=unit, low=low, low_open=low_open)

    def _columns(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Split and check the columns of a validated ``X``."""
        n = X.shape[1]
        if n not in (2, 4):
            raise ValueError(
                "FormulaThroughputRegressor needs X with columns (rtt_s, loss_rate) or "
                f"(rtt_s, loss_rate, t0_s, w_max_segments); got {n} feature(s) (shape={X.shape})"
            )
        names = getattr(self, "feature_names_in_", None)
        if names is not None and list(names) != list(FORMULA_COLUMNS[:n]):
            raise ValueError(
                f"X's columns must be {list(FORMULA_COLUMNS[:n])} in this order; got {list(names)} "
                "(rename or reorder them, or pass a numpy array to skip this check)"
            )
        cols = {"rtt_s": X[:, 0], "loss_rate": X[:, 1]}
        if n == 4:
            for name in ("t0_s", "w_max_segments"):
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"X has a {name} column, so the {name} parameter must be None; "
                        f"got {name}={getattr(self, name)!r}"
                    )
            cols["t0_s"], cols["w_max_segments"] = X[:, 2], X[:, 3]
        else:
            shape = X.shape[0]
            t0 = self.t0_s
            if t0 is None and self.model == "padhye":
                raise ValueError(
                    "model='padhye' needs T0: give X a t0_s column (4 columns) or set the t0_s parameter [s]"
                )
            cols["t0_s"] = np.full(shape, np.nan if t0 is None else float(t0))
            w = np.inf if self.w_max_segments is None else float(self.w_max_segments)
            cols["w_max_segments"] = np.full(shape, w)
        check_range("rtt_s", cols["rtt_s"], unit="s", low=0, low_open=True)
        check_range("loss_rate", cols["loss_rate"], unit="-", low=0, high=1,
                    high_open=self.model == "padhye")
        if n == 4 or self.model == "padhye":
            check_range("t0_s", cols["t0_s"], unit="s", low=0)
        check_range("w_max_segments", cols["w_max_segments"], unit="segments", low=1)
        return cols

    def _formula_bps(self, cols: dict[str, np.ndarray]) -> np.ndarray:
        """Uncapped, uncalibrated formula throughput; +inf where loss_rate == 0. [bit/s]"""
        p = cols["loss_rate"]
        lossy = p > 0
        out = np.full(p.shape, np.inf)
        kw = {} if self.b is None else {"b": float(self.b)}
        # the formulas unwrapped from their overflow check (tcpmodels._arrays.finite_result): predict() reports an
        # overflow itself, by the row of X
        if lossy.any():
            if self.model == "mathis":
                out[lossy] = mathis_throughput_bps.__wrapped__(
                    float(self.mss_bytes), cols["rtt_s"][lossy], p[lossy], c=self.c, **kw)
            else:
                out[lossy] = padhye_throughput_bps.__wrapped__(
                    float(self.mss_bytes), cols["rtt_s"][lossy], p[lossy], cols["t0_s"][lossy],
                    cols["w_max_segments"][lossy], **kw)
        return out

    def _ceiling_bps(self, cols: dict[str, np.ndarray]) -> np.ndarray:
        window_bytes = cols["w_max_segments"] * float(self.mss_bytes)
        cap = window_limited_throughput_bps(window_bytes, cols["rtt_s"])
        if self.capacity_bps is not None:
            cap = np.minimum(cap, float(self.capacity_bps))
        return cap

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> Self:
        """Check ``X`` and, with ``calibrate=True``, learn the constant ``scale_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, 2 or 4)
            Columns ``rtt_s`` [s], ``loss_rate`` [-] and optionally ``t0_s`` [s],
            ``w_max_segments`` [segments].
        y : array-like of shape (n_samples,), optional
            Measured throughput, needed (and > 0) only with ``calibrate=True``. [bit/s]

        Returns
        -------
        self
        """
        self._check_params()
        if y is None:
            if self.calibrate:
                raise ValueError("calibrate=True needs the measured throughput y [bit/s]")
            X = validate_data(self, X, dtype=np.float64)
        else:
            X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        cols = self._columns(X)
        self.scale_ = 1.0
        if self.calibrate:
            check_range("y", y, unit="bit/s", low=0, low_open=True)
            formula = self._formula_bps(cols)
            use = np.isfinite(formula)
            if not use.any():
                raise ValueError("calibrate=True needs at least one sample with loss_rate > 0")
            self.scale_ = float(np.exp(np.mean(np.log(y[use]) - np.log(formula[use]))))
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted throughput, ``min(scale_ * formula, window ceiling, capacity_bps)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, 2 or 4)
            Same columns as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted throughput. [bit/s]
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        cols = self._columns(X)
        with np.errstate(over="ignore", divide="ignore"):  # an overflow is reported below, by row
            pred = np.minimum(self.scale_ * self._formula_bps(cols), self._ceiling_bps(cols))
        unbounded = ~np.isfinite(pred) & (cols["loss_rate"] == 0)
        if unbounded.any():
            i = int(np.flatnonzero(unbounded)[0])
            raise ValueError(
                f"loss_rate is 0 in row {i} ({int(unbounded.sum())} rows) and there is no ceiling: "
                f"{self.model} throughput is unbounded without loss; give w_max_segments "
                "(column or parameter) or capacity_bps"
            )
        overflow = np.isinf(pred)
        if overflow.any():
            i = int(np.flatnonzero(overflow)[0])
            row = ", ".join(f"{k}={v[i]:g}" for k, v in cols.items())
            raise ValueError(
                f"the {self.model} throughput overflows float64 in row {i} ({int(overflow.sum())} rows; {row}): "
                "an RTT or loss rate this small gives no finite rate; check the units of X"
            )
        return pred

    # --- persistence (used by tcpmodels.predict.persist) ---------------------
    def _get_fitted_state(self) -> dict[str, Any]:
        check_is_fitted(self)
        return {"scale_": float(self.scale_), "n_features_in_": int(self.n_features_in_)}

    def _set_fitted_state(self, state: dict[str, Any]) -> None:
        self.scale_ = float(state["scale_"])
        self.n_features_in_ = int(state["n_features_in_"])
