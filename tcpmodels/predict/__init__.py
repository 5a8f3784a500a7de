"""Throughput predictors and their accuracy metrics (paper P2: Hamazaki, Abe, Kato).

Predictors, all scikit-learn estimators (``fit``/``predict``, ``clone``,
``GridSearchCV``) unless noted:

- :class:`SingleProbeSVR` -- Lee et al.: SVR from one probe's throughput to the
  data transfer's throughput (the paper's "existing method").
- :class:`PerPathProbeSVR` -- Hamazaki et al.: SVR from one independent TCP
  probe per path to the MPTCP data throughput (the "proposed method").
- :func:`tune_svr` -- cross-validated choice of ``C``, ``epsilon``, ``gamma``.
- :class:`FormulaThroughputRegressor` -- Mathis / PFTK from RTT and loss rate.
- :func:`moving_average_forecast`, :func:`ewma_forecast`,
  :func:`holt_winters_forecast` -- history baselines of He, Dovrolis and Ammar
  (functions: one-step-ahead prediction over a time-ordered series).
- :func:`save_json` / :func:`load_json` -- models as hashed JSON, never pickle.

Metrics (:mod:`tcpmodels.predict.metrics`): :func:`rmse`, :func:`rpe`,
:func:`fraction_rpe_within`, :func:`spearman_rho`, :data:`fraction_rpe_scorer`.
"""

from tcpmodels.predict.formula import FORMULA_COLUMNS, FormulaThroughputRegressor
from tcpmodels.predict.history import ewma_forecast, holt_winters_forecast, moving_average_forecast
from tcpmodels.predict.metrics import (
    SpearmanResult,
    fraction_rpe_scorer,
    fraction_rpe_within,
    make_fraction_rpe_scorer,
    rmse,
    rpe,
    spearman_rho,
)
from tcpmodels.predict.persist import ModelVersionWarning, load_json, save_json
from tcpmodels.predict.svr import (
    DEFAULT_PARAM_GRID,
    PerPathProbeSVR,
    ProbeSVRBase,
    SingleProbeSVR,
    TunedSVR,
    kernlab_sigest_gamma,
    make_svr_pipeline,
    probe_feature_names,
    tune_svr,
)

__all__ = [
    "SingleProbeSVR",
    "PerPathProbeSVR",
    "ProbeSVRBase",
    "tune_svr",
    "TunedSVR",
    "DEFAULT_PARAM_GRID",
    "kernlab_sigest_gamma",
    "make_svr_pipeline",
    "probe_feature_names",
    "FormulaThroughputRegressor",
    "FORMULA_COLUMNS",
    "moving_average_forecast",
    "ewma_forecast",
    "holt_winters_forecast",
    "rmse",
    "rpe",
    "fraction_rpe_within",
    "spearman_rho",
    "SpearmanResult",
    "make_fraction_rpe_scorer",
    "fraction_rpe_scorer",
    "save_json",
    "load_json",
    "ModelVersionWarning",
]
