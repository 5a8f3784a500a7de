"""The BBR coexistence campaign on the real kernel: the testbed session, one sample, the runner.

A dumbbell (:func:`tcpmodels.testbed.topologies.dumbbell`) with one sender ``s0`` whose access link
carries the base RTT (the delay element), and the bottleneck's tbf on the router ``ra`` with a
drop-tail buffer of X BDPs (a rate limiter on the sender's own host would be kept empty by TCP small
queues). All flows of a sample leave ``s0`` for the receiver ``d``: N ``bbr`` flows and M flows of the
loss-based competitor, each with TCP_INFO sampled every ``sample_interval_s``.
"""

from __future__ import annotations

from dataclasses import replace

from tcpmodels.experiments.bbr.config import DEFAULT_CONFIG, KEY, SCHEMA, BbrConfig, flows_of, kernel_plan
from tcpmodels.experiments.campaign import KernelGrid
from tcpmodels.experiments.campaign_testbed import ServerTestbed
from tcpmodels.records.series import pack_series
from tcpmodels.testbed import Topology

__all__ = ["KernelSession", "run_kernel_campaign", "SAMPLE_FIELDS"]

#: TCP_INFO fields kept per flow sample
SAMPLE_FIELDS = ("t_s", "bytes_acked", "cwnd_segments", "srtt_s", "min_rtt_s", "total_retrans")
_PACKING = {"microsecond_fields": ("t_s", "srtt_s", "min_rtt_s"),
            "delta_fields": ("t_s", "bytes_acked", "total_retrans")}


class KernelSession(ServerTestbed):
    """The dumbbell with a traffic server on the receiver ``d``, for one bottleneck buffer; a context manager.

    Parameters
    ----------
    config : BbrConfig
        Rate, base RTT, packet size.
    buffer_packets : int
        The bottleneck's drop-tail buffer. [packets]
    """

    server_node = "d"
    port = 5401

    def __init__(self, config: BbrConfig, buffer_packets: int):
        self.config = config
        self.buffer_packets = int(buffer_packets)

    def topology(self) -> Topology:
        """The dumbbell: ``s0`` -(base RTT)- ``ra`` -(rate, buffer)- ``rb`` - ``d``; socket buffers far above BDP + buffer.

        Returns
        -------
        tcpmodels.testbed.Topology
        """
        from tcpmodels.testbed.topologies import dumbbell

        cfg = self.config
        topo = dumbbell(access_rtts_s=(cfg.base_rtt_s,), bottleneck_rate_bps=cfg.rate_bps,
                        bottleneck_buffer_packets=self.buffer_packets)
        big = 4 * (self.buffer_packets + int(cfg.bdp_packets) + 64) * cfg.packet_bytes
        sysctls = {"d": (("net.ipv4.tcp_rmem", f"4096 131072 {max(big, 6 << 20)}"),),
                   "s0": (("net.ipv4.tcp_wmem", f"4096 16384 {max(big, 4 << 20)}"),)}
        nodes = tuple(replace(n, sysctls=n.sysctls + sysctls.get(n.name, ())) for n in topo.nodes)
        return replace(topo, nodes=nodes)

    def run(self, sample: dict) -> dict:
        """One sample: its flows from ``s0`` to ``d`` for ``config.duration_s(X)`` each, from their start offsets.

        Parameters
        ----------
        sample : dict
            A plan entry (:func:`~tcpmodels.experiments.bbr.config.kernel_plan`).

        Returns
        -------
        dict
            ``run_id``, ``ping_rtt_ms`` (median ICMP RTT s0 -> d before the flows), ``buffer_packets``,
            ``drops`` (``queue_drops`` at the bottleneck, ``cpu_drops`` anywhere else; see
            :func:`tcpmodels.experiments.p3.cpu_loss.cpu_loss`), ``flows``: per flow ``role``
            (``bbr`` / ``loss``), ``cc_requested``, ``cc_effective``, ``start_offset_s`` [s], ``bytes``,
            ``error`` and ``samples`` (the fields of :data:`SAMPLE_FIELDS`, packed).

        Raises
        ------
        tcpmodels.testbed.TestbedError
            If the server has exited, a flow failed, or ran another congestion control than asked.
        """
        import numpy as np

        from tcpmodels.experiments.p3.cpu_loss import cpu_loss
        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed import workload as wl
        from tcpmodels.testbed.netns import delay_counter_delta

        cfg, tb = self.config, self.tb
        if self.server.popen.poll() is not None:
            raise TestbedError("the traffic server has exited")
        dst = tb.topology.meta["receiver_addr"]
        ping = float(np.median(wl.ping_rtt(tb, "s0", dst, count=10, interval_s=0.05))) * 1e3
        roles = flows_of(sample)
        duration_s = cfg.duration_s(sample["queue_bdp"])
        flows = [wl.bulk_flow(flow_id=i + 1, dst=dst, port=self.port, duration_s=duration_s, cc=cc,
                              direction="upload", sample_interval_s=cfg.sample_interval_s,
                              start_s=float(sample["start_s"][i]))
                 for i, (_, cc) in enumerate(roles)]
        counters0, elements0 = tb.counters(), tb.delay_counters()
        recs = wl.collect_flows(wl.launch_flows(tb, "s0", flows), timeout_s=duration_s + 120)
        drops = cpu_loss(counters0, tb.counters(), delay_counter_delta(elements0, tb.delay_counters()))
        by_id = {r["flow_id"]: r for r in recs}
        out = []
        for i, (role, cc) in enumerate(roles):
            rec = by_id.get(i + 1, {"error": "no record"})
            if "error" in rec:
                raise TestbedError(f"flow {i + 1} ({cc}) failed: {rec['error']}")
            if rec.get("cc_effective") != cc:
                raise TestbedError(f"flow {i + 1} asked for {cc} but ran {rec.get('cc_effective')}")
            samples = [{k: s.get(k) for k in SAMPLE_FIELDS} for s in rec.get("samples", [])]
            out.append({"role": role, "cc_requested": cc, "cc_effective": rec["cc_effective"],
                        "start_offset_s": rec["start_offset_s"], "bytes": rec["bytes"],
                        "samples": pack_series(samples, **_PACKING)})
        return {"run_id": tb.run_id, "ping_rtt_ms": round(ping, 3), "buffer_packets": self.buffer_packets,
                "drops": {"queue_drops": drops["queue_drops"], "cpu_drops": drops["cpu_drops"]}, "flows": out}


