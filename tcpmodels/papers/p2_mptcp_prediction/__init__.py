"""P2: throughput prediction for Linux MPTCP (Hamazaki, Abe, Kato), reproduced on the kernel testbed.

Source: T. Hamazaki, H. Abe, K. Kato, "Linux MPTCP カーネルによるネットワーク
スループット予測に関する研究" (a study on network throughput prediction with the
Linux MPTCP kernel), IPSJ SIG technical report, 2015.

The dataset comes from :mod:`tcpmodels.experiments.p2` (a scaled version of the
paper's testbed: two rate-limited paths with RTTs from 120 to 180 ms in 4 ms
steps, the kernel's MPTCP v1). :func:`load_dataset` reads it from ``data/``;
:func:`tables` rebuilds Tables 2-6, the Spearman correlations, Fig. 4's subflow
shares, cross-validated hyperparameters and a formula- versus history-based
comparison, with the paper's printed values beside ours; :func:`claims` judges
C2.1-C2.5 part by part with :mod:`tcpmodels.stats` (unit of replication: the RTT
pair of the campaign's one repetition, see :mod:`.claims`).

Modules: :mod:`.data` (printed values, dataset, model inputs), :mod:`.tables`,
:mod:`.claims` (the verdicts and the answer box), :mod:`.plots`, :mod:`.captures`.

Predictors are the project's estimators (:mod:`tcpmodels.predict`): the existing
method is :class:`~tcpmodels.predict.SingleProbeSVR` (one MPTCP or TCP probe ->
data), the proposed one :class:`~tcpmodels.predict.PerPathProbeSVR` (one TCP
probe per path -> MPTCP data), both with R kernlab's defaults (C = 1,
epsilon = 0.1, sigest kernel width) as in the paper. Tables 2-5 are training
errors (fit and evaluate on all samples), as printed; Table 6 is the error on
the samples left out of random training subsets.

Units: throughputs are stored in bytes/s; tables print KB/s with 1 KB = 1024
bytes (the paper's unit "KBps"; its probe sizes are powers of two of KB).

References
----------
.. [1] T. Hamazaki, H. Abe, K. Kato, IPSJ SIG technical report, 2015, Tables 2-6, Fig. 4-8.
.. [2] C. Lee, H. Abe, T. Hirotsu, K. Umemura, IEICE Trans. Inf. & Syst. E95-D(12), 2012.
.. [3] Q. He, C. Dovrolis, M. Ammar, SIGCOMM 2005 (formula- versus history-based prediction).
"""

from tcpmodels.papers.p2_mptcp_prediction.captures import capture_shares
from tcpmodels.papers.p2_mptcp_prediction.claims import (
    HEADLINE,
    UNIT,
    answer,
    claims,
    headline,
    rpe_headroom,
    sample_errors,
)
from tcpmodels.papers.p2_mptcp_prediction.data import (
    CITATION,
    KB_BYTES,
    MPTCP_PROBES,
    PAPER_FIG4_SHARE_150_120_256MB,
    PAPER_N_SAMPLES,
    PAPER_SPEARMAN,
    PAPER_TABLE2,
    PAPER_TABLE3,
    PAPER_TABLE4,
    PAPER_TABLE5,
    PAPER_TABLE6,
    PROBE_TOTALS,
    RTT_RELATIONS,
    P2Dataset,
    conditions_table,
    fit_training_error,
    load_dataset,
    rtt_relation,
)
from tcpmodels.papers.p2_mptcp_prediction.lossy import LOSSY_FAMILY, load_lossy, lossy_section, lossy_verdicts
from tcpmodels.papers.p2_mptcp_prediction.plots import plot_fig4, plot_per_path_surface, plot_probe_vs_data
from tcpmodels.papers.p2_mptcp_prediction.sndbuf import sndbuf_section
from tcpmodels.papers.p2_mptcp_prediction.spread import spread_section
from tcpmodels.papers.p2_mptcp_prediction.tables import (
    campaign_table,
    fig4_against_paper,
    fig4_note,
    scaling_table,
    tables,
)

__all__ = [
    "sndbuf_section", "spread_section", "LOSSY_FAMILY", "load_lossy", "lossy_verdicts", "lossy_section",
    "CITATION", "KB_BYTES", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "PAPER_TABLE5", "PAPER_TABLE6",
    "PAPER_SPEARMAN", "PAPER_FIG4_SHARE_150_120_256MB", "PAPER_N_SAMPLES", "RTT_RELATIONS", "MPTCP_PROBES",
    "PROBE_TOTALS", "P2Dataset", "load_dataset", "tables", "claims", "UNIT", "sample_errors", "answer", "headline", "HEADLINE", "rpe_headroom", "fit_training_error",
    "rtt_relation", "plot_fig4", "plot_probe_vs_data", "plot_per_path_surface", "capture_shares", "scaling_table",
    "campaign_table", "conditions_table", "fig4_against_paper", "fig4_note",
]
