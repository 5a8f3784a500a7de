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

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

__all__ = ["ReturnKind", "broadcast", "wrap", "check_range", "check_scalar", "check_same_index", "check_flag",
           "check_magnitude", "finite_result"]


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
        If an argument is not numeric (a string included).

    An integer too large for a float (``10**400``) is a ``ValueError`` naming the parameter.
    """
    kind = ReturnKind("scalar")
    converted: dict[str, np.ndarray] = {}
    index = check_same_index(**arrays)
    for name, value in arrays.items():
        if value is None or (isinstance(value, (list, tuple)) and any(v is None for v in np.ravel(
                np.asarray(value, dtype=object)))):
            raise TypeError(f"{name} must be numeric (float, array or Series); got None"
                            f"{'' if value is None else ' inside ' + type(value).__name__} "
                            "(use float('nan') or numpy.nan for a missing value)")
        if isinstance(value, pd.Series):
            if kind.kind != "series":
                kind = ReturnKind("series", index, value.name)
            value = value.to_numpy()
        elif isinstance(value, (np.ndarray, list, tuple)) and kind.kind == "scalar":
            if np.ndim(value) > 0:
                kind = ReturnKind("array")
        if isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.dtype.kind in "USO"
                                                and any(isinstance(v, (str, bytes)) for v in value.ravel())):
            raise TypeError(f"{name} must be numeric (float, array or Series); got {_short(value)}")
        if isinstance(value, (bool, np.bool_)) or np.asarray(value).dtype.kind == "b" \
                or (isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value)):
            raise TypeError(f"{name} must be numeric (float, array or Series), not a boolean; got {_short(value)}")
        try:
            converted[name] = np.asarray(value, dtype=float)
        except OverflowError:
            raise ValueError(f"{name} must be a number a 64-bit float holds (magnitude below 1.8e308); got "
                             f"{_short(value)}") from None
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be numeric (float, array or Series); got {_short(value)}") from exc
    try:
        shaped = np.broadcast_arrays(*converted.values())
    except ValueError as exc:
        shapes = ", ".join(f"{k}{v.shape}" for k, v in converted.items())
        raise ValueError(f"parameters do not broadcast to one shape: {shapes}") from exc
    return dict(zip(converted, shaped)), kind


def check_same_index(**values: Any) -> pd.Index | None:
    """The index shared by every pandas Series among ``values`` (None if there is none).

    Models, predictors and metrics all call this, so a Series keeps its meaning
    the same way everywhere: values are matched by position only when the
    indexes are equal, and misaligned Series are an error rather than a silent
    positional match.

    Raises
    ------
    ValueError
        If two Series have different indexes; the message names both parameters.
    """
    index: pd.Index | None = None
    owner = ""
    for name, value in values.items():
        if isinstance(value, pd.Series):
            if index is None:
                index, owner = value.index, name
            elif not value.index.equals(index):
                raise ValueError(
                    f"{name} and {owner} are pandas Series with different indexes; "
                    "align them first (e.g. a.align(b))"
                )
    return index


def wrap(result: np.ndarray, kind: ReturnKind) -> Any:
    """Return ``result`` as the kind recorded by :func:`broadcast`."""
    result = np.asarray(result, dtype=float)
    if kind.kind == "series":
        return pd.Series(result, index=kind.index, name=kind.name)
    if kind.kind == "scalar":
        return float(result) if result.ndim == 0 else result
    return result


def _short(value: Any) -> str:
    """A value for an error message, at most about 60 characters (an integer of 400 digits is described)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**18:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
    try:
        arr = np.asarray(value, dtype=float)
    except OverflowError:
        raise ValueError(f"{name} [{unit}] must be a number a 64-bit float holds (magnitude below 1.8e308); got "
                         f"{_short(value)}") from None
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
        If ``value`` is a bool, a string or not a scalar.
    ValueError
        If it is NaN, too large for a float, or outside the interval; the message names the
        parameter and unit.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or not np.isscalar(value):
        raise TypeError(f"{name} [{unit}] must be a single number; got {_short(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{name} [{unit}] must be a number a 64-bit float holds (magnitude below 1.8e308); got "
                         f"{_short(value)}") from None
    except (TypeError, ValueError):
        raise TypeError(f"{name} [{unit}] must be a single number; got {_short(value)}") from None
    if np.isnan(v):
        raise ValueError(f"{name} [{unit}] must be a number, not NaN")
    check_range(name, v, unit=unit, **interval)
    return v


