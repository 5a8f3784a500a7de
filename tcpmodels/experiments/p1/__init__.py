"""Campaign of paper P1 (Fujii, Tazaki, Sekiya): short flows beside long transfers in a k=4 fat-tree.

One *engine-neutral schedule* (:func:`schedule`) per (experiment, protocol, seed)
lists every connection -- source and destination host, start time, size (``None``
for a background transfer that runs to the end), whether it is MPTCP, and for a
single-path connection the core ("plane") that per-flow ECMP hashed it to. The
same schedule drives both engines:

- ``kernel``: the real Linux kernel on the namespace fat-tree of
  :func:`tcpmodels.testbed.topologies.fat_tree` (100/200/400 Mbit/s, 100 KB drop-tail
  buffers). The 0.5 ms RTT can be made by the delay element on the 16 host links only
  (0.125 ms each way on each; every host pair crosses two host links), but it is off by
  default (:attr:`P1Config.delay_element`: on this loaded host the elements starved);
  the namespaces' own round trip (~0.1 ms) is measured and recorded. A single-path connection uses the
  destination's plane-c address (so it crosses core c: per-flow ECMP with the hash
  drawn in the schedule); an MPTCP connection opens on plane 0 and the destination
  announces planes 1-3, so it gets one subflow per core. Kernel MPTCP v1 has no
  coupled congestion control of its own: with ``cc`` ``uncoupled`` each subflow runs
  :attr:`P1Config.cc` (Reno, the rule LIA couples) on its own; with ``tm_lia`` /
  ``tm_olia`` every MPTCP socket (and so each of its subflows) runs that BPF control of
  :mod:`tcpmodels.testbed.kernel_cc`, registered for the run, which couples the subflows
  of one connection (RFC 6356 LIA, OLIA). Single-path sockets always run Reno.
- ``ns3``: :mod:`tcpmodels.sim.fattree` with the same connections,
  MPTCP as RFC 6356 LIA-coupled subflows, one per core.

Experiments (the paper's Sections 4 and 5):

``s4``
    One-to-one traffic. ``round(16 / 3)`` = 5 hosts run continuous background
    transfers to partners drawn as a random derangement (``protocol`` = the
    background's: ``tcp`` or ``mptcp``); the other 11 hosts send 70 KB TCP flows with
    Poisson arrivals (mean inter-arrival 200 ms per host), each to a uniformly drawn
    other host. FCT of the 70 KB flows; their packets are captured at each sender.
``s5_query_nobg``, ``s5_query_bg``
    Partition-aggregate: pod 0 (h0-h3) is the aggregator, the 12 hosts of pods 1-3
    are workers. Each worker receives queries (sizes drawn uniformly from
    ``query_sizes_bytes``, 1-16 KB) from aggregator host ``w mod 4`` with Poisson
    arrivals (mean 200 ms per worker). ``_bg``: six workers (50 %) also receive a
    continuous transfer from the aggregator pod. ``protocol`` is that of every
    connection of the run (queries and background).
``s5_message_bg``
    As ``s5_query_bg`` with short messages (``message_sizes_bytes``, 50 KB-1 MB,
    mean inter-arrival 500 ms per worker).

FCT (kernel): from just before ``connect()`` on the sender to the last byte read
by the receiver (both on the host's one monotonic clock) -- the traffic module's
upload ``completion_s``. From the captures, :func:`tcpmodels.traces.classify_short_flows`
gives each 70 KB flow's pattern (P1 Table 3) and a capture FCT (SYN to the ACK
of the last byte).

Records go to a JSONL file, one line per run (key: engine, experiment, protocol,
cc, seed); ``run`` resumes. A kernel run's ``engine`` names its testbed too
(:func:`engine_label`): ``kernel`` (no RPS steering: a few segments in 1000 arrive out of
order) or ``kernel_steered`` (``--keep-flow-order``, :attr:`P1Config.keep_flow_order`).
Each kernel run holds the host lock (:func:`tcpmodels.testbed.hostlock.host_lock`) only while its traffic runs; the
fat-tree is built once per campaign call and reused. ``dataset`` writes Parquet
tables and ``p1_provenance.json``, merged with the tables already shipped (a re-measured run
replaces its shipped row; the others stay). ``--captures`` is what gives the Section 4 flows their
loss and pattern (Table 3, Fig. 7): without it those columns are empty.

Command line (root for ``run``)::

    python -m tcpmodels.experiments.p1 run --engine kernel --captures runs/p1/captures --records runs/p1/kernel.jsonl
    python -m tcpmodels.experiments.p1 run --engine kernel --cc tm_lia tm_olia --captures runs/p1/captures \
        --records runs/p1/kernel.jsonl
    python -m tcpmodels.experiments.p1 run --engine kernel --keep-flow-order --cc uncoupled tm_lia tm_olia \
        --captures runs/p1/captures_steered --records runs/p1/kernel_steered.jsonl
    python -m tcpmodels.experiments.p1 run --engine ns3 --records runs/p1/ns3.jsonl
    python -m tcpmodels.experiments.p1 dataset --records runs/p1/kernel.jsonl runs/p1/ns3.jsonl --out data

References
----------
.. [1] S. Fujii, H. Tazaki, Y. Sekiya, "MultiPath TCP 適用時のデータセンターネットワークでのフローサイズが与える影響に関する一考察"
   (the effect of flow size in a data-center network with MultiPath TCP), Tables 1-4, Figs. 7-10.
.. [2] C. Raiciu et al., "Improving datacenter performance and robustness with multipath TCP", SIGCOMM 2011.
.. [3] RFC 6356, "Coupled Congestion Control for Multipath Transport Protocols".
"""

