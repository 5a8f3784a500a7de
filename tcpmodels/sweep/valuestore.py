"""Store a run's returned value on disk without pickle: JSON for structure, Parquet for tables, .npy for arrays.

The sweep cache used to keep each value as ``value.pkl``; anyone who could write
to the cache directory could then run code in the next sweep that read it.
:func:`dump_value` writes a directory instead:

``value.json``
    The value as a tagged JSON tree (see below).
``tables/<n>.parquet``
    Each pandas DataFrame or Series in the value (index and column names kept).
``arrays/<n>.npy``
    Each numpy array of a numeric or boolean dtype (read with ``allow_pickle=False``).

JSON holds ``None``, bools, ints, finite floats, strings, lists and dicts with
string keys as themselves; everything else is an object ``{"__type__": ...}``:
``float`` (NaN and infinities), ``tuple``, ``dict`` (non-string keys, as pairs),
``path``, ``numpy`` scalars, ``table``/``series``/``array`` (a file reference),
and ``dataclass``. A dataclass is rebuilt only if its class lives in the
``tcpmodels`` package (``module:qualname``, imported by name and checked to be a
dataclass), so a file can name no code outside this package; values of any other
type are refused when written, with the path of the offending part.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["dump_value", "load_value", "ValueStoreError", "VALUE_FILE"]

#: Name of the JSON file inside a value directory.
VALUE_FILE = "value.json"
#: Package whose dataclasses may be rebuilt from a value file.
_TRUSTED_PACKAGE = "tcpmodels"


class ValueStoreError(ValueError):
    """A value that cannot be stored safely, or a value directory that does not hold a valid value."""


class _Writer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.n_tables = 0
        self.n_arrays = 0

    def table(self, frame: pd.DataFrame, kind: str) -> dict:
        name = f"tables/{self.n_tables}.parquet"
        self.n_tables += 1
        (self.directory / "tables").mkdir(exist_ok=True)
        try:
            frame.to_parquet(self.directory / name)
        except (ValueError, TypeError) as exc:  # pyarrow: e.g. non-string column names, mixed object columns
            raise ValueStoreError(f"a {kind} cannot be written as Parquet: {exc}") from None
        return {"__type__": kind, "file": name}

    def encode(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"__type__": "float", "value": repr(value)}
        if isinstance(value, np.generic):
            if isinstance(value, (np.bool_, np.integer, np.floating)):
                return {"__type__": "numpy", "dtype": value.dtype.str, "value": self.encode(value.item(), where)}
            raise ValueStoreError(f"{where}: numpy scalar of dtype {value.dtype} cannot be stored")
        if isinstance(value, PurePath):
            return {"__type__": "path", "value": str(value)}
        if isinstance(value, pd.DataFrame):
            return self.table(value, "table")
        if isinstance(value, pd.Series):
            return self.table(value.to_frame(name="__series__" if value.name is None else value.name), "series") | {
                "unnamed": value.name is None}
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufc":
                raise ValueStoreError(f"{where}: numpy array of dtype {value.dtype} cannot be stored without pickle")
            name = f"arrays/{self.n_arrays}.npy"
            self.n_arrays += 1
            (self.directory / "arrays").mkdir(exist_ok=True)
            np.save(self.directory / name, value, allow_pickle=False)
            return {"__type__": "array", "file": name}
        if isinstance(value, tuple):
            return {"__type__": "tuple", "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value) and "__type__" not in value:
                return {k: self.encode(v, f"{where}[{k!r}]") for k, v in value.items()}
            return {"__type__": "dict", "items": [[self.encode(k, f"{where} key"), self.encode(v, f"{where}[{k!r}]")]
                                                   for k, v in value.items()]}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            if not (cls.__module__ == _TRUSTED_PACKAGE or cls.__module__.startswith(_TRUSTED_PACKAGE + ".")):
                raise ValueStoreError(f"{where}: dataclass {cls.__module__}.{cls.__qualname__} is outside "
                                      f"{_TRUSTED_PACKAGE}; only its dataclasses are stored")
            return {"__type__": "dataclass", "class": f"{cls.__module__}:{cls.__qualname__}",
                    "fields": {f.name: self.encode(getattr(value, f.name), f"{where}.{f.name}")
                               for f in dataclasses.fields(value) if f.init}}
        raise ValueStoreError(f"{where}: a {type(value).__module__}.{type(value).__qualname__} cannot be stored "
                              "without pickle (store DataFrames, arrays, plain data or tcpmodels dataclasses)")


def dump_value(value: Any, directory: str | os.PathLike) -> Path:
    """Write ``value`` into ``directory`` (created; must be empty or absent) and return the JSON file's path.

    Parameters
    ----------
    value : Any
        None, bools, ints, floats, strings, lists, tuples, dicts, paths, numpy scalars
        and numeric arrays, pandas DataFrames and Series, and dataclasses of ``tcpmodels``
        holding these, nested at will.
    directory : str or path-like
        The value directory; created with its parents if absent, and refused if it holds
        anything (files of an earlier value would be overwritten or left beside the new one).

    Returns
    -------
    Path
        ``directory / "value.json"``.

    Raises
    ------
    ValueStoreError
        If a part of ``value`` is of a type that cannot be stored without pickle; the
        message names the part (e.g. ``value['flows'][3]``). Also if ``directory`` is a
        file or a directory that is not empty.
    """
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ValueStoreError(f"{directory}: the value directory must be empty or absent "
                              f"({'a file' if not directory.is_dir() else 'it holds ' + str(sum(1 for _ in directory.iterdir())) + ' entries'})")
    directory.mkdir(parents=True, exist_ok=True)
    tree = _Writer(directory).encode(value, "value")
    path = directory / VALUE_FILE
    path.write_text(json.dumps({"format": "tcpmodels.valuestore/1", "value": tree}))
    return path


def _dataclass(spec: str, where: str) -> type:
    module_name, _, qualname = spec.partition(":")
    if not (module_name == _TRUSTED_PACKAGE or module_name.startswith(_TRUSTED_PACKAGE + ".")) or not qualname:
        raise ValueStoreError(f"{where}: class {spec!r} is outside {_TRUSTED_PACKAGE}; refused")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise ValueStoreError(f"{where}: {spec!r} is not a dataclass of {_TRUSTED_PACKAGE}")
    return obj


class _Reader:
    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()

    def file(self, name: Any, where: str) -> Path:
        path = (self.directory / str(name)).resolve()
        if self.directory not in path.parents:
            raise ValueStoreError(f"{where}: file {name!r} is outside the value directory")
        return path

    def decode(self, node: Any, where: str) -> Any:
        if isinstance(node, list):
            return [self.decode(v, f"{where}[{i}]") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        kind = node.get("__type__")
        if kind is None:
            return {k: self.decode(v, f"{where}[{k!r}]") for k, v in node.items()}
        if kind == "float":
            return float(node["value"])
        if kind == "numpy":
            return np.dtype(node["dtype"]).type(self.decode(node["value"], where))
        if kind == "path":
            return Path(node["value"])
        if kind == "table":
            return pd.read_parquet(self.file(node["file"], where))
        if kind == "series":
            frame = pd.read_parquet(self.file(node["file"], where))
            series = frame.iloc[:, 0]
            return series.rename(None) if node.get("unnamed") else series
        if kind == "array":
            return np.load(self.file(node["file"], where), allow_pickle=False)
        if kind == "tuple":
            return tuple(self.decode(v, f"{where}[{i}]") for i, v in enumerate(node["items"]))
        if kind == "dict":
            return {self.decode(k, f"{where} key"): self.decode(v, where) for k, v in node["items"]}
        if kind == "dataclass":
            cls = _dataclass(node["class"], where)
            return cls(**{k: self.decode(v, f"{where}.{k}") for k, v in node["fields"].items()})
        raise ValueStoreError(f"{where}: unknown __type__ {kind!r}")


def load_value(directory: str | os.PathLike) -> Any:
    """Read a value written by :func:`dump_value`.

    Parameters
    ----------
    directory : str or path-like
        The value directory (holding ``value.json``).

    Returns
    -------
    Any
        The value, rebuilt with the types it was written with (tables, arrays and
        dataclasses included).

    Raises
    ------
    FileNotFoundError
        If ``directory`` holds no value file.
    ValueStoreError
        If the file is not a value file, or names a class outside ``tcpmodels`` or a
        file outside ``directory``.
    """
    directory = Path(directory)
    text = (directory / VALUE_FILE).read_text()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueStoreError(f"{directory / VALUE_FILE}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != "tcpmodels.valuestore/1":
        raise ValueStoreError(f"{directory / VALUE_FILE}: not a tcpmodels value file")
    try:
        return _Reader(directory).decode(doc.get("value"), "value")
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueStoreError(f"{directory / VALUE_FILE}: malformed value ({type(exc).__name__}: {exc})") from None
