"""Which factor makes ns-3 and the kernel disagree on C1.3 with LIA (issue 57, item 2): the swaps judged.

Data: ``p1_swaps_*`` (:mod:`tcpmodels.experiments.p1.swaps`): per seed the shipped kernel testbed and three
variants, each with one factor swapped toward ns-3 (RACK and tail loss probes off; the 0.5 ms base RTT; no
reordering), each with the TCP and the ``tm_lia`` background. The coupled headline per seed and variant is
log(mean FCT of the 70 KB flows beside ``tm_lia`` / beside TCP) (:func:`~.abab.per_seed_table`).

Claims, stated before the runs (:data:`SWAPS_SPECS`, family :data:`SWAPS_FAMILY`), the seed as the unit, per
swapped factor: the variant's headline minus the shipped testbed's, same seed, is at least
:data:`GAP_SHARE` of the engines' shipped gap (ns-3 LIA +0.111 against ``tm_lia`` -0.030, so +0.07) in
ns-3's direction. Validity, stated before: the base-RTT variant runs 16 delay elements, which did not keep
up on a loaded host (:class:`~tcpmodels.experiments.p1.config.P1Config` ``delay_element``); it is judged only
when its TCP background carries at least 90 % of the shipped testbed's (median over the complete seeds), else
*not testable in this setting*.

**Rule for reading them** (:func:`swaps_reading`): a factor whose swap is *supported* accounts for at least
half the engines' gap (the factor the experiments isolate); *contradicted* or *smaller than claimed*
excludes it as the main factor; *inconclusive* leaves it open, with the seeds needed. No supported factor
and every swap excluded: the gap is in what was not swapped (delayed ACKs, ns-3's MPTCP itself).

A second session (``p1_delack_*``, :mod:`tcpmodels.experiments.p1.delack`, family :data:`DELACK_FAMILY`) swaps
the kernel's ACKs toward ns-3's (one segment a packet, an ACK for each) against the shipped testbed in the same
session, with the same claim and rule, and the base-RTT variant's validity rule (it loads the CPUs);
:func:`swaps_section` reads both sessions into one paragraph.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets import p1_delack
from tcpmodels.datasets.p1_abab import complete_seeds
from tcpmodels.datasets.p1_swaps import BASELINE, RUNS_PER_SEED, SCHEMA
from tcpmodels.papers.common import keyed_claims_table
from tcpmodels.papers.p1_datacenter_fct.abab import per_seed_table
from tcpmodels.papers.phrases import effect_ci_text, runs_needed_text, unshipped_campaign
from tcpmodels.stats import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTABLE_HERE,
    SMALLER_THAN_CLAIMED,
    SUPPORTED,
    ClaimSpec,
    difference,
    not_testable,
)

__all__ = ["SWAPS_FAMILY", "DELACK_FAMILY", "SHIPPED_HEADLINES", "GAP_SHARE", "SWAPS_SPECS", "MIN_BG_RATE_SHARE", "load_swaps",
           "swaps_verdicts", "swaps_reading", "swaps_section"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    data_dir : str or Path
        The ``data`` folder.
""")

SWAPS_FAMILY = "P1 swaps"
#: the second session's family (delayed ACKs off against the shipped testbed)
DELACK_FAMILY = "P1 swaps (delayed ACKs)"
#: C1.3's coupled headline (mean over seeds of the log FCT ratio) on the shipped runs, per engine [-]
SHIPPED_HEADLINES = {"ns-3 LIA": 0.111, "kernel tm_lia": -0.030}
#: the share of the engines' gap a swap must move the kernel's headline by to account for it [-]
GAP_SHARE = 0.5
_GAP = SHIPPED_HEADLINES["ns-3 LIA"] - SHIPPED_HEADLINES["kernel tm_lia"]
#: the base-RTT variant is judged only when its TCP background carries at least this share of the shipped
#: testbed's (the delay elements keep up) [-]
MIN_BG_RATE_SHARE = 0.90
_SAYS = ("not a claim of the paper: which factor makes ns-3 (LIA +0.111 [+0.064, +0.159]) and the kernel (tm_lia "
         "-0.030 [-0.092, +0.031], contradicted) disagree on C1.3's coupled headline")
_FACTORS = {"kernel_norack": "RACK and tail loss probes off", "kernel_rtt05": "the 0.5 ms base RTT (delay element)",
            "kernel_steered": "no reordering (RPS steering)",
            p1_delack.ACK_EVERY: "an ACK for every segment (no offloads on the host links, quickack)"}
#: the variants that load the host's CPUs, judged only while their TCP background keeps up, and what failed if not
_CPU_BOUND = {"kernel_rtt05": "the delay elements did not keep up",
              p1_delack.ACK_EVERY: "the CPUs did not keep up with a packet per segment"}
#: what no session swapped, named when every swapped factor is excluded
_NOT_SWAPPABLE = "ns-3's MPTCP"
SWAPS_SPECS = {arm: ClaimSpec(
    claim="P1 kernel with one factor swapped toward ns-3 (variant - shipped testbed, same session)",
    part=f"{factor} moves the tm_lia headline toward ns-3 by >= {GAP_SHARE:.0%} of the gap", paper_says=_SAYS,
    quantity="log(tm_lia/TCP-background mean FCT of the 70 KB flows), variant - shipped, per seed [-]", direction=1,
    smallest_effect=round(GAP_SHARE * _GAP, 3),
    effect_source=f"half the engines' shipped gap ({SHIPPED_HEADLINES['ns-3 LIA']:+.3f} - "
                  f"({SHIPPED_HEADLINES['kernel tm_lia']:+.3f}))") for arm, factor in _FACTORS.items()}


