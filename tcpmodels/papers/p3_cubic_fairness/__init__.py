"""Paper P3 (Kozu, Yamaguchi, FIT2013): CUBIC's recovery time K and RTT fairness against Reno, reproduced.

The paper has no tables: Figs. 3-5 plot the throughput of a Reno flow (RTT
fixed at 1, 4 or 16 ms) and a CUBIC flow (RTT 1, 4, 16, 64 ms) sharing a
bottleneck, with standard CUBIC and with the proposed K (eq. (4), K scaled by
x(RTT)). Here they become tables, one per Reno RTT: each flow's throughput and
Jain's fairness index per RTT pair, for the kernel (its own ``cubic``, and the BPF
``tm_cubic_x`` in each reading of the garbled eq. (4)), ns-3 standard ``TcpCubic``,
ns-3 ``TcpCubicX`` in each reading, and the fluid model — plus the K values that drive each case,
ns-3 against the kernel, kernel vs ns-3 vs fluid per pair and kind (:func:`engine_table`),
and verdicts on C3.1-C3.3 per reading and engine (:mod:`.claims`, judged by
:mod:`tcpmodels.stats` on the per-run paired differences of Jain's index), and the kernel verdicts again
without the samples that lost packets outside the bottleneck queue, or with them replaced by repeats
(:mod:`.robustness`). The kernel
columns of one table share one setting (rate and measured span,
:func:`proposal_setting`); the first campaign's ``standard`` samples (100 Mbit/s,
30 s) stay in the dataset and carry the premise C3.0 while they are the setting with most
``standard`` samples. Each engine runs at its own rate (kernel ``P3Config.rate_bps``, ns-3
``P3Config.ns3_rate_bps``: :func:`kernel_rate_bps`, :func:`ns3_rate_bps`): every table that
puts engines side by side states each one's rate, compares each with the fluid model at its
own rate (:func:`fluid_at`), and the ns-3 cross-check takes the kernel's ``standard`` samples at
the ns-3 rate (it says so, and gives no agreement, where the kernel has none at that rate).

Kernel testbeds
    The kernel samples ran on two testbeds: ``reordering`` (no RPS steering: the CPUs' backlogs reorder
    about 0.2 % of segments; every sample before 2026-11-28) and ``steered`` (the rerun with
    ``Testbed(keep_flow_order=True)``). The kernel tables and verdicts use one (:func:`kernel_testbed`:
    the steered samples once they are at least as many as the unsteered ones in every cell, else the
    unsteered; :func:`with_testbed` picks one), and :func:`testbed_comparison` puts the samples run on both
    side by side.

The data come from :mod:`tcpmodels.experiments.p3` (``data/datasets/p3_*``).
The paper's figures carry no printed numbers that survive in the source text,
only the axes (Mbit/s up to 600-800) and the direction stated in Sec. 4; so the
"paper" column of every table is that direction, and verdicts compare directions
beyond the measured spread.

ns-3 settings (run lengths)
    The ns-3 grid exists in two settings: the 20 s runs shipped first (2-3 CUBIC epochs of the
    longest K) and the long runs of 10 epochs (issue 17). Every ns-3 column, paired difference and
    claim reads one setting only (:func:`ns3_settings`, :func:`ns3_duration_s`): the one with most
    complete seeds in its least-covered RTT pair, the longer at a tie; the headline and the
    provenance table say which. The x(RTT)-exponent figure reads the setting its exponents ran in.

Spread and the significance rule
    For a cell (RTT pair, engine, variant) with n >= 2 runs the spread of
    Jain's index is the standard deviation between runs and its standard error
    ``sd / sqrt(n)``; with one run it is the standard deviation of the index
    over the run's 5 s windows divided by sqrt(#windows) (marked
    ``spread_from="windows"``). That understates the run-to-run spread (the
    windows of one run share its phase), and a standard deviation of two runs
    is itself very uncertain, so in the fairness tables an ns-3 cell with fewer
    than three runs takes at least the kernel's median between-repetition
    standard deviation of Jain's index over the grid (:func:`run_spread_proxy`)
    as its standard error. A difference ``delta`` between two cells is *beyond the
    spread* when ``|delta| > 2 sqrt(se_1^2 + se_2^2)`` and at least 0.01.

References
----------
.. [1] T. Kozu, S. Yamaguchi, "Improvement of TCP Fairness with Controlling Congestion Windows Size
   Recovery Time", FIT2013, L-033, Sec. 3-4, eq. (4), Figs. 2-5.
.. [2] RFC 9438, Sec. 4.
.. [3] R. Jain, D. Chiu, W. Hawe, DEC-TR-301 (1984): the fairness index.
"""

from tcpmodels.datasets.p3 import LEGACY_NS3_RATE_BPS, TESTBEDS
from tcpmodels.papers.p3_cubic_fairness.cells import cell_stats, run_spread_proxy, significant
from tcpmodels.papers.p3_cubic_fairness.claims import answer, claims, headline, reading_summary
from tcpmodels.papers.p3_cubic_fairness.data import CITATION, PAPER_DIRECTION, READINGS, P3Dataset, load_dataset
from tcpmodels.papers.p3_cubic_fairness.engines import cross_validation, engine_table, k_table, testbed_comparison
from tcpmodels.papers.p3_cubic_fairness.fairness import FIGURE_COLUMNS, fairness_table
from tcpmodels.papers.p3_cubic_fairness.paired import kernel_paired_dj, paired_dj
from tcpmodels.papers.p3_cubic_fairness.plots import (
    available_exponents,
    exponent_widget,
    plot_exponent_fairness,
    plot_figure,
)
from tcpmodels.papers.p3_cubic_fairness.robustness import cpu_loss_sensitivity, with_cpu_loss_repeated, without_cpu_loss
from tcpmodels.papers.p3_cubic_fairness.runs import (
    fluid_at,
    fluid_rates_bps,
    kernel_all_testbeds,
    kernel_rate_bps,
    kernel_runs,
    kernel_settings,
    kernel_testbed,
    ns3_duration_s,
    ns3_rate_bps,
    ns3_runs,
    ns3_settings,
    proposal_setting,
    with_testbed,
)
from tcpmodels.papers.p3_cubic_fairness.tables import provenance_table, setting_table, tables
from tcpmodels.papers.p3_cubic_fairness.windows import windows_section

__all__ = ["windows_section", "TESTBEDS", "kernel_all_testbeds", "kernel_testbed", "with_testbed", "testbed_comparison", "kernel_runs", "kernel_settings", "proposal_setting", "engine_table", "kernel_paired_dj",
           "ns3_runs", "ns3_rate_bps", "ns3_settings", "ns3_duration_s", "kernel_rate_bps", "fluid_at", "fluid_rates_bps", "LEGACY_NS3_RATE_BPS",
           "P3Dataset", "load_dataset", "cell_stats", "fairness_table", "cross_validation", "k_table", "paired_dj",
           "significant", "run_spread_proxy", "setting_table", "provenance_table", "FIGURE_COLUMNS", "claims", "answer", "headline", "tables", "plot_figure", "plot_exponent_fairness",
           "exponent_widget", "available_exponents", "reading_summary", "cpu_loss_sensitivity", "without_cpu_loss",
           "with_cpu_loss_repeated",
           "CITATION", "PAPER_DIRECTION", "READINGS"]
