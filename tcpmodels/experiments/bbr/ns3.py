"""The BBR coexistence grid in ns-3 (``TcpBbr`` against ``TcpCubic`` / ``TcpLinuxReno``), one simulation per sample.

The same grid points as the kernel (:func:`~tcpmodels.experiments.bbr.config.kernel_plan`, campaign
``bbr_ns3``): a :class:`~tcpmodels.sim.config.Dumbbell` whose BBR sender runs N bulk connections and
whose loss-based sender runs M, both on an access link of half the base RTT one way, into a bottleneck
of ``rate_bps`` with a drop-tail queue of X BDPs. The ns-3 congestion controls are the registry's
(:mod:`tcpmodels.congestion`). Run it at ``nice 19`` beside kernel campaigns (as P3's ns-3 grid was);
``host_lock=True`` makes every simulation take the host lock instead, so that none runs beside a kernel
sample (with other campaigns on the lock, that doubles everyone's waits).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd

from tcpmodels import congestion
from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.bbr.config import DEFAULT_CONFIG, KEY, SCHEMA, BbrConfig, kernel_plan
from tcpmodels.experiments.campaign import run_samples
from tcpmodels.models.bbr import BBR_PROBE_RTT_CWND_PACKETS
from tcpmodels.sim.config import Dumbbell

__all__ = ["ns3_plan", "ns3_scenario", "run_ns3_campaign", "BIN_S"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    config : BbrConfig
        The setting.
""")

#: width of the per-connection byte bins kept in a record. [s]
BIN_S = 0.5


@_PARAMETERS.fill
def ns3_plan(config: BbrConfig) -> list[dict]:
    """The kernel plan relabelled ``bbr_ns3``, each sample with its simulation seed (1 + its order).

    Parameters
    ----------
    {config}

    Returns
    -------
    list of dict
        The entries of :func:`~tcpmodels.experiments.bbr.config.kernel_plan` with ``campaign`` ``bbr_ns3``
        and ``seed``.
    """
    return [{**s, "campaign": "bbr_ns3", "seed": 1 + s["order"]}
            for s in kernel_plan(replace(config, campaign="bbr_ns3"))]


def ns3_scenario(config: BbrConfig, sample: dict) -> Dumbbell:
    """The :class:`~tcpmodels.sim.config.Dumbbell` of one sample.

    Parameters
    ----------
    config : BbrConfig
        Rate, base RTT, packet size, run length.
    sample : dict
        A plan entry (:func:`ns3_plan`).

    Returns
    -------
    tcpmodels.sim.config.Dumbbell
        Sender 0 runs ``TcpBbr`` with N connections, sender 1 (if any) the competitor with M, each
        connection starting at its offset; MSS = packet size - 52 (IP, TCP with timestamps); the
        bottleneck queue ``buffer_packets``; congestion windows traced (ProbeRTT episodes).
    """
    from tcpmodels.sim.config import BulkApp, Dumbbell, Link, Sender, TcpOptions

    starts = list(sample["start_s"])
    access = Link(rate_bps=10e9, delay_s=config.base_rtt_s / 2, queue_packets=100000)
    n = int(sample["n_bbr"])
    senders = [Sender(access=access, variant=congestion.get("bbr").ns3_type_id,
                      apps=tuple(BulkApp(start_s=float(t)) for t in starts[:n]))]
    if sample["competitor"] != "none":
        senders.append(Sender(access=access, variant=congestion.get(sample["competitor"]).ns3_type_id,
                              apps=tuple(BulkApp(start_s=float(t)) for t in starts[n:])))
    big = 4 * (int(sample["buffer_packets"]) + int(config.bdp_packets) + 64) * config.packet_bytes
    return Dumbbell(senders=tuple(senders),
                    bottleneck=Link(rate_bps=config.rate_bps, delay_s=0.0, queue_packets=int(sample["buffer_packets"])),
                    duration_s=config.duration_s(sample["queue_bdp"]), seed=int(sample["seed"]), queue_bin_s=BIN_S, trace_cwnd=True,
                    tcp=TcpOptions(mss_bytes=config.packet_bytes - 52, sndbuf_bytes=max(big, 4 << 20),
                                   rcvbuf_bytes=max(big, 4 << 20)))


