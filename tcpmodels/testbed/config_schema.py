"""Checks for testbed run configs, written once: every message names the table, the key, the value and what was expected.

A config is TOML (see :mod:`tcpmodels.testbed.runner`). Each table is read through
:class:`Table`, whose getters take the key, its unit and its valid range, so that a
wrong value fails before any namespace exists, e.g.::

    [topology.paths[0]] rate_mbps must be a number > 0 [Mbit/s]; got 'fast' (str)

Unknown keys are refused with the list of allowed ones (a typo is not silently ignored).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tcpmodels._docstrings import SharedEntries

__all__ = ["ConfigError", "Table", "safe_run_name", "confined_run_dir"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    key : str
        The key.
    default : Any
        Returned (unchecked) when the key is absent or empty; ``...`` makes it required.
    low_open : bool
        Exclude ``low`` itself.
""")

#: A run name becomes a directory name: letters, digits, '.', '_', '-' only, not starting with '.'.
_RUN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


class ConfigError(ValueError):
    """A testbed config value that is missing, of the wrong type or out of range."""


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


class Table:
    """One TOML table of a config, read key by key with the key's checks.

    Parameters
    ----------
    section : str
        Where the table is in the config, as the messages show it, e.g. ``"topology.paths[0]"``.
    table : Any
        The parsed table; anything but a dict is an error naming ``section``.
    allowed : iterable of str
        Every key the table may hold.
    """

    def __init__(self, section: str, table: Any, allowed: Iterable[str]) -> None:
        if not isinstance(table, dict):
            raise ConfigError(f"[{section}] must be a table (key = value lines); got {_show(table)}")
        self.section = section
        self.table = table
        allowed = set(allowed)
        unknown = set(table) - allowed
        if unknown:
            raise ConfigError(f"[{self.section}]: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")

    def _fail(self, key: str, expected: str, value: Any) -> ConfigError:
        return ConfigError(f"[{self.section}] {key} must be {expected}; got {_show(value)}")

    def has(self, key: str) -> bool:
        """Whether ``key`` is given (and not an empty value).

        Parameters
        ----------
        key : str
            A key of the table.

        Returns
        -------
        bool
            False if the key is absent, ``None`` or ``""``.
        """
        return self.table.get(key) not in (None, "")

    @_PARAMETERS.fill
    def number(self, key: str, *, unit: str, default: Any = ..., low: float | None = None,
               high: float | None = None, low_open: bool = False) -> float | None:
        """A finite real number in ``[low, high]`` (``(low, high]`` with ``low_open``); ``default`` when absent.

        A ``default`` of ``...`` makes the key required; ``None`` is returned as is.

        Parameters
        ----------
        {key}
        unit : str
            Unit of the value, shown in error messages (e.g. ``"ms"``).
        {default}
        low, high : float, optional
            Bounds of the valid range, in ``unit``; no bound if ``None``.
        {low_open}

        Returns
        -------
        float or None
            The value as a float, or ``default``.

        Raises
        ------
        ConfigError
            If the key is required and absent, or the value is not a finite number in range
            (a bool is not a number).
        """
        if not self.has(key):
            if default is ...:
                raise ConfigError(f"[{self.section}] {key} is required (a number [{unit}])")
            return default
        value = self.table[key]
        lo = "" if low is None else (f" > {low:g}" if low_open else f" >= {low:g}")
        hi = "" if high is None else f" <= {high:g}"
        expected = f"a number{lo}{' and' if lo and hi else ''}{hi} [{unit}]"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self._fail(key, expected, value)
        if low is not None and (value <= low if low_open else value < low):
            raise self._fail(key, expected, value)
        if high is not None and value > high:
            raise self._fail(key, expected, value)
        return float(value)

    @_PARAMETERS.fill
    def integer(self, key: str, *, unit: str, default: Any = ..., low: int | None = None,
                high: int | None = None) -> int | None:
        """A whole number in ``[low, high]``; ``default`` when absent (``...``: required).

        Parameters
        ----------
        {key}
        unit : str
            Unit of the value, shown in error messages.
        {default}
        low, high : int, optional
            Inclusive bounds, in ``unit``; no bound if ``None``.

        Returns
        -------
        int or None
            The value, or ``default``.

        Raises
        ------
        ConfigError
            If the key is required and absent, or the value is not an integer in range
            (``2.0`` and bools are refused).
        """
        if not self.has(key):
            if default is ...:
                raise ConfigError(f"[{self.section}] {key} is required (a whole number [{unit}])")
            return default
        value = self.table[key]
        lo = "" if low is None else f" >= {low}"
        hi = "" if high is None else f" <= {high}"
        expected = f"a whole number{lo}{' and' if lo and hi else ''}{hi} [{unit}]"
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(key, expected, value)
        if (low is not None and value < low) or (high is not None and value > high):
            raise self._fail(key, expected, value)
        return int(value)

    @_PARAMETERS.fill
    def boolean(self, key: str, *, default: bool) -> bool:
        """``true`` or ``false``.

        Parameters
        ----------
        {key}
        default : bool
            Returned when the key is absent.

        Returns
        -------
        bool
            The value, or ``default``.

        Raises
        ------
        ConfigError
            If the value is not a boolean.
        """
        if key not in self.table:
            return default
        value = self.table[key]
        if not isinstance(value, bool):
            raise self._fail(key, "true or false", value)
        return value

    @_PARAMETERS.fill
    def string(self, key: str, *, default: Any = ..., choices: Iterable[str] | None = None) -> str | None:
        """A string, one of ``choices`` when given; ``default`` when absent (``...``: required).

        Parameters
        ----------
        {key}
        default : Any
            Returned (unchecked) when the key is absent; ``...`` makes it required.
        choices : iterable of str, optional
            The allowed values; any string if omitted.

        Returns
        -------
        str or None
            The value, or ``default``.

        Raises
        ------
        ConfigError
            If the key is required and absent, or the value is not a string (of ``choices``).
        """
        if key not in self.table:
            if default is ...:
                raise ConfigError(f"[{self.section}] {key} is required (a string)")
            return default
        value = self.table[key]
        choices = list(choices) if choices is not None else None
        expected = f"one of {choices}" if choices else "a string"
        if not isinstance(value, str) or (choices and value not in choices):
            raise self._fail(key, expected, value)
        return value

    @_PARAMETERS.fill
    def numbers(self, key: str, *, unit: str, low: float | None = None, low_open: bool = False,
                min_len: int = 1) -> list[float]:
        """A list of at least ``min_len`` numbers, each checked like :meth:`number`.

        Parameters
        ----------
        key : str
            The key (required).
        unit : str
            Unit of the values, shown in error messages.
        low : float, optional
            Lower bound of each value, in ``unit``.
        {low_open}
        min_len : int
            Fewest elements accepted.

        Returns
        -------
        list of float
            The values, in order.

        Raises
        ------
        ConfigError
            If the key is absent or not a list of at least ``min_len`` elements, or an
            element is out of range (the message names it as ``[section.key] i``).
        """
        value = self.table.get(key)
        if not isinstance(value, list) or len(value) < min_len:
            raise self._fail(key, f"a list of at least {min_len} number(s) [{unit}]", value)
        return [Table(f"{self.section}.{key}", {str(i): v for i, v in enumerate(value)},
                      [str(i) for i in range(len(value))]).number(str(i), unit=unit, low=low, low_open=low_open)
                for i in range(len(value))]

    @_PARAMETERS.fill
    def tables(self, key: str) -> list[Any]:
        """An array of tables (``[[section.key]]``); absent is an empty list.

        Parameters
        ----------
        {key}

        Returns
        -------
        list
            The elements as parsed (not checked to be tables; wrap each in :class:`Table`).

        Raises
        ------
        ConfigError
            If the value is not a list.
        """
        value = self.table.get(key, [])
        if not isinstance(value, list):
            raise self._fail(key, f"an array of tables ([[{self.section}.{key}]])", value)
        return value


