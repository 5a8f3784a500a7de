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

__all__ = ["ConfigError", "Table", "safe_run_name", "confined_run_dir"]

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
        """Whether ``key`` is given (and not an empty value)."""
        return self.table.get(key) not in (None, "")

    def number(self, key: str, *, unit: str, default: Any = ..., low: float | None = None,
               high: float | None = None, low_open: bool = False) -> float | None:
        """A finite real number in ``[low, high]`` (``(low, high]`` with ``low_open``); ``default`` when absent.

        A ``default`` of ``...`` makes the key required; ``None`` is returned as is.
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

    def integer(self, key: str, *, unit: str, default: Any = ..., low: int | None = None,
                high: int | None = None) -> int | None:
        """A whole number in ``[low, high]``; ``default`` when absent (``...``: required)."""
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

    def boolean(self, key: str, *, default: bool) -> bool:
        """``true`` or ``false``."""
        if key not in self.table:
            return default
        value = self.table[key]
        if not isinstance(value, bool):
            raise self._fail(key, "true or false", value)
        return value

    def string(self, key: str, *, default: Any = ..., choices: Iterable[str] | None = None) -> str | None:
        """A string, one of ``choices`` when given; ``default`` when absent (``...``: required)."""
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

    def numbers(self, key: str, *, unit: str, low: float | None = None, low_open: bool = False,
                min_len: int = 1) -> list[float]:
        """A list of at least ``min_len`` numbers, each checked like :meth:`number`."""
        value = self.table.get(key)
        if not isinstance(value, list) or len(value) < min_len:
            raise self._fail(key, f"a list of at least {min_len} number(s) [{unit}]", value)
        return [Table(f"{self.section}.{key}", {str(i): v for i, v in enumerate(value)},
                      [str(i) for i in range(len(value))]).number(str(i), unit=unit, low=low, low_open=low_open)
                for i in range(len(value))]

    def tables(self, key: str) -> list[Any]:
        """An array of tables (``[[section.key]]``); absent is an empty list."""
        value = self.table.get(key, [])
        if not isinstance(value, list):
            raise self._fail(key, f"an array of tables ([[{self.section}.{key}]])", value)
        return value


def safe_run_name(name: Any, *, section: str = "run", key: str = "name") -> str:
    """A run name usable as one directory name: no '/', no '..', no leading '.', at most 100 characters."""
    if not isinstance(name, str) or not _RUN_NAME.fullmatch(name):
        raise ConfigError(f"[{section}] {key} must be 1-100 characters of letters, digits, '.', '_' or '-', "
                          f"not starting with '.' (it names a directory under the output directory); "
                          f"got {_show(name)}")
    return name


def confined_run_dir(out_dir: str | Path, name: str) -> Path:
    """``out_dir / name`` resolved, refusing anything that lands outside ``out_dir``."""
    base = Path(out_dir).resolve()
    run_dir = (base / name).resolve()
    if base != run_dir and base not in run_dir.parents:
        raise ConfigError(f"run directory {run_dir} is outside the output directory {base}")
    return run_dir
