"""The runs of P5: one caterpillar scenario per (case, alpha, clients, rate, seed), in run order."""

from __future__ import annotations

import hashlib

from tcpmodels.experiments.p5.config import CASES, DEFAULT_CONFIG, P5Config
from tcpmodels.sim.config import Caterpillar
from tcpmodels.sweep import code_fingerprint

__all__ = ["caterpillar_for", "plan", "run_id"]


def _builder_version() -> str:
    """Hash of the code a caterpillar run depends on (not the whole sim modules: other topologies change there)."""
    from tcpmodels.sim import blocks, scenarios
    from tcpmodels.sim import run as simrun
    from tcpmodels.sim.config import Caterpillar, Link, PoissonFlows, SizeDistribution, TcpOptions

    h = hashlib.sha256()
    for obj in (scenarios.build_caterpillar, blocks.Net, blocks.flow_schedule, blocks.install_flow,
                blocks.set_tcp_defaults, blocks.set_socket_type, simrun.simulate, Caterpillar, Link,
                PoissonFlows, SizeDistribution, TcpOptions):
        h.update(code_fingerprint(obj).encode())
    return h.hexdigest()[:16]


def run_id(item: dict) -> str:
    """The id of one plan item: ``<case>-a<alpha>-n<clients>-b<Mbit/s>-s<seed>`` (what the datasets key runs by).

    Parameters
    ----------
    item : dict
        An entry of :func:`plan` (``case``, ``alpha``, ``n_clients``, ``backbone_bps`` [bit/s], ``seed``).

    Returns
    -------
    str
        E.g. ``main-a1.65-n32-b5-s0``.
    """
    return f"{item['case']}-a{item['alpha']:.2f}-n{item['n_clients']}-b{item['backbone_bps'] / 1e6:g}-s{item['seed']}"


