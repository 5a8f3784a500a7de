"""Claim evaluation on scipy and statsmodels (see :mod:`tcpmodels.stats.claims`)."""

from tcpmodels.stats.claims import (
    POWER,
    VERDICT_COLUMNS,
    VERDICTS,
    ClaimSpec,
    Family,
    Headline,
    Verdict,
    arithmetic,
    attainable_outcome,
    bootstrap_statistic,
    claims_table,
    difference,
    direction_count,
    distribution,
    equivalence,
    equivalence_ind,
    equivalence_outcome,
    holm,
    inequality,
    interval_outcome,
    not_testable,
    percentile_interval,
    slope_equivalence,
    verdict_counts,
)

__all__ = [
    "POWER", "VERDICTS", "VERDICT_COLUMNS", "ClaimSpec", "Family", "Headline", "Verdict", "arithmetic", "attainable_outcome",
    "bootstrap_statistic", "claims_table", "difference", "direction_count", "distribution", "equivalence",
    "equivalence_ind", "equivalence_outcome", "holm", "inequality", "interval_outcome", "not_testable", "percentile_interval", "slope_equivalence", "verdict_counts",
]
