"""Campaign of paper P2 (Hamazaki, Abe, Kato): probe and data throughput of MPTCP over two paths.

What one *sample* measures (one RTT pair, one repetition), in the paper's
direction client -> server (uploads), with the kernel's own MPTCP (v1, default
packet scheduler) and one congestion control on every socket (``--cc``):
``cubic``, uncoupled per subflow (the 256 samples shipped first), or the BPF
coupled ``tm_lia`` / ``tm_olia`` (:mod:`tcpmodels.testbed.kernel_cc`, registered
for the campaign; ``ss`` in the client's namespace records which congestion
control each subflow of the data transfer ran):

1. ``path_probe``: per-path single-path TCP probes, the two paths at once (the
   paths are disjoint), of 64, 128 and 256 KB per path -- totals 128/256/512 KB
   of Table 3. The 64 KB probe on path 1 doubles as the TCP probe of Table 2's
   TCP row.
2. ``mptcp_probe``: single MPTCP probes of each size of Tables 2 and 4
   (paper: 64 KB ... 128 MB; here scaled, see :class:`P2Config`).
3. ``mptcp_data``: the MPTCP data transfer.
4. ``tcp_data``: a single-path TCP data transfer of the same size on path 1 (Table 2, TCP row).

Each transfer's throughput is ``size / (t_last - t_conn)``: from ``connect()``
returning (handshake done) on the client to the last byte read by the server,
the same definition for probes and data (the traffic module's ``rate_bps``).
Bytes per path come from the client's interface counters (``/proc/net/dev``
in its namespace) read before and after each transfer; MPTCP's subflow-1 share
is the path-1 share of those bytes (headers included, the same on both paths).

The topology is :func:`~tcpmodels.testbed.topologies.two_path` with the delay
element. One testbed serves a whole campaign: between samples only the two delay
elements are restarted with the next sample's RTTs (:meth:`Session.set_rtts`).
Each sample (RTT change, measurement) runs inside the host lock
(:func:`tcpmodels.testbed.hostlock.host_lock`), released between samples so that
another campaign can interleave. ``tcp_rmem``/``tcp_wmem`` maxima are raised to
200 MB in both namespaces as in the paper (Table 1). Samples run one repetition
of the whole grid (shuffled) before the next, so a campaign cut short still
covers the grid evenly.

Scaling (:class:`P2Config`, :meth:`P2Config.scaling`): paths of 20 Mbit/s with a
375 kB drop-tail buffer (one BDP at 150 ms) instead of 1 Gbit/s; 4 MB data instead
of 256 MB, which keeps data / (2 x BDP at 150 ms) at 5.6 (paper about 7); probes of
64-512 KB as printed (they concern the handshake and first round trips, which do
not scale), the four larger MPTCP probes (2, 8, 32, 128 MB in the paper) spaced
geometrically from 768 KB to half the data size (128 MB is half of 256 MB).
How long a sample took on the machine that made the shipped data is in
``p2_provenance.json`` (``run_notes``, and ``sample_wall_s``).

Each sample also states the regime issue 17 asks for (:func:`add_conditions`):
data size / the larger path's BDP (>= 10), MPTCP data throughput / the path
rate (> 1) and the share of the 64 KB probe's bytes on subflow 2 (< 5 %).

Records go to a JSONL file, one line per sample, keyed by :data:`SAMPLE_KEY`
(cc, data size, path rate, repetition, RTT pair); ``run`` resumes where a
file stops. ``sweep`` measures Fig. 4 (subflow-1 share versus transfer size for RTT pairs (150, 150), (150, 120), (120, 150) ms) and can keep captures.
``dataset`` turns the JSONL files into Parquet tables plus a provenance JSON.

Command line (root)::

    python -m tcpmodels.experiments.p2 run --records runs/p2/samples.jsonl
    python -m tcpmodels.experiments.p2 run --cc tm_lia --data-size-bytes 8388608 --rtts-ms 120 180 --records runs/p2/pilot.jsonl
    python -m tcpmodels.experiments.p2 sweep --records runs/p2/fig4.jsonl --captures data/captures
    python -m tcpmodels.experiments.p2 dataset --records runs/p2/samples.jsonl --sweep runs/p2/fig4.jsonl --out data/datasets

References
----------
.. [1] T. Hamazaki, H. Abe, K. Kato, "Linux MPTCP kernel のネットワークスループット予測に関する研究" (a study on network throughput
   prediction with the Linux MPTCP kernel), IPSJ SIG technical report, 2015, Tables 1-6, Fig. 4-8.
.. [2] Lee et al., history-based throughput prediction with SVR from a probe.
"""

from tcpmodels.experiments.cli import package_main
from tcpmodels.experiments.p2.config import (
    CONDITION_LIMITS,
    DEFAULT_CONFIG,
    FIG4_RTT_PAIRS_MS,
    PAPER_PROBE_LABELS,
    SAMPLE_FIELDS,
    SAMPLE_KEY,
    SCHEMA,
    SUBFLOW_CCS,
    TRANSFER_FIELDS,
    P2Config,
)
from tcpmodels.experiments.p2.dataset import (
    add_conditions,
    build_dataset,
    conditions_summary,
    samples_frame,
    sweep_frame,
)
from tcpmodels.experiments.p2.kernel import Session, measure, run_campaign, run_sweep
from tcpmodels.experiments.p2.plans import client_steps, sample_plan, sweep_steps

__all__ = ["P2Config", "DEFAULT_CONFIG", "sample_plan", "client_steps", "sweep_steps", "run_campaign", "run_sweep",
           "build_dataset", "samples_frame", "sweep_frame", "Session", "measure", "SAMPLE_FIELDS", "TRANSFER_FIELDS",
           "PAPER_PROBE_LABELS", "FIG4_RTT_PAIRS_MS", "SCHEMA", "SAMPLE_KEY", "SUBFLOW_CCS", "CONDITION_LIMITS",
           "add_conditions", "conditions_summary", "main"]


#: ``main(argv=None) -> exit status``: the command line ``python -m`` runs (this package's ``__main__``)
main = package_main(__name__)
