"""Campaign of paper P1 (Fujii, Tazaki, Sekiya): short flows beside long transfers in a k=4 fat-tree.

One *engine-neutral schedule* (:func:`schedule`) per (experiment, protocol, seed)
lists every connection -- source and destination host, start time, size (``None``
for a background transfer that runs to the end), whether it is MPTCP, and for a
single-path connection the core ("plane") that per-flow ECMP hashed it to. The
same schedule drives both engines:

- ``kernel``: the real Linux kernel on the namespace fat-tree of
  :func:`tcpmodels.testbed.topologies.fat_tree` (100/200/400 Mbit/s, 100 KB drop-tail
  buffers). The 0.5 ms RTT can be made by the delay element on the 16 host links only
  (0.125 ms each way on each; every host pair crosses two host links), but it is off by
  default (:attr:`P1Config.delay_element`: on this loaded host the elements starved);
  the namespaces' own round trip (~0.1 ms) is measured and recorded. A single-path connection uses the
  destination's plane-c address (so it crosses core c: per-flow ECMP with the hash
  drawn in the schedule); an MPTCP connection opens on plane 0 and the destination
  announces planes 1-3, so it gets one subflow per core. Kernel MPTCP v1 has no
  coupled congestion control: each subflow runs its own ``cc`` (default Reno, the
  rule LIA couples).
- ``ns3``: :mod:`tcpmodels.sim.fattree` with the same connections,
  MPTCP as RFC 6356 LIA-coupled subflows, one per core.

Experiments (the paper's Sections 4 and 5):

``s4``
    One-to-one traffic. ``round(16 / 3)`` = 5 hosts run continuous background
    transfers to partners drawn as a random derangement (``protocol`` = the
    background's: ``tcp`` or ``mptcp``); the other 11 hosts send 70 KB TCP flows with
    Poisson arrivals (mean inter-arrival 200 ms per host), each to a uniformly drawn
    other host. FCT of the 70 KB flows; their packets are captured at each sender.
``s5_query_nobg``, ``s5_query_bg``
    Partition-aggregate: pod 0 (h0-h3) is the aggregator, the 12 hosts of pods 1-3
    are workers. Each worker receives queries (sizes drawn uniformly from
    ``query_sizes_bytes``, 1-16 KB) from aggregator host ``w mod 4`` with Poisson
    arrivals (mean 200 ms per worker). ``_bg``: six workers (50 %) also receive a
    continuous transfer from the aggregator pod. ``protocol`` is that of every
    connection of the run (queries and background).
``s5_message_bg``
    As ``s5_query_bg`` with short messages (``message_sizes_bytes``, 50 KB-1 MB,
    mean inter-arrival 500 ms per worker).

FCT (kernel): from just before ``connect()`` on the sender to the last byte read
by the receiver (both on the host's one monotonic clock) -- the traffic module's
upload ``completion_s``. From the captures, :func:`tcpmodels.traces.classify_short_flows`
gives each 70 KB flow's pattern (P1 Table 3) and a capture FCT (SYN to the ACK
of the last byte).

Records go to a JSONL file, one line per run (key: engine, experiment, protocol,
seed); ``run`` resumes. Each kernel run holds the host lock
(:func:`tcpmodels.testbed.hostlock.host_lock`) only while its traffic runs; the
fat-tree is built once per campaign call and reused. ``dataset`` writes Parquet
tables and ``p1_provenance.json``.

Command line (root for ``run``)::

    python -m tcpmodels.experiments.p1 run --engine kernel --records runs/p1/kernel.jsonl
    python -m tcpmodels.experiments.p1 run --engine ns3 --records runs/p1/ns3.jsonl
    python -m tcpmodels.experiments.p1 dataset --records runs/p1/kernel.jsonl runs/p1/ns3.jsonl --out data

References
----------
.. [1] Fujii, Tazaki, Sekiya, flow size and MPTCP in a data-center network (seed 000), Tables 1-4, Figs. 7-10.
.. [2] C. Raiciu et al., "Improving datacenter performance and robustness with multipath TCP", SIGCOMM 2011.
.. [3] RFC 6356, "Coupled Congestion Control for Multipath Transport Protocols".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from tcpmodels.topology_addressing import plane_address

__all__ = ["P1Config", "DEFAULT_CONFIG", "EXPERIMENTS", "PROTOCOLS", "ENGINES", "schedule", "run_plan",
           "run_campaign", "build_dataset", "subflow_stats", "kernel_flows", "host_addr", "KernelSession",
           "ns3_config", "run_ns3", "N_HOSTS", "AGGREGATOR_HOSTS", "WORKER_HOSTS"]

KB = 1000
REPO = Path(__file__).resolve().parents[2]
N_HOSTS = 16
N_CORES = 4
AGGREGATOR_HOSTS = (0, 1, 2, 3)
WORKER_HOSTS = tuple(range(4, 16))
EXPERIMENTS = ("s4", "s5_query_nobg", "s5_query_bg", "s5_message_bg")
PROTOCOLS = ("tcp", "mptcp")
ENGINES = ("kernel", "ns3")
BG_PORT = 5201
FLOW_PORT = 5202
SCHEMA = 1
_KEY = ("engine", "experiment", "protocol", "seed")


@dataclass(frozen=True, kw_only=True)
class P1Config:
    """Setting of the P1 campaign (Table 1 and the workloads of Sections 4 and 5).

    Parameters
    ----------
    host_rate_bps, edge_agg_rate_bps, agg_core_rate_bps : float
        Link rates host-edge, edge-aggregation, aggregation-core (paper 100/200/400 Mbit/s). [bit/s]
    buffer_bytes : int
        Drop-tail buffer at every link end (paper 100 KB). [bytes]
    rtt_s : float
        Round-trip propagation delay between any two hosts (paper 0.5 ms). [s]
    delay_element : bool
        Kernel: make ``rtt_s`` with the userspace delay element on the 16 host links.
        Default False: the namespaces' own round trip (tens of microseconds, measured
        and recorded per run). On this shared 2-core host (load 7-20 from other
        campaigns) the 16 delay elements were not scheduled in time: in a timing run
        the background transfers reached 50-60 instead of 92 Mbit/s and the median
        70 KB flow took 0.3-0.4 s (lost SYNs, timeouts) against 13-21 ms without them.
    cc : str
        Congestion control of every kernel socket and subflow ("reno": LIA's uncoupled rule).
    background_share_s4 : float
        Share of hosts running background transfers in Section 4 (paper 33 %). [-]
    short_size_bytes : int
        Size of the Section 4 short flows (paper 70 KB). [bytes]
    short_mean_interarrival_s : float
        Mean Poisson inter-arrival of short flows per sending host (paper 200 ms). [s]
    query_sizes_bytes, message_sizes_bytes : tuple of int
        Sizes of the Section 5 query (1-16 KB) and short-message (50 KB-1 MB) flows. [bytes]
    query_mean_interarrival_s, message_mean_interarrival_s : float
        Mean Poisson inter-arrival per worker (paper 200 ms and 500 ms). [s]
    background_share_s5 : float
        Share of workers receiving a background transfer in Section 5 (paper 50 %). [-]
    warmup_s : float
        Background runs alone this long before the first measured flow. [s]
    duration_s4_s, duration_s5_s : float
        Span of flow arrivals per run. [s]
    drain_s : float
        Background keeps running this long after the last arrival. [s]
    seeds : tuple of int
        Workload seeds (each gives new pairs, destinations, arrivals).
    experiments : tuple of str
        Experiments to run, from :data:`EXPERIMENTS`.
    """

    host_rate_bps: float = 100e6
    edge_agg_rate_bps: float = 200e6
    agg_core_rate_bps: float = 400e6
    buffer_bytes: int = 100_000
    rtt_s: float = 0.5e-3
    delay_element: bool = False
    cc: str = "reno"
    background_share_s4: float = 1 / 3
    short_size_bytes: int = 70 * KB
    short_mean_interarrival_s: float = 0.200
    query_sizes_bytes: tuple[int, ...] = (1 * KB, 2 * KB, 4 * KB, 8 * KB, 16 * KB)
    query_mean_interarrival_s: float = 0.200
    message_sizes_bytes: tuple[int, ...] = (50 * KB, 100 * KB, 200 * KB, 500 * KB, 1000 * KB)
    message_mean_interarrival_s: float = 0.500
    background_share_s5: float = 0.5
    warmup_s: float = 2.0
    duration_s4_s: float = 30.0
    duration_s5_s: float = 20.0
    drain_s: float = 3.0
    seeds: tuple[int, ...] = (0, 1, 2)
    experiments: tuple[str, ...] = EXPERIMENTS

    def __post_init__(self):
        for name in ("host_rate_bps", "edge_agg_rate_bps", "agg_core_rate_bps"):
            v = getattr(self, name)
            if not 1e5 <= v <= 1e10:
                raise ValueError(f"{name} [bit/s] must be in [1e5, 1e10]; got {v}")
        if not 1_500 <= self.buffer_bytes <= 100_000_000:
            raise ValueError(f"buffer_bytes [bytes] must be in [1500, 1e8]; got {self.buffer_bytes}")
        if not 0 < self.rtt_s <= 1.0:
            raise ValueError(f"rtt_s [s] must be in (0, 1]; got {self.rtt_s}")
        for name in ("background_share_s4", "background_share_s5"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} [-] must be in [0, 1]; got {v}")
        for name in ("short_mean_interarrival_s", "query_mean_interarrival_s", "message_mean_interarrival_s"):
            v = getattr(self, name)
            if not 0.001 <= v <= 60:
                raise ValueError(f"{name} [s] must be in [0.001, 60]; got {v}")
        for name in ("query_sizes_bytes", "message_sizes_bytes"):
            sizes = getattr(self, name)
            if not sizes or any(not 1 <= s <= 2**31 for s in sizes):
                raise ValueError(f"{name} [bytes] must be a non-empty list of sizes in [1, 2**31]; got {sizes}")
        if not 1 <= self.short_size_bytes <= 2**31:
            raise ValueError(f"short_size_bytes [bytes] must be in [1, 2**31]; got {self.short_size_bytes}")
        for name in ("duration_s4_s", "duration_s5_s"):
            v = getattr(self, name)
            if not 0 < v <= 3600:
                raise ValueError(f"{name} [s] must be in (0, 3600]; got {v}")
        for name in ("warmup_s", "drain_s"):
            v = getattr(self, name)
            if not 0 <= v <= 600:
                raise ValueError(f"{name} [s] must be in [0, 600]; got {v}")
        bad = [e for e in self.experiments if e not in EXPERIMENTS]
        if bad:
            raise ValueError(f"experiments must be taken from {EXPERIMENTS}; got {bad}")
        if not self.seeds:
            raise ValueError("seeds must hold at least one seed")

    def to_dict(self) -> dict:
        return asdict(self)

    def hash(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


DEFAULT_CONFIG = P1Config()


# ------------------------------------------------------------------ the schedule
def _poisson_times_s(rng: np.random.Generator, mean_s: float, t0_s: float, t1_s: float) -> np.ndarray:
    """Arrival times of a Poisson process of mean inter-arrival ``mean_s`` in [t0_s, t1_s). [s]"""
    n_max = int((t1_s - t0_s) / mean_s * 3 + 50)
    t = t0_s + np.cumsum(rng.exponential(mean_s, n_max))
    if t[-1] < t1_s:  # vanishingly unlikely; draw more rather than truncate the process
        return np.concatenate([t, _poisson_times_s(rng, mean_s, float(t[-1]), t1_s)])
    return t[t < t1_s]


def _derangement(rng: np.random.Generator, n: int) -> np.ndarray:
    while True:
        p = rng.permutation(n)
        if not np.any(p == np.arange(n)):
            return p


def schedule(config: P1Config, experiment: str, protocol: str, seed: int) -> list[dict]:
    """Every connection of one run, engine-neutral.

    Parameters
    ----------
    config : P1Config
    experiment : str
        One of :data:`EXPERIMENTS`.
    protocol : {"tcp", "mptcp"}
        Section 4: the background's protocol (short flows are always TCP). Section 5:
        the protocol of every connection.
    seed : int
        Workload seed. The same seed gives the same pairs and arrivals for both
        protocols (common random numbers), so TCP and MPTCP runs differ only in protocol.

    Returns
    -------
    list of dict
        One per connection: ``conn_id, kind`` ("background", "short", "query",
        "message"), ``src, dst`` (host index 0-15), ``start_s`` [s], ``size_bytes``
        [bytes] (``None``: runs until ``end_s``), ``end_s`` [s], ``mptcp`` (bool),
        ``plane`` (core of a single-path connection, the per-flow ECMP choice; drawn for
        every connection so that the draws do not depend on the protocol).
    """
    if experiment not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {EXPERIMENTS}; got {experiment!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}; got {protocol!r}")
    rng = np.random.default_rng([int(seed), EXPERIMENTS.index(experiment)])
    mptcp = protocol == "mptcp"
    conns: list[dict] = []
    t_first = config.warmup_s
    duration = config.duration_s4_s if experiment == "s4" else config.duration_s5_s
    end_s = t_first + duration + config.drain_s

    def add(kind, src, dst, start_s, size_bytes, is_mptcp):
        conns.append({"conn_id": len(conns), "kind": kind, "src": int(src), "dst": int(dst),
                      "start_s": round(float(start_s), 6), "size_bytes": None if size_bytes is None else int(size_bytes),
                      "end_s": end_s, "mptcp": bool(is_mptcp), "plane": int(rng.integers(N_CORES))})

    if experiment == "s4":
        n_bg = int(round(N_HOSTS * config.background_share_s4))
        partner = _derangement(rng, N_HOSTS)
        bg_hosts = np.sort(rng.choice(N_HOSTS, n_bg, replace=False))
        for h in bg_hosts:
            add("background", h, partner[h], 0.0, None, mptcp)
        for h in range(N_HOSTS):
            if h in bg_hosts:
                continue
            for t in _poisson_times_s(rng, config.short_mean_interarrival_s, t_first, t_first + duration):
                dst = rng.integers(N_HOSTS - 1)
                add("short", h, dst + (dst >= h), t, config.short_size_bytes, False)
    else:
        kind = "message" if experiment == "s5_message_bg" else "query"
        sizes = config.message_sizes_bytes if kind == "message" else config.query_sizes_bytes
        mean = config.message_mean_interarrival_s if kind == "message" else config.query_mean_interarrival_s
        if experiment.endswith("_bg"):
            n_bg = int(round(len(WORKER_HOSTS) * config.background_share_s5))
            bg_workers = np.sort(rng.choice(WORKER_HOSTS, n_bg, replace=False))
            for i, w in enumerate(bg_workers):
                add("background", AGGREGATOR_HOSTS[(i + 1) % len(AGGREGATOR_HOSTS)], w, 0.0, None, mptcp)
        for w in WORKER_HOSTS:
            times = _poisson_times_s(rng, mean, t_first, t_first + duration)
            picks = rng.integers(len(sizes), size=len(times))
            for t, k in zip(times, picks):
                add(kind, AGGREGATOR_HOSTS[w % len(AGGREGATOR_HOSTS)], w, t, sizes[k], mptcp)
    conns.sort(key=lambda c: (c["start_s"], c["conn_id"]))
    return conns


def run_plan(config: P1Config, engine: str) -> list[dict]:
    """The runs of a campaign on ``engine``: every experiment x protocol for seed 0, then seed 1, ...

    Seeds outermost, so a campaign cut short has every (experiment, protocol) cell.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
    return [{"engine": engine, "experiment": e, "protocol": p, "seed": int(s)}
            for s in config.seeds for e in config.experiments for p in PROTOCOLS]


# ------------------------------------------------------------- kernel engine
def host_addr(host: int, plane: int) -> str:
    """Address of ``host`` on ``plane`` in :func:`~tcpmodels.testbed.topologies.fat_tree` (and in ns-3's fat-tree)."""
    return plane_address(int(host), int(plane))


def kernel_flows(conns: list[dict], config: P1Config, *, sample_interval_s: float = 0.1) -> dict[int, list[dict]]:
    """The schedule as traffic-module flows, grouped by sending host (uploads: the sender is the client).

    A single-path connection binds its plane-``plane`` source and targets the
    destination's plane-``plane`` address; an MPTCP connection targets plane 0 and
    lets the path manager add the other planes. Background transfers sample TCP_INFO
    every ``sample_interval_s``. [s]
    """
    out: dict[int, list[dict]] = {}
    for c in conns:
        plane = 0 if c["mptcp"] else c["plane"]
        bg = c["size_bytes"] is None
        f = {"flow_id": c["conn_id"] + 1, "kind": c["kind"], "dst": host_addr(c["dst"], plane),
             "bind": None if c["mptcp"] else host_addr(c["src"], plane),
             "port": BG_PORT if bg else FLOW_PORT, "size_bytes": c["size_bytes"],
             "duration_s": round(c["end_s"] - c["start_s"], 6) if bg else None, "cc": config.cc,
             "mptcp": c["mptcp"], "direction": "upload", "start_s": c["start_s"],
             "sample_interval_s": sample_interval_s if bg else 0.0, "path": plane}
        out.setdefault(c["src"], []).append(f)
    return out


def _topology(config: P1Config):
    from tcpmodels.testbed import fat_tree

    topo = fat_tree(host_rate_bps=config.host_rate_bps, edge_agg_rate_bps=config.edge_agg_rate_bps,
                    agg_core_rate_bps=config.agg_core_rate_bps, buffer_bytes=config.buffer_bytes)
    # every host pair crosses exactly two host links, each twice per round trip
    links = tuple(replace(lk, delay_s=config.rtt_s / 4) if lk.name.startswith("hl") and config.delay_element else lk
                  for lk in topo.links)
    sysctls = (("net.ipv4.tcp_no_metrics_save", "1"),)  # no ssthresh carried from one flow to the next
    nodes = tuple(replace(n, sysctls=n.sysctls + sysctls) if n.name.startswith("h") else n for n in topo.nodes)
    return replace(topo, links=links, nodes=nodes)


def _client_main(spec: dict) -> None:
    """Run inside a host namespace: every flow of ``spec["flows"]`` at ``t0_mono_s + start_s``."""
    from tcpmodels.testbed import traffic

    lock = threading.Lock()
    t0 = float(spec["t0_mono_s"])
    threads = [threading.Thread(target=traffic.run_flow, args=(f, t0, lock), daemon=True) for f in spec["flows"]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class KernelSession:
    """The fat-tree testbed with an MPTCP-capable traffic server on both ports of every host; reused across runs."""

    def __init__(self, config: P1Config):
        self.config = config
        self.tb = None
        self.servers: list = []
        self.setup_s = None

    def __enter__(self) -> "KernelSession":
        from tcpmodels.testbed import Testbed
        from tcpmodels.testbed import workload as wl

        t0 = time.monotonic()
        self.tb = Testbed(_topology(self.config)).__enter__()
        try:
            for n in range(N_HOSTS):
                for port in (BG_PORT, FLOW_PORT):
                    srv = wl.start_server(self.tb, f"h{n}", port=port, mptcp=True)
                    threading.Thread(target=lambda s=srv: [None for _ in s.popen.stdout], daemon=True).start()
                    self.servers.append(srv)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.setup_s = time.monotonic() - t0
        self.base_rtt_s = self.measure_base_rtt_s()
        return self

    def measure_base_rtt_s(self) -> dict:
        """Idle ICMP round trip between hosts in different pods (h0 -> h12 on each plane). [s]"""
        from tcpmodels.testbed import workload as wl

        out = {}
        for plane in range(N_CORES):
            rtts = wl.ping_rtt(self.tb, "h0", host_addr(12, plane), count=10, interval_s=0.01,
                               bind=host_addr(0, plane))
            out[f"plane{plane}"] = float(np.median(rtts)) if len(rtts) else None
        return out

    def __exit__(self, *exc) -> None:
        for srv in self.servers:
            if srv.popen.poll() is None:
                srv.popen.kill()
        self.servers = []
        if self.tb is not None:
            self.tb.__exit__(*exc)
            self.tb = None

    def run(self, conns: list[dict], *, capture_dir: Path | None = None, capture_stem: str = "") -> dict:
        """Run one schedule; return the flow records (one per connection) and capture statistics."""
        import subprocess

        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed.capture import start_capture

        tb = self.tb
        for srv in self.servers:
            if srv.popen.poll() is not None:
                raise TestbedError(f"the traffic server in {srv.node} port {srv.port} has exited")
        by_host = kernel_flows(conns, self.config)
        caps = []
        if capture_dir is not None:
            senders = sorted({c["src"] for c in conns if c["kind"] == "short"})
            for h in senders:
                caps.append(start_capture(tb, f"h{h}", f"hl{h}", Path(capture_dir) / f"{capture_stem}_h{h}.pcap",
                                          snaplen_bytes=96, bpf_filter=f"tcp port {FLOW_PORT}"))
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        t0 = time.monotonic() + 1.5 + 0.1 * len(by_host)  # every client has started its threads by then
        end_s = max(c["end_s"] for c in conns)
        procs = {}
        try:
            for h, flows in by_host.items():
                p = tb.popen(f"h{h}", [sys.executable, "-m", "tcpmodels.experiments.p1", "client"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, label=f"p1-client-h{h}")
                try:
                    p.stdin.write(json.dumps({"t0_mono_s": t0, "flows": flows}))
                    p.stdin.close()
                except BrokenPipeError as exc:
                    p.wait(timeout=10)
                    raise TestbedError(f"p1 client in h{h} exited at start: {p.stderr.read().strip()[-2000:]}") from exc
                p.stdin = None
                procs[h] = p
            records = []
            deadline = t0 + end_s + 60.0
            for h, p in procs.items():
                try:
                    out, err = p.communicate(timeout=max(5.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired as exc:
                    raise TestbedError(f"p1 client in h{h} did not finish within {end_s + 60:.0f} s") from exc
                if p.returncode != 0:
                    raise TestbedError(f"p1 client in h{h} failed (exit {p.returncode}): {err.strip()[-2000:]}")
                records += [json.loads(x) for x in out.splitlines() if x.strip()]
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            time.sleep(0.1)
            cap_stats = [c.stop() for c in caps]
        return {"run_id": tb.run_id, "records": records, "captures": cap_stats, "t0_mono_s": t0,
                "base_rtt_s": self.base_rtt_s}


# ----------------------------------------------------------- record analysis
def subflow_stats(samples: list[dict], *, mss_default_bytes: float = 1448.0) -> list[dict]:
    """Per-subflow summary of a background connection from its TCP_INFO samples.

    Parameters
    ----------
    samples : list of dict
        The sender's TCP_INFO samples (``t_s``, ``cwnd_segments``, ``ssthresh_segments``,
        ``srtt_s``, ``bytes_acked``, ``bytes_sent``, ``mss_bytes``, ``ca_state``; MPTCP:
        ``subflow``, ``local``, ``remote``).
    mss_default_bytes : float
        MSS used when a sample reports none. [bytes]

    Returns
    -------
    list of dict
        One per subflow: ``subflow``, ``remote``, ``duration_s`` [s], ``throughput_bps``
        [bit/s] (bytes acknowledged over the sampled span), ``rtt_mean_s`` [s] (mean srtt),
        ``mss_bytes``, ``cwnd_mean_segments``, ``loss_events`` (window reductions seen in the
        samples, :func:`tcpmodels.fit.cubic.cwnd_epochs`), ``segments_sent``,
        ``loss_event_rate`` [-] (loss events per segment sent; a lower bound, as reductions
        closer together than the sampling interval merge) and ``retransmit_rate`` [-].
    """
    import pandas as pd

    from tcpmodels.fit.cubic import cwnd_epochs

    if not samples:
        return []
    s = pd.DataFrame(samples)
    if "subflow" not in s:
        s["subflow"] = 0
    s["remote"] = s.get("remote", pd.Series([""] * len(s))).fillna("")
    out = []
    for (sub, remote), g in s.groupby(["subflow", "remote"], sort=True):
        g = g.sort_values("t_s")
        g = g[g["cwnd_segments"] > 0]
        if len(g) < 3:
            continue
        span = float(g["t_s"].iloc[-1] - g["t_s"].iloc[0])
        acked = float(g["bytes_acked"].iloc[-1] - g["bytes_acked"].iloc[0])
        mss = float(g["mss_bytes"].replace(0, np.nan).median()) if "mss_bytes" in g else mss_default_bytes
        mss = mss if np.isfinite(mss) else mss_default_bytes
        ep = cwnd_epochs(g["t_s"].to_numpy(float), g["cwnd_segments"].to_numpy(float),
                         g["ssthresh_segments"].to_numpy(float), g["ca_state"].to_numpy(int))
        sent = float(g["bytes_sent"].iloc[-1] - g["bytes_sent"].iloc[0]) / mss
        retr = float(g["bytes_retrans"].iloc[-1] - g["bytes_retrans"].iloc[0]) / mss if "bytes_retrans" in g else np.nan
        out.append({"subflow": int(sub), "remote": remote, "duration_s": span,
                    "throughput_bps": acked * 8 / span if span > 0 else np.nan,
                    "rtt_mean_s": float(g["srtt_s"].mean()), "mss_bytes": mss,
                    "cwnd_mean_segments": float(g["cwnd_segments"].mean()), "loss_events": int(len(ep)),
                    "segments_sent": sent, "loss_event_rate": len(ep) / sent if sent > 0 else np.nan,
                    "retransmit_rate": retr / sent if sent > 0 else np.nan})
    return out


def _classify_capture(path: Path) -> list[dict]:
    """Pattern (P1 Table 3) of every short flow in one capture, keyed by the sender's port."""
    import warnings

    from tcpmodels.traces import TraceWarning, classify_short_flows, read_pcap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    if len(packets) == 0:
        return []
    cl = classify_short_flows(packets)
    return [{"src_port": int(r.src_port), "pattern": str(r.pattern), "fct_capture_s": float(r.fct_s),
             "retransmitted_packets": int(r.retransmitted_packets),
             "timeout_gap_s": None if np.isnan(r.timeout_gap_s) else float(r.timeout_gap_s)}
            for r in cl.itertuples()]


def _kernel_rows(conns: list[dict], res: dict, capture_dir: Path | None, capture_stem: str) -> tuple[list, list, list]:
    """Flow rows, background subflow rows and kept TCP_INFO samples of one kernel run."""
    by_id = {r.get("flow_id"): r for r in res["records"]}
    patterns: dict[tuple[int, int], dict] = {}
    if capture_dir is not None:
        for cap in res.get("captures", []):
            host = int(Path(cap["path"]).stem.rsplit("_h", 1)[1])
            for row in _classify_capture(Path(cap["path"])):
                patterns[(host, row["src_port"])] = row
    flows, subflows, samples = [], [], []
    for c in conns:
        r = by_id.get(c["conn_id"] + 1, {})
        row = {**{k: c[k] for k in ("conn_id", "kind", "src", "dst", "start_s", "size_bytes", "mptcp", "plane")},
               "fct_s": r.get("completion_s") if not r.get("error") else None, "bytes": r.get("bytes"),
               "rate_bps": r.get("rate_bps"), "connect_s": r.get("connect_s"),
               "mptcp_subflows": r.get("mptcp_subflows"), "error": r.get("error") or (None if r else "no record")}
        if c["kind"] == "short" and r.get("src"):
            port = int(r["src"].rsplit(":", 1)[1])
            pat = patterns.get((c["src"], port), {})
            row.update(pattern=pat.get("pattern"), fct_capture_s=pat.get("fct_capture_s"),
                       retransmitted_packets=pat.get("retransmitted_packets"), timeout_gap_s=pat.get("timeout_gap_s"))
        flows.append(row)
        if c["kind"] == "background" and r.get("samples"):
            for sf in subflow_stats(r["samples"]):
                subflows.append({"conn_id": c["conn_id"], "src": c["src"], "dst": c["dst"], "mptcp": c["mptcp"],
                                 **sf})
            if not samples:  # keep the first background connection's samples (the LIA time series)
                keep = ("t_s", "subflow", "remote", "cwnd_segments", "ssthresh_segments", "srtt_s", "ca_state",
                        "bytes_acked", "total_retrans")
                samples = [{"conn_id": c["conn_id"], **{k: s.get(k) for k in keep}} for s in r["samples"]]
    return flows, subflows, samples


# --------------------------------------------------------------- ns-3 engine
def ns3_config(conns: list[dict], config: P1Config, *, seed: int, variant: str = "TcpNewReno"):
    """The schedule as a :class:`tcpmodels.sim.config.FatTree`.

    MPTCP connections get one subflow per core, LIA-coupled (``ns3::TcpLia``); a
    single-path connection is pinned to the core its ``plane`` names (the schedule's
    per-flow ECMP draw, the same the kernel run uses). Links: Table 1 rates and buffer,
    delays making the inter-pod RTT ``config.rtt_s``.
    """
    from tcpmodels.sim.config import FatTree, FatTreeConnection, TcpOptions, fat_tree_link

    objs = tuple(FatTreeConnection(src=c["src"], dst=c["dst"], start_s=c["start_s"], size_bytes=c["size_bytes"],
                                   cores=tuple(range(N_CORES)) if c["mptcp"] else (c["plane"],),
                                   coupled=c["mptcp"], variant=variant, tag=f"{c['kind']}:{c['conn_id']}")
                 for c in conns)
    return FatTree(connections=objs,
                   host_link=fat_tree_link(config.host_rate_bps, rtt_s=config.rtt_s, queue_bytes=config.buffer_bytes),
                   edge_agg_link=fat_tree_link(config.edge_agg_rate_bps, rtt_s=config.rtt_s,
                                               queue_bytes=config.buffer_bytes),
                   agg_core_link=fat_tree_link(config.agg_core_rate_bps, rtt_s=config.rtt_s,
                                               queue_bytes=config.buffer_bytes),
                   tcp=TcpOptions(), duration_s=max(c["end_s"] for c in conns), seed=int(seed))


def run_ns3(conns: list[dict], config: P1Config, *, seed: int, out_dir: str | Path) -> dict:
    """Simulate one schedule with :func:`tcpmodels.sim.run.run_config`; return its per-connection tables."""
    from tcpmodels.sim.run import run_config

    res = run_config(ns3_config(conns, config, seed=seed), out_dir)
    return {"apps": res.apps, "flows": res.flows, "record": res.record}


def _ns3_rows(conns: list[dict], apps, fm) -> tuple[list[dict], list[dict]]:
    """Flow rows (as for the kernel) and per-subflow rows of the background connections of one ns-3 run.

    ``lost_packets`` of a connection is FlowMonitor's count of its data packets lost in
    the network (all subflows), the ns-3 counterpart of "the sender retransmitted".
    """
    import pandas as pd

    apps = apps.set_index("tag")
    lost = {}
    if fm is not None and len(fm) and "lost_packets" in fm:
        data = fm[fm["direction"] == "data"] if "direction" in fm else fm
        lost = data.groupby("flow_index")["lost_packets"].sum().to_dict()
    rows, subflows = [], []
    for c in conns:
        tag = f"{c['kind']}:{c['conn_id']}"
        r = apps.loc[tag].to_dict() if tag in apps.index else {}
        fct = r.get("fct_s")
        fct = float(fct) if fct is not None and pd.notna(fct) else None
        row = {**{k: c[k] for k in ("conn_id", "kind", "src", "dst", "start_s", "size_bytes", "mptcp", "plane")},
               "fct_s": fct, "bytes": r.get("rx_bytes"), "rate_bps": r.get("goodput_bps"), "connect_s": None,
               "mptcp_subflows": r.get("n_subflows"),
               "error": None if (fct is not None or c["size_bytes"] is None or not r) else "not completed"}
        if not r:
            row["error"] = "no result row"
        conn_index = r.get("connection")
        row["lost_packets"] = int(lost.get(conn_index, 0)) if conn_index is not None and lost else None
        rows.append(row)
        if c["size_bytes"] is None and r:
            span = max(c["end_s"] - c["start_s"], 1e-9)
            for core in range(N_CORES):
                b = r.get(f"rx_bytes_core{core}")
                if b is not None and pd.notna(b) and (b > 0 or c["mptcp"]):
                    subflows.append({"conn_id": c["conn_id"], "src": c["src"], "dst": c["dst"], "mptcp": c["mptcp"],
                                     "subflow": core, "remote": f"core{core}", "duration_s": span,
                                     "throughput_bps": float(b) * 8 / span})
    return rows, subflows


# --------------------------------------------------------------- campaigns
def run_campaign(records_path: str | Path, config: P1Config = DEFAULT_CONFIG, *, engine: str = "kernel",
                 capture_dir: str | Path | None = None, plan: list[dict] | None = None, limit: int | None = None,
                 progress: bool = True, lock_timeout_s: float = 3600.0, yield_s: float = 1.0) -> int:
    """Run (or resume) the campaign on ``engine``; return the number of runs measured in this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one record per run; runs already on file are skipped.
    engine : {"kernel", "ns3"}
    capture_dir : str or Path, optional
        Kernel: capture the Section 4 short flows here (one pcap per sending host)
        and classify them into P1's patterns.
    plan : list of dict, optional
        Runs instead of :func:`run_plan` (tests use one tiny run).
    limit : int, optional
        Stop after this many new runs.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.records import JsonlRecords, Stopwatch

    def stem(s):
        return f"p1_{s['experiment']}_{s['protocol']}_seed{s['seed']}"

    def capture(s):
        cap = Path(capture_dir) if (capture_dir is not None and s["experiment"] == "s4") else None
        if cap is not None:
            cap.mkdir(parents=True, exist_ok=True)
        return cap

    opened = []  # testbeds built and not yet reported: the next record carries the setup time

    def session_for(s, session):
        if engine != "kernel" or session is not None:
            return session
        opened.append(KernelSession(config).__enter__())
        return opened[-1]

    def measure(s, session):
        conns = schedule(config, s["experiment"], s["protocol"], s["seed"])
        if engine == "kernel":
            extra = {"setup_s": round(opened[-1].setup_s, 2)} if opened else {}
            opened.clear()
            return {"conns": conns, "res": session.run(conns, capture_dir=capture(s), capture_stem=stem(s)),
                    "extra": extra}
        out = Path(records_path).parent / "ns3" / stem(s)
        return {"conns": conns, "res": run_ns3(conns, config, seed=s["seed"], out_dir=out)}

    def finish(s, measured):
        conns, res = measured["conns"], measured["res"]
        if engine == "kernel":
            watch = Stopwatch()
            flows, subflows, samples = _kernel_rows(conns, res, capture(s), stem(s))
            extra = {**measured["extra"], "run_id": res["run_id"], "captures": res["captures"],
                     "analysis_s": round(watch.elapsed_s, 2), "base_rtt_s": res["base_rtt_s"]}
        else:
            flows, subflows = _ns3_rows(conns, res["apps"], res["flows"])
            samples = []
            extra = {"sim_record": {k: v for k, v in res["record"].items() if isinstance(v, (int, float, str))}}
        return {"schema": SCHEMA, "config_hash": config.hash(), "config": config.to_dict(),
                "n_connections": len(conns), "flows": flows, "subflows": subflows, "tcpinfo": samples, **extra}

    plan = run_plan(config, engine) if plan is None else plan
    return run_samples(JsonlRecords(records_path, _KEY), plan, measure, desc=f"p1 {engine}", session_for=session_for,
                       on_host=lambda s: engine == "kernel", finish=finish, limit=limit, progress=progress,
                       lock_timeout_s=lock_timeout_s, yield_s=yield_s, unit="run")


# ----------------------------------------------------------------- dataset
def _frames(recs: list[dict]):
    import pandas as pd

    flow_rows, sub_rows, info_rows, run_rows = [], [], [], []
    for r in recs:
        key = {k: r[k] for k in _KEY}
        flow_rows += [{**key, **f} for f in r["flows"]]
        sub_rows += [{**key, **f} for f in r.get("subflows", [])]
        info_rows += [{**key, **f} for f in r.get("tcpinfo", [])]
        run_rows.append({**key, "wall_s": r["wall_s"], "setup_s": r.get("setup_s"), "started_utc": r["started_utc"],
                         "load_avg_1m": r["load_avg"][0], "lock_wait_s": r.get("lock_wait_s", 0.0),
                         "n_connections": r["n_connections"],
                         "n_errors": sum(1 for f in r["flows"] if f.get("error")),
                         "capture_drops": sum(int(c.get("dropped") or 0) for c in r.get("captures", []))})
    flows = pd.DataFrame(flow_rows)
    for col in ("pattern", "fct_capture_s", "retransmitted_packets", "timeout_gap_s", "lost_packets"):
        if col not in flows:
            flows[col] = None
    flows["size_bytes"] = flows["size_bytes"].astype("Int64")
    for col in ("fct_s", "fct_capture_s", "rate_bps", "connect_s", "timeout_gap_s", "bytes"):
        flows[col] = pd.to_numeric(flows[col], errors="coerce").astype(float)
    for col in ("retransmitted_packets", "lost_packets"):
        flows[col] = pd.to_numeric(flows[col], errors="coerce").astype("Int64")
    flows["mptcp_subflows"] = pd.to_numeric(flows["mptcp_subflows"], errors="coerce").astype("Int64")
    flows["pattern"] = flows["pattern"].astype("string")
    flows["error"] = flows["error"].astype("string")
    return flows, pd.DataFrame(sub_rows), pd.DataFrame(info_rows), pd.DataFrame(run_rows)


def build_dataset(records_paths, data_dir: str | Path, config: P1Config = DEFAULT_CONFIG, *, note: str = "",
                  ship_capture: str | Path | None = None, ship_capture_s: float = 6.0,
                  ns3_status: str = "") -> dict:
    """Write ``p1_flows``, ``p1_subflows``, ``p1_tcpinfo``, ``p1_runs`` (Parquet) and ``p1_provenance.json``.

    Parameters
    ----------
    records_paths : list of str or Path
        JSONL files of :func:`run_campaign` (any engines); missing files are skipped.
    data_dir : str or Path
        ``data/``: tables go to ``datasets/``, a trimmed capture to ``captures/``.
    ship_capture : str or Path, optional
        A Section 4 capture whose first ``ship_capture_s`` seconds are kept as
        ``captures/p1_s4_sample.pcap.gz`` for the notebook to classify live. [s]
    ns3_status : str
        Why the ns-3 column is missing, when it is.
    """
    from datetime import datetime

    from tcpmodels.records import JsonlRecords, git_state, host_facts, utc_now
    from tcpmodels.testbed._system import tool_versions

    data_dir = Path(data_dir)
    out_dir = data_dir / "datasets"
    out_dir.mkdir(parents=True, exist_ok=True)
    recs = []
    for p in records_paths:
        recs += JsonlRecords(p, _KEY).read()
    if not recs:
        raise ValueError(f"no run records in {list(map(str, records_paths))}")
    flows, subflows, tcpinfo, runs = _frames(recs)
    flows.to_parquet(out_dir / "p1_flows.parquet", index=False, compression="zstd")
    subflows.to_parquet(out_dir / "p1_subflows.parquet", index=False, compression="zstd")
    subflows.to_csv(out_dir / "p1_subflows.csv", index=False)
    tcpinfo.to_parquet(out_dir / "p1_tcpinfo.parquet", index=False, compression="zstd")
    runs.to_parquet(out_dir / "p1_runs.parquet", index=False, compression="zstd")
    runs.to_csv(out_dir / "p1_runs.csv", index=False)
    shipped = None
    if ship_capture is not None:
        from tcpmodels.fit.dataset import trim_capture

        cap_dir = data_dir / "captures"
        cap_dir.mkdir(parents=True, exist_ok=True)
        shipped = trim_capture(Path(ship_capture), cap_dir / "p1_s4_sample.pcap.gz", seconds=ship_capture_s)
        shipped = {"source": str(ship_capture), "seconds": ship_capture_s, **(shipped or {}),
                   "what": "first seconds of one Section 4 sender's host-link capture (70 KB flows, port "
                           f"{FLOW_PORT}, snap length 96), kernel engine", "written_utc": utc_now()}
        (cap_dir / "p1_s4_sample.json").write_text(json.dumps(shipped, indent=1) + "\n")
    engines = {}
    for eng, g in runs.groupby("engine"):
        starts = sorted(g["started_utc"])
        engines[eng] = {
            "runs": int(len(g)), "wall_s_sum": round(float(g["wall_s"].sum()), 1),
            "wall_s_median": round(float(g["wall_s"].median()), 1),
            "setup_s": None if g["setup_s"].isna().all() else round(float(g["setup_s"].dropna().sum()), 1),
            "lock_wait_s_sum": round(float(g["lock_wait_s"].sum()), 1),
            "first_run_utc": starts[0], "last_run_utc": starts[-1],
            "elapsed_s": round((datetime.fromisoformat(starts[-1]) - datetime.fromisoformat(starts[0])).total_seconds()
                               + float(g.sort_values("started_utc")["wall_s"].iloc[-1]), 1),
            "load_avg_1m": {"min": float(g["load_avg_1m"].min()), "median": round(float(g["load_avg_1m"].median()), 2),
                            "max": float(g["load_avg_1m"].max())},
            "seeds": sorted(int(x) for x in g["seed"].unique()),
            "flow_errors": int(g["n_errors"].sum()),
        }
    configs = {}
    for r in recs:
        configs.setdefault(r["engine"], r.get("config", config.to_dict()))
    rtts = [v for r in recs if r.get("base_rtt_s") for v in r["base_rtt_s"].values() if v is not None]
    kcfg = configs.get("kernel", config.to_dict())
    prov = {
        "dataset": "p1", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p1 dataset",
        "command": " ".join(["python -m tcpmodels.experiments.p1", *sys.argv[1:]]) if sys.argv else "",
        "records": [str(p) for p in records_paths], "engines": engines,
        "config": configs.get("kernel", next(iter(configs.values()))), "configs": configs,
        "kernel_base_rtt_ms": round(float(np.median(rtts)) * 1e3, 4) if rtts else None,
        "kernel_setting": {
            "topology": "tcpmodels.testbed.topologies.fat_tree (k=4, 36 namespaces), "
                        + (f"delay element on the 16 host links ({kcfg['rtt_s'] / 4 * 1e3:g} ms each way each)"
                           if kcfg.get("delay_element") else "no delay element (namespace round trip only)")
                        + f", tbf + drop-tail {kcfg['buffer_bytes']} B at every link end",
            "mptcp": "Linux kernel MPTCP v1, in-kernel path manager, one subflow per core (planes 1-3 signalled), "
                     f"uncoupled per-subflow {kcfg['cc']}",
            "ecmp": "per-flow: the schedule draws a core per single-path connection, the connection uses that "
                    "plane's addresses",
            "sysctls": {"net.ipv4.tcp_no_metrics_save": 1},
            "fct_definition": "upload: just before connect() on the sender to the last byte read by the receiver",
        },
        "ns3_setting": {"status": ns3_status or ("run" if "ns3" in engines else "not run"),
                        "mptcp": "RFC 6356 LIA-coupled NewReno subflows, one per core (tcpmodels.sim)"},
        "shipped_capture": shipped,
        "host": host_facts(), "tools": tool_versions(), "git": git_state(REPO), "note": note,
        "files": sorted(p.name for p in out_dir.glob("p1_*")),
    }
    from importlib.metadata import PackageNotFoundError, version

    try:
        prov["tools"]["ns3"] = version("ns3")
    except PackageNotFoundError:
        prov["tools"]["ns3"] = None
    (out_dir / "p1_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov


# ------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.experiments.p1", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("run", "resume"):
        p = sub.add_parser(name, help="run or resume the campaign (the same: done runs are skipped)")
        p.add_argument("--records", required=True)
        p.add_argument("--engine", choices=ENGINES, default="kernel")
        p.add_argument("--captures", help="kernel: capture the Section 4 short flows here")
        p.add_argument("--experiments", nargs="+", choices=EXPERIMENTS)
        p.add_argument("--seeds", nargs="+", type=int)
        p.add_argument("--duration-s4-s", type=float)
        p.add_argument("--duration-s5-s", type=float)
        p.add_argument("--drain-s", type=float)
        p.add_argument("--delay-element", action="store_true", help="kernel: 0.5 ms RTT by the delay element")
        p.add_argument("--limit", type=int)
        p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="JSONL records -> Parquet + provenance")
    p.add_argument("--records", nargs="+", required=True)
    p.add_argument("--out", required=True, help="the data/ directory")
    p.add_argument("--ship-capture")
    p.add_argument("--ns3-status", default="")
    p.add_argument("--note", default="")
    p.add_argument("--duration-s4-s", type=float)
    p.add_argument("--duration-s5-s", type=float)
    p.add_argument("--seeds", nargs="+", type=int)
    sub.add_parser("client", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cmd == "client":
        _client_main(json.loads(sys.stdin.read()))
        return 0
    config = DEFAULT_CONFIG
    if getattr(args, "delay_element", False):
        config = replace(config, delay_element=True)
    for name in ("duration_s4_s", "duration_s5_s", "drain_s"):
        if getattr(args, name, None) is not None:
            config = replace(config, **{name: getattr(args, name)})
    if getattr(args, "seeds", None):
        config = replace(config, seeds=tuple(args.seeds))
    if getattr(args, "experiments", None):
        config = replace(config, experiments=tuple(args.experiments))
    from tcpmodels.experiments.campaign import campaign_errors

    with campaign_errors("p1", also=(RuntimeError,)):
        if args.cmd in ("run", "resume"):
            n = run_campaign(args.records, config, engine=args.engine, capture_dir=args.captures, limit=args.limit,
                             progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        else:
            prov = build_dataset(args.records, args.out, config, note=args.note, ship_capture=args.ship_capture,
                                 ns3_status=args.ns3_status)
            print(json.dumps(prov["engines"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
