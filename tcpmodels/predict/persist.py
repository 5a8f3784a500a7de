"""Save and load fitted predictors as JSON (never pickle).

A saved model is one JSON object::

    {
      "format": "tcpmodels.predict.model/1",
      "class": "PerPathProbeSVR",
      "params": {...get_params()...},
      "fitted": {...support vectors, dual coefficients, intercept, gamma,
                 scaler means and scales, ... as plain lists and numbers...},
      "versions": {"tcpmodels": ..., "numpy": ..., "scipy": ..., "scikit-learn": ..., "python": ...},
      "sha256": "<hex digest of the canonical JSON of all other fields>"
    }

Floats are written with Python's shortest round-trip representation, so
every float64 comes back bit for bit, and since fitted and loaded models
predict with the same numpy code on the same numbers
(:class:`tcpmodels.predict.svr.ProbeSVRBase`), their predictions are identical.

:func:`load_json` refuses a file whose hash does not match its content (it
was edited or damaged), whose format or class it does not know, or whose
fields are missing, with a ``ValueError`` naming the file and the field. A
file written with other library versions loads with a
:class:`ModelVersionWarning` naming the field (``versions.scikit-learn``,
...): predictions use only numpy, so they should not change, but the
difference is worth knowing.
"""

from __future__ import annotations

import hashlib
import json
import platform
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import scipy
import sklearn
from sklearn.utils.validation import check_is_fitted

import tcpmodels
from tcpmodels.predict.formula import FormulaThroughputRegressor
from tcpmodels.predict.svr import PerPathProbeSVR, SingleProbeSVR

__all__ = ["save_json", "load_json", "ModelVersionWarning", "FORMAT"]

#: Identifier and version of the file layout.
FORMAT = "tcpmodels.predict.model/1"

_CLASSES = {cls.__name__: cls for cls in (SingleProbeSVR, PerPathProbeSVR, FormulaThroughputRegressor)}


class ModelVersionWarning(UserWarning):
    """A model file was written with different library versions than the ones installed."""


def _versions() -> dict[str, str]:
    return {
        "tcpmodels": tcpmodels.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "python": platform.python_version(),
    }


def _canonical(doc: dict[str, Any]) -> bytes:
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _plain(value: Any, where: str) -> Any:
    """Parameters as JSON values (numpy scalars to Python); reject what JSON cannot hold."""
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        value = value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not np.isfinite(value):
            raise ValueError(
                f"cannot save {where}={value!r} as JSON (not finite); use None where the parameter allows it"
            )
        return value
    raise TypeError(f"cannot save {where} of type {type(value).__name__} as JSON")


def save_json(model: SingleProbeSVR | PerPathProbeSVR | FormulaThroughputRegressor, path: str | Path) -> Path:
    """Write a fitted predictor to a JSON file.

    Parameters
    ----------
    model : SingleProbeSVR, PerPathProbeSVR or FormulaThroughputRegressor
        A fitted estimator.
    path : str or pathlib.Path
        File to write (overwritten).

    Returns
    -------
    pathlib.Path
        The path written.
    """
    name = type(model).__name__
    if name not in _CLASSES or type(model) is not _CLASSES[name]:
        raise TypeError(f"save_json supports {sorted(_CLASSES)}; got {name}")
    check_is_fitted(model)
    params = {k: _plain(v, f"params.{k}") for k, v in model.get_params(deep=False).items()}
    doc = {
        "format": FORMAT,
        "class": name,
        "params": params,
        "fitted": model._get_fitted_state(),
        "versions": _versions(),
    }
    doc["sha256"] = hashlib.sha256(_canonical(doc)).hexdigest()
    path = Path(path)
    path.write_text(json.dumps(doc, sort_keys=True, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path


def load_json(path: str | Path) -> SingleProbeSVR | PerPathProbeSVR | FormulaThroughputRegressor:
    """Read a predictor written by :func:`save_json`.

    Parameters
    ----------
    path : str or pathlib.Path
        The JSON file.

    Returns
    -------
    estimator
        A fitted estimator of the saved class, with the saved parameters and
        fitted state; its predictions equal the saved model's.

    Raises
    ------
    ValueError
        If the file is not JSON, lacks a field, has an unknown format or class,
        or its ``sha256`` does not match its content; the message names the file and field.

    Warns
    -----
    ModelVersionWarning
        For each entry of ``versions`` that differs from the installed library.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a valid JSON model file ({exc})") from exc
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a model file (top level is {type(doc).__name__}, expected an object)")
    for field in ("format", "class", "params", "fitted", "versions", "sha256"):
        if field not in doc:
            raise ValueError(f"{path}: field '{field}' is missing")
    if doc["format"] != FORMAT:
        raise ValueError(f"{path}: field 'format' is {doc['format']!r}; this version reads {FORMAT!r}")
    _check_finite(path, "", doc)
    digest = hashlib.sha256(_canonical(doc)).hexdigest()
    if digest != doc["sha256"]:
        raise ValueError(
            f"{path}: field 'sha256' does not match the content (stored {doc['sha256']}, "
            f"computed {digest}); the file was modified or damaged"
        )
    if doc["class"] not in _CLASSES:
        raise ValueError(f"{path}: field 'class' is {doc['class']!r}; known classes are {sorted(_CLASSES)}")
    installed = _versions()
    for lib, version in installed.items():
        saved = doc["versions"].get(lib)
        if saved != version:
            warnings.warn(
                f"{path}: field 'versions.{lib}' is {saved!r} in the file, {version!r} installed",
                ModelVersionWarning, stacklevel=2,
            )
    cls = _CLASSES[doc["class"]]
    if not isinstance(doc["params"], dict):
        raise ValueError(f"{path}: field 'params' must be an object; got {type(doc['params']).__name__}")
    try:
        model = cls(**doc["params"])
        model._check_params()  # the same checks fit() makes, so a bad file fails here and not at predict()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: field 'params' does not fit {cls.__name__} ({exc})") from exc
    try:
        model._set_fitted_state(doc["fitted"])
    except KeyError as exc:
        raise ValueError(f"{path}: field 'fitted.{exc.args[0]}' is missing") from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: field 'fitted' is invalid ({exc})") from exc
    return model


def _check_finite(path: Path, where: str, value) -> None:
    """Every number in a model file must be finite: :func:`save_json` never writes NaN or infinity."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(path, f"{where}.{k}" if where else str(k), v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(path, f"{where}[{i}]", v)
    elif isinstance(value, float) and not np.isfinite(value):
        raise ValueError(f"{path}: field '{where}' is {value}; a model file holds finite numbers only")
