"""P3 on the real Linux stack: the plan of samples, the testbed session, the runner and the per-sample table."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd

from tcpmodels.datasets.p3 import REPEAT_SUFFIX as DATASET_REPEAT_SUFFIX
from tcpmodels.experiments.campaign import KERNEL_TESTBEDS, ServerTestbed, kernel_testbed_of, testbed_label
from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, REPO, SCHEMA, P3Config
from tcpmodels.models.fairness import jain_index
from tcpmodels.records_series import as_sample_list, pack_series
from tcpmodels.testbed import Topology
from tcpmodels.testbed.netns import delay_counter_delta, tcp_ext_delta

__all__ = ["TESTBEDS", "REPEAT_SUFFIX", "kernel_campaign_label", "record_cpu_drops", "cpu_loss_repeat_plan", "cpu_loss", "TCP_EXT_COLUMNS", "queue_drops_once", "DROPS_COUNTING", "KERNEL_KEY", "KIND_CC", "kind_cc_params", "kernel_plan", "KernelSession", "run_kernel_campaign", "summarize_flow_samples", "kernel_frame"]


# ---------------------------------------------------------------- kernel plan
#: the testbeds a kernel sample can have run on (:func:`tcpmodels.experiments.campaign.kernel_testbed_of`)
TESTBEDS = KERNEL_TESTBEDS


def kernel_campaign_label(keep_flow_order: bool, pin_delay_elements: bool = False) -> str:
    """The ``campaign`` field of a kernel sample's plan entry and record (part of :data:`KERNEL_KEY`).

    Parameters
    ----------
    keep_flow_order, pin_delay_elements : bool
        The testbed (``P3Config.kernel_keep_flow_order``, ``P3Config.kernel_pin_delay_elements``).

    Returns
    -------
    str
        ``"p3_kernel_pinned"`` with pinned delay elements, ``"p3_kernel_steered"`` with steering alone,
        else ``"p3_kernel"`` (the label of every sample before either).
    """
    return testbed_label("p3_kernel", keep_flow_order, pin_delay_elements)


def kernel_plan(config: P3Config) -> list[dict]:
    """Every kernel sample in run order: repetition 0 of all pairs (shuffled), then 1, ...

    Each pair runs its kinds (``config.kernel_kinds``) back to back, the order reversed
    every other pair so that consecutive samples share a kind: ``tm_cubic_x`` is loaded
    once for each block of samples of one reading, and a campaign stopped part-way leaves
    whole matched sets (every kind of a pair). Each sample carries the two flows' start
    offsets [s], drawn here per repetition and pair and shared by the kinds (the kinds of
    one pair and repetition differ only in the CUBIC variant), so a rerun repeats them.

    Parameters
    ----------
    config : P3Config
        The grid (``pairs_ms``), ``reps``, ``kernel_kinds``, ``start_jitter_s`` and the ``seed``
        of the order and offsets.

    Returns
    -------
    list of dict
        One per sample: ``campaign`` (:func:`kernel_campaign_label`: ``"p3_kernel"``, or
        ``"p3_kernel_steered"`` with ``config.kernel_keep_flow_order``, ``"p3_kernel_pinned"`` with
        ``config.kernel_pin_delay_elements`` too, so that the testbeds' samples of
        one repetition and pair are kept apart in one records file), ``rep``, ``kind``, ``reno_rtt_ms``,
        ``cubic_rtt_ms`` [ms], ``order``, ``reno_start_s``, ``cubic_start_s`` [s]. The order and offsets
        do not depend on the testbed: a steered sample repeats the unsteered one's offsets (a paired comparison).
    """
    import numpy as np

    rng = np.random.default_rng(config.seed)
    label = kernel_campaign_label(config.kernel_keep_flow_order, config.kernel_pin_delay_elements)
    pairs = config.pairs_ms
    plan = []
    for rep in range(config.reps):
        for i in rng.permutation(len(pairs)):
            reno, cubic = pairs[int(i)]
            off = rng.uniform(0.0, config.start_jitter_s, 2) if config.start_jitter_s > 0 else np.zeros(2)
            kinds = config.kernel_kinds if (len(plan) // len(config.kernel_kinds)) % 2 == 0 \
                else config.kernel_kinds[::-1]
            for kind in kinds:
                plan.append({"campaign": label, "rep": rep, "kind": kind, "reno_rtt_ms": reno,
                             "cubic_rtt_ms": cubic, "order": len(plan),
                             "reno_start_s": round(float(off[0]), 4), "cubic_start_s": round(float(off[1]), 4)})
    return plan


#: appended to a testbed's ``campaign`` label for a sample run again because it lost packets outside the
#: bottleneck queue (:func:`cpu_loss_repeat_plan`): repeats never share a key with the samples they repeat
REPEAT_SUFFIX = DATASET_REPEAT_SUFFIX


def record_cpu_drops(record: dict) -> int | None:
    """Packets a kernel sample lost outside the bottleneck queue (see :func:`cpu_loss`).

    Parameters
    ----------
    record : dict
        A record of :func:`run_kernel_campaign`.

    Returns
    -------
    int or None
        Other qdiscs', the interfaces' and (where read) the delay elements' drops [packets]; None for
        records before 2026-11-28, which did not count them.
    """
    d = record.get("drops") or {}
    if not d:
        return None
    elem = d.get("delay_element_drops")
    return int(d["other_qdisc_drops"] + d["interface_drops"] + (sum(elem.values()) if elem is not None else 0))


def cpu_loss_repeat_plan(records: list[dict], config: P3Config) -> list[dict]:
    """Run once more every sample of ``config``'s testbed that lost packets outside the bottleneck queue.

    Such loss comes from the host's CPUs, not from the congestion the paper studies. Each repeat keeps the
    sample's repetition, kind, RTT pair, order and start offsets (a paired comparison with the kinds that
    ran clean), so its record replaces the lossy one in a sensitivity view
    (:func:`tcpmodels.papers.p3_cubic_fairness.with_cpu_loss_repeated`); the shipped verdicts keep the
    plan's samples. A sample is repeated once: a repeat that loses packets too is recorded, not repeated.

    Parameters
    ----------
    records : list of dict
        Records of :func:`run_kernel_campaign` (repeats among them are skipped here and by the campaign's
        resume).
    config : P3Config
        The testbed (``kernel_keep_flow_order``, ``kernel_pin_delay_elements``) whose samples are repeated.

    Returns
    -------
    list of dict
        Plan entries in the original order, each with ``campaign`` = the testbed's label +
        :data:`REPEAT_SUFFIX`, the repeated sample's key fields and offsets, and ``repeats_started_utc``
        (when the repeated sample started).
    """
    label = kernel_campaign_label(config.kernel_keep_flow_order, config.kernel_pin_delay_elements)
    lossy = sorted((r for r in records if r.get("campaign") == label and (record_cpu_drops(r) or 0) > 0),
                   key=lambda r: r["order"])
    fields = ("rep", "kind", "reno_rtt_ms", "cubic_rtt_ms", "order", "reno_start_s", "cubic_start_s")
    return [{"campaign": label + REPEAT_SUFFIX, **{k: r[k] for k in fields}, "repeats_started_utc": r["started_utc"]}
            for r in lossy]


#: the congestion control of the CUBIC flow per kind (``tm_cubic_x`` with that ``reading``)
KIND_CC = {"standard": "cubic", "multiply": "tm_cubic_x", "divide": "tm_cubic_x"}


def kind_cc_params(kind: str, config: P3Config) -> dict | None:
    """The ``tm_cubic_x`` load parameters of a kind (None for ``standard``: the kernel's own ``cubic``).

    Parameters
    ----------
    kind : {"standard", "multiply", "divide"}
        The CUBIC variant.
    config : P3Config
        Its ``x_exponent``.

    Returns
    -------
    dict or None
        ``{"reading": kind, "x_exponent": config.x_exponent}``; the other parameters keep
        :data:`tcpmodels.testbed.kernel_cc.PARAMETERS`' defaults (C 0.4, beta 0.7, fast convergence
        and HyStart on, as the kernel's ``cubic``).

    Raises
    ------
    ValueError
        For an unknown kind.
    """
    if kind not in KIND_CC:
        raise ValueError(f"kind must be one of {tuple(KIND_CC)}; got {kind!r}")
    return None if kind == "standard" else {"reading": kind, "x_exponent": float(config.x_exponent)}


def _kernel_topology(config: P3Config, reno_rtt_ms: float, cubic_rtt_ms: float):
    from tcpmodels.testbed.topologies import dumbbell

    topo = dumbbell(access_rtts_s=(reno_rtt_ms * 1e-3, cubic_rtt_ms * 1e-3), bottleneck_rate_bps=config.rate_bps,
                    bottleneck_buffer_bytes=config.buffer_bytes)
    common = (("net.ipv4.tcp_no_metrics_save", "1"),)
    rcv = (("net.ipv4.tcp_rmem", f"4096 131072 {config.rwnd_bytes}"),)
    snd = (("net.ipv4.tcp_wmem", f"4096 16384 {4 * config.rwnd_bytes}"),)
    nodes = []
    for n in topo.nodes:
        extra = common + (rcv if n.name == "d" else snd if n.name.startswith("s") else ())
        nodes.append(replace(n, sysctls=n.sysctls + extra))
    return replace(topo, nodes=tuple(nodes))


#: TCP_INFO fields kept per kernel sample
_KEEP = ("t_s", "bytes_acked", "cwnd_segments", "ssthresh_segments", "srtt_s", "min_rtt_s", "total_retrans",
         "ca_state")

#: how a sample's TCP_INFO series is packed into its record (:func:`~tcpmodels.records_series.pack_series`,
#: lossless; records before 2026-11-29 14:00 UTC hold the plain list, and :func:`kernel_frame` reads both)
_PACKING = {"microsecond_fields": ("t_s", "srtt_s", "min_rtt_s"),
            "delta_fields": ("t_s", "bytes_acked", "cwnd_segments", "ssthresh_segments", "srtt_s", "min_rtt_s", "total_retrans")}


class KernelSession(ServerTestbed):
    """A running dumbbell testbed with a traffic server on the receiver, reused across samples.

    Between samples only the two access links' delay elements change
    (:meth:`set_rtts`), and the CUBIC variant (:meth:`set_kind`). ``tm_cubic_x`` is
    registered with the kind's reading for the span of one sample only (:meth:`run`,
    which the campaign calls holding the host lock) and unregistered after it, so
    another process that takes the lock between two samples (e.g. the
    ``kernel_coupled_cc`` validation with another reading) finds it free. Use as a
    context manager.
    """

    server_node = "d"
    port = 5301

    def __init__(self, config: P3Config, reno_rtt_ms: float, cubic_rtt_ms: float, kind: str = "standard"):
        self.config = config
        self.rtts_ms = (float(reno_rtt_ms), float(cubic_rtt_ms))
        kind_cc_params(kind, config)  # validates
        self.kind = kind
        self.keep_flow_order = config.kernel_keep_flow_order
        self.pin_delay_elements = config.kernel_pin_delay_elements

    def set_kind(self, kind: str) -> None:
        """Make the next samples' CUBIC flow run as ``kind``.

        Parameters
        ----------
        kind : {"standard", "multiply", "divide"}
            The CUBIC variant: the kernel's ``cubic``, or ``tm_cubic_x`` with that reading
            (registered by :meth:`run` for the sample).

        Raises
        ------
        ValueError
            For an unknown kind.
        """
        kind_cc_params(kind, self.config)
        self.kind = kind

    def topology(self) -> Topology:
        """The dumbbell at the session's current RTTs.

        Returns
        -------
        tcpmodels.testbed.Topology
            :func:`~tcpmodels.testbed.topologies.dumbbell` with the two senders' access RTTs,
            the configured bottleneck rate and buffer, the receive window on the receiver and
            no saved TCP metrics.
        """
        return _kernel_topology(self.config, *self.rtts_ms)

    def set_rtts(self, reno_rtt_ms: float, cubic_rtt_ms: float) -> None:
        """Change the two senders' round-trip delays [ms] (restarts their delay elements).

        Parameters
        ----------
        reno_rtt_ms, cubic_rtt_ms : float
            Round-trip propagation delay of the Reno and the CUBIC sender. [ms]
        """
        new = (float(reno_rtt_ms), float(cubic_rtt_ms))
        for i, (old_ms, new_ms) in enumerate(zip(self.rtts_ms, new)):
            if old_ms != new_ms:
                self.tb.set_link_delay(f"a{i}", new_ms * 1e-3 / 2)
        self.rtts_ms = new

    def run(self, reno_start_s: float = 0.0, cubic_start_s: float = 0.0) -> dict:
        """One sample at the current RTTs: Reno from ``s0`` and CUBIC from ``s1``, both for the same duration.

        Each flow lasts ``warmup_s + measure_s + start_jitter_s`` from its own start offset.

        Parameters
        ----------
        reno_start_s, cubic_start_s : float
            Start offset of each flow. [s]

        Returns
        -------
        dict
            ``run_id``, ``ping_rtt_ms`` (median ICMP RTT of each sender to the receiver before the
            transfers), ``kind``, ``drops`` (packets dropped during the transfers by the bottleneck's
            qdiscs, ``queue_drops``, each drop once: the root ``tbf``'s counter, which includes its
            drop-tail leaf's; and elsewhere: ``other_qdisc_drops``, ``interface_drops``, ``drops_by_link``, and
            the delay elements' ``delay_element_drops`` and ``delay_element_forwarded`` during the transfers,
            read without stopping them (since 2026-11-28); see :func:`cpu_loss`; ``counting`` =
            :data:`DROPS_COUNTING` marks records counted so), ``tcp_ext`` (the TcpExt counters that moved
            during the transfers on both senders and the receiver, :func:`~tcpmodels.testbed.netns.tcp_ext_delta`: node -> name -> count),
            ``cpu_time_s`` (where the host's CPUs spent the transfers, CPU -> ``/proc/stat`` field -> seconds,
            :func:`~tcpmodels.testbed.cpu_times.cpu_time_delta`: the hypervisor's ``steal``, ``softirq``,
            ``idle``, ...; since 2026-12-03),
            ``rps_cpus`` (the testbed's RPS mask, None without flow steering: ``config.kernel_keep_flow_order``),
            ``delay_element_cpus`` (link -> the CPU its delay element is pinned to; None unless
            ``config.kernel_pin_delay_elements``),
            ``cubic_cc_params`` (the parameters ``tm_cubic_x`` is registered
            with during the sample, read back from the loader's state; None for ``standard``), and ``flows``: per flow its record from the traffic client (``cc_effective``,
            ``start_mono_s``, ``bytes``, ``error``) with ``samples`` reduced to the fields in ``_KEEP`` and
            packed (:func:`~tcpmodels.records_series.pack_series`; read them with
            :func:`~tcpmodels.records_series.as_sample_list`).

        Raises
        ------
        tcpmodels.testbed.TestbedError
            If the traffic server has exited, ``tm_cubic_x`` is not registered with the session's
            parameters, or a flow does not finish in time.
        """
        from tcpmodels.testbed import TestbedError

        cfg = self.config
        if self.server.popen.poll() is not None:
            raise TestbedError("the traffic server has exited")
        cubic_cc = KIND_CC[self.kind]
        params = kind_cc_params(self.kind, cfg)
        if params is None:
            return self._run(cubic_cc, None, reno_start_s, cubic_start_s)
        from tcpmodels.testbed import kernel_cc

        with kernel_cc.congestion_control(cubic_cc, params) as load:
            # what is registered right now, read back from the loader's state
            loaded = kernel_cc.loaded().get(cubic_cc)
            if loaded is None or loaded.get("params") != load.get("params"):
                raise TestbedError(f"{cubic_cc} is not registered with the sample's parameters: {loaded}")
            return self._run(cubic_cc, loaded, reno_start_s, cubic_start_s)

    def _run(self, cubic_cc: str, loaded: dict | None, reno_start_s: float, cubic_start_s: float) -> dict:
        import numpy as np

        from tcpmodels.testbed import workload as wl
        from tcpmodels.testbed.cpu_times import cpu_time_delta, read_cpu_times

        cfg, tb = self.config, self.tb
        dst = tb.topology.meta["receiver_addr"]
        pings = [float(np.median(wl.ping_rtt(tb, s, dst, count=5, interval_s=0.05))) * 1e3 for s in ("s0", "s1")]
        duration_s = cfg.warmup_s + cfg.measure_s + cfg.start_jitter_s
        counters0, elements0 = tb.counters(), tb.delay_counters()
        tcp0 = {n: tb.tcp_ext_counters(n) for n in _TCP_EXT_NODES}
        cpu0 = read_cpu_times()
        procs = []
        for i, (node, cc, start) in enumerate((("s0", "reno", reno_start_s), ("s1", cubic_cc, cubic_start_s))):
            flow = wl.bulk_flow(flow_id=i + 1, dst=dst, port=self.port, duration_s=duration_s, cc=cc,
                                direction="upload", sample_interval_s=cfg.sample_interval_s, start_s=float(start))
            procs.append(wl.launch_flows(tb, node, [flow]))
        recs = [wl.collect_flows(p, timeout_s=duration_s + 120)[0] for p in procs]
        cpu_time_s = cpu_time_delta(cpu0, read_cpu_times())
        counters1, elements1 = tb.counters(), tb.delay_counters()
        tcp_ext = {n: tcp_ext_delta(tcp0[n], tb.tcp_ext_counters(n)) for n in _TCP_EXT_NODES}
        drops = cpu_loss(counters0, counters1, delay_counter_delta(elements0, elements1))
        drops = {**{k: drops[k] for k in ("queue_drops", "other_qdisc_drops", "interface_drops", "drops_by_link",
                                          "delay_element_drops", "delay_element_forwarded")},
                 "counting": DROPS_COUNTING}
        flows = []
        for cc, rec in zip(("reno", cubic_cc), recs):
            samples = [{k: s.get(k) for k in _KEEP} for s in rec.pop("samples", [])]
            flows.append({**rec, "cc_requested": cc, "samples": pack_series(samples, **_PACKING)})
        return {"run_id": tb.run_id, "ping_rtt_ms": pings, "kind": self.kind, "drops": drops, "tcp_ext": tcp_ext,
                "cpu_time_s": cpu_time_s, "rps_cpus": tb.rps_cpus, "delay_element_cpus": tb.delay_element_cpus or None,
                "cubic_cc_params": None if loaded is None else loaded.get("params"), "flows": flows}


#: the nodes whose TcpExt counters a sample records: both senders and the receiver
_TCP_EXT_NODES = ("s0", "s1", "d")


#: kernel_frame columns from a record's ``tcp_ext``: column -> (nodes, TcpExt counters summed over them)
TCP_EXT_COLUMNS = {
    "sender_timeouts": (("s0", "s1"), ("TCPTimeouts",)),
    "sender_loss_probes": (("s0", "s1"), ("TCPLossProbes",)),
    "sender_spurious_rtos": (("s0", "s1"), ("TCPSpuriousRTOs",)),
    "sender_dsack_recv": (("s0", "s1"), ("TCPDSACKRecv", "TCPDSACKOfoRecv")),
    "sender_reordering_events": (("s0", "s1"), ("TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder")),
    "receiver_drops": (("d",), ("TCPRcvQDrop", "TCPBacklogDrop", "TCPOFODrop", "TCPZeroWindowDrop")),
}


#: kernel_frame columns from a record's ``cpu_time_s``: column -> ``/proc/stat`` field summed over the CPUs [s]
CPU_TIME_COLUMNS = {"cpu_steal_s": "steal", "cpu_softirq_s": "softirq", "cpu_idle_s": "idle"}


def record_cpu_time_s(record: dict, field: str) -> float | None:
    """Seconds the host's CPUs spent in one ``/proc/stat`` field during a sample's transfers, summed over the CPUs.

    Parameters
    ----------
    record : dict
        A record of :func:`run_kernel_campaign` (or of the pilot).
    field : str
        One of :data:`tcpmodels.testbed.cpu_times.CPU_TIME_FIELDS` (``steal``: time the hypervisor ran
        other guests while a vCPU was ready).

    Returns
    -------
    float or None
        [s]; None for records before 2026-12-03, which did not read ``/proc/stat``.
    """
    times = record.get("cpu_time_s")
    if times is None:
        return None
    return round(sum(cpu.get(field, 0.0) for cpu in times.values()), 2)


#: the ``counting`` of a record's ``drops``: each drop once (Testbed.counters reports the root qdisc's count)
DROPS_COUNTING = "root qdisc"


def queue_drops_once(drops: dict) -> int | None:
    """The bottleneck queue's drops of one record's ``drops``, each dropped packet counted once.

    Records written before 2026-11-25 (no ``counting``) hold the sum over the bottleneck's
    qdiscs, the ``tbf`` and its drop-tail leaf, which counts every drop twice: the ``tbf``
    adds the drops its leaf reports to its own count (``tests/testbed/test_counters.py``
    shows both counters equal on an overflowed link). The ``tbf`` drops nothing itself on
    this testbed (offloads are off, so no frame exceeds its 1514 bytes, far below the
    bucket), so the old sum is exactly twice the drops: halved here. In the 9 samples of
    2026-11-24 every old sum is even, and half of it is within 0.5 % of the two senders'
    retransmissions in 8 of them (12 % below them in the ninth, standard 1:16 ms: 2918
    drops, 3315 retransmissions).

    Parameters
    ----------
    drops : dict
        The record's ``drops`` (``queue_drops`` [packets], ``counting``), or ``{}``.

    Returns
    -------
    int or None
        Packets dropped by the bottleneck queue; None if the record has no drop counts.
    """
    q = drops.get("queue_drops")
    if q is None:
        return None
    return int(q) if drops.get("counting") == DROPS_COUNTING else int(q) // 2


#: delay-element counters of frames lost for lack of CPU or buffer (not the bottleneck queue)
_ELEMENT_DROPS = ("dropped_queue_full", "dropped_socket", "send_errors", "dropped_oversize")


def cpu_loss(before: dict, after: dict, delay_stats: dict, *, bottleneck: str = "ra:bn") -> dict:
    """Drops of one pilot run split into the bottleneck queue's and everything else's (CPU-induced).

    Parameters
    ----------
    before, after : dict
        :meth:`tcpmodels.testbed.Testbed.counters` before and after the transfers
        (``"node:link"`` -> ``rx_dropped``, ``tx_dropped``, ``qdisc_drops``, ...). [packets]
    delay_stats : dict
        The delay elements' final counters (:attr:`tcpmodels.testbed.Testbed.delay_stats`: link ->
        ``{"a_to_b": {...}, "b_to_a": {...}}``). [frames]
    bottleneck : str
        The ``"node:link"`` whose qdisc drops are the queue's.

    Returns
    -------
    dict
        ``queue_drops`` (the bottleneck's qdisc) [packets]; ``other_qdisc_drops``,
        ``interface_drops`` (rx + tx dropped, all interfaces) [packets]; ``delay_element_drops``
        (per counter of :data:`_ELEMENT_DROPS`, summed over elements and directions) [frames];
        ``delay_element_forwarded`` [frames]; ``cpu_drops``: the sum of all but the queue's;
        ``drops_by_link``: where those outside the queue happened, ``"node:link"`` -> the nonzero ones of
        ``qdisc_drops`` (not the bottleneck's), ``rx_dropped``, ``tx_dropped`` [packets] (empty when none).
    """
    def delta(iface, field):
        a, b = after.get(iface, {}).get(field), before.get(iface, {}).get(field)
        return 0 if a is None or b is None else int(a) - int(b)

    queue = delta(bottleneck, "qdisc_drops")
    by_link = {}  # every drop outside the queue, per link; the totals below are its sums
    for i in after:
        fields = ("rx_dropped", "tx_dropped") if i == bottleneck else ("qdisc_drops", "rx_dropped", "tx_dropped")
        nonzero = {f: n for f in fields if (n := delta(i, f))}
        if nonzero:
            by_link[i] = nonzero
    other_q = sum(d.get("qdisc_drops", 0) for d in by_link.values())
    iface = sum(d.get("rx_dropped", 0) + d.get("tx_dropped", 0) for d in by_link.values())
    elem = {k: 0 for k in _ELEMENT_DROPS}
    forwarded = 0
    for link in delay_stats.values():
        for d in ("a_to_b", "b_to_a"):
            st = link.get(d, {})
            forwarded += int(st.get("forwarded", 0))
            for k in _ELEMENT_DROPS:
                elem[k] += int(st.get(k, 0))
    return {"queue_drops": queue, "other_qdisc_drops": other_q, "interface_drops": iface,
            "delay_element_drops": elem, "delay_element_forwarded": forwarded,
            "cpu_drops": other_q + iface + sum(elem.values()), "drops_by_link": by_link}


KERNEL_KEY = ("campaign", "rep", "kind", "reno_rtt_ms", "cubic_rtt_ms")


def run_kernel_campaign(records_path: str | Path, config: P3Config = DEFAULT_CONFIG, *, limit: int | None = None,
                        progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None,
                        yield_s: float = 0.5) -> int:
    """Run (or resume) the kernel grid; return the number of samples measured in this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one line per sample; samples already on file (same repetition, kind and RTT pair) are skipped.
    config : P3Config
        The campaign's setting.
    limit : int, optional
        Stop after this many new samples (to time a sample; used by tests).
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
    plan : list of dict, optional
        Samples to run instead of :func:`kernel_plan`: :func:`cpu_loss_repeat_plan`'s, or a test's.
    yield_s : float
        Pause after releasing the lock so a waiting campaign can take it. [s]

    Returns
    -------
    int
        Samples measured and recorded by this call.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed samples in a row.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.records import JsonlRecords, git_state

    code = git_state(REPO)  # the code that ran: each record carries it

    def session_for(s, session):
        if session is None:
            return KernelSession(config, s["reno_rtt_ms"], s["cubic_rtt_ms"], s.get("kind", "standard")).__enter__()
        session.set_kind(s.get("kind", "standard"))
        session.set_rtts(s["reno_rtt_ms"], s["cubic_rtt_ms"])
        return session

    def measure(s, session):
        return {"schema": SCHEMA, "config_hash": config.hash(), "rate_bps": config.rate_bps,
                "buffer_bytes": config.buffer_bytes, "warmup_s": config.warmup_s, "measure_s": config.measure_s,
                "git": code, **session.run(s["reno_start_s"], s["cubic_start_s"])}

    plan = kernel_plan(config) if plan is None else plan
    return run_samples(JsonlRecords(records_path, KERNEL_KEY), plan, measure, desc="p3 kernel",
                       session_for=session_for, limit=limit, progress=progress, lock_timeout_s=lock_timeout_s,
                       yield_s=yield_s)


def summarize_flow_samples(samples_by_flow: list[list[dict]], starts_mono_s: list[float], *, warmup_s: float,
                           window_s: float, measure_s: float | None = None) -> dict:
    """Throughputs of two concurrent flows over their common measured interval, from TCP_INFO samples.

    Parameters
    ----------
    samples_by_flow : list of two lists of dict
        Each flow's samples with ``t_s`` (since its own start) and ``bytes_acked``. [s], [bytes]
    starts_mono_s : list of two float
        Each flow's start on the shared monotonic clock. [s]
    warmup_s : float
        Discarded after the later start. [s]
    window_s : float
        Length of the sub-windows for the within-run spread. [s]
    measure_s : float, optional
        Cap on the measured span. [s]

    Returns
    -------
    dict
        ``span_s``, ``throughput_bps`` (list of two), ``window_throughput_bps`` (list of two lists, one
        value per whole sub-window), ``t0_mono_s``.
    """
    import numpy as np

    if len(samples_by_flow) != 2 or len(starts_mono_s) != 2:
        raise ValueError("samples_by_flow and starts_mono_s must describe two flows")
    series = []
    for samples, t0 in zip(samples_by_flow, starts_mono_s):
        t = np.array([s["t_s"] for s in samples if s.get("bytes_acked") is not None], float) + t0
        b = np.array([s["bytes_acked"] for s in samples if s.get("bytes_acked") is not None], float)
        if len(t) < 3:
            raise ValueError(f"a flow has {len(t)} TCP_INFO samples; need at least 3")
        series.append((t, b))
    lo = max(starts_mono_s) + warmup_s
    hi = min(t[-1] for t, _ in series)
    if measure_s is not None:
        hi = min(hi, lo + measure_s)
    if hi - lo < window_s:
        raise ValueError(f"measured span {hi - lo:.2f} s is shorter than window_s = {window_s} s "
                         "(flows too short or warmup_s too long)")
    edges = np.arange(lo, hi + 1e-9, window_s)
    out_tp, out_win = [], []
    for t, b in series:
        at = np.interp([lo, hi], t, b)
        out_tp.append(float((at[1] - at[0]) * 8 / (hi - lo)))
        w = np.interp(edges, t, b)
        out_win.append([float(x) for x in np.diff(w) * 8 / window_s])
    return {"span_s": float(hi - lo), "throughput_bps": out_tp, "window_throughput_bps": out_win, "t0_mono_s": lo}


def _median_after(samples: list[dict], t_from_s: float, key: str) -> float:
    import numpy as np

    vals = [s[key] for s in samples if s.get(key) is not None and s["t_s"] >= t_from_s]
    return float(np.median(vals)) if vals else math.nan


def kernel_frame(records: list[dict], config: P3Config = DEFAULT_CONFIG) -> pd.DataFrame:
    """One row per kernel sample: RTTs, both throughputs, Jain's index, window spread, W_max estimates.

    ``*_wmax_segments`` estimates each flow's window at loss from its median
    ssthresh after warm-up (Linux sets ssthresh = beta cwnd at a loss: 0.5 for
    Reno, 0.7 for CUBIC); ``cubic_k_s`` is CUBIC's K for that W_max.

    Parameters
    ----------
    records : list of dict
        Records of :func:`run_kernel_campaign`.
    config : P3Config
        ``warmup_s``, ``window_s`` and ``measure_s`` of :func:`summarize_flow_samples`.

    Returns
    -------
    pandas.DataFrame
        Sorted by ``kind, reno_rtt_ms, cubic_rtt_ms, rep``: ``kind``, ``cubic_cc_reading``,
        ``rate_bps`` [bit/s], ``buffer_bytes`` [bytes], ``measure_s`` [s], ping RTTs [ms], ``reno_bps``,
        ``cubic_bps``, ``total_bps``, window standard deviations [bit/s], ``jain``,
        ``jain_window_sd``, ``cubic_share`` [-], median srtt [ms] and cwnd [segments],
        ``*_wmax_segments``, ``cubic_k_s``, ``cubic_k_observed_s`` [s], ``cubic_k_epochs``,
        ``queue_drops`` (each drop of the bottleneck queue once, :func:`queue_drops_once`),
        ``delay_element_drops`` (frames the delay elements lost during the transfers; None in records
        before 2026-11-28, which did not read them) and ``cpu_drops`` (drops outside the bottleneck
        queue: other qdiscs', the interfaces' and, where read, the delay elements'; None in older
        records) [packets], the columns of :data:`TCP_EXT_COLUMNS` (None in records before
        2026-11-28), the columns of :data:`CPU_TIME_COLUMNS` (seconds the host's CPUs spent so during the
        transfers, summed over the CPUs; None in records before 2026-12-03), retransmissions, load,
        ``wall_s`` [s], ``campaign`` (the record's label,
        :func:`kernel_campaign_label`, + :data:`REPEAT_SUFFIX` for a repeat of :func:`cpu_loss_repeat_plan`),
        ``repeats_started_utc`` (a repeat: when the sample it repeats started; else None), ``testbed`` (one of
        :data:`TESTBEDS`,
        :func:`~tcpmodels.experiments.campaign.kernel_testbed_of`: ``pinned`` if the record names pinned delay
        elements, ``steered`` if it has an RPS mask, else ``reordering``) and
        ``error`` (a sample whose samples cannot be summarised has only its key columns and ``error``).
    """
    import numpy as np

    from tcpmodels.experiments.kernel_coupled_cc import observed_k
    from tcpmodels.models.cubic import cubic_k_s

    rows = []
    for r in records:
        flows = [{**f, "samples": as_sample_list(f["samples"])} if "samples" in f else f for f in r["flows"]]
        warmup_s, measure_s = r.get("warmup_s", config.warmup_s), r.get("measure_s", config.measure_s)
        params = r.get("cubic_cc_params") or {}
        row = {"kind": r.get("kind", "standard"), "cubic_cc_reading": params.get("reading"),
               "rate_bps": r.get("rate_bps", config.rate_bps), "buffer_bytes": r.get("buffer_bytes", config.buffer_bytes),
               "measure_s": measure_s, "rep": r["rep"], "reno_rtt_ms": r["reno_rtt_ms"], "cubic_rtt_ms": r["cubic_rtt_ms"],
               "order": r["order"], "reno_start_s": r["reno_start_s"], "cubic_start_s": r["cubic_start_s"],
               "reno_ping_ms": r["ping_rtt_ms"][0], "cubic_ping_ms": r["ping_rtt_ms"][1],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "error": "; ".join(str(f.get("error")) for f in flows if f.get("error")) or None,
               "campaign": r.get("campaign", "p3_kernel"), "testbed": kernel_testbed_of(r),
               "repeats_started_utc": r.get("repeats_started_utc")}
        d = r.get("drops") or {}
        row["queue_drops"] = queue_drops_once(d)
        elem = d.get("delay_element_drops")
        row["delay_element_drops"] = sum(elem.values()) if elem is not None else None
        row["cpu_drops"] = record_cpu_drops(r)
        for col, field in CPU_TIME_COLUMNS.items():
            row[col] = record_cpu_time_s(r, field)
        tcp_ext = r.get("tcp_ext")
        for col, (nodes, names) in TCP_EXT_COLUMNS.items():
            row[col] = sum(tcp_ext.get(n, {}).get(k, 0) for n in nodes for k in names) if tcp_ext is not None else None
        for name, f in zip(("reno", "cubic"), flows):
            row[f"{name}_cc"] = f.get("cc_effective")
        try:
            s = summarize_flow_samples([f["samples"] for f in flows], [f["start_mono_s"] for f in flows],
                                       warmup_s=warmup_s, window_s=config.window_s, measure_s=measure_s)
        except (ValueError, KeyError) as exc:
            row["error"] = (row["error"] or "") + f" summary: {exc}"
            rows.append(row)
            continue
        row["span_s"] = s["span_s"]
        for i, name in enumerate(("reno", "cubic")):
            f = flows[i]
            t_from = s["t0_mono_s"] - f["start_mono_s"]
            row[f"{name}_bps"] = s["throughput_bps"][i]
            win = np.asarray(s["window_throughput_bps"][i])
            row[f"{name}_window_sd_bps"] = float(np.std(win, ddof=1)) if len(win) > 1 else math.nan
            row[f"{name}_srtt_ms"] = _median_after(f["samples"], t_from, "srtt_s") * 1e3
            row[f"{name}_cwnd_segments"] = _median_after(f["samples"], t_from, "cwnd_segments")
            ssth = _median_after(f["samples"], t_from, "ssthresh_segments")
            row[f"{name}_wmax_segments"] = ssth / (0.5 if name == "reno" else 0.7) if ssth < 1e8 else math.nan
            sm = [x for x in f["samples"] if x.get("total_retrans") is not None]
            row[f"{name}_retrans"] = int(sm[-1]["total_retrans"]) if sm else None
        wins = [np.asarray(w) for w in s["window_throughput_bps"]]
        jw = jain_index(wins[0], wins[1])
        row["n_windows"] = len(wins[0])
        row["jain_window_sd"] = float(np.std(jw, ddof=1)) if len(jw) > 1 else math.nan
        row["jain"] = jain_index(row["reno_bps"], row["cubic_bps"])
        row["total_bps"] = row["reno_bps"] + row["cubic_bps"]
        row["cubic_share"] = row["cubic_bps"] / row["total_bps"] if row["total_bps"] > 0 else math.nan
        w = row["cubic_wmax_segments"]
        row["cubic_k_s"] = float(cubic_k_s(w)) if w == w else math.nan
        t_from = s["t0_mono_s"] - flows[1]["start_mono_s"]
        cs = [x for x in flows[1]["samples"] if x.get("cwnd_segments") is not None and x.get("ca_state") is not None
              and x["t_s"] >= t_from]
        ks = observed_k(cs) if len(cs) > 20 else []
        row["cubic_k_observed_s"] = float(np.median([k["k_observed_s"] for k in ks])) if ks else math.nan
        row["cubic_k_epochs"] = len(ks)
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["kind", "reno_rtt_ms", "cubic_rtt_ms", "rep"]).reset_index(drop=True) if len(df) else df
