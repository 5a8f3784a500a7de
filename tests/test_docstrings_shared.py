"""tcpmodels._docstrings: shared numpydoc entries filled into docstrings, braces elsewhere left alone."""

from __future__ import annotations

import pytest

from tcpmodels._docstrings import SharedEntries

ENTRIES = SharedEntries("""
    rate_bps : float
        Link rate, > 0. [bit/s]

        A second paragraph.
    pos, end : numpy.ndarray
        A header's start and its record's end.
    **kwargs : Any
        Passed on.
""")


def test_a_placeholder_line_becomes_the_indented_entries_in_its_order():
    @ENTRIES.fill
    def f(rate_bps: float, pos: int, end: int) -> float:
        r"""Bandwidth-delay product.

        Parameters
        ----------
        {pos, end, rate_bps}

        Notes
        -----
        .. math:: \\frac{{R}}{8}
        """
        return rate_bps * (end - pos)

    assert f.__doc__ == (
        "Bandwidth-delay product.\n\n"
        "        Parameters\n"
        "        ----------\n"
        "        pos, end : numpy.ndarray\n"
        "            A header's start and its record's end.\n"
        "        rate_bps : float\n"
        "            Link rate, > 0. [bit/s]\n"
        "\n"
        "            A second paragraph.\n\n"
        "        Notes\n"
        "        -----\n"
        "        .. math:: \\\\frac{{R}}{8}\n"
        "        "
    )
    assert f(8.0, 1, 3) == 16.0


def test_braces_not_alone_on_their_line_are_left_alone():
    @ENTRIES.fill
    def g() -> None:
        """Returns {rate_bps} inline, and ``{'a': 1}``.

        {not a placeholder}
        """

    assert g.__doc__ == "Returns {rate_bps} inline, and ``{'a': 1}``.\n\n        {not a placeholder}\n        "


def test_kwargs_entries_are_named_with_their_stars():
    @ENTRIES.fill
    def k(**kwargs: object) -> None:
        """Doc.

        {**kwargs}
        """

    assert k.__doc__ == "Doc.\n\n        **kwargs : Any\n            Passed on.\n        "


@pytest.mark.parametrize("placeholder, missing", [("{rate_bps, queue_packets}", "queue_packets"),
                                                  ("{pos}", "pos"), ("{end, pos}", "end")])
def test_an_unknown_or_split_entry_fails_at_import_naming_function_and_name(placeholder, missing):
    with pytest.raises(KeyError, match=rf"h: no shared docstring entry for '{missing}' at this place"):
        def h() -> None:
            pass
        h.__doc__ = f"Doc.\n\n    {placeholder}\n"
        ENTRIES.fill(h)


@pytest.mark.parametrize("block", ["", "    \n", "  indented first\nname : float\n",
                                   "a : float\n    x\na : int\n    y\n", "a, b : float\n    x\nb : int\n    y\n"])
def test_a_malformed_block_is_refused(block):
    with pytest.raises(ValueError):
        SharedEntries(block)


def test_no_docstring_is_left_as_it_is():
    def k() -> None:
        pass

    assert ENTRIES.fill(k).__doc__ is None
