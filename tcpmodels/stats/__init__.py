"""Claim evaluation on scipy and statsmodels (see :mod:`tcpmodels.stats.claims`)."""

from tcpmodels.stats.claims import (
    CLAIM_COLUMNS,
    POWER,
    VERDICTS,
    ClaimSpec,
    Verdict,
    arithmetic,
    bootstrap_statistic,
    claims_table,
    difference,
    direction_count,
    distribution,
    equivalence,
    equivalence_ind,
    holds_to_verdict,
    inequality,
    not_testable,
    verdict_counts,
)

__all__ = [
    "CLAIM_COLUMNS", "POWER", "VERDICTS", "ClaimSpec", "Verdict", "arithmetic", "bootstrap_statistic", "claims_table", "difference",
    "direction_count", "distribution", "equivalence", "equivalence_ind", "holds_to_verdict", "inequality", "not_testable", "verdict_counts",
]
