"""Configs as JSON-able data and back, canonical JSON and the hash that names a run."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any

from tcpmodels._docstrings import SharedEntries
from tcpmodels.sim.config.base import canonical_json
from tcpmodels.sim.config.fattree import FatTree
from tcpmodels.sim.config.topologies import Caterpillar, Dumbbell, Multipath

__all__ = ["config_to_dict", "config_from_dict", "config_to_json", "config_hash"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    config : dataclass config or dict
        A config, or its :func:`config_to_dict` form.
""")


_TOPOLOGIES = {"dumbbell": Dumbbell, "caterpillar": Caterpillar, "multipath": Multipath, "fattree": FatTree}


def config_to_dict(config: Any) -> dict:
    """A config as plain JSON-able data, with ``topology`` / ``kind`` tags for round trips.

    Parameters
    ----------
    config : Dumbbell, Caterpillar, Multipath or FatTree
        The config (any dataclass works; nested dataclasses, tuples and dicts are converted too).

    Returns
    -------
    dict
        Field name -> value, with the class's ``topology`` or ``kind`` tag; tuples become lists
        and fields marked ``omit_when_default`` are left out at their default.

    Raises
    ------
    ValueError
        If a float field is NaN or infinite.
    """

    def conv(o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            d = {}
            for tag in ("topology", "kind"):
                if tag in type(o).__dict__ and isinstance(type(o).__dict__[tag], str):
                    d[tag] = type(o).__dict__[tag]
            for f in dataclasses.fields(o):
                value = getattr(o, f.name)
                if f.metadata.get("omit_when_default") and value == f.default:
                    continue  # a field added later, at its default: the stored form (and hash) of older configs
                d[f.name] = conv(value)
            return d
        if isinstance(o, (list, tuple)):
            return [conv(v) for v in o]
        if isinstance(o, dict):
            return {str(k): conv(v) for k, v in o.items()}
        if isinstance(o, float) and not math.isfinite(o):
            raise ValueError(f"non-finite number {o!r} cannot be stored in a config")
        return o

    return conv(config)


def config_from_dict(d: dict) -> Dumbbell | Caterpillar | Multipath | FatTree:
    """Inverse of :func:`config_to_dict`.

    Parameters
    ----------
    d : dict
        A stored config with its ``topology`` tag (``"dumbbell"``, ``"caterpillar"``,
        ``"multipath"`` or ``"fattree"``).

    Returns
    -------
    Dumbbell, Caterpillar, Multipath or FatTree
        The config, equal to the one stored.

    Raises
    ------
    ValueError
        If ``topology`` is missing or unknown, or the config refuses a field.
    """
    d = dict(d)
    topo = d.pop("topology", None)
    if topo not in _TOPOLOGIES:
        raise ValueError(f"topology must be one of {sorted(_TOPOLOGIES)}; got {topo!r}")
    return _TOPOLOGIES[topo](**d)


@_PARAMETERS.fill
def config_to_json(config: Any) -> str:
    """Canonical JSON (sorted keys, no whitespace) of a dataclass config.

    Parameters
    ----------
    {config}

    Returns
    -------
    str
        The canonical JSON text (see :func:`tcpmodels.sim.config.base.canonical_json`).
    """
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        data = config_to_dict(config)
    else:
        data = config
    return canonical_json(data)


@_PARAMETERS.fill
def config_hash(config: Any) -> str:
    """SHA-256 of :func:`config_to_json`, hex.

    Parameters
    ----------
    {config}

    Returns
    -------
    str
        64 hexadecimal digits naming the run of this config.
    """
    return hashlib.sha256(config_to_json(config).encode()).hexdigest()
