"""Claim evaluation on scipy and statsmodels (see :mod:`tcpmodels.stats.claims`).

The verdict labels and the outcome rules (:mod:`tcpmodels.stats.outcomes`, numpy only) load with the package;
the claim machinery (scipy, statsmodels: about 1.5 s) loads when one of its names is first used, so that code
that only reads a label (the report index) imports no scipy.
"""

from tcpmodels.stats.outcomes import (
    BADGE_COLOURS,
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTABLE_HERE,
    SMALLER_THAN_CLAIMED,
    SUPPORTED,
    VERDICTS,
    attainable_outcome,
    equivalence_outcome,
    holm,
    interval_outcome,
)

#: The names :mod:`tcpmodels.stats.claims` gives, imported on first use (PEP 562).
_FROM_CLAIMS = (
    "POWER", "VERDICT_COLUMNS", "ClaimSpec", "Family", "Headline", "Verdict", "arithmetic", "bootstrap_statistic",
    "claims_table", "difference", "direction_count", "distribution", "equivalence", "equivalence_ind",
    "inequality", "not_testable", "percentile_interval", "slope_equivalence", "verdict_counts",
)

__all__ = [
    "SUPPORTED", "SMALLER_THAN_CLAIMED", "CONTRADICTED", "INCONCLUSIVE", "NOT_TESTABLE_HERE", "VERDICTS", "BADGE_COLOURS",
    "attainable_outcome", "equivalence_outcome", "holm", "interval_outcome", *_FROM_CLAIMS,
]


def __getattr__(name: str):
    if name in _FROM_CLAIMS:
        from tcpmodels.stats import claims

        value = getattr(claims, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_CLAIMS))
