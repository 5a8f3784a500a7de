"""Predictor parameters checked at the door (issue 50, finding 5): make_svr_pipeline and tune_svr failed only
inside scikit-learn at fit time, and a saved model whose parameters said ``log_throughput="x"`` loaded and
predicted inf everywhere."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_persist import _rehash

from tcpmodels.predict.persist import load_json, save_json
from tcpmodels.predict.svr import PerPathProbeSVR, SingleProbeSVR, make_svr_pipeline, tune_svr

RNG = np.random.default_rng(0)
X = RNG.uniform(1e6, 1e7, size=(40, 1))
Y = 2 * X[:, 0]


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(C=0.0), ValueError, r"make_svr_pipeline: C \[-\] must be a number in \(0, inf\); got 0"),
    (dict(C=10**400), ValueError, r"C \[-\] must be a number in \(0, inf\)"),
    (dict(epsilon=-1.0), ValueError, r"epsilon \[-\] must be a number in \[0, inf\)"),
    (dict(gamma="sigest"), ValueError, r"gamma must be 'scale', 'auto' or a number > 0; got 'sigest'"),
    (dict(gamma=-0.5), ValueError, r"gamma \[-\] must be 'scale', 'auto' or a number in \(0, inf\)"),
    (dict(tol=float("nan")), ValueError, r"tol \[-\] must be a number in \(0, inf\)"),
    (dict(log_throughput="yes"), TypeError, r"log_throughput must be True or False; got 'yes'"),
])
def test_make_svr_pipeline_checks_before_building(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_svr_pipeline(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(param_grid={"C": [1.0, -4.0]}), r"param_grid\['C'\] holds -4.0: .*C \[-\] must be a number in \(0, inf\)"),
    (dict(param_grid={"gamma": ["auto"]}), r"param_grid\['gamma'\] holds 'auto'"),
    (dict(param_grid={"kernel": ["linear"]}), r"param_grid: 'kernel' is not a parameter of PerPathProbeSVR"),
    (dict(param_grid={"C": []}), r"param_grid\['C'\] must be a non-empty list"),
    (dict(param_grid={"log_throughput": ["x"]}), r"log_throughput must be True or False; got 'x'"),
    (dict(cv=1), r"cv must be a number of folds >= 2"),
    (dict(n_jobs=0), r"n_jobs must be None or a non-zero integer"),
    (dict(scoring="accuracyy"), r"scoring 'accuracyy' is not a scikit-learn scorer name"),
])
def test_tune_svr_checks_before_any_fit(kwargs, match, monkeypatch):
    fitted = []
    monkeypatch.setattr(PerPathProbeSVR, "fit", lambda self, *a: fitted.append(1) or self)
    with pytest.raises(ValueError, match=match):
        tune_svr(X, Y, **kwargs)
    assert fitted == []  # refused before the search started


def test_a_saved_model_with_a_bad_switch_is_refused_at_load(tmp_path):
    path = save_json(SingleProbeSVR(log_throughput=True).fit(X, Y), tmp_path / "m.json")
    doc = json.loads(path.read_text())
    doc["params"]["log_throughput"] = "x"
    path.write_text(json.dumps(_rehash(doc)))
    with pytest.raises(ValueError, match=r"m\.json: field 'params' does not fit SingleProbeSVR .*log_throughput must "
                                         r"be True or False; got 'x'"):
        load_json(path)
    doc["params"]["log_throughput"] = True
    doc = _rehash({**doc, "class": "PerPathProbeSVR", "params": {**doc["params"], "n_paths": 0}})
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"n_paths must be None or an integer >= 1; got 0"):
        load_json(path)
