"""Phrases the paper modules' computed paragraphs and answer boxes share, each worded in one place.

The notebooks print these paragraphs as they are computed, so a phrase here must keep its exact text:
:func:`verdict_counts` (how many parts got each verdict), :func:`effect_ci_text` (an effect with its
confidence interval), :func:`runs_needed_text` and :func:`needs_clause` (the runs a power analysis asks for) and
:func:`unshipped_campaign` (the sentence for a stated campaign without a dataset).

Examples
--------
>>> import pandas as pd
>>> verdict_counts(pd.Series(["supported", "inconclusive", "supported"]))
'2 supported, 1 inconclusive'
>>> effect_ci_text(0.1234, -0.01, 0.25)
'+0.123 [-0.010, +0.250]'
>>> runs_needed_text(41.2), runs_needed_text(float("nan")), needs_clause(41.2), needs_clause(float("nan"))
('42', 'more', ', needs 42', '')
"""

from __future__ import annotations

import pandas as pd

from tcpmodels.stats.spec import fmt_runs_needed

__all__ = ["verdict_counts", "effect_ci_text", "runs_needed_text", "needs_clause", "unshipped_campaign"]


def verdict_counts(verdicts: pd.Series) -> str:
    """How many parts got each verdict, the most frequent first: ``"2 supported, 1 inconclusive"``.

    Parameters
    ----------
    verdicts : pandas.Series
        One verdict per claim part (the ``verdict`` column of a claims table, or a subset of it).

    Returns
    -------
    str
        ``"<count> <verdict>"`` per distinct verdict, joined by ``", "``, in the order of
        :meth:`pandas.Series.value_counts`; ``""`` for no parts.
    """
    return ", ".join(f"{n} {v}" for v, n in verdicts.value_counts().items())


def effect_ci_text(effect: float, ci_low: float, ci_high: float, fmt: str = "+.3f") -> str:
    """An effect and its confidence interval as the paragraphs print them: ``"+0.123 [-0.010, +0.250]"``.

    Parameters
    ----------
    effect : float
        The estimate, in the claim's unit (e.g. a difference of log FCTs [-] or of shares [-]).
    ci_low, ci_high : float
        The interval's bounds, in the same unit.
    fmt : str, default "+.3f"
        The format specification of all three numbers (signed, three decimals by default).

    Returns
    -------
    str
        ``"<effect> [<ci_low>, <ci_high>]"``.
    """
    return f"{effect:{fmt}} [{ci_low:{fmt}}, {ci_high:{fmt}}]"


def runs_needed_text(runs_needed: float) -> str:
    """The runs a power analysis asks for, as a reading says "<n> seeds would decide it"; ``"more"`` without one.

    Parameters
    ----------
    runs_needed : float
        Runs (seeds, repetitions: the claim's unit) the power analysis asks for; NaN when it gives none. [runs]

    Returns
    -------
    str
        :func:`tcpmodels.stats.spec.fmt_runs_needed` of it (``"1,203"``), or ``"more"`` for NaN.
    """
    return fmt_runs_needed(runs_needed) if runs_needed == runs_needed else "more"


def needs_clause(runs_needed: float) -> str:
    """The clause a verdict's parenthesis ends with when a power analysis asks for more runs: ``", needs 42"``.

    Parameters
    ----------
    runs_needed : float
        Runs the power analysis asks for; NaN when it gives none. [runs]

    Returns
    -------
    str
        ``", needs <n>"`` (:func:`tcpmodels.stats.spec.fmt_runs_needed`), or ``""`` for NaN.
    """
    return f", needs {fmt_runs_needed(runs_needed)}" if runs_needed == runs_needed else ""


def unshipped_campaign(title: str, module: str) -> str:
    """The paragraph of a campaign stated in docs/CAMPAIGNS.md whose dataset is not shipped yet (Markdown).

    Parameters
    ----------
    title : str
        The paragraph's bold title, without the ``**`` (e.g. ``"At the paper's windows"``).
    module : str
        The campaign's module, run with ``python -m`` (e.g. ``"tcpmodels.experiments.p3.windows"``).

    Returns
    -------
    str
        ``"**<title>**: the campaign (`python -m <module>`, stated in docs/CAMPAIGNS.md) has no shipped dataset yet."``
    """
    return f"**{title}**: the campaign (`python -m {module}`, stated in docs/CAMPAIGNS.md) has no shipped dataset yet."
