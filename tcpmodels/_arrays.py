"""Shared input handling for the formula models: broadcasting, return kinds, domain checks.

Every function in :mod:`tcpmodels.models` accepts a float, a numpy array or a
pandas Series for each numeric parameter, broadcasts them against each other
and returns the same kind it was given (a Series keeps its index, a scalar
input gives a Python float). Domain checks raise ``ValueError`` naming the
parameter, its unit, the offending value and the valid range; NaN is never
an error and propagates to the result.

Use :func:`broadcast` at the top of a model function and :func:`wrap` on the
way out::

    def bdp_bytes(rate_bps, rtt_s):
        args, kind = broadcast(rate_bps=rate_bps, rtt_s=rtt_s)
        check_range("rate_bps", args["rate_bps"], unit="bit/s", low=0, low_open=True)
        return wrap(args["rate_bps"] * args["rtt_s"] / 8.0, kind)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ReturnKind", "broadcast", "wrap", "check_range", "check_scalar"]


@dataclass(frozen=True)
class ReturnKind:
    """What :func:`wrap` should turn a result array back into.

    ``kind`` is ``"scalar"``, ``"array"`` or ``"series"``; for a Series the
    index and name of the first Series argument are kept.
    """

    kind: str
    index: pd.Index | None = None
    name: Any = None


def broadcast(**arrays: Any) -> tuple[dict[str, np.ndarray], ReturnKind]:
    """Broadcast keyword arguments to float arrays of one shape.

    Returns the arrays (same keys, ``float64``) and the :class:`ReturnKind`
    that :func:`wrap` needs: ``series`` if any argument was a Series (the first
    one's index wins, and all Series must share it), else ``array`` if any
    argument was an array of one or more dimensions, else ``scalar``.

    Raises
    ------
    ValueError
        If the shapes do not broadcast, or two Series have different indexes;
        the message names the parameters.
    TypeError
        If an argument is not numeric.
    """
    kind = ReturnKind("scalar")
    series_index: pd.Index | None = None
    series_owner = ""
    converted: dict[str, np.ndarray] = {}
    for name, value in arrays.items():
        if isinstance(value, pd.Series):
            if series_index is None:
                series_index, series_owner = value.index, name
                kind = ReturnKind("series", value.index, value.name)
            elif not value.index.equals(series_index):
                raise ValueError(
                    f"{name} and {series_owner} are pandas Series with different indexes; "
                    "align them first (e.g. a.align(b))"
                )
            value = value.to_numpy()
        elif isinstance(value, (np.ndarray, list, tuple)) and kind.kind == "scalar":
            if np.ndim(value) > 0:
                kind = ReturnKind("array")
        try:
            converted[name] = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be numeric (float, array or Series); got {value!r}") from exc
    try:
        shaped = np.broadcast_arrays(*converted.values())
    except ValueError as exc:
        shapes = ", ".join(f"{k}{v.shape}" for k, v in converted.items())
        raise ValueError(f"parameters do not broadcast to one shape: {shapes}") from exc
    return dict(zip(converted, shaped)), kind


def wrap(result: np.ndarray, kind: ReturnKind) -> Any:
    """Return ``result`` as the kind recorded by :func:`broadcast`."""
    result = np.asarray(result, dtype=float)
    if kind.kind == "series":
        return pd.Series(result, index=kind.index, name=kind.name)
    if kind.kind == "scalar":
        return float(result) if result.ndim == 0 else result
    return result


def _fmt(x: float) -> str:
    return "inf" if np.isposinf(x) else "-inf" if np.isneginf(x) else f"{x:g}"


def check_range(
    name: str,
    value: Any,
    *,
    unit: str,
    low: float = -np.inf,
    high: float = np.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raise ``ValueError`` if any non-NaN element of ``value`` is outside the interval.

    The message reads ``"loss_rate [-] must be in (0, 1]; got 0"`` and
    names the first offending value. NaN elements pass (they propagate).
    """
    arr = np.asarray(value, dtype=float)
    finite = arr[~np.isnan(arr)]
    if finite.size == 0:
        return
    too_low = finite <= low if low_open else finite < low
    too_high = finite >= high if high_open else finite > high
    bad = too_low | too_high
    if bad.any():
        lo_br = "(" if low_open else "["
        hi_br = ")" if high_open else "]"
        first = finite[bad][0]
        count = int(bad.sum())
        more = f" ({count} values out of range)" if count > 1 else ""
        raise ValueError(
            f"{name} [{unit}] must be in {lo_br}{_fmt(low)}, {_fmt(high)}{hi_br}; got {first:g}{more}"
        )


def check_scalar(name: str, value: Any, unit: str, **interval: Any) -> float:
    """Return ``value`` as a float after checking it is one number, not NaN, inside the interval.

    For parameters that cannot broadcast (a time step, a duration of one
    simulation). ``interval`` takes the keywords of :func:`check_range`
    (``low``, ``high``, ``low_open``, ``high_open``).

    Raises
    ------
    TypeError
        If ``value`` is a bool or not a scalar.
    ValueError
        If it is NaN or outside the interval; the message names the parameter and unit.
    """
    if isinstance(value, (bool, np.bool_)) or not np.isscalar(value):
        raise TypeError(f"{name} [{unit}] must be a single number; got {value!r}")
    v = float(value)
    if np.isnan(v):
        raise ValueError(f"{name} [{unit}] must be a number, not NaN")
    check_range(name, v, unit=unit, **interval)
    return v
