"""The outcome rules, as pure functions of an interval and the smallest effect that matters, and Holm's step-down.

Five outcomes, in words a reader understands (:data:`tcpmodels.stats.VERDICTS`). With ``s`` the
direction the paper states and ``[lo, hi]`` the confidence interval of ``s * effect`` (so that the
paper's side is up), ``delta`` the smallest effect that matters and ``null`` the value of "no effect"
(0 for a difference, 1/2 for a share of units moving the paper's way):

==========================  ==============================================================
outcome                     rule (:func:`interval_outcome`)
==========================  ==============================================================
``supported``               ``lo > delta`` (and ``lo > null``): the effect is at least the
                            size that matters, not merely "not zero"
``smaller than claimed``    ``null < lo`` and ``hi < delta``: the paper's direction, but an
                            effect below the size that matters
``contradicted``            ``hi < delta`` and ``lo <= null``: the claimed effect is excluded
                            and not even its direction shows (the interval may lie wholly
                            on the opposite side)
``inconclusive``            otherwise: the interval holds ``delta`` (when ``lo > null`` the
                            direction shows but the size is open)
``not testable here``       decided before any data (:func:`attainable_outcome`): the largest
                            effect the setting allows lies below ``delta``
==========================  ==============================================================

Equivalence claims ("A does not change", TOST) have their own three-way rule
(:func:`equivalence_outcome`): supported inside the margin, contradicted outside, else inconclusive;
an attainable difference below the margin makes them *not testable here* too (a test that cannot fail).

Multiplicity: :func:`holm` adjusts the p-values of one family (one paper's parts on one engine) by
Holm's step-down method (statsmodels ``multipletests``); a part keeps a decided label only if its
adjusted p-value is below alpha (:func:`tcpmodels.stats.claims_table`).

References
----------
.. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6 (1979) 65-70.
.. [2] D. Lakens, A. M. Scheel, P. M. Isager, "Equivalence testing for psychological research: a tutorial",
   Adv. Methods Pract. Psychol. Sci. 1 (2018) 259-269 (effects that are significant but smaller than the
   smallest effect of interest).

Examples
--------
>>> interval_outcome(0.2, 0.5, 0.1), interval_outcome(0.02, 0.05, 0.1), interval_outcome(-0.02, 0.05, 0.1)
('supported', 'smaller than claimed', 'contradicted')
>>> interval_outcome(0.02, 0.5, 0.1), attainable_outcome(0.033, 0.264)
('inconclusive', 'not testable here')
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = ["interval_outcome", "equivalence_outcome", "attainable_outcome", "holm", "DIRECTION_OPEN", "VERDICTS",
           "BADGE_COLOURS",
           "SUPPORTED", "SMALLER_THAN_CLAIMED", "CONTRADICTED", "INCONCLUSIVE", "NOT_TESTABLE_HERE"]

#: The five outcomes, each the label tables, notebooks and datasets show (rules: the functions below).
SUPPORTED = "supported"
SMALLER_THAN_CLAIMED = "smaller than claimed"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE_HERE = "not testable here"
#: The five outcomes, in the order tables show them.
VERDICTS = (SUPPORTED, SMALLER_THAN_CLAIMED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE_HERE)
#: Each outcome's badge colour (background; the text on it is white), in the notebooks' badges
#: (:func:`tcpmodels.papers.display.verdict_badge`) and the reports index alike.
BADGE_COLOURS = {SUPPORTED: "#1a7f37", SMALLER_THAN_CLAIMED: "#bc4c00", CONTRADICTED: "#cf222e",
                 INCONCLUSIVE: "#9a6700", NOT_TESTABLE_HERE: "#57606a"}

#: Outcome reason used when the direction shows but the size is open (the interval holds delta above null).
DIRECTION_OPEN = "the direction shows but the size is open"


def _check(lo: float, hi: float, delta: float) -> None:
    if not delta > 0 or not math.isfinite(delta):
        raise ValueError(f"delta (the smallest effect that matters) must be finite and > 0; got {delta!r}")
    if lo > hi:
        raise ValueError(f"the interval must have lo <= hi; got [{lo!r}, {hi!r}]")


def interval_outcome(lo: float, hi: float, delta: float, *, null: float = 0.0) -> str:
    """The outcome of a one-sided claim from the interval of the effect on the paper's side.

    Parameters
    ----------
    lo, hi : float
        Confidence interval of ``direction * effect`` (the paper's side up), in the quantity's unit;
        NaN for none.
    delta : float
        The smallest effect that matters (> 0), in the same unit (for a share: the share the claim needs).
    null : float, default 0
        The value of "no effect" (< ``delta``; 1/2 for a share of units moving the paper's way).

    Returns
    -------
    str
        ``"supported"``, ``"smaller than claimed"``, ``"contradicted"`` or ``"inconclusive"`` (the rules
        in the module docstring); ``"inconclusive"`` when the interval is NaN.

    Raises
    ------
    ValueError
        If ``delta`` is not finite and > 0, ``null`` exceeds ``delta`` or ``lo > hi``.
    """
    if lo != lo or hi != hi:
        return INCONCLUSIVE
    _check(lo, hi, delta)
    if null > delta:
        raise ValueError(f"null must not exceed delta; got null {null!r}, delta {delta!r}")
    if lo > delta and lo > null:
        return SUPPORTED
    if hi < delta:
        return SMALLER_THAN_CLAIMED if lo > null else CONTRADICTED
    return INCONCLUSIVE


def equivalence_outcome(lo_2alpha: float, hi_2alpha: float, lo: float, hi: float, margin: float) -> str:
    """The outcome of "the quantity does not change (by more than ``margin``)" from its two intervals.

    Parameters
    ----------
    lo_2alpha, hi_2alpha : float
        The ``1 - 2 alpha`` interval (90 % for alpha 0.05: the one TOST at alpha matches).
    lo, hi : float
        The ``1 - alpha`` interval (95 %).
    margin : float
        Equivalence margin (> 0), in the quantity's unit.

    Returns
    -------
    str
        ``"supported"`` if the 90 % interval lies inside ``(-margin, margin)``; ``"contradicted"`` if the
        95 % interval lies wholly outside it; else ``"inconclusive"`` (also for NaN intervals).

    Raises
    ------
    ValueError
        If ``margin`` is not finite and > 0.

    Examples
    --------
    >>> equivalence_outcome(-0.02, 0.03, -0.03, 0.04, 0.05), equivalence_outcome(0.06, 0.08, 0.055, 0.09, 0.05)
    ('supported', 'contradicted')
    """
    if any(v != v for v in (lo_2alpha, hi_2alpha, lo, hi)):
        return INCONCLUSIVE
    _check(lo, hi, margin)
    if lo > margin or hi < -margin:
        return CONTRADICTED
    if -margin < lo_2alpha and hi_2alpha < margin:
        return SUPPORTED
    return INCONCLUSIVE


def attainable_outcome(attainable: float, delta: float) -> str | None:
    """``"not testable here"`` when the largest effect a setting allows lies below ``delta``, else None.

    Decided from the setting alone, before any outcome is seen.

    Parameters
    ----------
    attainable : float
        The largest effect the setting allows (``inf`` for no limit), in the quantity's unit.
    delta : float
        The smallest effect that matters (or the equivalence margin), same unit.

    Returns
    -------
    str or None
        ``"not testable here"`` if ``attainable < delta``, else None (the data decide).
    """
    return NOT_TESTABLE_HERE if attainable < delta else None


def holm(pvalues: Iterable[float]) -> np.ndarray:
    """Holm-adjusted p-values of one family (statsmodels ``multipletests(method="holm")``); NaN stays NaN.

    Parameters
    ----------
    pvalues : iterable of float
        One p-value per hypothesis of the family, in [0, 1]; NaN for parts with no test (exact
        parts, parts not testable here), which are left out of the family.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the input order (NaN where the input is NaN).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(3).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(list(pvalues), dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out
