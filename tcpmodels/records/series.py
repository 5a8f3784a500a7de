"""Lossless, compact storage of per-flow sample series (TCP_INFO samples) in campaign records.

A sample series is a list of dicts with the same keys, one per sample (``t_s``,
``bytes_acked``, ``srtt_s`` ...). Written as JSON every sample repeats every key, every
time carries the digits of a unit conversion (``0.035033999999999996`` for 35 034 us) and
counters that only grow carry all their digits again, so one 175 s P3 sample sampled every
0.1 s took 70 KB gzipped. :func:`pack_series` stores one column per field, times as whole
microseconds and growing counters as differences; :func:`unpack_series` gives back the
original list, equal value for value (floats bit for bit): a column is only converted when
its decoding reproduces every value, otherwise it is stored as it came.

Measured on the 8 records of ``data/datasets/p3_kernel_x_records_part07.jsonl.gz``
(``tests/test_records_series.py``, with P3's packing): 70.7 KB -> 33.4 KB a sample gzipped.

Standard library only: a low layer that every campaign and dataset builder may use.
"""

from __future__ import annotations

import math

__all__ = ["SERIES_FORMAT", "pack_series", "unpack_series", "is_packed_series", "as_sample_list"]

#: the ``format`` tag of a packed series
SERIES_FORMAT = "columns/1"

#: how a column of whole microseconds decodes to seconds, by name: the one of the two that reproduces
#: the recorded floats (``rtt_us * 1e-6`` in the traffic client, ``round(t, 6)`` for sample times)
_US_DECODERS = {"mul": lambda k: k * 1e-6, "div": lambda k: k / 1e6}


def _as_microseconds(values: list) -> tuple[list, str] | None:
    """Whole microseconds and the decoder that gives ``values`` back exactly, or None."""
    ints = []
    for v in values:
        if v is None:
            ints.append(None)
        elif isinstance(v, float) and v == v and abs(v) < 1e9 and math.copysign(1.0, v) > 0:
            ints.append(round(v * 1e6))
        else:
            return None
    for name, decode in _US_DECODERS.items():
        if all((k is None and v is None) or (k is not None and decode(k) == v) for k, v in zip(ints, values)):
            return ints, name
    return None


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def pack_series(samples: list[dict], *, microsecond_fields: tuple[str, ...] = (),
                delta_fields: tuple[str, ...] = ()) -> dict:
    """One column per field, times as whole microseconds, growing counters as differences.

    Parameters
    ----------
    samples : list of dict
        The series: every sample has the same keys, in the same order. Values are JSON
        scalars (int, float, str, bool, None).
    microsecond_fields : tuple of str
        Fields in seconds that hold whole microseconds (``t_s``, ``srtt_s``). A column is
        stored as integers [us] only if decoding them gives back every value bit for bit;
        otherwise it is stored as it came.
    delta_fields : tuple of str
        Fields stored as the first value and then differences (``t_s``, ``bytes_acked``):
        only if the column, after the microsecond step, is all integers (no None).

    Returns
    -------
    dict
        ``{"format": SERIES_FORMAT, "n": len(samples), "columns": {field: {"values": [...],
        "us": "mul" | "div" (if in microseconds), "delta": True (if differenced)}}}``, JSON-ready.

    Raises
    ------
    ValueError
        If a sample's keys differ from the first sample's (naming the sample and both key lists),
        or a named field is not in the samples.
    """
    if not samples:
        return {"format": SERIES_FORMAT, "n": 0, "columns": {}}
    fields = list(samples[0])
    for i, s in enumerate(samples):
        if list(s) != fields:
            raise ValueError(f"sample {i} has keys {list(s)}; sample 0 has {fields} (a series needs the same keys)")
    unknown = sorted((set(microsecond_fields) | set(delta_fields)) - set(fields))
    if unknown:
        raise ValueError(f"fields {unknown} are not in the samples, whose keys are {fields}")
    columns = {}
    for f in fields:
        values = [s[f] for s in samples]
        col: dict = {}
        if f in microsecond_fields:
            us = _as_microseconds(values)
            if us is not None:
                values, col["us"] = us
        if f in delta_fields and all(_is_int(v) for v in values):
            values = values[:1] + [b - a for a, b in zip(values, values[1:])]
            col["delta"] = True
        columns[f] = {"values": values, **col}
    return {"format": SERIES_FORMAT, "n": len(samples), "columns": columns}


def is_packed_series(obj: object) -> bool:
    """Whether ``obj`` is a series written by :func:`pack_series`.

    Parameters
    ----------
    obj : object
        What a record holds where a sample series belongs.

    Returns
    -------
    bool
        True for a dict whose ``format`` is :data:`SERIES_FORMAT`.
    """
    return isinstance(obj, dict) and obj.get("format") == SERIES_FORMAT


def unpack_series(packed: dict) -> list[dict]:
    """The list of samples :func:`pack_series` was given.

    Parameters
    ----------
    packed : dict
        A packed series.

    Returns
    -------
    list of dict
        One dict per sample, keys in their original order.

    Raises
    ------
    ValueError
        If ``packed`` is not a packed series of a known format, a column's length is not ``n``,
        or a column names an unknown microsecond decoder.
    """
    if not is_packed_series(packed):
        got = packed.get("format") if isinstance(packed, dict) else type(packed).__name__
        raise ValueError(f"not a packed sample series: format {got!r}, expected {SERIES_FORMAT!r}")
    n = packed["n"]
    cols = {}
    for f, col in packed["columns"].items():
        values = list(col["values"])
        if len(values) != n:
            raise ValueError(f"column {f!r} has {len(values)} values; the series has n = {n}")
        if col.get("delta"):
            for i in range(1, n):
                values[i] += values[i - 1]
        if "us" in col:
            if col["us"] not in _US_DECODERS:
                raise ValueError(f"column {f!r}: unknown microsecond decoder {col['us']!r}, "
                                 f"expected one of {sorted(_US_DECODERS)}")
            decode = _US_DECODERS[col["us"]]
            values = [None if k is None else decode(k) for k in values]
        cols[f] = values
    return [dict(zip(cols, row)) for row in zip(*cols.values())] if cols else [{} for _ in range(n)]


def as_sample_list(series: list[dict] | dict) -> list[dict]:
    """A record's sample series as a list of dicts, whether it was stored packed or as a list.

    Parameters
    ----------
    series : list of dict or dict
        What the record holds: a list (records before packing) or a packed series.

    Returns
    -------
    list of dict
        The samples.

    Raises
    ------
    ValueError
        If ``series`` is a dict that is not a packed series.
    """
    return unpack_series(series) if isinstance(series, dict) else series