def _episodes(cwnd: pd.DataFrame, flow_index: int, mss: int, end_s: float) -> list[list[float]]:
    """``[start_s, end_s]`` of the connection's stretches at cwnd <= 4 packets (ProbeRTT)."""
    c = cwnd[(cwnd["flow_index"] == flow_index) & (cwnd["what"] == "cwnd_bytes")].sort_values("t_s")
    out, start = [], None
    for t, v in zip(c["t_s"].to_numpy(), c["value"].to_numpy()):
        low = v <= BBR_PROBE_RTT_CWND_PACKETS * mss
        if low and start is None:
            start = float(t)
        elif not low and start is not None:
            out.append([round(start, 6), round(float(t), 6)])
            start = None
    return out


@_PARAMETERS.fill
def run_ns3_campaign(records_path: str | Path, config: BbrConfig = DEFAULT_CONFIG, *, limit: int | None = None,
                     progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None,
                     host_lock: bool = False) -> int:
    """Run (or resume) the ns-3 grid; return the number of samples simulated in this call.

    Each record holds, per connection, its role, ns-3 congestion control, start, the bytes its sink
    received in :data:`BIN_S` bins and its ProbeRTT episodes (BBR connections), and the bottleneck
    queue per bin [packets].

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one line per sample.
    {config}
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
    plan : list of dict, optional
        Samples to run instead of :func:`ns3_plan`.
    host_lock : bool
        Take the host lock for each simulation.

    Returns
    -------
    int
        Samples recorded by this call.

    Raises
    ------
    tcpmodels.sim.SimulationError
        If a simulation fails.
    """
    from tcpmodels.experiments.bbr.config import REPO
    from tcpmodels.records import JsonlRecords, git_state
    from tcpmodels.sim.run import run_config

    records = JsonlRecords(records_path, KEY)
    git = git_state(REPO)  # the code that runs, in every record

    def measure(sample: dict, _session) -> dict:
        scen = ns3_scenario(config, sample)
        with tempfile.TemporaryDirectory(prefix="tm-bbr-ns3-") as tmp:
            res = run_config(scen, tmp, timeout_s=3600)
        apps = res.apps.sort_values("flow_index")
        bins = res.bins
        flows = []
        n = int(sample["n_bbr"])
        for k, (idx, sender) in enumerate(zip(apps["flow_index"], apps["sender"])):
            b = bins[bins["flow_index"] == idx].sort_values("t_end_s")
            role = "bbr" if int(sender) == 0 else "loss"
            flows.append({"role": role, "cc": scen.senders[int(sender)].variant, "flow_index": int(idx),
                          "start_s": float(apps["start_s"].iloc[k]), "bin_end_s": b["t_end_s"].round(6).tolist(),
                          "rx_bytes": [int(v) for v in b["rx_bytes"]],
                          "probe_rtt": _episodes(res.cwnd, int(idx), scen.tcp.mss_bytes, scen.duration_s)
                          if role == "bbr" and res.cwnd is not None else []})
        if sum(f["role"] == "bbr" for f in flows) != n:
            raise RuntimeError(f"expected {n} BBR connections, found {sum(f['role'] == 'bbr' for f in flows)}")
        q = res.queues
        q = q[q["device"] == "bottleneck"] if "device" in q else q.iloc[0:0]
        keep = ("date_utc", "ns3_version", "run_wall_s", "sim_s_per_wall_s", "config_hash")
        return {"schema": SCHEMA, "git": git, "config": {
            **{k: getattr(config, k) for k in ("rate_bps", "base_rtt_s", "packet_bytes", "measure_s", "warmup_rtts")},
            "warmup_s": config.warmup_s(sample["queue_bdp"])},
            "sim": {k: res.record.get(k) for k in keep}, "flows": flows,
            "queue_packets": [int(v) for v in q.get("queue_packets", [])] if len(q) else [],
            "queue_bin_end_s": [round(float(v), 6) for v in q.get("t_end_s", [])] if len(q) else []}

    return run_samples(records, plan if plan is not None else ns3_plan(config), measure, desc="bbr ns3",
                       on_host=lambda sample: host_lock, limit=limit, progress=progress,
                       lock_timeout_s=lock_timeout_s, yield_s=0.5 if host_lock else 0.0)
