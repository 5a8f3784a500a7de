"""The BBR coexistence campaign on the real kernel: the testbed session, one sample, the runner.

A dumbbell (:func:`tcpmodels.testbed.topologies.dumbbell`) with one sender ``s0`` whose access link
carries the base RTT (the delay element), and the bottleneck's tbf on the router ``ra`` with a
drop-tail buffer of X BDPs (a rate limiter on the sender's own host would be kept empty by TCP small
queues). All flows of a sample leave ``s0`` for the receiver ``d``: N ``bbr`` flows and M flows of the
loss-based competitor, each with TCP_INFO sampled every ``sample_interval_s``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tcpmodels.experiments.bbr.config import KEY, BbrConfig, DEFAULT_CONFIG, flows_of, kernel_plan
from tcpmodels.experiments.campaign import ServerTestbed, run_samples
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


def run_kernel_campaign(records_path: str | Path, config: BbrConfig = DEFAULT_CONFIG, *, limit: int | None = None,
                        progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None) -> int:
    """Run (or resume) the kernel grid; return the number of samples measured in this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one line per sample; samples already on file (same :data:`~tcpmodels.experiments.bbr.config.KEY`)
        are skipped.
    config : BbrConfig
        The setting (:data:`~tcpmodels.experiments.bbr.config.DEFAULT_CONFIG`, or the pilot's).
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
    plan : list of dict, optional
        Samples to run instead of :func:`~tcpmodels.experiments.bbr.config.kernel_plan` (a test's).

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
    from tcpmodels.experiments.bbr.config import REPO
    from tcpmodels.records import JsonlRecords, git_state

    records = JsonlRecords(records_path, KEY)
    git = git_state(REPO)  # the code that runs, in every record

    def session_for(sample: dict, session: KernelSession | None) -> KernelSession:
        if session is not None and session.buffer_packets == sample["buffer_packets"]:
            return session
        if session is not None:
            session.__exit__(None, None, None)
        return KernelSession(config, sample["buffer_packets"]).__enter__()

    def measure(sample: dict, session: KernelSession) -> dict:
        return {"schema": 1, "git": git, "config": {
            **{k: getattr(config, k) for k in ("rate_bps", "base_rtt_s", "packet_bytes", "measure_s",
                                               "sample_interval_s", "warmup_rtts")},
            "warmup_s": config.warmup_s(sample["queue_bdp"])},
            **session.run(sample)}

    return run_samples(records, plan if plan is not None else kernel_plan(config), measure,
                       desc=config.campaign.replace("_", " "), session_for=session_for, limit=limit,
                       progress=progress, lock_timeout_s=lock_timeout_s)
