"""The Holm family of a claims table's row, read from the engine its claim or part names, declared as data.

:func:`~tcpmodels.stats.spec.claims_table` applies Holm's adjustment within each family: one paper's parts
on one engine. Each paper (and each campaign that judges claims) states where its rows name their engine
as a :class:`Family`; the rule that turns that into a family name is written here once.

Examples
--------
>>> from tcpmodels.stats import ClaimSpec, not_testable
>>> spec = ClaimSpec(claim="C9.1 [kernel testbed] X rises", part="mean", paper_says="X rises",
...                  quantity="X [-]", smallest_effect=1.0, effect_source="the paper's")
>>> row = not_testable(spec, we_measured="-", why="-")
>>> Family("P9", "claim", r"\\[(kernel) testbed\\]", default="ns-3")(row)
'P9 kernel'
>>> Family("P9", "part", r"^(kernel|fluid model)", default="ns-3")(row), Family("", "claim", r"^\\[(ns-3)\\]", default="kernel")(row)
('P9 ns-3', 'kernel')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcpmodels.stats.spec import Verdict

__all__ = ["Family"]


@dataclass(frozen=True)
class Family:
    """The Holm family of a row, from the engine its claim or part names; called on a :class:`Verdict`.

    The family is ``"<paper> <engine>"``, the engine being the first group of ``pattern`` searched
    (:func:`re.search`) in the row's ``field``; where the pattern does not match, ``"<paper> <default>"``
    (just ``paper`` when ``default`` is None). With ``paper`` empty, the family is the engine alone.

    Parameters
    ----------
    paper : str
        The paper's name, e.g. ``"P3"`` (``""``: none).
    field : {"claim", "part"}
        The text of the row the engine is read from.
    pattern : str
        A regular expression whose first group is the engine.
    default : str or None
        The engine of a row the pattern does not match.

    Raises
    ------
    ValueError
        If ``field`` is neither, or ``pattern`` has no group.
    """

    paper: str
    field: str
    pattern: str
    default: str | None = None

    def __post_init__(self) -> None:
        if self.field not in ("claim", "part"):
            raise ValueError(f"field must be 'claim' or 'part'; got {self.field!r}")
        if re.compile(self.pattern).groups < 1:
            raise ValueError(f"pattern must have a group (the engine); got {self.pattern!r}")

    def engine_of(self, text: str) -> str | None:
        """The engine ``text`` (a row's claim or part) names: the pattern's first group, else ``default``.

        Parameters
        ----------
        text : str
            The text of the row's :attr:`field`.

        Returns
        -------
        str or None
            The engine.
        """
        m = re.search(self.pattern, text)
        return m.group(1) if m else self.default

    def __call__(self, verdict: Verdict) -> str:
        """The family of ``verdict``, a row of the claims (:func:`~tcpmodels.stats.spec.claims_table` calls it)."""
        return " ".join(name for name in (self.paper, self.engine_of(getattr(verdict, self.field))) if name)
