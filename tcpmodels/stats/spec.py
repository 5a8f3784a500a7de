"""The claim and verdict records, the shared helpers of the tests, and the claims table.

See :mod:`tcpmodels.stats.claims` for the verdict rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = [
    "VERDICTS", "CLAIM_COLUMNS", "POWER", "ClaimSpec", "Verdict", "claims_table", "verdict_counts",
    "holds_to_verdict", "finite_values", "fmt_number", "fmt_runs_needed", "ttest_runs_needed", "verdict_row",
    "mean_ci", "decide",
]

#: The three outcomes, in the order tables show them.
VERDICTS = ("supported", "contradicted", "inconclusive")
#: Columns of :func:`claims_table`, in order.
CLAIM_COLUMNS = (
    "claim", "part", "paper_says", "we_measured", "effect", "ci_low", "ci_high",
    "n_runs", "test", "verdict", "runs_needed", "why",
)
#: Power aimed at by ``runs_needed``.
POWER = 0.8


@dataclass(frozen=True, kw_only=True)
class ClaimSpec:
    """One claim (or one part of a composite claim) and its test, stated before the data is seen.

    Parameters
    ----------
    claim : str
        Id and wording, e.g. ``"C3.1 With Reno at 1 ms the proposal greatly improves RTT fairness"``.
    part : str
        Which part of the claim this row judges (``"whole claim"`` when not composite).
    paper_says : str
        The paper's statement, with its numbers as printed.
    quantity : str
        What ``effect`` is, with its unit, e.g. ``"J(proposal) - J(standard) per seed [-]"``.
    direction : {+1, -1}
        +1 if the paper claims the quantity is positive (or larger than the
        margin), -1 if negative. Ignored by :func:`equivalence` and :func:`arithmetic`.
    smallest_effect : float
        The smallest effect that matters, > 0, in the unit of ``quantity``
        (for :func:`direction_count`: the smallest share of pairs, in (0, 1);
        for :func:`equivalence`: the margin; for :func:`arithmetic`: the tolerance).
    effect_source : str
        Where ``smallest_effect`` comes from (the paper's numbers, or the argument).
    confidence_level : float, default 0.95
        Level of the reported confidence interval.
    """

    claim: str
    part: str
    paper_says: str
    quantity: str
    direction: int = 1
    smallest_effect: float
    effect_source: str
    confidence_level: float = 0.95

    def __post_init__(self) -> None:
        for name in ("claim", "part", "paper_says", "quantity", "effect_source"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string; got {value!r}")
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1; got {self.direction!r}")
        if not (self.smallest_effect > 0 and math.isfinite(self.smallest_effect)):
            raise ValueError(f"smallest_effect must be finite and > 0; got {self.smallest_effect!r}")
        if not 0.5 < self.confidence_level < 1:
            raise ValueError(f"confidence_level must be in (0.5, 1); got {self.confidence_level!r}")

    @property
    def alpha(self) -> float:
        """``1 - confidence_level``. [-]"""
        return 1.0 - self.confidence_level


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """One row of a claims table (fields in :data:`CLAIM_COLUMNS` order)."""

    claim: str
    part: str
    paper_says: str
    we_measured: str
    effect: float
    ci_low: float
    ci_high: float
    n_runs: int
    test: str
    verdict: str
    runs_needed: float
    why: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.verdict != "inconclusive" and not math.isnan(self.runs_needed):
            raise ValueError("runs_needed is only given for inconclusive verdicts")

    def to_dict(self) -> dict[str, object]:
        """The row as a dict with keys in :data:`CLAIM_COLUMNS` order.

        Returns
        -------
        dict of str to object
            One entry per field, in :data:`CLAIM_COLUMNS` order (the row of :func:`claims_table`).
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ------------------------------------------------------------------ helpers
def finite_values(values: Iterable[float]) -> np.ndarray:
    """The finite values of ``values`` as a float array (NaN and ±inf dropped, order kept).

    Parameters
    ----------
    values : iterable of float
        One value per run or unit, in the quantity's unit.

    Returns
    -------
    numpy.ndarray
        1-d float array of the finite values.
    """
    x = np.asarray(list(values), dtype=float)
    return x[np.isfinite(x)]


def fmt_number(x: float) -> str:
    """``x`` with four significant digits (``"nan"`` for NaN), as the verdict texts print numbers.

    Parameters
    ----------
    x : float
        The number to print.

    Returns
    -------
    str
        ``f"{x:.4g}"``, or ``"nan"``.
    """
    return "nan" if x != x else f"{x:.4g}"


RUNS_NEEDED_SHOWN_MAX = 10_000
"""Above this many runs, :func:`fmt_runs_needed` stops printing the figure: the estimate then sits on
the margin of the smallest effect that matters, and no campaign will decide it."""


def fmt_runs_needed(n: float) -> str:
    """A ``runs_needed`` as the verdict texts print it.

    Parameters
    ----------
    n : float
        Runs (or seeds, units) a power analysis asks for; NaN when not computed.

    Returns
    -------
    str
        ``""`` for NaN; the whole number with thousands separators (``"1,203"``); above
        :data:`RUNS_NEEDED_SHOWN_MAX`, ``"more than 10,000"`` rather than a figure such as
        19,231,041 that reads like a plan when it says the estimate sits on the margin.
    """
    if n != n:
        return ""
    if n > RUNS_NEEDED_SHOWN_MAX:
        return f"more than {RUNS_NEEDED_SHOWN_MAX:,}"
    return f"{math.ceil(n):,}"


def ttest_runs_needed(effect: float, sd: float, alpha: float, *, alternative: str = "two-sided") -> float:
    """Runs a one-sample t test needs to detect ``effect`` at ``sd`` with :data:`POWER` (NaN if undefined).

    Parameters
    ----------
    effect : float
        The effect to detect (> 0), in the quantity's unit.
    sd : float
        Standard deviation of one run, in the quantity's unit.
    alpha : float
        Significance level of the test. [-]
    alternative : {"two-sided", "larger", "smaller"}
        Alternative of the t test (statsmodels ``TTestPower``).

    Returns
    -------
    float
        The number of runs, rounded up and at least 2; NaN when ``effect`` or ``sd`` is not
        positive, ``sd`` is not finite, or statsmodels' solver fails.
    """
    from statsmodels.stats.power import TTestPower

    if not (sd > 0 and effect > 0) or not math.isfinite(sd):
        return math.nan
    try:
        n = TTestPower().solve_power(effect_size=effect / sd, alpha=alpha, power=POWER, alternative=alternative)
    except (ValueError, RuntimeError):  # statsmodels' root finder fails for absurd sizes
        return math.nan
    n = float(np.atleast_1d(n)[0])
    return float(math.ceil(max(n, 2.0))) if math.isfinite(n) else math.nan


def verdict_row(spec: ClaimSpec, **kw: object) -> Verdict:
    """A :class:`Verdict` carrying the ``claim``, ``part`` and ``paper_says`` of ``spec``.

    Parameters
    ----------
    spec : ClaimSpec
        The claim the row judges.
    **kw
        The other fields of :class:`Verdict` (``we_measured``, ``effect``, ``ci_low``, ``ci_high``,
        ``n_runs``, ``test``, ``verdict``, ``runs_needed``, ``why``).

    Returns
    -------
    Verdict
        The row.

    Raises
    ------
    ValueError
        If ``verdict`` is not one of :data:`VERDICTS`, or ``runs_needed`` is given for a verdict
        that is not inconclusive.
    """
    return Verdict(claim=spec.claim, part=spec.part, paper_says=spec.paper_says, **kw)


def mean_ci(x: np.ndarray, level: float, method: str, seed: int) -> tuple[float, float]:
    """Confidence interval of the mean of ``x`` (Student t or seeded percentile bootstrap).

    Parameters
    ----------
    x : numpy.ndarray
        Finite values, one per run, in the quantity's unit.
    level : float
        Confidence level, e.g. 0.95. [-]
    method : {"t", "bootstrap"}
        Student-t interval, or scipy's percentile bootstrap with 9999 resamples.
    seed : int
        Seed of the bootstrap's generator (unused by ``"t"``).

    Returns
    -------
    tuple of float
        ``(low, high)`` in the unit of ``x``: ``(-inf, inf)`` for fewer than 2 values, the
        point itself when all values are equal.

    Raises
    ------
    ValueError
        If ``method`` is neither ``"t"`` nor ``"bootstrap"`` (and ``x`` has 2 or more distinct values).
    """
    if len(x) < 2:
        return -math.inf, math.inf
    if np.ptp(x) == 0:
        return float(x[0]), float(x[0])
    if method == "t":
        return tuple(float(v) for v in sps.t.interval(level, len(x) - 1, loc=x.mean(), scale=sps.sem(x)))
    if method == "bootstrap":
        res = sps.bootstrap((x,), np.mean, confidence_level=level, method="percentile", n_resamples=9999,
                            random_state=np.random.default_rng(seed))
        return float(res.confidence_interval.low), float(res.confidence_interval.high)
    raise ValueError(f"method must be 't' or 'bootstrap'; got {method!r}")


def decide(spec: ClaimSpec, lo: float, hi: float, enough: bool) -> tuple[str, str]:
    """The verdict rule shared by the tests on a signed effect, applied to its confidence interval.

    With ``s = spec.direction``: contradicted if the interval of ``s * effect`` lies wholly below
    ``smallest_effect``; else supported if it lies wholly above 0; else inconclusive.

    Parameters
    ----------
    spec : ClaimSpec
        The claim (its ``direction`` and ``smallest_effect``).
    lo, hi : float
        The confidence interval of the effect, in the quantity's unit.
    enough : bool
        Whether there was data enough for an interval; if not, the verdict is inconclusive.

    Returns
    -------
    tuple of str
        ``(verdict, reason)``: one of :data:`VERDICTS` and the sentence saying why.
    """
    s, delta = spec.direction, spec.smallest_effect
    lo_s, hi_s = sorted((s * lo, s * hi))
    if enough and hi_s < delta:
        return "contradicted", f"the CI excludes the claimed effect ({'+' if s > 0 else '-'}{fmt_number(delta)} or beyond)"
    if enough and lo_s > 0:
        return "supported", f"the CI excludes 0 on the side the paper states ({'>' if s > 0 else '<'} 0)"
    return "inconclusive", "the CI holds both 0 and the claimed effect" if enough else "fewer than 2 runs: no interval"



# ------------------------------------------------------------------ tables
def claims_table(verdicts: Iterable[Verdict]) -> pd.DataFrame:
    """The claims table: one row per (claim, part), columns :data:`CLAIM_COLUMNS`.

    ``n_runs`` is an integer column, ``runs_needed`` a float one (NaN unless inconclusive).

    Parameters
    ----------
    verdicts : iterable of Verdict
        The rows, in the order the table shows them.

    Returns
    -------
    pandas.DataFrame
        One row per verdict, columns :data:`CLAIM_COLUMNS` (empty with those columns if there is none).

    Raises
    ------
    TypeError
        If an element is not a :class:`Verdict`.
    """
    rows = list(verdicts)
    for r in rows:
        if not isinstance(r, Verdict):
            raise TypeError(f"verdicts must be Verdict instances; got {type(r).__name__}")
    frame = pd.DataFrame([r.to_dict() for r in rows], columns=list(CLAIM_COLUMNS))
    frame["n_runs"] = frame["n_runs"].astype("int64")
    for col in ("effect", "ci_low", "ci_high", "runs_needed"):
        frame[col] = frame[col].astype(float)
    return frame


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """``{"supported": k, "contradicted": k, "inconclusive": k}`` over the rows of a claims table.

    Parameters
    ----------
    table : pandas.DataFrame
        A claims table (at least a ``verdict`` column), as from :func:`claims_table`.

    Returns
    -------
    dict of str to int
        The number of rows of each verdict, keys in :data:`VERDICTS` order (0 for an absent one).
    """
    counts = table["verdict"].value_counts() if len(table) else pd.Series(dtype=int)
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def holds_to_verdict(holds: object) -> str:
    """The old ``holds`` column (True / False / NA) as a verdict, for before/after comparisons.

    Parameters
    ----------
    holds : bool, None, float NaN or pandas.NA
        One cell of the old claims tables' ``holds`` column.

    Returns
    -------
    str
        ``"inconclusive"`` for None / NaN / NA, else ``"supported"`` if ``holds`` is truthy and
        ``"contradicted"`` if not.
    """
    if holds is None or holds is pd.NA or (isinstance(holds, float) and math.isnan(holds)):
        return "inconclusive"
    return "supported" if bool(holds) else "contradicted"
