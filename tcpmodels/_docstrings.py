"""Numpydoc entries written once and filled into the docstrings that share them.

A family of functions on the same quantities (Ware et al.'s BBR model, the CUBIC window, the teaching
figures) documents the same parameters with the same meaning and unit. Each such entry is written once, in
the module that owns the quantities, as it would stand under a Parameters heading, and every docstring that
takes the parameter names it on a line of its own, in braces::

    _PARAMETERS = SharedEntries('''
        base_rtt_s : numeric
            l, in (0, 3600]. [s]
        pos, end : numpy.ndarray of int64
            A header's start and its record's end.
    ''')

    @_PARAMETERS.fill
    def f(base_rtt_s, pos, end):
        '''...

        Parameters
        ----------
        {base_rtt_s, pos, end}
        '''

On import ``fill`` replaces the placeholder line with the entries it names, in its order (an entry that
documents several names, as ``pos, end``, is named by all of them), indented as the placeholder was, so
``help(f)``, JupyterLab's tooltip and the doctests see whole entries. As with pandas' ``@doc`` and scipy's
``doccer``, only a line that is nothing but ``{names}`` is a placeholder: braces anywhere else (LaTeX in Notes,
dict literals in Examples) are left alone, and a placeholder naming no entry is an error at import, not a hole
in the help.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["SharedEntries"]

_F = TypeVar("_F", bound=Callable)
_NAME = r"\*{0,2}[A-Za-z_][A-Za-z0-9_]*"
_PLACEHOLDER = re.compile(rf"^(?P<indent>[ \t]*)\{{(?P<names>{_NAME}(?:, *{_NAME})*)\}}[ \t]*$", re.MULTILINE)


def _names(head: str) -> tuple[str, ...]:
    """The parameter names an entry's first line documents (``"a, b : float"`` -> ``("a", "b")``)."""
    return tuple(name.strip() for name in head.split(" : ", 1)[0].split(","))


class SharedEntries:
    """Numpydoc entries shared by several docstrings of one module.

    Parameters
    ----------
    block : str
        Entries as they stand under a Parameters (or Returns) heading: each starts on a line of the block's
        least indentation, ``name : type`` (or ``a, b : type``), its description on the lines below, indented
        further. Leading and trailing blank lines are ignored.

    Raises
    ------
    ValueError
        If the block is empty, starts with an indented line, or documents a name twice.
    """

    def __init__(self, block: str) -> None:
        entries: dict[tuple[str, ...], list[str]] = {}
        lines = textwrap.dedent(block).strip("\n").splitlines()
        if not lines or lines[0][:1].isspace():
            raise ValueError(f"a block of numpydoc entries must start with 'name : type'; got {block[:40]!r}")
        current: list[str] = []
        for line in lines:
            if line and not line[0].isspace():
                names = _names(line)
                if names in entries or any(set(names) & set(known) for known in entries):
                    raise ValueError(f"shared docstring entries document {', '.join(names)!r} twice")
                current = entries.setdefault(names, [])
            current.append(line.rstrip())
        self._entries = {names: "\n".join(text).rstrip() for names, text in entries.items()}

    def entries(self, names: list[str]) -> str:
        """The entries documenting ``names``, in that order, unindented.

        Parameters
        ----------
        names : list of str
            Parameter names; the names of an entry documenting several stand together, in its order.

        Returns
        -------
        str
            The entries' lines.

        Raises
        ------
        KeyError
            If a name has no entry, or splits an entry that documents several names.
        """
        out, i = [], 0
        while i < len(names):
            for documented, text in self._entries.items():
                if tuple(names[i:i + len(documented)]) == documented:
                    out.append(text)
                    i += len(documented)
                    break
            else:
                known = "; ".join(", ".join(names) for names in self._entries)
                raise KeyError(f"no shared docstring entry for {names[i]!r} at this place; entries: {known}")
        return "\n".join(out)

    def fill(self, func: _F) -> _F:
        """Replace each placeholder line of ``func``'s docstring by the entries it names (a decorator).

        Parameters
        ----------
        func : callable
            A function or class whose docstring names entries on lines of their own, ``{a, b}``.

        Returns
        -------
        callable
            ``func`` itself, its ``__doc__`` filled (unchanged when Python runs with ``-OO`` and there is none).

        Raises
        ------
        KeyError
            If a placeholder names no entry (the message names the function and the name).
        """
        if func.__doc__:
            def expand(match: re.Match) -> str:
                try:
                    text = self.entries([name.strip() for name in match["names"].split(",")])
                except KeyError as err:
                    raise KeyError(f"{func.__qualname__}: {err.args[0]}") from None
                return "\n".join(match["indent"] + line if line else line for line in text.splitlines())

            func.__doc__ = _PLACEHOLDER.sub(expand, func.__doc__)
        return func
