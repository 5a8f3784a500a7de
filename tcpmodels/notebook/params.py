"""Typed notebook parameters checked before any work, and the project's folders found from wherever a notebook runs.

A notebook's ``parameters`` cell declares every parameter with its type and a help comment,
``rate_gbps: float = 100.0  # link rate [Gbit/s], 0.01 ... 400`` (what ``papermill
--help-notebook`` prints), and the cell after it calls :func:`check_parameters` with the
module's specification (a mapping of name to :class:`Param`). Papermill injects ``-p`` values
as plain literals (``-p rate_gbps abc`` arrives as the string ``'abc'``), so a wrong type or an
out-of-range value is caught there, in one error that names every bad parameter with the values
it accepts, instead of deep inside a later cell.

Relative folders in a parameters cell (``data_dir = "../data"``) are written for the notebooks
folder, the working directory that ``tcpmodels report`` and JupyterLab give a notebook.
:func:`find_folder` also finds them when papermill runs the notebook from the project root
(``papermill notebooks/x.ipynb out.ipynb``) or from any folder below it, and otherwise fails with
a message that names the working directory.

Standard library only: the check runs before the heavy imports of a notebook.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcpmodels._docstrings import SharedEntries

__all__ = ["Param", "check_parameters", "choice", "find_folder", "flag", "folder", "integer", "real", "text"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    unit : str
        Unit for the message.
""")

#: Type names as the parameters cell annotates them.
_KINDS = ("bool", "int", "float", "str")


