"""P4: LFTCP, 73 Gbit/s in one TCP stream over a 296 ms, 100 Gbit/s path (University of Tokyo, 2015).

Source: University of Tokyo (Graduate School of Information Science and
Technology) and JST, press release of 11 December 2015 (平成27年12月11日),
"100ギガビットネットワークを高効率利用するTCP通信技術を確立 — 日米間100ギガビット
ネットワークを用い73ギガビット/秒のTCP通信を実現" (presenter: Kei Hiraki).

The press release reports measurements we cannot repeat (a trans-Pacific
100 Gbit/s loop), so what is reproduced is its arithmetic: the bandwidth-delay
product, the rate ceiling that TCP's largest window sets at 296 ms, the bytes
in flight 73 Gbit/s needs against 32-bit limits, the same sizing for other
links and RTTs, and whether the printed "97.7 % of the theoretical value" can
be derived from the printed numbers. No measurement is needed: :func:`load_dataset`
returns the path's parameters (the press release's values), and every verdict
is an exact computation (``n_runs`` 0) judged against the printing precision of
the release's numbers. The relation behind them, rate = window / RTT, is
measured on the kernel by :mod:`tcpmodels.experiments.p4` and judged by
:mod:`tcpmodels.papers.p4_lftcp.measured` (claim C4.7).
"""

from tcpmodels.papers.p4_lftcp.claims import answer, claims, headline
from tcpmodels.papers.p4_lftcp.constants import (
    CITATION,
    IN_FLIGHT_LIMIT_BYTES,
    LFTCP_RATE_BPS,
    LINK_RATE_BPS,
    ROUND_TRIP_DISTANCE_M,
    RTT_S,
    STANDARD_TCP_FRACTION_OF_THEORY,
    STANDARD_TCP_RATE_BPS,
)
from tcpmodels.papers.p4_lftcp.measured import (
    RATIO_MARGIN,
    load_measured,
    measured_claims,
    measured_findings,
    measured_table,
    measured_testbed,
    plot_measured,
    testbed_comparison,
)
from tcpmodels.papers.p4_lftcp.plots import plot_ceiling_vs_rtt, plot_sizing
from tcpmodels.papers.p4_lftcp.tables import (
    P4Dataset,
    in_flight_table,
    load_dataset,
    path_table,
    ratio_candidates,
    tables,
    views,
)

__all__ = [
    "CITATION", "LINK_RATE_BPS", "RTT_S", "ROUND_TRIP_DISTANCE_M", "STANDARD_TCP_RATE_BPS",
    "STANDARD_TCP_FRACTION_OF_THEORY", "LFTCP_RATE_BPS", "IN_FLIGHT_LIMIT_BYTES", "P4Dataset", "load_dataset",
    "tables", "claims", "answer", "headline", "views", "ratio_candidates", "in_flight_table", "path_table", "plot_ceiling_vs_rtt",
    "plot_sizing", "RATIO_MARGIN", "load_measured", "measured_table", "measured_claims", "measured_findings",
    "plot_measured", "measured_testbed", "testbed_comparison",
]
