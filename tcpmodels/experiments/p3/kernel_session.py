"""The P3 kernel testbed: a dumbbell with a traffic server on the receiver, kept up across samples.

:class:`KernelSession` builds the dumbbell of one RTT pair, changes the RTTs and the CUBIC variant between
samples (:data:`KIND_CC`, :func:`kind_cc_params`) and runs one sample: both flows' TCP_INFO series, the
TcpExt counters and the loss outside the bottleneck queue (:mod:`tcpmodels.experiments.p3.cpu_loss`).
"""

from __future__ import annotations

from dataclasses import replace

from tcpmodels.experiments.campaign_testbed import ServerTestbed
from tcpmodels.experiments.p3.config import P3Config
from tcpmodels.experiments.p3.cpu_loss import DROPS_COUNTING, TCP_EXT_NODES, cpu_loss
from tcpmodels.records.series import pack_series
from tcpmodels.testbed import Topology
from tcpmodels.testbed.netns import delay_counter_delta, tcp_ext_delta

__all__ = ["KIND_CC", "kind_cc_params", "KernelSession"]


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

#: how a sample's TCP_INFO series is packed into its record (:func:`~tcpmodels.records.series.pack_series`,
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
            read without stopping them (since 2026-11-28); see :func:`~tcpmodels.experiments.p3.cpu_loss.cpu_loss`; ``counting`` =
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
            packed (:func:`~tcpmodels.records.series.pack_series`; read them with
            :func:`~tcpmodels.records.series.as_sample_list`).

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
        tcp0 = {n: tb.tcp_ext_counters(n) for n in TCP_EXT_NODES}
        cpu0 = read_cpu_times()
        procs = []
        for i, (node, cc, start) in enumerate((("s0", "reno", reno_start_s), ("s1", cubic_cc, cubic_start_s))):
            flow = wl.bulk_flow(flow_id=i + 1, dst=dst, port=self.port, duration_s=duration_s, cc=cc,
                                direction="upload", sample_interval_s=cfg.sample_interval_s, start_s=float(start))
            procs.append(wl.launch_flows(tb, node, [flow]))
        recs = [wl.collect_flows(p, timeout_s=duration_s + 120)[0] for p in procs]
        cpu_time_s = cpu_time_delta(cpu0, read_cpu_times())
        counters1, elements1 = tb.counters(), tb.delay_counters()
        tcp_ext = {n: tcp_ext_delta(tcp0[n], tb.tcp_ext_counters(n)) for n in TCP_EXT_NODES}
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