@dataclass(frozen=True, kw_only=True)
class Param:
    """One notebook parameter: its type and the values it accepts.

    Build it with :func:`flag`, :func:`integer`, :func:`real`, :func:`choice`, :func:`text`
    or :func:`folder`.
    """

    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}; got {self.kind!r}")

    def accepts(self) -> str:
        """The accepted values in words, e.g. ``a float in (0, 400] Gbit/s``.

        Returns
        -------
        str
            Type, range or choices, and unit.
        """
        unit = f" {self.unit}" if self.unit and self.unit != "-" else ""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "bool":
            return "True or False"
        what = {"int": "an integer", "float": "a number", "str": "a string"}[self.kind]
        if self.low is None and self.high is None:
            return what + unit
        fmt = (lambda v: f"{int(v)}") if self.kind == "int" else (lambda v: f"{v:g}")
        lo = "-inf" if self.low is None else fmt(self.low)
        hi = "inf" if self.high is None else fmt(self.high)
        return f"{what} in {'(' if self.low_open or self.low is None else '['}{lo}, {hi}{')' if self.high_open or self.high is None else ']'}{unit}"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not accepted, or None.

        Parameters
        ----------
        value : Any
            The value the notebook received.

        Returns
        -------
        str or None
            A phrase for the error message.
        """
        ok_type = {
            "bool": isinstance(value, bool),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "str": isinstance(value, str),
        }[self.kind]
        if not ok_type:
            return f"got {value!r} ({type(value).__name__})"
        if self.choices is not None:
            return None if value in self.choices else f"got {value!r}"
        if self.kind in ("int", "float"):
            if not math.isfinite(value):
                return f"got {value!r}"
            below = self.low is not None and (value <= self.low if self.low_open else value < self.low)
            above = self.high is not None and (value >= self.high if self.high_open else value > self.high)
            if below or above:
                return f"got {value!r}"
        return None


def flag() -> Param:
    """A ``bool`` parameter (``quick``).

    Returns
    -------
    Param
        Accepts True or False (not 1, 0 or a string).
    """
    return Param(kind="bool")


@_PARAMETERS.fill
def integer(low: int | None = None, high: int | None = None, unit: str = "-") -> Param:
    """An ``int`` parameter in ``[low, high]``.

    Parameters
    ----------
    low, high : int, optional
        Inclusive bounds; None for none.
    {unit}

    Returns
    -------
    Param
        Accepts an int (not a bool or a float) in range.
    """
    return Param(kind="int", low=low, high=high, unit=unit)


@_PARAMETERS.fill
def real(
    low: float | None = None,
    high: float | None = None,
    unit: str = "-",
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Param:
    """A ``float`` parameter in a range (an int is accepted too).

    Parameters
    ----------
    low, high : float, optional
        Bounds; None for none.
    {unit}
    low_open, high_open : bool
        Exclude the bound.

    Returns
    -------
    Param
        Accepts a finite int or float in range.
    """
    return Param(kind="float", low=low, high=high, unit=unit, low_open=low_open, high_open=high_open)


def choice(values: Sequence[Any]) -> Param:
    """A parameter that takes one of a few values, of the type of the first.

    Parameters
    ----------
    values : sequence
        The accepted values (str, int or bool).

    Returns
    -------
    Param
        Accepts a value equal to one of ``values`` and of their type.
    """
    values = tuple(values)
    if not values:
        raise ValueError("choice needs at least one value")
    kind = {bool: "bool", int: "int", float: "float", str: "str"}[type(values[0])]
    return Param(kind=kind, choices=values)


def text() -> Param:
    """A ``str`` parameter (checked further by the function that uses it, e.g. a capture name).

    Returns
    -------
    Param
        Accepts any string.
    """
    return Param(kind="str")


def folder() -> Param:
    """A folder parameter (a ``str`` path; found with :func:`find_folder`).

    Returns
    -------
    Param
        Accepts any string.
    """
    return Param(kind="str", unit="path")


def check_parameters(spec: Mapping[str, Param], **values: Any) -> None:
    """Check every parameter's type and range before a notebook does any work.

    Parameters
    ----------
    spec : mapping of str to Param
        The notebook's parameters (its module's ``PARAMETERS``).
    **values
        Each parameter's current value, by name (all of ``spec``, nothing else).

    Raises
    ------
    ValueError
        Naming every parameter that is missing, unknown, of the wrong type or out of range,
        with the values it accepts, and how to pass one (``papermill -p NAME VALUE``,
        ``tcpmodels report NAME -p NAME VALUE``).

    Examples
    --------
    >>> check_parameters({"quick": flag(), "rtt_ms": real(0, 1000, "ms", low_open=True)}, quick=True, rtt_ms=50)
    >>> check_parameters({"rtt_ms": real(0, 1000, "ms", low_open=True)}, rtt_ms="abc")
    Traceback (most recent call last):
    ...
    ValueError: bad notebook parameter: rtt_ms must be a number in (0, 1000] ms; got 'abc' (str). Pass ...
    """
    problems = [f"{name} is unknown (parameters: {', '.join(spec)})" for name in values if name not in spec]
    problems += [f"{name} is missing" for name in spec if name not in values]
    for name, param in spec.items():
        if name in values:
            why = param.problem(values[name])
            if why:
                problems.append(f"{name} must be {param.accepts()}; {why}")
    if problems:
        label = "bad notebook parameter" + ("s" if len(problems) > 1 else "")
        raise ValueError(
            f"{label}: " + "; ".join(problems)
            + ". Pass values with `papermill -p NAME VALUE` or `tcpmodels report NOTEBOOK -p NAME VALUE` "
            "(True/False for a bool, quotes are not needed for a string)."
        )  # fmt: skip


def _notebook_folders(cwd: Path) -> list[Path]:
    """Where relative folders are taken from: the working directory if it holds notebooks, then the
    ``notebooks/`` folder of the working directory and of every folder above it; else the working directory."""
    found = [cwd] if cwd.name == "notebooks" or any(cwd.glob("*.ipynb")) else []
    found += [base / "notebooks" for base in (cwd, *cwd.parents) if (base / "notebooks").is_dir()]
    unique = list(dict.fromkeys(found))
    return unique or [cwd]


def find_folder(path: str | Path, name: str = "data_dir", *, create: bool = False, cwd: str | Path | None = None) -> str:
    """A notebook's folder parameter as an absolute path, found from wherever the notebook runs.

    Parameters
    ----------
    path : str or Path
        The parameter's value: absolute, or relative to the notebooks folder (``"../data"``).
    name : str
        The parameter's name, for the message.
    create : bool
        The folder is an output (``figures_dir``): it need not exist, only its parent, and it is
        created.
    cwd : str or Path, optional
        Working directory; the process's if omitted.

    Returns
    -------
    str
        The absolute folder: a relative ``path`` taken from the working directory if that holds
        notebooks, else from the ``notebooks/`` folder of the working directory or of the nearest
        folder above it where it exists (papermill run from the project root or below), else
        (an input only) from the working directory itself; for an output, the first of these whose
        parent exists.

    Raises
    ------
    FileNotFoundError
        If it is found nowhere, naming the working directory and the places tried.
    """
    base = (Path(cwd) if cwd is not None else Path.cwd()).resolve()
    p = Path(path).expanduser()
    if p.is_absolute():
        tried = [p]
    else:
        tried = [folder / p for folder in _notebook_folders(base)]
        tried += [] if create or base / p in tried else [base / p]
    for candidate in tried:
        probe = candidate.parent if create else candidate
        if probe.is_dir() and (not create or not candidate.exists() or candidate.is_dir()):
            if create:
                candidate.mkdir(exist_ok=True)
            return str(candidate.resolve())
    shown = ", ".join(str(c) for c in tried[:4]) + (", ..." if len(tried) > 4 else "")
    raise FileNotFoundError(
        f"{name} {str(path)!r} not found from the working directory {base} (tried {shown}). Relative folders "
        "are relative to the notebooks folder: run the notebook there (`papermill --cwd notebooks ...`, "
        f"`tcpmodels report` in the project folder), or pass an absolute path with `-p {name} /path`."
    )
