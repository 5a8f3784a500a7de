"""What every config dataclass shares: its validation helpers and the one coercion of stored forms.

A config read back from JSON (:func:`tcpmodels.sim.config.config_from_dict`)
holds dicts where dataclasses belong and lists where tuples belong;
:func:`coerce`, called first in each ``__post_init__``, turns them into the
declared types, so a stored form and the object it came from compare equal
and hash alike.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from tcpmodels import congestion

__all__ = ["TCP_VARIANTS", "NS3_SHIPPED_VARIANTS", "positive", "check_subflow_cc", "coerce", "canonical_json"]

#: the congestion controls ns-3 3.44 ships, accepted by name (``ns3::`` prefix optional)
NS3_SHIPPED_VARIANTS = (
    "TcpLinuxReno",
    "TcpNewReno",
    "TcpCubic",
    "TcpBic",
    "TcpHighSpeed",
    "TcpHtcp",
    "TcpVegas",
    "TcpScalable",
    "TcpVeno",
    "TcpYeah",
    "TcpIllinois",
    "TcpWestwoodPlus",
    "TcpLedbat",
    "TcpLp",
    "TcpDctcp",
    "TcpBbr",
)
#: ns-3 congestion controls a single-path sender may name: those ns-3 ships, plus the
#: single-path ones :mod:`tcpmodels.congestion` says are compiled at run time (``TcpCubicX``,
#: :mod:`tcpmodels.sim.cc`)
TCP_VARIANTS = NS3_SHIPPED_VARIANTS + congestion.ns3_type_ids(compiled=True, multipath=False)


def positive(name: str, value: float, unit: str, *, allow_zero: bool = False) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite number > 0 (>= 0 with ``allow_zero``), naming unit and value.

    Parameters
    ----------
    name : str
        Name of the field, for the message.
    value : float
        The value to check (a bool or NaN is refused as not a number).
    unit : str
        Unit of the field, for the message (e.g. ``"s"``, ``"bit/s"``).
    allow_zero : bool
        Accept 0 as well.

    Raises
    ------
    ValueError
        If ``value`` is not an int or float, is NaN or infinite, negative, or 0 without ``allow_zero``.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        raise ValueError(f"{name} [{unit}] must be a number; got {value!r}")
    if value < 0 or (value == 0 and not allow_zero) or math.isinf(value):
        lo = "[0" if allow_zero else "(0"
        raise ValueError(f"{name} [{unit}] must be in {lo}, inf); got {value!r}")


def check_subflow_cc(conn: Any) -> None:
    """A multipath connection's ``coupled`` is a bool and its ``variant`` an uncoupled TCP (``ns3::`` prefix dropped).

    Parameters
    ----------
    conn : MultipathFlow or FatTreeConnection
        The connection to check; its ``variant`` is rewritten in place without the
        ``ns3::`` prefix.

    Raises
    ------
    ValueError
        If ``coupled`` is not a bool, or ``variant`` is not one ns-3 ships
        (:data:`NS3_SHIPPED_VARIANTS`; the run-time compiled ``TcpCubicX`` is not available for subflows).
    """
    if not isinstance(conn.coupled, bool):
        raise ValueError(f"coupled must be True or False; got {conn.coupled!r}")
    v = conn.variant.removeprefix("ns3::")
    if v not in NS3_SHIPPED_VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(NS3_SHIPPED_VARIANTS)}; got {conn.variant!r}")
    object.__setattr__(conn, "variant", v)


def coerce(obj: Any, **spec: Any) -> None:
    """Give the named fields of the frozen dataclass ``obj`` their declared types (in place).

    Each keyword names a field and says what it holds:

    * a dataclass ``C``: a dict becomes ``C(**dict)`` (the ``kind`` tag that
      :func:`~tcpmodels.sim.config.config_to_dict` writes for ``C`` is dropped);
    * a function: applied to a dict (e.g. one that dispatches on ``kind``);
    * ``[C]`` or ``[function]``: a sequence, each dict entry converted as above, stored as a tuple;
    * ``tuple``: any sequence, stored as a tuple.

    Values that are not dicts are kept as they are (the ``__post_init__`` checks them).

    Parameters
    ----------
    obj : dataclass instance
        The frozen config being initialised (fields set with ``object.__setattr__``).
    **spec
        Field name -> how to convert it (one of the forms above).
    """
    for name, how in spec.items():
        value = getattr(obj, name)
        if how is tuple:
            value = tuple(value)
        elif isinstance(how, list):
            (one,) = how
            value = tuple(_from_dict(one, v) for v in value)
        else:
            value = _from_dict(how, value)
        object.__setattr__(obj, name, value)


def _from_dict(how: Any, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if not isinstance(how, type):
        return how(value)
    d = dict(value)
    if isinstance(how.__dict__.get("kind"), str) and "kind" not in {f.name for f in dataclasses.fields(how)}:
        d.pop("kind", None)  # the class's round-trip tag, not a field
    return how(**d)


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no whitespace; non-finite numbers refused.

    Parameters
    ----------
    data : JSON-able object
        Dicts, lists, strings, numbers, booleans and None.

    Returns
    -------
    str
        The canonical text, the same for equal data whatever the key order.

    Raises
    ------
    ValueError
        If ``data`` holds NaN or an infinity.
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
