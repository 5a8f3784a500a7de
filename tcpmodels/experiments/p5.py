"""Campaign of paper P5 (Ono, Nakashima): the ns-3 caterpillar under multiplexed Pareto downloads.

The scenario (:class:`~tcpmodels.sim.config.Caterpillar`, built by
:func:`tcpmodels.sim.scenarios.build_caterpillar`): server S - G1 - G2 - ... - G6,
clients round-robin on G2..G5 (client c on G(2 + c mod 4)), downloads S -> client,
bottleneck G1 -> G2. Client and server links 10 Mbit/s, 15 ms; gateway links 5 or
10 Mbit/s, 15 ms; every queue 3000 packets (drop-tail); TCP NewReno (ns-3
``TcpNewReno`` with SACK and PRR, the package defaults); per client 50 files with
Pareto sizes (mean 10 KB, shape alpha) starting as a Poisson process; 20 s.

Choices where the paper is silent (:class:`P5Config`):

- arrival rate: one new download per client every 0.2 s on average, so the 50
  files of a client start within about 10 s (the paper picked 20 s as the time
  "by which the flows have almost finished"); alternative ``alt_arrival``: 0.4 s;
- gateway delay: 15 ms, like the access links;
- which clients are active: the first n of the round robin, so every articulation
  gateway carries n/4 clients;
- no cap on the Pareto draws.

Cases (the ``case`` field of a run):

``main``
    4 alpha x 4 client counts x 2 bottleneck rates x seeds, as in the paper.
``alt_arrival``
    alpha 1.05 and 1.65, all client counts at 5 Mbit/s, seed 0, with 0.4 s between
    a client's arrivals.
``alt_server_queue``
    alpha 1.65, all client counts and rates, seed 0, with a 50-packet queue on the S -> G1 link (ns-2's
    default ``queue-limit``): a guess at why the paper sees loss at S at all.
``long``
    300 s runs, 32 clients, 10 Mbit/s gateways, open-ended Poisson arrivals (no
    50-file limit, one per client per second on average): a stationary series long
    enough for the Hurst estimators.

Measurements per run (:func:`run_p5`, reduced from :func:`tcpmodels.sim.run.run_config`
output and the bottleneck pcap read with :func:`tcpmodels.traces.read_pcap`):
per 0.1 s bin the bytes and packets dropped at S and at G1 and the bytes accepted by
their queues, G1 -> G2 throughput (wire bytes in the pcap), completed sessions;
per flow start, size, bytes received and completion time; the G1 -> G2 packet-count
series in 10 ms bins and all six Hurst estimators on it
(:func:`tcpmodels.models.hurst.estimate_all`). The pcap stays in the sweep cache
(``runs/p5/cache/<key>/out/bottleneck.pcap``).

Command line::

    python -m tcpmodels.experiments.p5 run [--cases main,long,...] [--seeds 0,1] [--cache runs/p5/cache]
    python -m tcpmodels.experiments.p5 dataset [--cache runs/p5/cache] [--out data/datasets]

``run`` goes through :func:`tcpmodels.sweep.sweep` on a local Dask cluster
with one worker (the host is shared); finished runs are cached and a rerun
skips them. ``dataset`` collects every cached run of the plan (missing ones
are listed, not invented) into ``data/datasets/p5_*.parquet`` plus
``p5_provenance.json``, and adds the Bellcore trace analysis.

References
----------
.. [1] A. Ono, T. Nakashima, "Evaluation of bottleneck performance under
   multiplexing self-similar traffics" (seed 004), Sec. 2.2, Figs. 2-11.
.. [2] W. Leland, M. Taqqu, W. Willinger, D. Wilson, "On the self-similar nature
   of Ethernet traffic (extended version)", IEEE/ACM ToN 2(1), 1-15, 1994.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.experiments.campaign import campaign_errors
from tcpmodels.records import git_state, host_facts, load_average, utc_now

__all__ = [
    "P5Config",
    "DEFAULT_CONFIG",
    "CASES",
    "plan",
    "caterpillar_for",
    "run_p5",
    "run_campaign",
    "packet_counts",
    "bellcore_counts",
    "build_dataset",
    "main",
]

REPO = Path(__file__).resolve().parents[2]
CASES = ("main", "long", "alt_server_queue", "alt_arrival")
#: The Bellcore excerpt, beside the clone (``../shared``) as the shared docs are.
BELLCORE_PATH = REPO.parent / "shared" / "data" / "bellcore" / "BC-pAug89-small.TL"
SERVER_ADDR = "10.0.0.1"  # first /30 of the caterpillar: S is its .1


@dataclass(frozen=True, kw_only=True)
class P5Config:
    """Parameters of the P5 campaign (the paper's values unless the docstring says otherwise).

    Parameters
    ----------
    alphas : tuple of float
        Pareto shapes of the file sizes. [-]
    n_clients : tuple of int
        Active clients.
    backbone_rates_bps : tuple of float
        Gateway-gateway (and bottleneck) rates. [bit/s]
    seeds : tuple of int
        Seeds of the main grid.
    mean_size_bytes : float
        Mean file size. [bytes]
    flows_per_client : int
        Files per client.
    mean_interarrival_s : float
        Mean time between a client's download starts (our choice). [s]
    alt_interarrival_s : float
        The alternative arrival spacing (case ``alt_arrival``). [s]
    alt_server_queue_packets : int
        S -> G1 queue of case ``alt_server_queue``. [packets]
    edge_rate_bps, edge_delay_s, gateway_delay_s : float
        Access links [bit/s], [s]; gateway-link delay (our choice) [s].
    queue_packets : int
        Every queue. [packets]
    duration_s : float
        Simulated time. [s]
    bin_s : float
        Sampling step of queues and sinks. [s]
    hurst_bin_s : float
        Bin of the packet-count series for the Hurst estimators. [s]
    long_duration_s, long_interarrival_s, long_backbone_bps : float
        Case ``long``: simulated time [s], per-client mean interarrival [s], gateway rate [bit/s].
    long_n_clients : int
        Case ``long``: active clients.
    long_bin_s : float
        Case ``long``: sampling step of queues and sinks (the Hurst series comes from the pcap). [s]
    long_seeds : tuple of int
        Case ``long``: seeds.
    alt_alphas : tuple of float
        Shapes of case ``alt_arrival`` (seed 0 only). [-]
    altq_alphas : tuple of float
        Shapes of case ``alt_server_queue`` (seed 0 only). [-]
    """

    alphas: tuple = (1.05, 1.35, 1.65, 1.95)
    n_clients: tuple = (8, 16, 24, 32)
    backbone_rates_bps: tuple = (5e6, 10e6)
    seeds: tuple = (0, 1)
    mean_size_bytes: float = 10_000.0
    flows_per_client: int = 50
    mean_interarrival_s: float = 0.2
    alt_interarrival_s: float = 0.4
    alt_server_queue_packets: int = 50
    edge_rate_bps: float = 10e6
    edge_delay_s: float = 0.015
    gateway_delay_s: float = 0.015
    queue_packets: int = 3000
    duration_s: float = 20.0
    bin_s: float = 0.1
    hurst_bin_s: float = 0.01
    long_duration_s: float = 300.0
    long_interarrival_s: float = 1.0
    long_backbone_bps: float = 10e6
    long_n_clients: int = 32
    long_bin_s: float = 1.0
    long_seeds: tuple = (0,)
    alt_alphas: tuple = (1.05, 1.65)
    altq_alphas: tuple = (1.65,)

    def __post_init__(self) -> None:
        for a in self.alphas:
            if not (isinstance(a, (int, float)) and 1.0 < a < 2.0):
                raise ValueError(f"alphas [-] must lie in (1, 2); got {a!r}")
        for n in (*self.n_clients, self.long_n_clients):
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"n_clients must be integers >= 1; got {n!r}")
        for name in ("mean_size_bytes", "mean_interarrival_s", "alt_interarrival_s", "edge_rate_bps",
                     "duration_s", "bin_s", "hurst_bin_s", "long_duration_s", "long_interarrival_s",
                     "long_backbone_bps"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0 and np.isfinite(v)):
                unit = "bytes" if "bytes" in name else "bit/s" if "bps" in name else "s"
                raise ValueError(f"{name} [{unit}] must be in (0, inf); got {v!r}")
        for r in self.backbone_rates_bps:
            if not (isinstance(r, (int, float)) and r > 0):
                raise ValueError(f"backbone_rates_bps [bit/s] must be in (0, inf); got {r!r}")
        if self.hurst_bin_s > self.duration_s / 256:
            raise ValueError(f"hurst_bin_s [s] must be <= duration_s / 256 = {self.duration_s / 256:g}; "
                             f"got {self.hurst_bin_s!r}")

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULT_CONFIG = P5Config()


def _builder_version() -> str:
    """Hash of the code a caterpillar run depends on (not the whole sim modules: other topologies change there)."""
    from tcpmodels.sim import run as simrun  # noqa: PLC0415
    from tcpmodels.sim import blocks, scenarios  # noqa: PLC0415
    from tcpmodels.sim.config import Caterpillar, Link, PoissonFlows, SizeDistribution, TcpOptions  # noqa: PLC0415

    h = hashlib.sha256()
    for obj in (scenarios.build_caterpillar, blocks.Net, blocks.flow_schedule, blocks.install_flow,
                blocks.set_tcp_defaults, blocks.set_socket_type, simrun.simulate, Caterpillar, Link,
                PoissonFlows, SizeDistribution, TcpOptions):
        h.update(inspect.getsource(obj).encode())
    return h.hexdigest()[:16]


def caterpillar_for(config: P5Config, *, case: str, alpha: float, n_clients: int, backbone_bps: float, seed: int,
                    pcap: bool = True):
    """The :class:`~tcpmodels.sim.config.Caterpillar` of one run of ``case``."""
    from tcpmodels.sim.config import Caterpillar, Link, PoissonFlows, SizeDistribution  # noqa: PLC0415

    if case not in CASES:
        raise ValueError(f"case must be one of {CASES}; got {case!r}")
    size = SizeDistribution(kind="pareto", mean_bytes=config.mean_size_bytes, alpha=alpha)
    edge = Link(rate_bps=config.edge_rate_bps, delay_s=config.edge_delay_s, queue_packets=config.queue_packets)
    backbone = Link(rate_bps=backbone_bps, delay_s=config.gateway_delay_s, queue_packets=config.queue_packets)
    bin_s = config.bin_s
    if case == "long":
        workload = PoissonFlows(mean_interarrival_s=config.long_interarrival_s, size=size)
        duration = config.long_duration_s
        bin_s = config.long_bin_s  # the series comes from the pcap; per-sink sampling of ~10^4 downloads is costly
    else:
        gap = config.alt_interarrival_s if case == "alt_arrival" else config.mean_interarrival_s
        workload = PoissonFlows(mean_interarrival_s=gap, size=size, max_flows=config.flows_per_client)
        duration = config.duration_s
    server_link = None
    if case == "alt_server_queue":
        server_link = Link(rate_bps=config.edge_rate_bps, delay_s=config.edge_delay_s,
                           queue_packets=config.alt_server_queue_packets)
    return Caterpillar(n_clients=n_clients, workload=workload, edge=edge, backbone=backbone, server_link=server_link,
                       variant="TcpNewReno", duration_s=duration, seed=seed, queue_bin_s=bin_s,
                       pcap_devices=("bottleneck",) if pcap else ())


def plan(config: P5Config = DEFAULT_CONFIG, cases: tuple = CASES, seeds: tuple | None = None) -> list[dict]:
    """Sweep configs (JSON-able dicts) in run order.

    The order: ``main`` at 5 Mbit/s with the first seed (the loss table), one
    ``long`` run, ``main`` at 10 Mbit/s for alpha 1.65 (Figs. 4, 10, 11), half of
    ``alt_arrival`` at alpha 1.65, two more ``long`` runs, the small queue at S with 32
    clients, the last ``long`` run, the rest of both alternatives, a second seed at
    5 Mbit/s, the rest of the 10 Mbit/s grid, then the remaining seeds: a campaign cut short (on a shared host it was) has what the
    paper's figures need first.

    Each dict holds ``case``, ``alpha``, ``n_clients``, ``backbone_bps``, ``seed``,
    ``hurst_bin_s``, the caterpillar config and ``builder``, a hash of the ns-3
    builder code (part of the cache key).
    """
    from tcpmodels.sim.config import config_to_dict  # noqa: PLC0415

    for c in cases:
        if c not in CASES:
            raise ValueError(f"cases must be among {CASES}; got {c!r}")
    builder = _builder_version()
    seeds = config.seeds if seeds is None else tuple(seeds)
    items = []

    def add(case, alpha, n, bw, seed):
        cat = caterpillar_for(config, case=case, alpha=alpha, n_clients=n, backbone_bps=bw, seed=seed)
        items.append({"case": case, "alpha": float(alpha), "n_clients": int(n), "backbone_bps": float(bw),
                      "seed": int(seed), "hurst_bin_s": config.hurst_bin_s, "builder": builder,
                      "caterpillar": config_to_dict(cat)})

    # (case, seed, gateway rates, alphas), in run order: what the loss table, the Hurst table and
    # Figs. 2-11 need first, the rest of the grid and the further seeds after
    a_ref = 1.65 if 1.65 in config.alphas else config.alphas[-1]
    rest_10 = tuple(a for a in config.alphas if a != a_ref)
    stages = []
    if "main" in cases:
        stages += [("main", s, (5e6,), config.alphas) for s in seeds[:1]]
    if "long" in cases:  # the first shape only: the other long runs come after the 10 Mbit/s figures
        stages += [("long", s, (config.long_backbone_bps,), config.alphas[:1]) for s in config.long_seeds]
    if "main" in cases and 10e6 in config.backbone_rates_bps:
        stages += [("main", s, (10e6,), (a_ref,)) for s in seeds[:1]]
    if "alt_arrival" in cases:
        stages += [("alt_arrival_first", 0, (5e6,), tuple(a for a in config.alt_alphas if a == a_ref))]
    later = [a_ref] + [config.alphas[-1]] + [a for a in config.alphas[1:-1] if a != a_ref]
    later = [a for a in dict.fromkeys(later) if a != config.alphas[0]]
    if "long" in cases:  # the reference shape and the largest
        stages += [("long", s, (config.long_backbone_bps,), (a,)) for s in config.long_seeds for a in later[:2]]
    if "alt_server_queue" in cases:  # the most clients first
        stages += [("alt_server_queue_first", 0, config.backbone_rates_bps, config.altq_alphas)]
    if "long" in cases:
        stages += [("long", s, (config.long_backbone_bps,), (a,)) for s in config.long_seeds for a in later[2:]]
    if "alt_arrival" in cases:
        stages += [("alt_arrival_rest", 0, (5e6,), tuple(a for a in config.alt_alphas if a == a_ref))]
    if "alt_server_queue" in cases:
        stages += [("alt_server_queue_rest", 0, config.backbone_rates_bps, config.altq_alphas)]
    if "main" in cases:  # a second seed of the 5 Mbit/s grid (the loss table's)
        stages += [("main", s, (5e6,), config.alphas) for s in seeds[1:2]]
    if "main" in cases and 10e6 in config.backbone_rates_bps:
        stages += [("main", s, (10e6,), rest_10) for s in seeds[:1]]
    if "alt_arrival" in cases:
        stages += [("alt_arrival", 0, (5e6,), tuple(a for a in config.alt_alphas if a != a_ref))]
    if "main" in cases:  # the remaining seeds
        stages += [("main", s, (5e6,), config.alphas) for s in seeds[2:]]
        stages += [("main", s, (10e6,), config.alphas) for s in seeds[1:]]
    stages = [st for st in stages if st[3]]
    n_half = {"alt_arrival_first": config.n_clients[1::2], "alt_arrival_rest": config.n_clients[0::2],
              "alt_server_queue_first": config.n_clients[-1:], "alt_server_queue_rest": config.n_clients[:-1]}
    for case, seed, rates, alphas in stages:
        for bw in rates:
            for a in alphas:
                if case == "long":
                    clients = (config.long_n_clients,)
                else:
                    clients = n_half.get(case, config.n_clients)
                for n in clients:
                    add(case.replace("_first", "").replace("_rest", ""), a, n, bw, seed)
    return items


def packet_counts(packets: pd.DataFrame, *, bin_s: float, duration_s: float, src_addr: str = SERVER_ADDR) -> np.ndarray:
    """Packets per bin sent by ``src_addr`` in a packet table (:func:`tcpmodels.traces.read_pcap`).

    Parameters
    ----------
    packets : pandas.DataFrame
        Packet table with ``timestamp_s`` and ``src_addr``.
    bin_s : float
        Bin width. [s]
    duration_s : float
        Series length; bins cover [0, duration_s). [s]

    Returns
    -------
    numpy.ndarray
        ``int64`` counts. [packets]
    """
    if not (bin_s > 0 and duration_s >= bin_s):
        raise ValueError(f"bin_s [s] must be in (0, duration_s = {duration_s}]; got {bin_s!r}")
    n = int(round(duration_s / bin_s))
    sel = (packets["src_addr"].astype(str) == src_addr).to_numpy()
    idx = np.floor(packets["timestamp_s"].to_numpy()[sel] / bin_s).astype(np.int64)
    idx = idx[(idx >= 0) & (idx < n)]
    return np.bincount(idx, minlength=n).astype(np.int64)


def bellcore_counts(path: str | os.PathLike = BELLCORE_PATH, *, bin_s: float = 0.01) -> pd.DataFrame:
    """Packets and bytes per bin of the Bellcore BC-pAug89 excerpt (two columns: time [s], length [bytes]).

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start) [s], ``packets`` [packets], ``bytes`` [bytes]; the last partial bin dropped.
    """
    if not (bin_s > 0):
        raise ValueError(f"bin_s [s] must be in (0, inf); got {bin_s!r}")
    raw = np.loadtxt(path)
    if raw.ndim != 2 or raw.shape[1] != 2:
        raise ValueError(f"{path}: expected two columns (time [s], length [bytes]); got shape {raw.shape}")
    t = raw[:, 0] - raw[0, 0]
    n = int(np.floor(t[-1] / bin_s))
    idx = np.floor(t / bin_s).astype(np.int64)
    keep = idx < n
    packets = np.bincount(idx[keep], minlength=n)
    size = np.bincount(idx[keep], weights=raw[keep, 1], minlength=n)
    return pd.DataFrame({"t_s": np.arange(n) * bin_s, "packets": packets.astype(np.int64), "bytes": size})


def run_p5(item: dict, out_dir: str) -> dict:
    """Sweep run function: simulate one plan item and reduce it to the P5 measurements.

    Returns
    -------
    dict
        ``bins`` (DataFrame per ``bin_s``: ``t_end_s``; ``drop_pkts_s``, ``drop_bytes_s``,
        ``enq_bytes_s``, ``loss_s`` at S and the same ``_g1`` at G1 -- loss = dropped
        bytes / (dropped + accepted bytes) of the device queue; ``thr_g1_bps`` from the
        pcap's G1 -> G2 wire bytes; ``completed`` sessions finishing in the bin),
        ``flows`` (one row per download), ``counts`` (G1 -> G2 packets per
        ``hurst_bin_s``), ``hurst`` (the six estimators on ``counts``), ``record``
        (the simulator's run record).
    """
    from tcpmodels.models.hurst import estimate_all  # noqa: PLC0415
    from tcpmodels.sim.config import config_from_dict  # noqa: PLC0415
    from tcpmodels.sim.run import run_config  # noqa: PLC0415
    from tcpmodels.traces import read_pcap  # noqa: PLC0415

    cat = config_from_dict(item["caterpillar"])
    res = run_config(cat, out_dir, timeout_s=3600)
    q = res.queues
    bins = None
    for dev, tag in (("server", "s"), ("bottleneck", "g1")):
        d = q[q["device"] == dev].set_index("t_end_s")
        part = pd.DataFrame({f"drop_pkts_{tag}": d["dropped_packets"], f"drop_bytes_{tag}": d["dropped_bytes"],
                             f"enq_bytes_{tag}": d["enqueued_bytes"], f"queue_pkts_{tag}": d["queue_packets"]})
        offered = part[f"drop_bytes_{tag}"] + part[f"enq_bytes_{tag}"]
        part[f"loss_{tag}"] = np.where(offered > 0, part[f"drop_bytes_{tag}"] / offered.where(offered > 0, 1), 0.0)
        bins = part if bins is None else bins.join(part)
    bins = bins.reset_index()
    edges = np.concatenate([[0.0], bins["t_end_s"].to_numpy()])
    pcap = Path(out_dir) / "bottleneck.pcap"
    packets = read_pcap(pcap)
    down = packets[(packets["src_addr"].astype(str) == SERVER_ADDR).to_numpy()]
    wire, _ = np.histogram(down["timestamp_s"].to_numpy(), bins=edges, weights=down["wire_bytes"].to_numpy())
    bins["thr_g1_bps"] = wire * 8.0 / np.diff(edges)
    apps = res.apps
    done_t = (apps["start_s"] + apps["fct_s"])[apps["completed"]].to_numpy()
    bins["completed"] = np.histogram(done_t, bins=edges)[0].astype(np.int64)
    flows = pd.DataFrame({
        "client": apps["sender"].astype(np.int64), "start_s": apps["start_s"], "size_bytes": apps["size_bytes"],
        "rx_bytes": apps["rx_bytes"].astype(np.int64), "fct_s": apps["fct_s"], "completed": apps["completed"],
    })
    counts = packet_counts(packets, bin_s=item["hurst_bin_s"], duration_s=cat.duration_s)
    try:
        hurst = estimate_all(counts.astype(float)).reset_index()
    except ValueError as exc:  # e.g. a constant series
        hurst = pd.DataFrame({"method": ["error"], "note": [str(exc)]})
    return {"bins": bins, "flows": flows, "counts": counts, "hurst": hurst, "record": res.record,
            "pcap_packets": int(len(down))}


def run_campaign(config: P5Config = DEFAULT_CONFIG, *, cases: tuple = CASES, seeds: tuple | None = None,
                 cache_dir: str | os.PathLike = REPO / "runs" / "p5" / "cache", n_workers: int = 1,
                 processes: bool = True, progress: bool = True, limit: int | None = None) -> dict:
    """Run (or resume) the plan through :func:`tcpmodels.sweep.sweep`; return wall time and counts.

    Each simulation runs in its own process whatever ``processes`` says (the Dask
    workers only wait for it). The wall time of each invocation is appended to
    ``cache_dir/../campaign_log.jsonl``.
    """
    from tcpmodels.sweep import sweep  # noqa: PLC0415

    items = plan(config, cases, seeds)
    if limit is not None:
        items = items[:limit]
    t0 = time.monotonic()
    load0 = load_average()
    res = None
    try:
        res = sweep(items, run_p5, cache_dir=cache_dir, n_workers=n_workers, processes=processes,
                    progress=progress, on_failure="collect", desc="p5")
    finally:  # an interrupted invocation is logged too (its finished runs are cached)
        entry = {"date_utc": utc_now(), "n_items": len(items), "n_run": None if res is None else res.n_run,
                 "n_cached": None if res is None else res.n_cached,
                 "n_failed": None if res is None else len(res.failures),
                 "wall_s": round(time.monotonic() - t0, 1), "n_workers": n_workers, "interrupted": res is None,
                 "load_average_start": load0, "load_average_end": load_average(), "cases": list(cases),
                 "seeds": list(seeds) if seeds is not None else list(config.seeds)}
        log = Path(cache_dir).parent / "campaign_log.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
    for f in res.failures:
        print(f"p5: failed {f.config['case']} alpha={f.config['alpha']} n={f.config['n_clients']}: {f.error}",
              file=sys.stderr)
    return entry


def _run_id(item: dict) -> str:
    return f"{item['case']}-a{item['alpha']:.2f}-n{item['n_clients']}-b{item['backbone_bps'] / 1e6:g}-s{item['seed']}"


def _ship_capture(pcap: Path, capture_dir: Path, run_id: str) -> None:
    """Gzip one run's bottleneck pcap into ``capture_dir`` with a JSON note (what, where, how)."""
    import gzip  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    capture_dir.mkdir(parents=True, exist_ok=True)
    out = capture_dir / f"p5_bottleneck_{run_id}.pcap.gz"
    with pcap.open("rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    note = {"capture": out.name, "what": f"P5 ns-3 caterpillar run {run_id}: the G1 -> G2 bottleneck device",
            "capture_point": "ns-3 PointToPointNetDevice of G1 towards G2 (both directions: data from S, ACKs back)",
            "snaplen_bytes": 96, "link_type": "raw IPv4", "tool": "ns-3 PcapHelper (tcpmodels.sim)",
            "compressed": "gzip -9", "bytes_gz": out.stat().st_size,
            "sha256_gz": hashlib.sha256(out.read_bytes()).hexdigest()}
    (capture_dir / f"p5_bottleneck_{run_id}.json").write_text(json.dumps(note, indent=1) + "\n")


def build_dataset(config: P5Config = DEFAULT_CONFIG, *, cache_dir: str | os.PathLike = REPO / "runs" / "p5" / "cache",
                  out_dir: str | os.PathLike = REPO / "data" / "datasets", seeds: tuple | None = None,
                  bellcore_path: str | os.PathLike = BELLCORE_PATH, note: str = "",
                  capture_run: str | None = "main-a1.65-n32-b5-s0",
                  capture_dir: str | os.PathLike | None = REPO / "data" / "captures") -> dict:
    """Collect the cached runs of the plan into ``p5_*.parquet`` and ``p5_provenance.json``.

    Tables: ``p5_runs`` (one row per run: parameters, totals, wall time),
    ``p5_bins`` (per run and 0.1 s bin), ``p5_flows`` (per download),
    ``p5_hurst`` (per run or trace and estimator: H, 95% interval, predicted
    (3 - alpha)/2), ``p5_counts`` (packet-count series of the ``long`` runs and
    of the Bellcore excerpt, 10 ms bins). Runs not in the cache are listed in the
    provenance as missing. The bottleneck pcap of ``capture_run`` is copied,
    gzipped, to ``capture_dir/p5_bottleneck_<run>.pcap.gz`` with a JSON note beside it.
    """
    from tcpmodels.models.heavytail import hurst_from_alpha  # noqa: PLC0415
    from tcpmodels.models.hurst import estimate_all  # noqa: PLC0415
    from tcpmodels.sweep import read_cached, cache_key  # noqa: PLC0415

    items = plan(config, CASES, seeds)
    cache = Path(cache_dir)
    runs, bins, flows, hurst, counts, missing = [], [], [], [], [], []
    for item in items:
        hit, v = read_cached(cache, cache_key(item, run_p5))
        rid = _run_id(item)
        if not hit:
            missing.append(rid)
            continue
        if rid == capture_run and capture_dir is not None:
            _ship_capture(cache / cache_key(item, run_p5) / "out" / "bottleneck.pcap", Path(capture_dir), rid)
        meta = {"run_id": rid, "case": item["case"], "alpha": item["alpha"], "n_clients": item["n_clients"],
                "backbone_mbps": item["backbone_bps"] / 1e6, "seed": item["seed"]}
        rec, b, f = v["record"], v["bins"], v["flows"]
        runs.append({**meta, "duration_s": rec["duration_s"], "n_flows": len(f),
                     "n_completed": int(f["completed"].sum()), "offered_bytes": float(f["size_bytes"].sum()),
                     "rx_bytes": int(f["rx_bytes"].sum()), "max_size_bytes": float(f["size_bytes"].max()),
                     "drop_pkts_s": int(b["drop_pkts_s"].sum()), "drop_pkts_g1": int(b["drop_pkts_g1"].sum()),
                     "loss_s": float(b["drop_bytes_s"].sum() / max(1, (b["drop_bytes_s"] + b["enq_bytes_s"]).sum())),
                     "loss_g1": float(b["drop_bytes_g1"].sum()
                                      / max(1, (b["drop_bytes_g1"] + b["enq_bytes_g1"]).sum())),
                     "pcap_packets": v["pcap_packets"], "run_wall_s": rec["run_wall_s"],
                     "ns3_load_wall_s": rec["ns3_load_wall_s"], "ns3_version": rec["ns3_version"],
                     "date_utc": rec["date_utc"]})
        bins.append(b.assign(**meta))
        flows.append(f.assign(run_id=rid))
        h = v["hurst"]
        if "hurst" in h.columns:
            hurst.append(h[["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]].assign(
                **meta, source="ns-3", series_bin_s=item["hurst_bin_s"],
                predicted=float(hurst_from_alpha(item["alpha"]))))
        if item["case"] == "long":
            c = v["counts"]
            counts.append(pd.DataFrame({"run_id": rid, "source": "ns-3", "alpha": item["alpha"],
                                        "t_s": np.arange(len(c)) * item["hurst_bin_s"], "packets": c}))
    if not runs:
        raise ValueError(f"no cached P5 runs in {cache}; run `python -m tcpmodels.experiments.p5 run` first")
    bell_path = Path(bellcore_path)
    if bell_path.exists():
        bc = bellcore_counts(bell_path, bin_s=config.hurst_bin_s)
        counts.append(pd.DataFrame({"run_id": "bellcore", "source": "bellcore", "alpha": np.nan,
                                    "t_s": bc["t_s"], "packets": bc["packets"]}))
        h = estimate_all(bc["packets"].astype(float)).reset_index()
        hurst.append(h[["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]].assign(
            run_id="bellcore", case="bellcore", alpha=np.nan, n_clients=0, backbone_mbps=10.0, seed=0,
            source="bellcore", series_bin_s=config.hurst_bin_s, predicted=np.nan))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = {"runs": pd.DataFrame(runs), "bins": pd.concat(bins, ignore_index=True),
              "flows": pd.concat(flows, ignore_index=True), "hurst": pd.concat(hurst, ignore_index=True),
              "counts": pd.concat(counts, ignore_index=True)}
    tables["bins"] = tables["bins"].drop(columns=["queue_pkts_s", "queue_pkts_g1"]).astype(
        {c: "float32" for c in ("loss_s", "loss_g1", "thr_g1_bps")})
    tables["flows"] = tables["flows"].astype({"start_s": "float32", "fct_s": "float32"})
    for name, df in tables.items():
        df.to_parquet(out / f"p5_{name}.parquet", index=False, compression="zstd")
    log = cache.parent / "campaign_log.jsonl"
    log_entries = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    git = git_state(REPO)
    try:
        ns3_version = str(tables["runs"]["ns3_version"].iloc[0])
    except (KeyError, IndexError):
        ns3_version = None
    prov = {
        "dataset": "p5",
        "command": "python -m tcpmodels.experiments.p5 run && python -m tcpmodels.experiments.p5 dataset",
        "date_utc": utc_now(),
        "git_commit": git["commit"],
        "git_dirty": git["dirty"],
        "host": host_facts(),
        "kernel": os.uname().release,
        "ns3_version": ns3_version,
        "engine": "ns-3 (TcpNewReno, SACK, PRR; package TcpOptions defaults)",
        "parameters": config.to_dict(),
        "n_runs": len(runs),
        "missing_runs": missing,
        "runs_by_case": tables["runs"]["case"].value_counts().to_dict(),
        "sum_run_wall_s": float(tables["runs"]["run_wall_s"].sum()),
        "sum_ns3_load_wall_s": float(tables["runs"]["ns3_load_wall_s"].sum()),
        "first_run_utc": str(tables["runs"]["date_utc"].min()),
        "last_run_utc": str(tables["runs"]["date_utc"].max()),
        "campaign_invocations": log_entries,
        "campaign_wall_s": float(sum(e["wall_s"] for e in log_entries if e.get("n_run") != 0)),
        "load_average_at_dataset": load_average(),
        "bellcore": {"path": str(bell_path), "present": bell_path.exists(),
                     "source": "Internet Traffic Archive BC-pAug89, first 10,000 packets"},
        "files": sorted(f"p5_{n}.parquet" for n in tables),
        "note": note,
    }
    (out / "p5_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov


def main(argv: list[str] | None = None) -> int:
    """Command line: ``run`` (sweep, resumable) and ``dataset``."""
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.experiments.p5", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="run or resume the sweep (cached runs are skipped)")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    p.add_argument("--seeds", help="seeds of the main grid, e.g. 0,1,2")
    p.add_argument("--cache", default=str(REPO / "runs" / "p5" / "cache"))
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--limit", type=int)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="cached runs -> data/datasets/p5_*.parquet + provenance")
    p.add_argument("--cache", default=str(REPO / "runs" / "p5" / "cache"))
    p.add_argument("--out", default=str(REPO / "data" / "datasets"))
    p.add_argument("--seeds", help="seeds of the main grid to collect")
    p.add_argument("--note", default="")
    args = parser.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(",")) if args.seeds else None
    config = DEFAULT_CONFIG if seeds is None else replace(DEFAULT_CONFIG, seeds=seeds)
    with campaign_errors("p5"):
        if args.cmd == "run":
            cases = tuple(c.strip() for c in args.cases.split(",") if c.strip())
            entry = run_campaign(config, cases=cases, cache_dir=args.cache, n_workers=args.workers,
                                 progress=not args.no_progress, limit=args.limit)
            print(json.dumps(entry))
        else:
            prov = build_dataset(config, cache_dir=args.cache, out_dir=args.out, note=args.note)
            print(json.dumps({k: prov[k] for k in ("n_runs", "runs_by_case", "campaign_wall_s")}
                             | {"missing": len(prov["missing_runs"])}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