def caterpillar_for(config: P5Config, *, case: str, alpha: float, n_clients: int, backbone_bps: float, seed: int,
                    pcap: bool = True) -> Caterpillar:
    """The :class:`~tcpmodels.sim.config.Caterpillar` of one run of ``case``.

    ``main``: Poisson downloads of Pareto sizes, ``flows_per_client`` per client;
    ``alt_arrival``: the same at ``alt_interarrival_s``; ``alt_server_queue``: the
    server's link with a queue of ``alt_server_queue_packets``; ``long``: unlimited
    downloads for ``long_duration_s``, binned at ``long_bin_s``.

    Parameters
    ----------
    config : P5Config
        Link rates [bit/s], delays [s], queues [packets], workload and durations.
    case : str
        One of :data:`CASES`.
    alpha : float
        Pareto shape of the download sizes. [-]
    n_clients : int
        Clients of the caterpillar.
    backbone_bps : float
        Rate of the gateway-to-gateway links. [bit/s]
    seed : int
        Seed of the workload and the simulator.
    pcap : bool
        Capture the bottleneck device (G1 towards G2).

    Returns
    -------
    tcpmodels.sim.config.Caterpillar
        The scenario, with ``TcpNewReno`` at the server.

    Raises
    ------
    ValueError
        If ``case`` is not one of :data:`CASES`.
    """
    from tcpmodels.sim.config import Link, PoissonFlows, SizeDistribution

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
    5 Mbit/s, the rest of the 10 Mbit/s grid, then the remaining seeds, then the further ``long``
    seeds (each over every alpha): a campaign cut short (on a shared host it was) has what the
    paper's figures need first. Last come the further seeds of ``alt_server_queue``
    (``config.altq_seeds[1:]``), one seed at a time.

    The small queue at S runs every client count and rate at its first seed
    (``altq_seeds[0]``) and, at each further seed, only the most-clients half the order
    already puts first (``alt_server_queue_first``: 32 clients, both gateway rates, every
    alpha of ``altq_alphas``; 8 runs a seed). The further seeds serve C5.2 (c) ("G1 loses
    only after S has lost"), whose units are the runs with loss at G1, and G1 loses only
    when many clients load it: in the first seed's variant only 32-client runs lost at
    G1, and in the main grid (three seeds, 5 Mbit/s) 32-client runs lost at G1 in 9 of
    12, 24-client runs in 3 of 12 and fewer clients never. The 32-client row gives the
    most units per run; 8-24 clients would cost three times as many runs for few
    units. The whole row is run, not only the cells that lost at the first seed, so the
    sample is set by the design rather than by one seed's outcome, and a G1 loss without
    one at S (against the claim) in a cell that did not lose before still counts.

    Each dict holds ``case``, ``alpha``, ``n_clients``, ``backbone_bps``, ``seed``,
    ``hurst_bin_s``, the caterpillar config and ``builder``, a hash of the ns-3
    builder code (part of the cache key).

    Parameters
    ----------
    config : P5Config
        The campaign's setting.
    cases : tuple of str
        Cases to include, from :data:`CASES`.
    seeds : tuple of int, optional
        Seeds of the ``main`` runs instead of ``config.seeds``.

    Returns
    -------
    list of dict
        The plan items described above, in run order.

    Raises
    ------
    ValueError
        If ``cases`` names an unknown case.
    """
    from tcpmodels.sim.config import config_to_dict

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
        stages += [("long", s, (config.long_backbone_bps,), config.alphas[:1]) for s in config.long_seeds[:1]]
    if "main" in cases and 10e6 in config.backbone_rates_bps:
        stages += [("main", s, (10e6,), (a_ref,)) for s in seeds[:1]]
    if "alt_arrival" in cases:
        stages += [("alt_arrival_first", 0, (5e6,), tuple(a for a in config.alt_alphas if a == a_ref))]
    later = [a_ref] + [config.alphas[-1]] + [a for a in config.alphas[1:-1] if a != a_ref]
    later = [a for a in dict.fromkeys(later) if a != config.alphas[0]]
    if "long" in cases:  # the reference shape and the largest
        stages += [("long", s, (config.long_backbone_bps,), (a,)) for s in config.long_seeds[:1] for a in later[:2]]
    q0 = config.altq_seeds[:1]
    if "alt_server_queue" in cases:  # the most clients first
        stages += [("alt_server_queue_first", s, config.backbone_rates_bps, config.altq_alphas) for s in q0]
    if "long" in cases:
        stages += [("long", s, (config.long_backbone_bps,), (a,)) for s in config.long_seeds[:1] for a in later[2:]]
    if "alt_arrival" in cases:
        stages += [("alt_arrival_rest", 0, (5e6,), tuple(a for a in config.alt_alphas if a == a_ref))]
    if "alt_server_queue" in cases:
        stages += [("alt_server_queue_rest", s, config.backbone_rates_bps, config.altq_alphas) for s in q0]
    if "main" in cases:  # a second seed of the 5 Mbit/s grid (the loss table's)
        stages += [("main", s, (5e6,), config.alphas) for s in seeds[1:2]]
    if "main" in cases and 10e6 in config.backbone_rates_bps:
        stages += [("main", s, (10e6,), rest_10) for s in seeds[:1]]
    if "alt_arrival" in cases:
        stages += [("alt_arrival", 0, (5e6,), tuple(a for a in config.alt_alphas if a != a_ref))]
    if "main" in cases:  # the remaining seeds
        stages += [("main", s, (5e6,), config.alphas) for s in seeds[2:]]
        stages += [("main", s, (10e6,), config.alphas) for s in seeds[1:]]
    if "long" in cases:  # further Hurst runs, a seed at a time over every shape
        stages += [("long", s, (config.long_backbone_bps,), config.alphas) for s in config.long_seeds[1:]]
    if "alt_server_queue" in cases:  # further seeds of the small S queue: its most-clients half (C5.2 (c))
        stages += [("alt_server_queue_first", s, config.backbone_rates_bps, config.altq_alphas)
                   for s in config.altq_seeds[1:]]
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