def check_flag(name: str, value: Any) -> bool:
    """Return ``value`` as a bool after checking it is one (``True``/``False``, numpy's included).

    For switches (``fast_convergence``, ``log_throughput``): a string such as ``"no"`` would
    otherwise count as true.

    Raises
    ------
    TypeError
        If ``value`` is not a bool; the message names the parameter.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {_short(value)}")
    return bool(value)


def check_magnitude(name: str, value: Any, *, max_abs: float, unit: str | None = None) -> None:
    """Raise ``ValueError`` if any finite element of ``value`` exceeds ``max_abs`` in magnitude.

    For estimators that square or sum their input: beyond ``max_abs`` the sums overflow and the
    result would be an impossible value (or NaN) instead of an error.

    Raises
    ------
    ValueError
        Naming the parameter, its unit, the first offending value, its index and the limit.
    """
    arr = np.asarray(value, dtype=float)
    big = np.isfinite(arr) & (np.abs(arr) > max_abs)
    if big.any():
        where = np.argwhere(big)[0]
        label = name if unit is None else f"{name} [{unit}]"
        raise ValueError(f"{label} must be at most {max_abs:.3g} in magnitude here (larger values "
                         f"overflow the sums of squares); got {arr[tuple(where)]:g} at index "
                         f"{tuple(int(i) for i in where) if arr.ndim > 1 else int(where[0])} ({int(big.sum())} "
                         "values): rescale the series (another unit)")


def finite_result(fn: Callable) -> Callable:
    """Decorate a formula whose result is finite wherever its inputs are: an overflow becomes a ValueError.

    The formula runs with numpy's floating-point warnings off; then, at the first element where
    every numeric argument is finite but the result is not (``mss_bytes=1e308`` overflows the
    product), a ``ValueError`` names the function, the arguments' values there and the result,
    instead of returning an infinity (or NaN) no input asked for. Results at elements with a NaN
    or infinite input are returned as they are (NaN propagates, ``w_max_segments=inf`` means no
    limit).
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            result = fn(*args, **kwargs)
        try:
            values = result.to_numpy(dtype=float) if isinstance(result, pd.Series) else np.asarray(result, dtype=float)
        except (TypeError, ValueError):  # a result object: the function checks its own fields
            return result
        bad = ~np.isfinite(values)
        if not bad.any():
            return result
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        names, arrays = [], []
        for name, value in bound.arguments.items():
            if value is None or callable(value) or isinstance(value, (str, bytes, bool, np.bool_)):
                continue
            try:
                arrays.append(np.asarray(value.to_numpy() if isinstance(value, pd.Series) else value, dtype=float))
            except (TypeError, ValueError):
                continue
            names.append(name)
        try:
            *inputs, bad = np.broadcast_arrays(*arrays, bad)
        except ValueError:  # a result not shaped like its inputs (a table): nothing to compare
            return result
        culprit = bad & np.all([np.isfinite(x) for x in inputs], axis=0) if inputs else bad
        if culprit.any():
            at = tuple(int(i) for i in np.argwhere(culprit)[0])
            shown = ", ".join(f"{n}={x[at]:g}" for n, x in zip(names, inputs))
            where = f" at index {at if len(at) > 1 else at[0]}" if culprit.ndim else ""
            got = np.broadcast_to(values, culprit.shape)[at]
            raise ValueError(f"{fn.__name__}: the result is {got} for finite inputs{where} ({shown}): they are "
                             "beyond the range a 64-bit float can evaluate this formula in (check their units)")
        return result

    return checked
