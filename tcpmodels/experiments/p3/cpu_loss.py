"""Packets a P3 kernel sample lost outside the bottleneck queue, and the host's counters beside them.

Loss outside the bottleneck's queue (other qdiscs, the interfaces, the delay elements) comes from the
host's CPUs, not from the congestion the paper studies: :func:`cpu_loss` counts it per sample from the
counters read before and after, :func:`record_cpu_drops` reads it back from a record, and
:func:`cpu_loss_repeat_plan` runs such samples once more. :data:`TCP_EXT_COLUMNS` and
:data:`CPU_TIME_COLUMNS` name what :func:`tcpmodels.experiments.p3.kernel.kernel_frame` reports of the
TcpExt counters and the CPU times of a sample.
"""

from __future__ import annotations

from tcpmodels.datasets.p3 import REPEAT_SUFFIX as DATASET_REPEAT_SUFFIX
from tcpmodels.experiments.p3.config import P3Config, kernel_campaign_label

__all__ = ["REPEAT_SUFFIX", "record_cpu_drops", "cpu_loss_repeat_plan", "TCP_EXT_NODES", "TCP_EXT_COLUMNS",
           "CPU_TIME_COLUMNS", "record_cpu_time_s", "DROPS_COUNTING", "queue_drops_once", "cpu_loss"]


#: appended to a testbed's ``campaign`` label for a sample run again because it lost packets outside the
#: bottleneck queue (:func:`cpu_loss_repeat_plan`): repeats never share a key with the samples they repeat
REPEAT_SUFFIX = DATASET_REPEAT_SUFFIX


def record_cpu_drops(record: dict) -> int | None:
    """Packets a kernel sample lost outside the bottleneck queue (see :func:`cpu_loss`).

    Parameters
    ----------
    record : dict
        A record of :func:`~tcpmodels.experiments.p3.kernel.run_kernel_campaign`.

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
        Records of :func:`~tcpmodels.experiments.p3.kernel.run_kernel_campaign` (repeats among them are skipped here and by the campaign's
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


#: the nodes whose TcpExt counters a sample records: both senders and the receiver
TCP_EXT_NODES = ("s0", "s1", "d")


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
