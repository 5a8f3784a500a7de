"""Configs as JSON-able data and back, canonical JSON and the hash that names a run."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any

from tcpmodels.sim.config.base import canonical_json
from tcpmodels.sim.config.fattree import FatTree
from tcpmodels.sim.config.topologies import Caterpillar, Dumbbell, Multipath

__all__ = ["config_to_dict", "config_from_dict", "config_to_json", "config_hash"]


_TOPOLOGIES = {"dumbbell": Dumbbell, "caterpillar": Caterpillar, "multipath": Multipath, "fattree": FatTree}


def config_to_dict(config: Any) -> dict:
    """A config as plain JSON-able data, with ``topology`` / ``kind`` tags for round trips."""

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
    """Inverse of :func:`config_to_dict`."""
    d = dict(d)
    topo = d.pop("topology", None)
    if topo not in _TOPOLOGIES:
        raise ValueError(f"topology must be one of {sorted(_TOPOLOGIES)}; got {topo!r}")
    return _TOPOLOGIES[topo](**d)


def config_to_json(config: Any) -> str:
    """Canonical JSON (sorted keys, no whitespace) of a dataclass config."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        data = config_to_dict(config)
    else:
        data = config
    return canonical_json(data)


def config_hash(config: Any) -> str:
    """SHA-256 of :func:`config_to_json`, hex."""
    return hashlib.sha256(config_to_json(config).encode()).hexdigest()
