"""ns-3 against the real kernel on one dumbbell: does each flow get the same throughput? (issue #5, item 5)

The same scenario runs on both engines (:data:`SCENARIOS`; the all-Reno one
separates what the engines share, links, queues, Reno and its RTT unfairness,
from their two CUBIC implementations):

- three senders with round-trip propagation delays of 10, 20 and 40 ms,
  running Reno, CUBIC and Reno (kernel ``reno``/``cubic`` set per socket;
  ns-3 ``TcpLinuxReno``/``TcpCubic``), each uploading to one receiver through
  a shared 50 Mbit/s bottleneck with a 125 kB drop-tail buffer (one BDP at
  20 ms);
- every flow starts at a random offset in ``[0, start_jitter_s]`` (the same
  offsets for both engines within a repetition) and all stop together,
  ``duration_s`` after the latest possible start;
- throughput of each flow over the common interval from ``warmup_s`` after
  the latest start to the end: kernel from ``tcpi_bytes_acked`` sampled every
  ``sample_interval_s`` on each sender, ns-3 from the bytes each sink received
  (:meth:`tcpmodels.sim.run.SimResult.throughput_bps`).

Agreement criterion (stated before measuring, :attr:`SvkConfig.tolerance_share`):
for every flow, the mean over repetitions of its share of the bottleneck
rate differs between the engines by at most 0.10 (5 Mbit/s at 50 Mbit/s), and
the engines' mean aggregate utilisations differ by at most 0.05. The spread
between repetitions of one engine is reported beside it, so a difference can
be read against the engine's own run-to-run variation. The verdicts (TOST on Welch's t over the
runs, these tolerances the margins) are made by :func:`tcpmodels.papers.sim_vs_kernel.claims`.

Known differences between the engines (not modelled away): the kernel delays
ACKs (quick-ACK heuristics, about one ACK per two segments in steady state)
where ns-3 acknowledges every segment here (``delayed_ack_count=1``, see
"Known artifact: RTO lock-out" in :mod:`tcpmodels.sim`); the kernel's
bottleneck is ``tbf`` (6250-byte burst) feeding a ``bfifo`` whose limit counts
Ethernet frames, ns-3's a point-to-point device whose queue counts IP packets;
kernel CUBIC is Linux's (HyStart, fast convergence), ns-3's ``TcpCubic``
its own implementation of RFC 8312; the kernel's access links carry the
userspace delay element, which adds up to about 0.1 ms of jitter.

ns-3 has no such jitter: links, queues and clocks are exact, so ACK-clocked
flows meet the full drop-tail queue with fixed phases and which flow loses
depends on the RTTs to a fraction of a packet time (Floyd and Jacobson's
phase effects [4]). The ``reno_reno_reno_nudged`` scenario (ns-3 only)
probes this by lengthening one RTT by half a packet time.

Records go to a JSONL file (one line per engine and repetition) and a rerun
resumes. Kernel samples take the host lock each
(:func:`tcpmodels.testbed.hostlock.host_lock`) and build their own testbed;
ns-3 samples run one at a time (:func:`tcpmodels.sim.run.run_config`, a fresh
process each).

Command line::

    python -m tcpmodels.experiments.sim_vs_kernel run --records runs/sim_vs_kernel/samples.jsonl
    python -m tcpmodels.experiments.sim_vs_kernel run --scenario reno_reno_reno --records runs/sim_vs_kernel/reno.jsonl
    python -m tcpmodels.experiments.sim_vs_kernel run --scenario reno_reno_reno_locked --engines ns3 \\
        --records runs/sim_vs_kernel/reno_locked.jsonl
    python -m tcpmodels.experiments.sim_vs_kernel run --scenario reno_reno_reno_nudged --engines ns3 \\
        --records runs/sim_vs_kernel/reno_nudged.jsonl
    python -m tcpmodels.experiments.sim_vs_kernel dataset --out data/datasets --records \\
        runs/sim_vs_kernel/samples.jsonl runs/sim_vs_kernel/reno.jsonl runs/sim_vs_kernel/reno_locked.jsonl \\
        runs/sim_vs_kernel/reno_nudged.jsonl

References
----------
.. [1] ns-3 Model Library, "TCP models in ns-3", https://www.nsnam.org/docs/models/html/tcp.html
.. [2] S. Ha, I. Rhee, L. Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", ACM SIGOPS OSR 42(5), 2008.
.. [3] T. V. Lakshman, U. Madhow, "The performance of TCP/IP for networks with high bandwidth-delay products
   and random loss", IEEE/ACM ToN 5(3), 1997 (Reno's throughput falls with RTT at a shared drop-tail queue).
.. [4] S. Floyd, V. Jacobson, "On traffic phase effects in packet-switched gateways", Internetworking:
   Research and Experience 3(3), 1992.
"""

from tcpmodels.experiments.cli import package_main
from tcpmodels.experiments.sim_vs_kernel.compare import agreement, flow_frame
from tcpmodels.experiments.sim_vs_kernel.config import DEFAULT_CONFIG, KEY, NS3_VARIANT, SCENARIOS, SCHEMA, SvkConfig
from tcpmodels.experiments.sim_vs_kernel.dataset import build_dataset, load_dataset
from tcpmodels.experiments.sim_vs_kernel.runs import (
    ns3_config,
    plan,
    run_campaign,
    run_kernel_sample,
    run_ns3_sample,
    summarize_flows,
)

__all__ = ["SvkConfig", "DEFAULT_CONFIG", "plan", "ns3_config", "summarize_flows", "run_kernel_sample",
           "run_ns3_sample", "run_campaign", "flow_frame", "agreement", "build_dataset", "load_dataset",
           "NS3_VARIANT", "SCENARIOS", "KEY", "SCHEMA", "main"]


#: ``main(argv=None) -> exit status``: the command line ``python -m`` runs (this package's ``__main__``)
main = package_main(__name__)
