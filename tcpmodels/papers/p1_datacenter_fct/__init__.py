"""P1: short flows beside MPTCP background in a k=4 fat-tree (Fujii, Tazaki, Sekiya), on two engines.

Source: S. Fujii, H. Tazaki, Y. Sekiya, "MultiPath TCP 適用時のデータセンターネットワークでのフローサイズが
与える影響に関する一考察" (a study of the effect of flow size in a data-center network with MultiPath TCP),
IPSJ technical report. The paper ran Linux MPTCP v0.86 (LIA-coupled)
inside ns-3 DCE. Today's kernel MPTCP v1 has no coupled congestion control, so the
dataset (:mod:`tcpmodels.experiments.p1`) holds two engines driven by the same
workload schedules, and each run names its MPTCP congestion control (column ``cc``):

``kernel``
    the real Linux kernel on the namespace fat-tree; MPTCP = one subflow per core, either
    *uncoupled* Reno (``uncoupled``), or coupled by the BPF controls of
    :mod:`tcpmodels.testbed.kernel_cc` (``tm_lia``: RFC 6356 LIA; ``tm_olia``: OLIA);
``ns3``
    ns-3 (:mod:`tcpmodels.sim.fattree`); MPTCP = RFC 6356 LIA-coupled NewReno
    subflows, one per core.

:func:`tables` rebuilds Table 1 (setting), Table 2 (mean, standard deviation and
95th percentile FCT of the 70 KB flows under TCP and MPTCP background, with 99 %
confidence intervals), Table 3 (flow patterns from the kernel captures), Table 4,
Fig. 7 (FCT CDF, share of flows with loss), Figs. 8-10 (query and short-message FCT
by size, 99 % confidence intervals) and the RFC 6356 allocation for a captured
kernel MPTCP background connection; :func:`claims` judges C1.1-C1.3 and
the Fig. 7 statement part by part for each engine and congestion control, and whether coupling
relieves the short flows (:mod:`.claims`, with the run as the unit); :func:`verdicts_by_cc` sets
the verdicts side by side.

The kernel's runs come from two testbeds: ``kernel`` (no RPS steering, a few segments in 1000
reordered; every shipped kernel run up to 2026-11-29) and
``kernel_steered`` (RPS steering, no reordering; the same schedules). :func:`claims` judges both, each
on all its seeds (the tables and figures show ``kernel``); :func:`testbed_effect` and
:func:`verdicts_by_testbed` (:mod:`.testbeds`) say whether the reordering moved anything, pair by pair.

Statistics: the confidence interval of a mean is Student's t over flows; that of a
95th percentile is the distribution-free order-statistic interval
(:func:`scipy.stats.quantile_test`). Flows of one run share the background, so
intervals over flows are narrower than intervals over independent runs would be;
the verdicts are therefore judged over runs (seeds), never over flows.

References
----------
.. [1] S. Fujii, H. Tazaki, Y. Sekiya, "MultiPath TCP 適用時のデータセンターネットワークでのフローサイズが与える影響に関する一考察", Tables 1-4, Figs. 7-10.
.. [2] C. Raiciu et al., "Improving datacenter performance and robustness with multipath TCP", SIGCOMM 2011.
.. [3] RFC 6356, "Coupled Congestion Control for Multipath Transport Protocols", Sec. 3-4.
.. [4] M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (the query / short-message classes).
"""

from tcpmodels.papers.p1_datacenter_fct.abab import Abab, load_abab
from tcpmodels.papers.p1_datacenter_fct.answer import answer, headline
from tcpmodels.papers.p1_datacenter_fct.claims import claims, claims_with_cc, coupling_claims, verdicts_by_cc
from tcpmodels.papers.p1_datacenter_fct.coupling import coupling_answer
from tcpmodels.papers.p1_datacenter_fct.cpu import cpu_correlations, cpu_paragraph, cpu_runs
from tcpmodels.papers.p1_datacenter_fct.data import (
    CC_LABELS,
    CITATION,
    ENGINE_LABELS,
    PAPER_TABLE1,
    PAPER_TABLE2,
    PAPER_TABLE3,
    PAPER_TABLE4,
    FctSummary,
    P1Dataset,
    background_label,
    backgrounds,
    engines_in,
    fct_summary,
    load_dataset,
    mptcp_ccs,
    with_cc,
)
from tcpmodels.papers.p1_datacenter_fct.engines import STACK_SETTINGS, engines_note, shared_link_ratios
from tcpmodels.papers.p1_datacenter_fct.patterns import (
    LOSS_WITHOUT_TIMEOUT,
    SPLIT_IN_DATASET,
    classify_capture,
    paper_patterns,
    split_comparison,
    table3,
)
from tcpmodels.papers.p1_datacenter_fct.placement import placement_section
from tcpmodels.papers.p1_datacenter_fct.plots import plot_fig7, plot_figs8_10
from tcpmodels.papers.p1_datacenter_fct.sittings import session_section, sitting_effect, sitting_sentence
from tcpmodels.papers.p1_datacenter_fct.swaps import swaps_section
from tcpmodels.papers.p1_datacenter_fct.tables import (
    background_table,
    campaign_table,
    fig7_cdf,
    fig7_loss,
    figs8_10,
    lia_allocation,
    load_sensitivity,
    table1,
    table2,
    table4,
    tables,
)
from tcpmodels.papers.p1_datacenter_fct.testbeds import busy_seeds, testbed_effect, testbed_pairs, verdicts_by_testbed
from tcpmodels.papers.p1_datacenter_fct.windows import implausible_windows, plausible_subflows, window_note

__all__ = ["cpu_runs", "cpu_correlations", "cpu_paragraph", "placement_section", "swaps_section", "CITATION", "PAPER_TABLE1", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "ENGINE_LABELS", "P1Dataset",
           "FctSummary", "load_dataset", "fct_summary", "tables", "claims", "table1", "table2", "table3", "table4",
           "fig7_loss", "fig7_cdf", "figs8_10", "lia_allocation", "plot_fig7", "plot_figs8_10", "classify_capture",
           "campaign_table", "load_sensitivity", "background_table", "paper_patterns", "LOSS_WITHOUT_TIMEOUT",
           "SPLIT_IN_DATASET", "split_comparison", "claims_with_cc", "verdicts_by_cc", "coupling_claims", "answer", "headline", "CC_LABELS",
           "with_cc", "mptcp_ccs", "background_label", "backgrounds", "coupling_answer", "busy_seeds", "testbed_effect", "testbed_pairs", "verdicts_by_testbed", "engines_in",
           "Abab", "load_abab", "STACK_SETTINGS", "engines_note",
           "shared_link_ratios", "implausible_windows", "plausible_subflows", "window_note",
           "session_section", "sitting_effect", "sitting_sentence"]
