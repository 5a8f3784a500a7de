"""Campaigns of paper P5 (Ono, Nakashima): the ns-3 caterpillar under multiplexed Pareto downloads, and the kernel.

Two engines: ns-3 (below; :mod:`~tcpmodels.experiments.p5.config`, :mod:`~tcpmodels.experiments.p5.plan`,
:mod:`~tcpmodels.experiments.p5.runs`, :mod:`~tcpmodels.experiments.p5.dataset`) and the Linux kernel on the
testbed (:mod:`~tcpmodels.experiments.p5.kernel`: Poisson arrivals of Pareto-sized Reno downloads through one
tbf bottleneck and the Hurst exponent of the captured series; its setting
:mod:`~tcpmodels.experiments.p5.kernel_config`, its dataset ``p5_testbed_*``
:mod:`~tcpmodels.experiments.p5.kernel_dataset`). Both count packets with
:mod:`~tcpmodels.experiments.p5.counts`.

The scenario (:class:`~tcpmodels.sim.config.Caterpillar`, built by
:func:`tcpmodels.sim.scenarios.build_caterpillar`): server S - G1 - G2 - ... - G6,
clients round-robin on G2..G5 (client c on G(2 + c mod 4)), downloads S -> client,
bottleneck G1 -> G2. Client and server links 10 Mbit/s, 15 ms; gateway links 5 or
10 Mbit/s, 15 ms; every queue 3000 packets (drop-tail); TCP NewReno (ns-3
``TcpNewReno`` with SACK and PRR, the package defaults); per client 50 files with
Pareto sizes (mean 10 KB, shape alpha) starting as a Poisson process; 20 s.

Choices where the paper is silent (:class:`P5Config`):

- arrival rate: one new download per client every 0.2 s on average, so the 50
  files of a client start within about 10 s (the paper picked 20 s as the time
  "by which the flows have almost finished"); alternative ``alt_arrival``: 0.4 s;
- gateway delay: 15 ms, like the access links;
- which clients are active: the first n of the round robin, so every articulation
  gateway carries n/4 clients;
- no cap on the Pareto draws.

Cases (the ``case`` field of a run):

``main``
    4 alpha x 4 client counts x 2 bottleneck rates x seeds, as in the paper.
``alt_arrival``
    alpha 1.05 and 1.65, all client counts at 5 Mbit/s, seed 0, with 0.4 s between
    a client's arrivals.
``alt_server_queue``
    every alpha, with a 50-packet queue on the S -> G1 link (ns-2's default ``queue-limit``): a guess at
    why the paper sees loss at S at all. All client counts and rates at the first seed of
    ``altq_seeds`` (0), the 32-client runs (both rates) at each further seed: the runs where G1 can
    lose, the units of C5.2 (c).
``long``
    300 s runs, 32 clients, 10 Mbit/s gateways, open-ended Poisson arrivals (no
    50-file limit, one per client per second on average): a stationary series long
    enough for the Hurst estimators.

Measurements per run (:func:`run_p5`, reduced from :func:`tcpmodels.sim.run.run_config`
output and the bottleneck pcap read with :func:`tcpmodels.traces.read_pcap`):
per 0.1 s bin the bytes and packets dropped at S and at G1 and the bytes accepted by
their queues, G1 -> G2 throughput (wire bytes in the pcap), completed sessions;
per flow start, size, bytes received and completion time; the G1 -> G2 packet-count
series in 10 ms bins and all six Hurst estimators on it
(:func:`tcpmodels.models.hurst.estimate_all`). The pcap stays in the sweep cache
(``runs/p5/cache/<key>/out/bottleneck.pcap``).

Command line::

    python -m tcpmodels.experiments.p5 run [--cases main,long,...] [--seeds 0,1,2] [--long-seeds 0,1,2]
        [--altq-seeds 0,1,2,3] [--skip-shipped] [--cache runs/p5/cache]
    python -m tcpmodels.experiments.p5 dataset [--cache runs/p5/cache] [--out data/datasets] [--no-merge]
        [--altq-seeds 0,1,2,3]
    python -m tcpmodels.experiments.p5 kernel --runs runs/p5_testbed [--seeds 0 1] [--skip-shipped]   # root
    python -m tcpmodels.experiments.p5 kernel-dataset --runs runs/p5_testbed --out data/datasets

``run`` goes through :func:`tcpmodels.sweep.sweep` on a local Dask cluster
with one worker (the host is shared); finished runs are cached and a rerun
skips them; ``run --skip-shipped`` also leaves out the runs already in the shipped
dataset. ``dataset`` collects every cached run of the plan (missing ones are
listed, not invented) into ``data/datasets/p5_*.parquet`` plus
``p5_provenance.json`` and ``p5_records.jsonl.gz`` (per-run records), keeps the
shipped rows of runs the cache lacks (earlier sessions' caches may be gone;
``--no-merge`` drops them), and adds the Bellcore trace analysis.

References
----------
.. [1] A. Ono, T. Nakashima, "Evaluation of bottleneck performance under
   multiplexing self-similar traffics", Kyushu Tokai University, Sec. 2.2, Figs. 2-11.
.. [2] W. Leland, M. Taqqu, W. Willinger, D. Wilson, "On the self-similar nature
   of Ethernet traffic (extended version)", IEEE/ACM ToN 2(1), 1-15, 1994.
"""

from tcpmodels.experiments.cli import package_main
from tcpmodels.experiments.p5.config import BELLCORE_PATH, CASES, DEFAULT_CONFIG, SERVER_ADDR, P5Config
from tcpmodels.experiments.p5.counts import bellcore_counts, packet_counts
from tcpmodels.experiments.p5.dataset import build_dataset, merge_tables, read_shipped, shipped_run_ids
from tcpmodels.experiments.p5.kernel import run_alpha, run_kernel_campaign
from tcpmodels.experiments.p5.kernel_config import DEFAULT_KERNEL_CONFIG, TestbedP5Config
from tcpmodels.experiments.p5.kernel_dataset import build_kernel_dataset, shipped_kernel_keys
from tcpmodels.experiments.p5.plan import caterpillar_for, plan
from tcpmodels.experiments.p5.runs import run_campaign, run_p5

__all__ = [
    "P5Config",
    "DEFAULT_CONFIG",
    "CASES",
    "SERVER_ADDR",
    "BELLCORE_PATH",
    "plan",
    "caterpillar_for",
    "run_p5",
    "run_campaign",
    "packet_counts",
    "bellcore_counts",
    "build_dataset",
    "merge_tables",
    "read_shipped",
    "shipped_run_ids",
    "TestbedP5Config",
    "DEFAULT_KERNEL_CONFIG",
    "run_alpha",
    "run_kernel_campaign",
    "build_kernel_dataset",
    "shipped_kernel_keys",
    "main",
]


#: ``main(argv=None) -> exit status``: the command line ``python -m`` runs (this package's ``__main__``)
main = package_main(__name__)
