"""Campaign of paper P3 (Kozu, Yamaguchi): one Reno and one CUBIC flow sharing a bottleneck, per RTT pair.

Three engines measure the same grid, Reno RTT in {1, 4, 16} ms x CUBIC RTT in
{1, 4, 16, 64} ms (paper Figs. 3-5), each at its own bottleneck rate with the same
buffer rule (kernel ``P3Config.rate_bps``, 400 Mbit/s; ns-3 ``P3Config.ns3_rate_bps``,
100 Mbit/s; the fluid model at both):

``kernel``
    The real Linux stack in network namespaces
    (:func:`~tcpmodels.testbed.topologies.dumbbell`): sender ``s0`` runs
    ``reno``, sender ``s1`` ``cubic`` (``TCP_CONGESTION`` per socket, read back
    from the kernel), both upload to one receiver ``d`` through a shared ``tbf``
    bottleneck; each sender's RTT is set by the delay element on its access
    link. The receiver's ``tcp_rmem`` maximum is 10 MB (the paper's receive
    window); ``tcp_no_metrics_save`` is on so no sample inherits the ssthresh
    cached by the previous one. Throughput comes from ``tcpi_bytes_acked``
    sampled every ``sample_interval_s`` on each sender, over the common interval
    from ``warmup_s`` after the later start to the earlier end (>= ``measure_s``).
    The host lock is taken per sample (one RTT pair, one repetition).
``ns3``
    The same dumbbell in ns-3 (:class:`tcpmodels.sim.config.Dumbbell`):
    ``TcpLinuxReno`` against ``TcpCubic`` (standard) and against
    ``TcpCubicX`` with K scaled by x(RTT) in each reading of eq. (4)
    (``multiply``/``divide``, :mod:`tcpmodels.sim.cc`), x(RTT) a power law
    through (1 s, 1) with exponent ``x_exponent`` (default -1/3: the line through
    (1 ms, 10) and (1000 ms, 1) read off Fig. 2, an assumption). HyStart is off
    in both CUBICs so they differ only in K. Runs go through
    :func:`tcpmodels.sweep.sweep` (cached, resumable) with one worker, in
    phases of decreasing priority (:data:`NS3_PHASES`).
``fluid``
    :func:`tcpmodels.models.bottleneck.reno_cubic_bottleneck` for the same pairs
    and readings at each engine's rate, the explanatory third column, compared with
    each engine at that engine's rate (cheap: the ``fluid`` command, or ``dataset``).

Every flow starts at a random offset in ``[0, start_jitter_s]`` (drawn per
sample and seed) so that repetitions do not replay one phase of the two
sawtooths.

Scaling (:meth:`P3Config.scaling`): 400 Mbit/s instead of the paper's 1 Gbit/s
(the plots' axes reach 600-800 Mbit/s), the fastest rate at which the bottleneck
pilot saw no CPU-induced loss (:mod:`~tcpmodels.experiments.p3.pilot`, stated in
:class:`P3Config`); the first campaign (kernel 36 samples, ns-3 96 runs, shipped)
ran at 100 Mbit/s because ns-3 needs about 1.5 wall seconds per simulated second
there, and the ns-3 grid stays at 100 Mbit/s (``ns3_rate_bps``: at 400 Mbit/s the grid to
the kernel's standard is estimated at ~72 h of one core). The buffer is one BDP at the
largest Reno RTT (16 ms: 800 kB at 400 Mbit/s, 200 kB at 100 Mbit/s).
Windows are 2.5 times smaller than at 1 Gbit/s for the same RTTs, so K =
cbrt(W_max (1 - beta_cubic) / C) is about 2.5^(1/3) = 1.36 times smaller, and
more of the grid lies in CUBIC's Reno-friendly region (which takes over when
the Reno-equivalent window grows faster than the cubic curve, i.e. for small
W_max and small RTT). The measured span (175 s) covers 10 epochs of the longest
K (``scaling()["measure_s_for_10_epochs"]``).

The ns-3 grid runs in order of priority (``--phases``, ``--kinds``,
``--reno-rtts-ms`` select a part) and the dataset holds whatever the cache and the
shipped records have. It exists in two named settings (:func:`ns3_setting`, ``--setting``):
``short``, the 20 s grid shipped first (15 s measured: 2-3 CUBIC epochs of the longest K;
seeds 0-2 and the x(RTT)-exponent phases), and ``long``, 5 s warm-up + 110 s measured =
115 s simulated, ``scaling()["ns3"]``: 10 x the longest K of a flow alone at ns-3's 100 Mbit/s
(CUBIC 64 ms, ``multiply``: 10.9 s), 10 seeds, main phases seed by seed (360 runs). The
settings differ in the simulated duration, so their scenarios, cache entries and run ids
(:func:`ns3_run_id`, ``d20-...`` / ``d115-...``) differ. Every finished run is kept as a raw
record (:func:`ns3_record`: per-second bytes of each flow, losses, versions, wall time) in
``data/datasets/p3_ns3_records.jsonl.gz``; the ``dataset`` command merges the cache, those
records and the shipped table by run id (:func:`merge_ns3`), and the ``ns3`` command leaves out
the runs already in the shipped records, so a campaign resumes on a fresh machine from what is
committed. ``ns3-pilot`` reruns chosen runs with window tracing and counts the CUBIC flow's
epochs (:mod:`~tcpmodels.experiments.p3.ns3_pilot`; shipped as ``p3_ns3_pilot.json``). The
paper's tables read one setting (:func:`tcpmodels.papers.p3_cubic_fairness.ns3_settings`).

Modules: :mod:`~tcpmodels.experiments.p3.config` (the scaled setting),
:mod:`~tcpmodels.experiments.p3.kernel` (the kernel grid, its runner and its table),
:mod:`~tcpmodels.experiments.p3.kernel_session` (the kernel testbed of a sample),
:mod:`~tcpmodels.experiments.p3.cpu_loss` (loss outside the bottleneck queue, and its repeats),
:mod:`~tcpmodels.experiments.p3.ns3` (the ns-3 grid, cached; its records),
:mod:`~tcpmodels.experiments.p3.ns3_pilot` (epochs of traced runs), :mod:`~tcpmodels.experiments.p3.fluid`,
:mod:`~tcpmodels.experiments.p3.dataset` (Parquet + provenance; how long the engines took
on the machine that made the shipped data is in ``p3_provenance.json``, ``run_notes``) and the
command line in ``__main__``.

Command line (``kernel`` needs root)::

    python -m tcpmodels.experiments.p3 pilot --rates-mbps 100 200 400 --measure-s 60 --out runs/p3/pilot.json
    python -m tcpmodels.experiments.p3 kernel --kinds standard multiply divide --reps 1 --records runs/p3/kernel_x.jsonl
    python -m tcpmodels.experiments.p3 ns3 --cache runs/p3/ns3_cache --phases main0 slider0 main1
    python -m tcpmodels.experiments.p3 ns3 --cache runs/p3/ns3_cache --phases main1 --kinds standard divide --reno-rtts-ms 1
    python -m tcpmodels.experiments.p3 ns3-pilot --setting long --pairs 16:64 4:64 --kind multiply --out runs/p3/ns3_pilot.json
    python -m tcpmodels.experiments.p3 ns3 --setting long --cache runs/p3/ns3_cache --limit 40
    python -m tcpmodels.experiments.p3 fluid --out runs/p3/fluid.parquet
    python -m tcpmodels.experiments.p3 dataset --records runs/p3/kernel_x.jsonl --cache runs/p3/ns3_cache \
        --fluid runs/p3/fluid.parquet --out data/datasets
    python -m tcpmodels.experiments.p3 dataset --cache runs/p3/ns3_cache --keep-fluid --out data/datasets

The kernel records are shipped gzipped in parts written once (``data/datasets/p3_kernel_x_records.jsonl.gz``,
then ``..._part02.jsonl.gz`` and on: :mod:`tcpmodels.records.parts`); on a fresh machine
``python -m tcpmodels records cat data/datasets/p3_kernel_x_records > runs/p3/kernel_x.jsonl`` and the
``kernel`` command resumes. The dataset keeps the first campaign's 36 kernel rows (standard, 100 Mbit/s; raw
records gone) and the rows of the shipped ns-3 table whose runs have no record (the 20 s grid: 96 runs at
100 Mbit/s, raw runs gone).

References
----------
.. [1] T. Kozu, S. Yamaguchi, "Improvement of TCP Fairness with Controlling Congestion Windows Size
   Recovery Time", FIT2013, L-033, Figs. 1-5.
.. [2] RFC 9438, "CUBIC for Fast and Long-Distance Networks".
.. [3] R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination for Resource
   Allocation in Shared Computer Systems", DEC-TR-301, 1984.
"""