def _session_for(config: BbrConfig, sample: dict, session: KernelSession | None) -> KernelSession:
    if session is not None and session.buffer_packets == sample["buffer_packets"]:
        return session
    if session is not None:
        session.__exit__(None, None, None)
    return KernelSession(config, sample["buffer_packets"]).__enter__()


def _record(config: BbrConfig, sample: dict, session: KernelSession, git: dict) -> dict:
    return {"schema": SCHEMA, "git": git, "config": {
        **{k: getattr(config, k) for k in ("rate_bps", "base_rtt_s", "packet_bytes", "measure_s",
                                           "sample_interval_s", "warmup_rtts")},
        "warmup_s": config.warmup_s(sample["queue_bdp"])},
        **session.run(sample)}


#: Run (or resume) the kernel grid, a :class:`~tcpmodels.experiments.campaign.KernelGrid`:
#: ``run_kernel_campaign(records_path, config=DEFAULT_CONFIG, *, limit, progress, lock_timeout_s, plan, yield_s)``
#: returns the samples measured by the call; samples on file (same :data:`~tcpmodels.experiments.bbr.config.KEY`)
#: are skipped; ``plan`` (a test's) replaces :func:`~tcpmodels.experiments.bbr.config.kernel_plan`; ``config``
#: is :data:`~tcpmodels.experiments.bbr.config.DEFAULT_CONFIG` or the pilot's. One testbed per bottleneck buffer.
run_kernel_campaign = KernelGrid(key=KEY, plan_of=kernel_plan, session_for=_session_for, measure=_record,
                                 desc=lambda config: config.campaign.replace("_", " "), default_config=DEFAULT_CONFIG)