from tcpmodels.experiments.cli import package_main
from tcpmodels.experiments.p1.cc_watch import CcMapWatch
from tcpmodels.experiments.p1.config import (
    AGGREGATOR_HOSTS,
    BG_PORT,
    CCS,
    DEFAULT_CONFIG,
    ENGINES,
    EXPERIMENTS,
    FLOW_PORT,
    KERNEL_CCS,
    KERNEL_ENGINES,
    KEY,
    N_HOSTS,
    NS3_CC,
    PROTOCOLS,
    SCHEMA,
    UNCOUPLED,
    WORKER_HOSTS,
    P1Config,
    engine_family,
    engine_label,
    record_cc,
)
from tcpmodels.experiments.p1.dataset import build_dataset
from tcpmodels.experiments.p1.kernel import (
    KernelSession,
    host_addr,
    kernel_flows,
    kernel_rows,
    socket_cc,
    subflow_stats,
)
from tcpmodels.experiments.p1.ns3 import ns3_config, ns3_rows, run_ns3
from tcpmodels.experiments.p1.runs import check_kernel_ccs, run_campaign
from tcpmodels.experiments.p1.schedule import run_plan, schedule

__all__ = ["P1Config", "DEFAULT_CONFIG", "EXPERIMENTS", "PROTOCOLS", "ENGINES", "schedule", "run_plan",
           "run_campaign", "build_dataset", "subflow_stats", "kernel_flows", "host_addr", "KernelSession",
           "ns3_config", "run_ns3", "ns3_rows", "kernel_rows", "N_HOSTS", "AGGREGATOR_HOSTS", "WORKER_HOSTS",
           "BG_PORT", "FLOW_PORT", "SCHEMA", "KEY", "CCS", "KERNEL_CCS", "NS3_CC", "UNCOUPLED", "record_cc",
           "socket_cc", "CcMapWatch", "check_kernel_ccs", "KERNEL_ENGINES", "engine_label", "engine_family", "main"]


#: ``main(argv=None) -> exit status``: the command line ``python -m`` runs (this package's ``__main__``)
main = package_main(__name__)