def safe_run_name(name: Any, *, section: str = "run", key: str = "name") -> str:
    """A run name usable as one directory name: no '/', no '..', no leading '.', at most 100 characters.

    Parameters
    ----------
    name : Any
        The name as read from the config.
    section, key : str
        Where it came from, for the error message.

    Returns
    -------
    str
        ``name`` unchanged.

    Raises
    ------
    ConfigError
        Unless ``name`` is 1-100 letters, digits, '.', '_' or '-', not starting with '.'.
    """
    if not isinstance(name, str) or not _RUN_NAME.fullmatch(name):
        raise ConfigError(f"[{section}] {key} must be 1-100 characters of letters, digits, '.', '_' or '-', "
                          f"not starting with '.' (it names a directory under the output directory); "
                          f"got {_show(name)}")
    return name


def confined_run_dir(out_dir: str | Path, name: str) -> Path:
    """``out_dir / name`` resolved, refusing anything that lands outside ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        The output directory.
    name : str
        The run's directory name (see :func:`safe_run_name`).

    Returns
    -------
    Path
        The resolved run directory (``out_dir`` itself if ``name`` resolves to it).

    Raises
    ------
    ConfigError
        If the resolved path is outside ``out_dir`` (e.g. through a symlink).
    """
    base = Path(out_dir).resolve()
    run_dir = (base / name).resolve()
    if base != run_dir and base not in run_dir.parents:
        raise ConfigError(f"run directory {run_dir} is outside the output directory {base}")
    return run_dir