from tcpmodels.experiments.cli import package_main
from tcpmodels.experiments.p3.config import (
    DEFAULT_CONFIG,
    NS3_KINDS,
    NS3_PHASES,
    NS3_SETTINGS,
    SCHEMA,
    P3Config,
    kernel_campaign_label,
    ns3_phases,
    ns3_setting,
    ns3_setting_phases,
)
from tcpmodels.experiments.p3.cpu_loss import (
    CPU_TIME_COLUMNS,
    REPEAT_SUFFIX,
    cpu_loss_repeat_plan,
    record_cpu_drops,
    record_cpu_time_s,
)
from tcpmodels.experiments.p3.dataset import build_dataset, merge_ns3, read_ns3_records, write_ns3_records
from tcpmodels.experiments.p3.fluid import fluid_frame
from tcpmodels.experiments.p3.kernel import (
    KERNEL_KEY,
    TESTBEDS,
    kernel_frame,
    kernel_plan,
    run_kernel_campaign,
    summarize_flow_samples,
)
from tcpmodels.experiments.p3.kernel_session import KernelSession
from tcpmodels.experiments.p3.ns3 import (
    ns3_cached,
    ns3_config,
    ns3_frame,
    ns3_plan,
    ns3_record,
    ns3_records,
    ns3_row_run_id,
    ns3_run_id,
    ns3_summary,
    run_ns3,
)
from tcpmodels.models.fairness import jain_index

__all__ = ["P3Config", "DEFAULT_CONFIG", "NS3_PHASES", "NS3_KINDS", "NS3_SETTINGS", "SCHEMA", "KERNEL_KEY", "TESTBEDS", "kernel_campaign_label",
           "kernel_plan", "REPEAT_SUFFIX", "cpu_loss_repeat_plan", "record_cpu_drops",
           "CPU_TIME_COLUMNS", "record_cpu_time_s", "KernelSession", "run_kernel_campaign",
           "summarize_flow_samples", "kernel_frame", "ns3_plan",
           "ns3_config", "run_ns3", "ns3_frame", "ns3_setting", "ns3_phases", "ns3_setting_phases", "ns3_run_id",
           "ns3_row_run_id", "ns3_record", "ns3_records", "ns3_summary", "ns3_cached", "merge_ns3",
           "read_ns3_records", "write_ns3_records", "fluid_frame", "build_dataset", "jain_index", "main"]


#: ``main(argv=None) -> exit status``: the command line ``python -m`` runs (this package's ``__main__``)
main = package_main(__name__)
