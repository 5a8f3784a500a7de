"""P5 on the real kernel: heavy-tailed downloads through a testbed bottleneck, and the Hurst exponent of the capture.

P5 (Ono, Nakashima) predicts that traffic made of sessions with Pareto(alpha)
sizes is self-similar with ``H = (3 - alpha) / 2``. The ns-3 campaign
(:mod:`tcpmodels.experiments.p5.runs`) measures that in simulation; this module
measures it on Linux's own TCP: downloads arrive as a Poisson process, each of
a Pareto(alpha)-distributed size, and run Reno (the kernel's counterpart of
P5's NewReno) from the server ``s`` to the client ``c`` of
:func:`tcpmodels.testbed.single_link` through one drop-tail bottleneck (tbf)
and the delay element. tcpdump captures the server side of the bottleneck
link (egress packets are seen as the qdisc releases them, so the series is the
bottleneck's output, as P5 counts at G1). The capture is read with
:func:`tcpmodels.traces.read_pcap`, the server's packets are counted per bin
(:func:`tcpmodels.experiments.p5.counts.packet_counts`) and every estimator of
:func:`tcpmodels.models.hurst.estimate_all` is applied.

Why Poisson arrivals of Pareto sessions should give ``(3 - alpha) / 2``: the
number of sessions active at time t is an M/G/infinity process, whose
covariance decays as ``k^(1 - alpha)`` when session lengths are Pareto(alpha),
1 < alpha < 2 (Cox 1984; Taqqu and Levy 1986). Sessions that share one
bottleneck are processor-sharing rather than infinite-server, so the rate per
session is not constant; how far that moves H is part of what is measured.

The setting is :class:`~tcpmodels.experiments.p5.kernel_config.TestbedP5Config`, the dataset
:mod:`~tcpmodels.experiments.p5.kernel_dataset`. Usage (root; about ``duration_s`` + 20 s per alpha)::

    python -m tcpmodels.experiments.p5 kernel --runs runs/p5_testbed
    python -m tcpmodels.experiments.p5 kernel-dataset --runs runs/p5_testbed --out data/datasets

``kernel`` is resumable: an (alpha, seed) already in ``<runs>/records.jsonl`` is skipped, and with
``--skip-shipped`` so is one already in the shipped ``p5_testbed_hurst.parquet``; ``kernel-dataset``
keeps the shipped rows of runs the records lack (the raw records of earlier sessions may be
gone) and ships the records gzipped (``p5_testbed_records.jsonl.gz``).

References
----------
.. [1] A. Ono, T. Nakashima, "Self-similar トラフィックの重なりによるボトルネックパフォーマンスの評価" (evaluation of bottleneck performance under
   multiplexing self-similar traffics), Kyushu Tokai University, Sec. 2 and Sec. 4.
.. [2] D. R. Cox, "Long-range dependence: a review", in Statistics: An Appraisal, 1984.
.. [3] W. E. Leland, M. S. Taqqu, W. Willinger, D. V. Wilson, "On the self-similar nature of
   Ethernet traffic (extended version)", IEEE/ACM ToN 2(1), 1994.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.campaign import run_samples
from tcpmodels.experiments.p5.kernel_config import (
    DEFAULT_KERNEL_CONFIG,
    TESTBED_SERVER_ADDR,
    TestbedP5Config,
    counts_name,
    kernel_records,
)
from tcpmodels.records import git_state, host_facts, load_average, utc_now

__all__ = ["run_alpha", "run_kernel_campaign"]


def run_alpha(config: TestbedP5Config, alpha: float, runs_dir: str | Path, seed: int = 0, *,
              keep_flow_order: bool = False) -> dict:
    """One testbed run at Pareto shape ``alpha``; writes its count series (``.npy``) and returns the run record.

    The caller holds the host lock (:func:`run_kernel_campaign` does) and appends the record.
    The capture the series is counted from is deleted after the count.

    Parameters
    ----------
    config : TestbedP5Config
        Bottleneck, workload, duration, bin and seed of the campaign.
    alpha : float
        Pareto shape of the download sizes, one of ``config.alphas`` (its index there sets
        the workload seed). [-]
    runs_dir : str or Path
        Campaign folder (created if missing); receives the count series
        (``alpha<a>_counts.npy`` for run 0, ``alpha<a>_s<seed>_counts.npy`` after).
    seed : int
        Run seed ``r``: the workload's seed is ``config.seed + i + 1000 r`` (alpha index i).
    keep_flow_order : bool
        Steer the veths with RPS (:class:`tcpmodels.testbed.Testbed` ``keep_flow_order``); the
        record's ``rps_cpus`` holds the mask (None: the unsteered testbed the shipped runs used).

    Returns
    -------
    dict
        The record as JSON will hold it: ``alpha``, ``seed``, the config, planned and completed
        downloads, capture statistics, ``packets_in_series``, ``utilisation`` [-] of the
        bottleneck over the run, the Hurst estimates of every estimator, the predicted
        H = (3 - alpha) / 2, ``rps_cpus``, ``tcp_ext`` (the server's and the client's TcpExt
        counters that moved during the downloads: reordering events, DSACKs, retransmissions),
        host facts, times and ``wall_s`` [s].

    Raises
    ------
    ValueError
        If ``alpha`` is not one of ``config.alphas`` (two alphas would otherwise share a workload seed).
    tcpmodels.testbed.PrivilegeError
        Without root.
    """
    if not any(np.isclose(alpha, a) for a in config.alphas):
        raise ValueError(f"alpha [-] must be one of config.alphas {tuple(config.alphas)}; got {alpha!r}")
    from tcpmodels.experiments.p5.counts import packet_counts
    from tcpmodels.models.heavytail import hurst_from_alpha
    from tcpmodels.models.hurst import estimate_all
    from tcpmodels.testbed import PathSpec, Testbed, single_link, tool_versions
    from tcpmodels.testbed import workload as wl
    from tcpmodels.testbed.capture import start_capture
    from tcpmodels.testbed.netns import tcp_ext_delta
    from tcpmodels.traces import read_pcap

    runs_dir = Path(runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    index = int(np.flatnonzero(np.isclose(alpha, np.asarray(config.alphas, dtype=float)))[0])
    workload_seed = config.seed + index + 1000 * int(seed)
    rng = np.random.default_rng(workload_seed)
    flows = wl.poisson_flows(rng=rng, first_id=1, arrival_rate_per_s=config.arrival_rate_per_s,
                             duration_s=config.duration_s, dst=TESTBED_SERVER_ADDR, cc=config.cc, direction="download",
                             size_dist={"kind": "pareto", "mean_bytes": config.mean_size_bytes, "alpha": alpha})
    topo = single_link(PathSpec(rate_bps=config.rate_bps, rtt_s=config.rtt_s, buffer_bytes=config.buffer_bytes))
    pcap = runs_dir / f"alpha{alpha:.2f}.pcap"
    rec: dict = {"alpha": float(alpha), "seed": int(seed), "workload_seed": workload_seed, "config": config.to_dict(), "started_utc": utc_now(),
                 "load_avg_before": load_average(), "n_flows_planned": len(flows),
                 "planned_bytes": int(sum(f["size_bytes"] for f in flows))}
    t0 = time.monotonic()
    with Testbed(topo, seed=workload_seed, keep_flow_order=keep_flow_order) as tb:
        rec["testbed_run_id"] = tb.run_id
        rec["rps_cpus"] = tb.rps_cpus
        server = wl.start_server(tb, "s")
        wl.ping_rtt(tb, "c", TESTBED_SERVER_ADDR, count=3, interval_s=0.01)  # ARP resolved before the first download
        cap = start_capture(tb, "s", "p0", pcap, snaplen_bytes=96, bpf_filter=f"src host {TESTBED_SERVER_ADDR} and tcp")
        tcp0 = {n: tb.tcp_ext_counters(n) for n in ("s", "c")}
        launched_epoch_s = time.time()
        records = wl.run_flows(tb, "c", flows, timeout_s=config.duration_s + 900)
        time.sleep(0.3)
        rec["tcp_ext"] = {n: tcp_ext_delta(tcp0[n], tb.tcp_ext_counters(n)) for n in ("s", "c")}
        rec["capture"] = cap.stop()
        server.stop()
    rec["wall_s"] = round(time.monotonic() - t0, 1)
    rec["delay_elements"] = tb.delay_stats
    errors = [r for r in records if r.get("error")]
    rec["flows"] = {"n": len(records), "errors": len(errors), "first_errors": [r["error"] for r in errors[:5]],
                    "bytes": int(sum(r.get("bytes", 0) or 0 for r in records))}
    packets = read_pcap(pcap)
    acct = packets.attrs.get("accounting")
    rec["read_accounting"] = acct.to_dict() if hasattr(acct, "to_dict") else str(acct)
    # series from the launch of the flow schedule: arrival times are relative to it
    shifted = packets.assign(timestamp_s=packets["timestamp_s"] - launched_epoch_s)
    counts = packet_counts(shifted, bin_s=config.bin_s, duration_s=config.duration_s, src_addr=TESTBED_SERVER_ADDR)
    rec["packets_in_series"] = int(counts.sum())
    t = shifted["timestamp_s"].to_numpy()
    in_window = (shifted["src_addr"].astype(str) == TESTBED_SERVER_ADDR).to_numpy() & (t >= 0) & (t < config.duration_s)
    rec["utilisation"] = float(shifted["wire_bytes"].to_numpy()[in_window].sum() * 8 / (config.rate_bps * config.duration_s))
    hurst = estimate_all(counts.astype(float)).reset_index()
    rec["hurst"] = hurst.to_dict(orient="records")
    rec["predicted_hurst"] = float(hurst_from_alpha(alpha))
    rec["host"] = {**host_facts(), **tool_versions()}
    rec["finished_utc"] = utc_now()
    np.save(runs_dir / counts_name(alpha, int(seed)), counts)
    pcap.unlink(missing_ok=True)  # the count series is the dataset; a 200 s capture is ~10 MB compressed
    return json.loads(json.dumps(rec, default=str))  # what the JSONL record will hold


def run_kernel_campaign(runs_dir: str | Path, config: TestbedP5Config = DEFAULT_KERNEL_CONFIG, *, progress: bool = True,
                 skip: set | frozenset = frozenset()) -> int:
    """Run every (alpha, seed) not yet in ``<runs_dir>/records.jsonl`` through the one campaign loop; return how many ran.

    :func:`tcpmodels.experiments.campaign.run_samples` holds the host lock for each
    run, appends each record durably, resumes where a killed campaign stopped and
    shows the progress bar. Each record carries ``git``: the commit (and dirty flag) of the
    code that ran it.

    Parameters
    ----------
    runs_dir : str or Path
        Campaign folder: ``records.jsonl`` and the count series.
    config : TestbedP5Config
        The campaign; one run per ``config.seeds`` and ``config.alphas`` (seed by seed).
    progress : bool
        tqdm bar on stderr.
    skip : set of tuple
        ``(alpha, seed)`` pairs not to run, e.g. :func:`~tcpmodels.experiments.p5.kernel_dataset.shipped_kernel_keys` of the shipped dataset.

    Returns
    -------
    int
        Runs made by this call.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed runs in a row.
    """
    runs_dir = Path(runs_dir)
    plan = [{"alpha": float(a), "seed": int(r)} for r in config.seeds for a in config.alphas
            if (float(a), int(r)) not in skip]
    code = git_state(REPO_ROOT)  # the code that ran: each record carries it
    return run_samples(kernel_records(runs_dir), plan,
                       lambda s, _session: {**run_alpha(config, s["alpha"], runs_dir, s["seed"]), "git": code},
                       desc="p5 testbed", progress=progress, lock_timeout_s=3600.0, unit="run")
