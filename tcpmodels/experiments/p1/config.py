"""The setting of the P1 campaign (both engines) and the names it uses."""

from __future__ import annotations

from dataclasses import dataclass

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.datasets.p1 import KERNEL_ENGINES, KEY, NS3_CC, UNCOUPLED, cc_of
from tcpmodels.datasets.p1 import SCHEMA as DATASET_SCHEMA
from tcpmodels.experiments.campaign_config import CampaignConfig
from tcpmodels.experiments.campaign_testbed import testbed_label
from tcpmodels.topology.addressing import N_CORES, N_HOSTS

__all__ = ["P1Config", "DEFAULT_CONFIG", "EXPERIMENTS", "PROTOCOLS", "ENGINES", "N_HOSTS", "N_CORES",
           "AGGREGATOR_HOSTS", "WORKER_HOSTS", "BG_PORT", "FLOW_PORT", "SCHEMA", "KEY", "REPO", "KB", "CCS",
           "KERNEL_CCS", "NS3_CC", "UNCOUPLED", "record_cc", "KERNEL_ENGINES", "engine_label", "engine_family"]


KB = 1000
REPO = REPO_ROOT
AGGREGATOR_HOSTS = (0, 1, 2, 3)
WORKER_HOSTS = tuple(range(4, 16))
EXPERIMENTS = ("s4", "s5_query_nobg", "s5_query_bg", "s5_message_bg")
PROTOCOLS = ("tcp", "mptcp")
#: the engines a campaign runs on (``--engine``)
ENGINES = ("kernel", "ns3")
BG_PORT = 5201
FLOW_PORT = 5202
#: the schema version of the records and dataset (:data:`tcpmodels.datasets.p1.SCHEMA`)
SCHEMA = DATASET_SCHEMA.version
#: MPTCP congestion control of the kernel runs: ``uncoupled`` = every subflow runs the kernel's
#: own :attr:`P1Config.cc` (Reno) on its own, what the 32 kernel runs of schema 1 used (their
#: records say ``cc: reno``, ``cc_effective`` was not kept); ``tm_lia`` / ``tm_olia`` = the BPF
#: controls of :mod:`tcpmodels.testbed.kernel_cc`, which couple the subflows of one MPTCP connection
#: (RFC 6356 LIA, OLIA). A single-path (TCP) connection always runs :attr:`P1Config.cc`; the TCP
#: runs are part of the ``uncoupled`` group and serve as the baseline of every MPTCP control.
KERNEL_CCS = (UNCOUPLED, "tm_lia", "tm_olia")
CCS = (*KERNEL_CCS, NS3_CC)


def engine_label(engine: str, keep_flow_order: bool = False) -> str:
    """The ``engine`` field (part of :data:`KEY`) of a run on ``engine`` and, for the kernel, on the testbed chosen.

    Parameters
    ----------
    engine : {"kernel", "ns3"}
        The engine the run is on.
    keep_flow_order : bool
        ``P1Config.keep_flow_order`` (kernel only).

    Returns
    -------
    str
        ``"ns3"``; for the kernel ``"kernel_steered"`` with RPS steering, else ``"kernel"``
        (:func:`tcpmodels.experiments.campaign_testbed.testbed_label`).

    Raises
    ------
    ValueError
        If ``engine`` is not one of :data:`ENGINES`, or ``keep_flow_order`` is asked of ns-3.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
    if engine == "ns3":
        if keep_flow_order:
            raise ValueError("keep_flow_order chooses a kernel testbed; ns-3 has none (got engine 'ns3' with "
                             "keep_flow_order=True)")
        return engine
    return testbed_label("kernel", keep_flow_order)


def engine_family(engine: str) -> str:
    """The engine a record's ``engine`` label belongs to: ``kernel`` for every label of :data:`KERNEL_ENGINES`.

    Parameters
    ----------
    engine : str
        A record's ``engine`` (``kernel``, ``kernel_steered`` or ``ns3``).

    Returns
    -------
    str
        One of :data:`ENGINES`.

    Raises
    ------
    ValueError
        For a label of no engine.
    """
    if engine in KERNEL_ENGINES:
        return "kernel"
    if engine in ENGINES:
        return engine
    raise ValueError(f"engine must be one of {(*KERNEL_ENGINES, 'ns3')}; got {engine!r}")


def record_cc(record: dict) -> str:
    """The ``cc`` of a run record, also for schema-1 records (kernel: ``uncoupled``, ns-3: ``lia``).

    Parameters
    ----------
    record : dict
        A run record (or a row) with ``engine`` and possibly ``cc``.

    Returns
    -------
    str
        One of :data:`CCS`.
    """
    cc = record.get("cc")
    return cc if cc in CCS else cc_of(record.get("engine"))


@dataclass(frozen=True, kw_only=True)
class P1Config(CampaignConfig):
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
        Congestion control of every single-path kernel socket, and of every subflow in the runs
        whose MPTCP control is ``uncoupled`` ("reno": LIA's uncoupled rule). The MPTCP control
        of a run (``uncoupled``, ``tm_lia``, ``tm_olia``) is part of its key, not of the config.
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
        Span of flow arrivals per run (Section 4: 40 s, the window of every shipped kernel run; runs are
        paired by seed only when their windows agree). [s]
    drain_s : float
        Background keeps running this long after the last arrival. [s]
    seeds : tuple of int
        Workload seeds (each gives new pairs, destinations, arrivals).
    experiments : tuple of str
        Experiments to run, from :data:`EXPERIMENTS`.
    keep_flow_order : bool
        Kernel: steer every veth's received packets with RPS (:class:`tcpmodels.testbed.Testbed`
        ``keep_flow_order``), so that no segment is reordered on the testbed. Default False: the
        testbed of every shipped kernel run, on which 0.4-1.1 of every 1000 data segments of a
        Section 4 run arrived out of order (docs/CAMPAIGNS.md, P1). The runs of the steered testbed
        carry the engine label ``kernel_steered`` (:func:`engine_label`), so the two testbeds'
        runs of one seed never share a key. It chooses the testbed, not the workload: a steered run
        draws the same schedule as the unsteered run of its seed.
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
    duration_s4_s: float = 40.0
    duration_s5_s: float = 20.0
    drain_s: float = 3.0
    seeds: tuple[int, ...] = (0, 1, 2)
    experiments: tuple[str, ...] = EXPERIMENTS
    keep_flow_order: bool = False

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

DEFAULT_CONFIG = P1Config()
