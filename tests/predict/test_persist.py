"""JSON persistence: exact round trip, tamper detection, version warnings, no pickle."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from tcpmodels.predict import (
    FormulaThroughputRegressor,
    ModelVersionWarning,
    PerPathProbeSVR,
    SingleProbeSVR,
    load_json,
    save_json,
)


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.uniform(1e6, 2e7, size=(n, 2))
    y = (X[:, 0] + 0.5 * X[:, 1]) * rng.lognormal(0, 0.05, n)
    return X, y


def _rehash(doc):
    body = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    doc["sha256"] = hashlib.sha256(canonical).hexdigest()
    return doc


@pytest.mark.parametrize(
    "model",
    [PerPathProbeSVR(), PerPathProbeSVR(log_throughput=True, C=4.0, gamma=0.3, n_paths=2),
     SingleProbeSVR(epsilon=0.05, gamma="scale")],
    ids=repr,
)
def test_svr_round_trip_is_exact(model, tmp_path):
    X, y = _data()
    if isinstance(model, SingleProbeSVR):
        X = X[:, :1]
    model.fit(X, y)
    path = save_json(model, tmp_path / "model.json")
    loaded = load_json(path)
    assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
    X_new, _ = _data(seed=1, n=500)
    X_new = X_new[:, : X.shape[1]]
    np.testing.assert_array_equal(loaded.predict(X_new), model.predict(X_new))  # bit for bit
    np.testing.assert_array_equal(loaded.support_vectors_, model.support_vectors_)
    assert loaded.gamma_ == model.gamma_ and loaded.probe_names_ == model.probe_names_
    doc = json.loads(path.read_text())
    assert {"params", "fitted", "versions", "sha256", "format", "class"} <= set(doc)
    assert {"support_vectors_", "dual_coef_", "intercept_", "x_mean_", "x_scale_", "gamma_"} <= set(doc["fitted"])
    assert {"numpy", "scikit-learn", "tcpmodels"} <= set(doc["versions"])


def test_round_trip_keeps_dataframe_column_names(tmp_path):
    X, y = _data()
    frame = pd.DataFrame(X, columns=["probe_path1_bps", "probe_path2_bps"])
    model = PerPathProbeSVR().fit(frame, y)
    loaded = load_json(save_json(model, tmp_path / "m.json"))
    assert list(loaded.feature_names_in_) == ["probe_path1_bps", "probe_path2_bps"]
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_formula_round_trip(tmp_path):
    X = np.array([[0.05, 0.01], [0.1, 0.02], [0.2, 0.0]])
    y = np.array([2e6, 1e6, 5e5])
    model = FormulaThroughputRegressor(model="padhye", t0_s=0.5, w_max_segments=64, calibrate=True).fit(X, y)
    loaded = load_json(save_json(model, tmp_path / "f.json"))
    assert loaded.scale_ == model.scale_ and loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_tampered_file_is_refused_naming_file_and_field(tmp_path):
    X, y = _data()
    path = save_json(PerPathProbeSVR().fit(X, y), tmp_path / "model.json")
    doc = json.loads(path.read_text())
    doc["fitted"]["intercept_"] += 1e-9
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"model\.json: field 'sha256' does not match the content"):
        load_json(path)


def test_other_library_version_warns_naming_the_field(tmp_path):
    X, y = _data()
    model = PerPathProbeSVR().fit(X, y)
    path = save_json(model, tmp_path / "old.json")
    doc = json.loads(path.read_text())
    doc["versions"]["scikit-learn"] = "0.24.2"
    path.write_text(json.dumps(_rehash(doc)))
    with pytest.warns(ModelVersionWarning, match=r"old\.json: field 'versions\.scikit-learn' is '0\.24\.2'"):
        loaded = load_json(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.update(format="tcpmodels.predict.model/99"), r"field 'format' is 'tcpmodels\.predict\.model/99'"),
        (lambda d: d.update({"class": "SVR"}), r"field 'class' is 'SVR'"),
        (lambda d: d["fitted"].pop("dual_coef_"), r"field 'fitted\.dual_coef_' is missing"),
        (lambda d: d["params"].update(kernel="rbf"), r"field 'params' does not fit PerPathProbeSVR"),
        (lambda d: d["fitted"].update(dual_coef_=[1.0]), r"field 'fitted' is invalid \(inconsistent"),
        (lambda d: d.pop("versions"), r"field 'versions' is missing"),
    ],
)
def test_malformed_files_name_the_field(tmp_path, edit, match):
    X, y = _data()
    path = save_json(PerPathProbeSVR().fit(X, y), tmp_path / "bad.json")
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(_rehash(doc)))
    with pytest.raises(ValueError, match=r"bad\.json: " + match):
        load_json(path)


def test_not_json_and_unfitted(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b"\x80\x04\x95pickle")
    with pytest.raises(ValueError, match=r"x\.json: not a valid JSON model file"):
        load_json(path)
    with pytest.raises(NotFittedError):
        save_json(PerPathProbeSVR(), tmp_path / "y.json")
    with pytest.raises(TypeError, match="save_json supports"):
        save_json(object(), tmp_path / "z.json")


def test_non_finite_parameter_is_refused(tmp_path):
    model = FormulaThroughputRegressor(w_max_segments=np.inf).fit([[0.1, 0.01]])
    with pytest.raises(ValueError, match=r"params\.w_max_segments=inf.*not finite"):
        save_json(model, tmp_path / "inf.json")
