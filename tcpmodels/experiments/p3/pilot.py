"""Bottleneck pilot of the P3 kernel campaign: how fast a dumbbell the testbed carries without CPU-induced loss.

On the P3 dumbbell every packet of both flows passes a userspace delay element (one per
access link) and the ``tbf`` bottleneck. Loss that the queue causes is counted by the
bottleneck's qdiscs (``qdisc_drops`` of ``ra:bn``: the root ``tbf``'s counter, which includes
its drop-tail leaf's, each drop once; the shipped pilot of 2026-11-24 summed both counters and
holds each drop twice, see :class:`~tcpmodels.experiments.p3.config.P3Config`); loss the CPU causes shows up
elsewhere: the delay element's counters (``dropped_queue_full``: its slot ring was full,
``dropped_socket``: the kernel dropped frames because the element's receive buffer was
full, ``send_errors``, ``dropped_oversize``), the interfaces' ``rx_dropped`` /
``tx_dropped``, and qdisc drops on any link other than the bottleneck. :func:`run_pilot`
runs one Reno-CUBIC sample per rate (the kernel's ``cubic`` by default, or ``tm_cubic_x`` with
either reading of eq. (4): ``kind``; a short measured span) and
:func:`cpu_loss` adds those counters up; the fastest rate whose CPU-induced drops are zero
(and whose two flows fill the link) is the campaign's rate (``P3Config.rate_bps``).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, REPO, P3Config
from tcpmodels.experiments.p3.cpu_loss import CPU_TIME_COLUMNS, TCP_EXT_COLUMNS, cpu_loss
from tcpmodels.experiments.p3.kernel_session import kind_cc_params

__all__ = ["cpu_loss", "run_pilot"]

def run_pilot(rates_bps: list[float], *, measure_s: float = 60.0, reno_rtt_ms: float = 1.0,
              cubic_rtt_ms: float = 64.0, kind: str = "standard", config: P3Config = DEFAULT_CONFIG,
              out: str | Path | None = None, lock_timeout_s: float = 1800.0) -> list[dict]:
    """One Reno-CUBIC sample per bottleneck rate; the drops not caused by the queue.

    The buffer follows the rate (``buffer_bdp_fraction`` x BDP at ``buffer_ref_rtt_s``), as in
    the campaign. Each rate holds the host lock for its sample.

    Parameters
    ----------
    rates_bps : list of float
        Bottleneck rates to try. [bit/s]
    measure_s : float
        Measured span of each sample (after ``config.warmup_s``). [s]
    reno_rtt_ms, cubic_rtt_ms : float
        The RTT pair (default: the pair with the longest K). [ms]
    kind : str
        The CUBIC variant, as in the campaign: ``standard`` (the kernel's ``cubic``), ``multiply``
        or ``divide`` (``tm_cubic_x`` with that reading of eq. (4), loaded for the sample). The
        variants differ in CPU load: on the steered testbed ``divide`` overflowed the veths'
        backlogs at 400 Mbit/s where ``standard`` did not (``docs/CAMPAIGNS.md``).
    config : P3Config
        The rest of the setting.
    out : str or Path, optional
        JSON file for the results (written after every rate). Under the repository's ``data/`` it
        is shipped: a working tree with uncommitted changes is refused before anything runs
        (:func:`tcpmodels.records.shipped_git_state`).
    lock_timeout_s : float
        Longest wait for the host lock per rate. [s]

    Returns
    -------
    list of dict
        Per rate: ``rate_bps``, ``buffer_bytes``, ``kind``, ``reno_bps``, ``cubic_bps``, ``utilization``
        [-], retransmissions, ``rps_cpus`` (the testbed's RPS steering mask; None without),
        ``delay_element_cpus`` (link -> CPU of each pinned delay element; None unless pinned), the
        TcpExt columns of :data:`~tcpmodels.experiments.p3.cpu_loss.TCP_EXT_COLUMNS`, the CPU-time columns of
        :data:`~tcpmodels.experiments.p3.cpu_loss.CPU_TIME_COLUMNS` and ``cpu_time_s`` per CPU (where the
        host's CPUs spent the transfers: steal, softirq, idle, ... [s]), :func:`cpu_loss`'s
        fields as the sample counted them during the transfers (the delay elements' too, read
        without stopping them; until 2026-11-28 the pilot took the elements' totals since they
        started), the load averages before and after,
        ``wall_s``, ``started_utc``, ``git`` (the commit that ran, :func:`tcpmodels.records.git_state`)
        and ``host`` (:func:`tcpmodels.records.host_facts`).

    Raises
    ------
    tcpmodels.records.DirtyTreeError
        If ``out`` is shipped and the working tree is dirty.
    """
    from tcpmodels.experiments.p3.kernel import kernel_frame
    from tcpmodels.experiments.p3.kernel_session import KernelSession
    from tcpmodels.records import Stopwatch, git_state, host_facts, load_average, shipped_git_state, utc_now
    from tcpmodels.testbed.hostlock import host_lock

    kind_cc_params(kind, config)  # an unknown kind fails here, before the lock and the testbed
    git = shipped_git_state(REPO, Path(out).parent) if out is not None else git_state(REPO)
    host = host_facts()
    results = []
    for rate in rates_bps:
        cfg = replace(config, rate_bps=float(rate), measure_s=float(measure_s), kernel_kinds=(kind,))
        with host_lock(timeout_s=lock_timeout_s, holder=f"p3 pilot {kind} {rate / 1e6:g} Mbit/s"):
            watch, started, load = Stopwatch(), utc_now(), load_average()
            ses = KernelSession(cfg, reno_rtt_ms, cubic_rtt_ms, kind).__enter__()
            try:
                rec = ses.run(0.0, 0.0)  # its drops: counted around the transfers, delay elements included
            finally:
                ses.__exit__(None, None, None)
            wall = watch.elapsed_s
        rec.update({"campaign": "p3_pilot", "rep": 0, "kind": kind, "reno_rtt_ms": reno_rtt_ms,
                    "cubic_rtt_ms": cubic_rtt_ms, "order": 0, "reno_start_s": 0.0, "cubic_start_s": 0.0,
                    "load_avg": load, "wall_s": wall, "started_utc": started, "rate_bps": cfg.rate_bps,
                    "buffer_bytes": cfg.buffer_bytes, "warmup_s": cfg.warmup_s, "measure_s": cfg.measure_s})
        row = kernel_frame([rec], cfg).iloc[0].to_dict()
        res = {"rate_bps": cfg.rate_bps, "buffer_bytes": cfg.buffer_bytes, "kind": kind, "reno_rtt_ms": reno_rtt_ms,
               "cubic_rtt_ms": cubic_rtt_ms, "measure_s": row.get("span_s"), "reno_bps": row.get("reno_bps"),
               "cubic_bps": row.get("cubic_bps"), "utilization": row.get("total_bps", float("nan")) / cfg.rate_bps,
               "reno_retrans": row.get("reno_retrans"), "cubic_retrans": row.get("cubic_retrans"),
               "rps_cpus": rec.get("rps_cpus"), "delay_element_cpus": rec.get("delay_element_cpus"), **{k: row.get(k) for k in TCP_EXT_COLUMNS},
               **{k: row.get(k) for k in CPU_TIME_COLUMNS}, "cpu_time_s": rec.get("cpu_time_s"),
               **{k: v for k, v in rec["drops"].items() if k != "counting"}, "cpu_drops": row.get("cpu_drops"),
               "load_avg_before": load, "load_avg_after": load_average(),
               "wall_s": round(wall, 1), "started_utc": started, "error": row.get("error"), "git": git,
               "host": host}
        results.append(res)
        if out is not None:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            Path(out).write_text(json.dumps(results, indent=1, default=str) + "\n")
    return results
