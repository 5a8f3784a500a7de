"""The traffic of one P1 run (who sends what, when) and the plan of runs."""

from __future__ import annotations

import numpy as np

from tcpmodels.experiments.p1.config import (
    AGGREGATOR_HOSTS,
    EXPERIMENTS,
    KERNEL_CCS,
    N_CORES,
    N_HOSTS,
    NS3_CC,
    PROTOCOLS,
    UNCOUPLED,
    WORKER_HOSTS,
    P1Config,
    engine_label,
)

__all__ = ["schedule", "run_plan"]


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


def run_plan(config: P1Config, engine: str, ccs: tuple[str, ...] | list[str] = (UNCOUPLED,)) -> list[dict]:
    """The runs of a campaign on ``engine``: every experiment x background for seed 0, then seed 1, ...

    Seeds outermost, so a campaign cut short has every (experiment, protocol, cc) cell of
    the seeds it finished. Kernel: ``uncoupled`` brings the TCP run and the uncoupled MPTCP
    run of each experiment; ``tm_lia`` / ``tm_olia`` an MPTCP run each (their TCP baseline
    is the ``uncoupled`` group's TCP run of the same seed: the same schedule, nothing coupled).
    ns-3: TCP and LIA-coupled MPTCP (``cc`` :data:`NS3_CC`).

    Parameters
    ----------
    config : P1Config
        Its ``seeds`` and ``experiments`` span the plan.
    engine : {"kernel", "ns3"}
        Its label is written into every run (part of the record key): ``ns3``, or for the kernel
        :func:`~tcpmodels.experiments.p1.config.engine_label` of ``config.keep_flow_order``
        (``kernel`` or ``kernel_steered``).
    ccs : sequence of str
        Kernel: MPTCP congestion controls from :data:`KERNEL_CCS`. ns-3: only the default.

    Returns
    -------
    list of dict
        One per run: ``engine`` (the label), ``experiment``, ``protocol``, ``cc``, ``seed``.

    Raises
    ------
    ValueError
        If ``engine`` is not one of :data:`ENGINES`, a ``cc`` is not one of :data:`KERNEL_CCS`,
        or ns-3 is asked for another control than its LIA or for ``keep_flow_order``.
    """
    label = engine_label(engine, config.keep_flow_order)
    ccs = tuple(ccs)
    bad = [c for c in ccs if c not in KERNEL_CCS]
    if bad or not ccs:
        raise ValueError(f"cc must be taken from {KERNEL_CCS}; got {list(ccs)}")
    if engine == "ns3":
        if ccs != (UNCOUPLED,):
            raise ValueError(f"ns-3 runs LIA-coupled MPTCP only (cc {NS3_CC!r}); --cc applies to the kernel engine")
        cells = [("tcp", NS3_CC), ("mptcp", NS3_CC)]
    else:
        cells = [(p, UNCOUPLED) for p in PROTOCOLS] if UNCOUPLED in ccs else []
        cells += [("mptcp", c) for c in KERNEL_CCS if c != UNCOUPLED and c in ccs]
    return [{"engine": label, "experiment": e, "protocol": p, "cc": c, "seed": int(s)}
            for s in config.seeds for e in config.experiments for p, c in cells]