@_PARAMETERS.fill
def load_swaps(data_dir: str | Path = "data") -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The campaign's flows and runs tables, or None when it is not shipped.

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.DataFrame) or None
        ``flows`` and ``runs`` (:mod:`tcpmodels.datasets.p1_swaps`).
    """
    if not SCHEMA.present(data_dir, ("flows", "runs")):
        return None
    t = SCHEMA.read(data_dir, ("flows", "runs"))
    return t["flows"], t["runs"]


def swaps_verdicts(flows: pd.DataFrame, runs: pd.DataFrame, *, runs_per_seed: int = RUNS_PER_SEED,
                   family: str = SWAPS_FAMILY) -> pd.DataFrame:
    """The claims of :data:`SWAPS_SPECS` for the variants a session ran, on its seeds with all their runs.

    Parameters
    ----------
    flows, runs : pandas.DataFrame
        :func:`load_swaps`, or :func:`tcpmodels.experiments.p1.abab.abab_frames` of the campaign's records.
    runs_per_seed : int
        The runs of a complete seed (:data:`tcpmodels.datasets.p1_swaps.RUNS_PER_SEED`, or the second session's
        :data:`tcpmodels.datasets.p1_delack.RUNS_PER_SEED`).
    family : str
        The rows' family (:data:`SWAPS_FAMILY`, or :data:`DELACK_FAMILY`).

    Returns
    -------
    pandas.DataFrame
        Claims table rows, one per variant the runs name besides the shipped testbed, with a ``key`` column (the
        variant).
    """
    seeds = complete_seeds(runs, runs_per_seed)
    per = per_seed_table(flows, runs, seeds)
    base = per.xs(BASELINE, level="engine")
    ran = set(runs["engine"])
    specs = {arm: spec for arm, spec in SWAPS_SPECS.items() if arm in ran}
    rows = {}
    for arm, spec in specs.items():
        var = per.xs(arm, level="engine") if arm in per.index.get_level_values("engine") else base.iloc[:0]
        share = float((var["bg_rate_tcp_bps"] / base["bg_rate_tcp_bps"]).median()) if len(var) else float("nan")
        if arm in _CPU_BOUND and not share >= MIN_BG_RATE_SHARE:
            rows[arm] = not_testable(spec, we_measured=f"TCP background {share:.0%} of the shipped testbed's",
                                     why=f"{_CPU_BOUND[arm]} (below {MIN_BG_RATE_SHARE:.0%}, the "
                                         "validity rule stated before the runs)")
            continue
        rows[arm] = difference(spec, (var["headline"] - base["headline"]).dropna(),
                               why=f"{len(seeds)} complete seeds; TCP background {share:.0%} of the shipped testbed's")
    return keyed_claims_table(rows, family=family)


def swaps_reading(verdicts: pd.DataFrame | None) -> str:
    """The notebook's paragraph: the rule stated before the runs applied to :func:`swaps_verdicts` (Markdown).

    Parameters
    ----------
    verdicts : pandas.DataFrame or None
        :func:`swaps_verdicts`, or None when the campaign is not shipped.

    Returns
    -------
    str
        Which factor the swaps isolate, which they exclude and which stay open.
    """
    if verdicts is None:
        return unshipped_campaign("Which factor makes the engines disagree (swaps)", "tcpmodels.experiments.p1.swaps")
    v = verdicts.set_index("key")
    named = {arm: _FACTORS[arm] for arm in v.index}

    def cite(arm: str) -> str:
        r = v.loc[arm]
        return f"{named[arm]} ({effect_ci_text(r.effect, r.ci_low, r.ci_high)}, {r.verdict})"

    found = [cite(a) for a in v.index if v.loc[a, "verdict"] == SUPPORTED]
    excluded = [cite(a) for a in v.index if v.loc[a, "verdict"] in (CONTRADICTED, SMALLER_THAN_CLAIMED)]
    open_ = [f"{cite(a)}, {runs_needed_text(v.loc[a, 'runs_needed'])} seeds would decide it" for a in v.index
             if v.loc[a, "verdict"] == INCONCLUSIVE]
    untested = [f"{named[a]} ({v.loc[a, 'why']})" for a in v.index if v.loc[a, "verdict"] == NOT_TESTABLE_HERE]
    parts = []
    if found:
        parts.append("the factor the swaps isolate: " + "; ".join(found))
    if excluded:
        parts.append("excluded as the main factor: " + "; ".join(excluded))
    if open_:
        parts.append("open: " + "; ".join(open_))
    if untested:
        parts.append("not testable here: " + "; ".join(untested))
    unswapped = ([] if p1_delack.ACK_EVERY in v.index else ["delayed ACKs"]) + [_NOT_SWAPPABLE]
    tail = (f" No swapped factor accounts for the gap: it lies in what was not swapped ({', '.join(unswapped)})."
            if not found and not open_ and not untested else "")
    return "**Which factor makes the engines disagree (swaps)**: " + "; ".join(parts) + "." + tail


@_PARAMETERS.fill
def swaps_section(data_dir: str | Path = "data") -> str:
    """:func:`swaps_reading` of the shipped sessions (Markdown), or the sentence saying none is shipped.

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    str
        Markdown.
    """
    tables = load_swaps(data_dir)
    if tables is None:
        return swaps_reading(None)
    verdicts = swaps_verdicts(*tables)
    if p1_delack.SCHEMA.present(data_dir, ("flows", "runs")):
        second = p1_delack.SCHEMA.read(data_dir, ("flows", "runs"))
        verdicts = pd.concat([verdicts, swaps_verdicts(second["flows"], second["runs"], family=DELACK_FAMILY,
                                                       runs_per_seed=p1_delack.RUNS_PER_SEED)], ignore_index=True)
    return swaps_reading(verdicts)
