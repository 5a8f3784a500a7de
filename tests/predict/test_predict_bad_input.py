"""Bad input to predictors and metrics: the same checks as the formula models, errors that say what is wrong."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tcpmodels.predict import FormulaThroughputRegressor, PerPathProbeSVR, load_json, save_json
from tcpmodels.predict.metrics import fraction_rpe_within, rmse, rpe, spearman_rho
from tcpmodels.predict.svr import kernlab_sigest_gamma


@pytest.mark.parametrize("metric", [rmse, rpe, fraction_rpe_within, spearman_rho])
def test_metrics_refuse_series_with_different_indexes_like_the_models(metric):
    y_true = pd.Series([1.0, 2.0, 4.0], index=["a", "b", "c"])
    y_pred = pd.Series([4.0, 2.0, 1.0], index=["c", "b", "a"])  # the same values, reordered
    with pytest.raises(ValueError, match="pandas Series with different indexes; align them first"):
        metric(y_true, y_pred)
    aligned, _ = y_pred.align(y_true)
    assert np.all(np.asarray(rpe(y_true, y_pred.reindex(y_true.index))) == 0)
    assert rmse(y_true, y_pred.reindex(y_true.index)) == 0.0 and len(aligned) == 3


@pytest.mark.parametrize("metric", [rmse, rpe])
def test_metrics_refuse_none(metric):
    with pytest.raises(TypeError, match="y_true must be numeric .* got None"):
        metric(None, [1.0])


def test_sigest_refuses_nan_and_values_whose_squares_overflow():
    with pytest.raises(ValueError, match=r"X_scaled must be finite; got nan at index \(1, 0\)"):
        kernlab_sigest_gamma([[0.0], [np.nan], [3.0]])
    with pytest.raises(ValueError, match=r"X_scaled must be at most 1e\+150 in magnitude .* got 1e\+308"):
        kernlab_sigest_gamma([[0.0], [1e308], [3.0]])


def test_svr_names_huge_throughputs_instead_of_reporting_nan():
    X = np.array([[1e6, 2e6], [2e6, 1e6], [1e308, 1e6]])
    with pytest.raises(ValueError, match=r"PerPathProbeSVR: probe throughput X must be at most 1e\+150"):
        PerPathProbeSVR().fit(X, [1e6, 2e6, 3e6])


def test_formula_overflow_is_not_reported_as_zero_loss():
    model = FormulaThroughputRegressor(model="mathis").fit([[0.1, 0.01]])
    with pytest.raises(ValueError, match=r"mathis throughput overflows float64 in row 0 .*rtt_s=1e-300"):
        model.predict([[1e-300, 1e-300]])
    with pytest.raises(ValueError, match=r"loss_rate is 0 in row 1"):
        model.predict([[0.1, 0.01], [0.1, 0.0]])


@pytest.mark.parametrize("params, match", [
    ({"model": "x"}, r"model must be one of"),
    ({"mss_bytes": -1.0}, r"mss_bytes \[bytes\] must be in \(0, inf\]"),
    ({"b": 0.5}, r"b \[segments\] must be in \[1, inf\]"),
])
def test_load_json_checks_parameters_like_fit(tmp_path, params, match):
    path = save_json(FormulaThroughputRegressor().fit([[0.1, 0.01]]), tmp_path / "m.json")
    doc = json.loads(path.read_text())
    doc["params"].update(params)
    from test_persist import _rehash

    path.write_text(json.dumps(_rehash(doc)))
    with pytest.raises(ValueError, match=r"m\.json: field 'params' does not fit FormulaThroughputRegressor .*" + match):
        load_json(path)


def test_load_json_refuses_non_finite_numbers(tmp_path):
    path = save_json(FormulaThroughputRegressor().fit([[0.1, 0.01]]), tmp_path / "n.json")
    text = path.read_text().replace('"scale_": 1.0', '"scale_": NaN')
    assert "NaN" in text
    path.write_text(text)
    with pytest.raises(ValueError, match=r"n\.json: field 'fitted\.scale_' is nan; a model file holds finite"):
        load_json(path)
