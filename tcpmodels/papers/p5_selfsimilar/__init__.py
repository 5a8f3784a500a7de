"""P5: bottleneck performance under multiplexed self-similar traffic (Ono, Nakashima), reproduced in ns-3.

Source: A. Ono, T. Nakashima, "Self-similar トラフィックの重なりによるボトルネック
パフォーマンスの評価" (evaluation of bottleneck performance under multiplexing
self-similar traffics), Kyushu Tokai University.

The paper has no tables: Figs. 2-5 plot the loss rate at the server S and at the
bottleneck gateway G1 over 20 s, Figs. 6-11 the G1 -> G2 throughput and the
completed sessions, for 8/16/24/32 active clients. :func:`tables` turns our runs
(:mod:`tcpmodels.experiments.p5`, ns-3 caterpillar) into the same curves as
tables (1 s bins, mean over seeds), the loss-rate table alpha x clients, the
heavy-file and finishing-time tables, and the Hurst tables: every estimator of
:mod:`tcpmodels.models.hurst` on the G1 -> G2 packet counts of 300 s runs and of
the 20 s runs, against H = (3 - alpha)/2 (:func:`tcpmodels.models.heavytail.hurst_from_alpha`),
and on the Bellcore Ethernet excerpt. :func:`claims` judges C5.1-C5.4 part by part with :mod:`tcpmodels.stats`.

Loss rates are byte loss rates of a device queue: bytes dropped / (bytes dropped
+ bytes accepted), from the ns-3 queue counters; nearly all bytes are full-size
data segments, so this is the packet loss rate within a few percent.

References
----------
.. [1] A. Ono, T. Nakashima, "Self-similar トラフィックの重なりによるボトルネックパフォーマンスの評価", Kyushu Tokai University, Figs. 2-11, Sec. 4.
.. [2] W. Willinger, M. S. Taqqu, R. Sherman, D. V. Wilson, "Self-similarity through
   high-variability", IEEE/ACM ToN 5(1), 71-86, 1997 (H = (3 - alpha)/2).
.. [3] W. Leland, M. Taqqu, W. Willinger, D. Wilson, IEEE/ACM ToN 2(1), 1-15, 1994 (Bellcore traces).
.. [4] K. Park, G. Kim, M. Crovella, "On the relationship between file sizes, transport
   protocols, and self-similar network traffic", ICNP 1996.
"""

from tcpmodels.papers.p5_selfsimilar.claims import answer, claims, headline
from tcpmodels.papers.p5_selfsimilar.data import (
    BELLCORE_FULL_TRACE_H,
    CITATION,
    FIGURE_CASES,
    PAPER_FIGURES,
    P5Dataset,
    load_dataset,
)
from tcpmodels.papers.p5_selfsimilar.hurst import hurst_aggregated
from tcpmodels.papers.p5_selfsimilar.plots import plot_counts_scales, plot_figures, plot_hurst_vs_alpha, plot_over_time
from tcpmodels.papers.p5_selfsimilar.tables import (
    closing_tables,
    loss_table,
    onset_note,
    over_time,
    provenance_table,
    size_note,
    tables,
    zero_note,
    zero_panels,
)

__all__ = [
    "CITATION", "PAPER_FIGURES", "FIGURE_CASES", "P5Dataset", "load_dataset", "over_time", "loss_table",
    "tables", "claims", "answer", "headline", "hurst_aggregated", "closing_tables", "plot_over_time", "plot_figures",
    "plot_hurst_vs_alpha", "plot_counts_scales", "BELLCORE_FULL_TRACE_H", "size_note", "zero_panels", "zero_note", "onset_note",
    "provenance_table",
]
