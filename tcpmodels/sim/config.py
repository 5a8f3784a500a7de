"""Scenario configurations for the ns-3 layer: frozen dataclasses, JSON round trip.

Nothing here imports ns-3: configs are built, hashed, cached and sent to worker
processes without the simulator. :mod:`tcpmodels.sim.run` turns a config into
an ns-3 simulation in a fresh process.

All quantities are SI with the unit in the name (``rate_bps`` [bit/s],
``delay_s`` [s], ``size_bytes`` [bytes]).

Topologies
----------
:class:`Dumbbell`
    One sender node per :class:`Sender` (its own access link, congestion control
    and applications), two routers joined by the shared bottleneck, one receiver.
:class:`Caterpillar`
    The P5 topology: a chain of gateways G1..Gn, the server behind G1, clients
    spread over the articulation gateways; downstream bottleneck G1 -> G2.
:class:`Multipath`
    One sender and one receiver joined by k disjoint paths, each with its own
    bottleneck; :class:`MultipathFlow` connections open one TCP subflow per
    listed path (coupled by RFC 6356 LIA, see :mod:`tcpmodels.sim.multipath`).
:class:`FatTree`
    P1's k=4 fat-tree (16 hosts, 4 cores) with the kernel testbed's addressing:
    one address per host and core, static routes pinning plane c to core c;
    :class:`FatTreeConnection` is single-path TCP on a per-flow ECMP plane or
    one subflow per listed core (LIA-coupled or not). Built by
    :mod:`tcpmodels.sim.fattree`.

References
----------
.. [1] ns-3 Model Library, "TCP models in ns-3" and "Point-to-point NetDevice",
   https://www.nsnam.org/docs/models/html/
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "Link",
    "TcpOptions",
    "BulkApp",
    "SizeDistribution",
    "PoissonFlows",
    "Sender",
    "Dumbbell",
    "Caterpillar",
    "MultipathFlow",
    "Multipath",
    "FatTreeConnection",
    "FatTree",
    "fat_tree_link",
    "FAT_TREE_RTT_S",
    "config_to_dict",
    "config_from_dict",
    "config_to_json",
    "config_hash",
    "TCP_VARIANTS",
]

#: ns-3 congestion controls accepted by name (``ns3::`` prefix optional), plus the
#: run-time compiled ones from :mod:`tcpmodels.sim.cc`.
TCP_VARIANTS = (
    "TcpLinuxReno",
    "TcpNewReno",
    "TcpCubic",
    "TcpBic",
    "TcpHighSpeed",
    "TcpHtcp",
    "TcpVegas",
    "TcpScalable",
    "TcpVeno",
    "TcpYeah",
    "TcpIllinois",
    "TcpWestwoodPlus",
    "TcpLedbat",
    "TcpLp",
    "TcpDctcp",
    "TcpBbr",
    "TcpCubicX",
)


def _positive(name: str, value: float, unit: str, *, allow_zero: bool = False) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        raise ValueError(f"{name} [{unit}] must be a number; got {value!r}")
    if value < 0 or (value == 0 and not allow_zero) or math.isinf(value):
        lo = "[0" if allow_zero else "(0"
        raise ValueError(f"{name} [{unit}] must be in {lo}, inf); got {value!r}")


def _check_subflow_cc(conn: Any) -> None:
    """A multipath connection's ``coupled`` is a bool and its ``variant`` an uncoupled TCP (``ns3::`` prefix dropped)."""
    if not isinstance(conn.coupled, bool):
        raise ValueError(f"coupled must be True or False; got {conn.coupled!r}")
    v = conn.variant.removeprefix("ns3::")
    if v not in TCP_VARIANTS or v == "TcpCubicX":
        raise ValueError(f"variant must be one of {', '.join(TCP_VARIANTS[:-1])}; got {conn.variant!r}")
    object.__setattr__(conn, "variant", v)


def _check_fields(obj: Any) -> None:
    """Reject a field given with a value of the wrong container type (lists -> tuples)."""
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, list):
            object.__setattr__(obj, f.name, tuple(v))


@dataclass(frozen=True, kw_only=True)
class Link:
    """A point-to-point link, the same in both directions.

    Parameters
    ----------
    rate_bps : float
        Line rate. [bit/s]
    delay_s : float
        One-way propagation delay. [s]
    queue_packets : int, optional
        Drop-tail queue limit of each end's device. [packets]
    queue_bytes : int, optional
        Drop-tail queue limit in bytes instead. [bytes] Give exactly one of
        the two; with neither the limit is 100 packets.
    jitter_s : float
        Upper bound of a uniform extra delay per packet, order preserving
        (:mod:`tcpmodels.sim.jitter`); breaks the phase locking of
        deterministic drop-tail runs. 0: a plain ``PointToPointChannel``. [s]

    Notes
    -----
    The queue is the device's ``DropTailQueue`` alone: the traffic-control
    layer's default ``pfifo_fast`` (1000 packets) that ns-3 would put in front
    of it is removed, so the configured limit is the real one.
    """

    rate_bps: float
    delay_s: float
    queue_packets: int | None = None
    queue_bytes: int | None = None
    # added after configs were hashed: left out of the stored form at its default, so older hashes still hold
    jitter_s: float = dataclasses.field(default=0.0, metadata={"omit_when_default": True})

    def __post_init__(self) -> None:
        _positive("rate_bps", self.rate_bps, "bit/s")
        _positive("delay_s", self.delay_s, "s", allow_zero=True)
        _positive("jitter_s", self.jitter_s, "s", allow_zero=True)
        if self.queue_packets is not None and self.queue_bytes is not None:
            raise ValueError("give queue_packets or queue_bytes, not both")
        if self.queue_packets is not None and (not isinstance(self.queue_packets, int) or self.queue_packets < 1):
            raise ValueError(f"queue_packets [packets] must be an integer >= 1; got {self.queue_packets!r}")
        if self.queue_bytes is not None and (not isinstance(self.queue_bytes, int) or self.queue_bytes < 1600):
            raise ValueError(f"queue_bytes [bytes] must be an integer >= 1600 (one full packet); got {self.queue_bytes!r}")

    @property
    def queue_size_string(self) -> str:
        """The ns-3 ``QueueSize`` string: ``"100p"`` or ``"100000B"``."""
        if self.queue_bytes is not None:
            return f"{self.queue_bytes}B"
        return f"{self.queue_packets if self.queue_packets is not None else 100}p"


@dataclass(frozen=True, kw_only=True)
class TcpOptions:
    """TCP socket defaults for every node of a scenario.

    Parameters
    ----------
    mss_bytes : int
        Segment size (ns-3 ``TcpSocket::SegmentSize``). [bytes]
    sndbuf_bytes, rcvbuf_bytes : int
        Socket send and receive buffers. [bytes] The receive buffer caps the
        advertised window, so size it above the path's BDP plus queue.
    min_rto_s : float
        Lower bound of the retransmission timeout (Linux: 0.2). [s]
    conn_timeout_s : float
        SYN retransmission timeout (ns-3 default 3, Linux 1). [s]
    delayed_ack_count : int
        Segments per delayed ACK (``b`` in Mathis/PFTK). [segments] Default 1
        (ns-3's is 2): with 2, ns-3 flows that take an RTO while the queue is
        full get stuck cycling CA_LOSS -> CA_OPEN at cwnd = 1 segment (see
        "Known artifact: RTO lock-out" in :mod:`tcpmodels.sim`).
    sack : bool
        Selective acknowledgements on.
    initial_cwnd_segments : int
        Initial congestion window. [segments]
    recovery : str
        ns-3 recovery algorithm: ``"TcpPrrRecovery"`` (default; Linux uses PRR too)
        or ``"TcpClassicRecovery"``. See "Known artifact: RTO lock-out" in
        :mod:`tcpmodels.sim`.
    cubic_hystart : bool
        HyStart in ns-3's ``TcpCubic`` (``TcpCubicX`` has none; turn it off to compare them).
    """

    mss_bytes: int = 1448
    sndbuf_bytes: int = 4 * 1024 * 1024
    rcvbuf_bytes: int = 4 * 1024 * 1024
    min_rto_s: float = 0.2
    conn_timeout_s: float = 1.0
    delayed_ack_count: int = 1
    sack: bool = True
    initial_cwnd_segments: int = 10
    recovery: str = "TcpPrrRecovery"
    cubic_hystart: bool = True

    def __post_init__(self) -> None:
        for name in ("mss_bytes", "sndbuf_bytes", "rcvbuf_bytes", "delayed_ack_count", "initial_cwnd_segments"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
        if self.mss_bytes > 1460:
            raise ValueError(f"mss_bytes [bytes] must be in [1, 1460] for a 1500-byte MTU; got {self.mss_bytes}")
        _positive("min_rto_s", self.min_rto_s, "s")
        _positive("conn_timeout_s", self.conn_timeout_s, "s")
        if self.recovery not in ("TcpClassicRecovery", "TcpPrrRecovery"):
            raise ValueError(f"recovery must be 'TcpClassicRecovery' or 'TcpPrrRecovery'; got {self.recovery!r}")


@dataclass(frozen=True, kw_only=True)
class BulkApp:
    """A bulk transfer: one connection sending as fast as TCP allows.

    Parameters
    ----------
    start_s : float
        Connection start. [s]
    size_bytes : int, optional
        Bytes to send; ``None`` sends until ``stop_s`` or the end of the run. [bytes]
    stop_s : float, optional
        Stop sending at this time; ``None`` runs to the end. [s]
    """

    kind: ClassVar[str] = "bulk"
    start_s: float = 0.0
    size_bytes: int | None = None
    stop_s: float | None = None

    def __post_init__(self) -> None:
        _positive("start_s", self.start_s, "s", allow_zero=True)
        if self.size_bytes is not None and (not isinstance(self.size_bytes, int) or self.size_bytes < 1):
            raise ValueError(f"size_bytes [bytes] must be an integer >= 1 or None; got {self.size_bytes!r}")
        if self.stop_s is not None and self.stop_s <= self.start_s:
            raise ValueError(f"stop_s [s] must be > start_s = {self.start_s}; got {self.stop_s}")


@dataclass(frozen=True, kw_only=True)
class SizeDistribution:
    """Flow sizes: ``fixed`` (``mean_bytes``), ``uniform`` (``low_bytes``..``high_bytes``)
    or ``pareto`` (``mean_bytes`` and shape ``alpha`` > 1; scale = mean (alpha-1)/alpha).

    Sizes are rounded up to whole bytes; a Pareto draw can be capped with ``max_bytes``.
    """

    kind: str = "fixed"
    mean_bytes: float | None = None
    low_bytes: float | None = None
    high_bytes: float | None = None
    alpha: float | None = None
    max_bytes: float | None = None

    def __post_init__(self) -> None:
        if self.kind == "fixed":
            _positive("mean_bytes", self.mean_bytes, "bytes")
        elif self.kind == "uniform":
            _positive("low_bytes", self.low_bytes, "bytes")
            _positive("high_bytes", self.high_bytes, "bytes")
            if self.high_bytes < self.low_bytes:
                raise ValueError(f"high_bytes [bytes] must be >= low_bytes = {self.low_bytes}; got {self.high_bytes}")
        elif self.kind == "pareto":
            _positive("mean_bytes", self.mean_bytes, "bytes")
            if self.alpha is None or not (self.alpha > 1):
                raise ValueError(f"alpha [-] must be in (1, inf) for a finite mean; got {self.alpha!r}")
        else:
            raise ValueError(f"kind must be 'fixed', 'uniform' or 'pareto'; got {self.kind!r}")
        if self.max_bytes is not None:
            _positive("max_bytes", self.max_bytes, "bytes")

    def sample_bytes(self, rng: Any, n: int) -> list[int]:
        """Draw ``n`` sizes with the numpy ``Generator`` ``rng``. [bytes]"""
        import numpy as np

        if self.kind == "fixed":
            x = np.full(n, float(self.mean_bytes))
        elif self.kind == "uniform":
            x = rng.uniform(self.low_bytes, self.high_bytes, n)
        else:
            scale = self.mean_bytes * (self.alpha - 1.0) / self.alpha
            x = scale * (1.0 + rng.pareto(self.alpha, n))  # classical Pareto, x >= scale
        if self.max_bytes is not None:
            x = np.minimum(x, self.max_bytes)
        return [max(1, int(math.ceil(v))) for v in x]


@dataclass(frozen=True, kw_only=True)
class PoissonFlows:
    """Flows arriving as a Poisson process, each a new connection of a drawn size.

    With ``max_flows`` this is also the ns-2 style "FTP" workload of P5 (a
    fixed number of files per client, Poisson connection arrivals).

    Parameters
    ----------
    mean_interarrival_s : float
        Mean time between flow starts. [s]
    size : SizeDistribution
        Flow sizes.
    start_s, stop_s : float
        No flow starts before ``start_s`` or after ``stop_s`` (``None``: end of run). [s]
    max_flows : int, optional
        At most this many flows.
    """

    kind: ClassVar[str] = "poisson"
    mean_interarrival_s: float
    size: SizeDistribution
    start_s: float = 0.0
    stop_s: float | None = None
    max_flows: int | None = None

    def __post_init__(self) -> None:
        _positive("mean_interarrival_s", self.mean_interarrival_s, "s")
        _positive("start_s", self.start_s, "s", allow_zero=True)
        if isinstance(self.size, dict):
            object.__setattr__(self, "size", SizeDistribution(**self.size))
        if self.max_flows is not None and (not isinstance(self.max_flows, int) or self.max_flows < 1):
            raise ValueError(f"max_flows must be an integer >= 1 or None; got {self.max_flows!r}")


_APPS = {"bulk": BulkApp, "poisson": PoissonFlows}


def _app_from_dict(d: dict) -> BulkApp | PoissonFlows:
    d = dict(d)
    kind = d.pop("kind", None)
    if kind not in _APPS:
        raise ValueError(f"app kind must be one of {sorted(_APPS)}; got {kind!r}")
    return _APPS[kind](**d)


@dataclass(frozen=True, kw_only=True)
class Sender:
    """One sending host: its access link, congestion control and applications.

    Parameters
    ----------
    access : Link
        Link from this host to the left router.
    variant : str
        Congestion control of every connection this host opens
        (e.g. ``"TcpLinuxReno"``, ``"TcpCubic"``; see :data:`TCP_VARIANTS`).
    apps : tuple of BulkApp or PoissonFlows
        What the host sends, all to the receiver.
    cc_params : dict
        Attributes for a run-time compiled congestion control
        (:mod:`tcpmodels.sim.cc`), e.g. ``{"x_mode": "divide", "x_table": ...}``.
    """

    access: Link
    variant: str = "TcpLinuxReno"
    apps: tuple = (BulkApp(),)
    cc_params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.access, dict):
            object.__setattr__(self, "access", Link(**self.access))
        apps = tuple(_app_from_dict(a) if isinstance(a, dict) else a for a in self.apps)
        object.__setattr__(self, "apps", apps)
        v = self.variant.removeprefix("ns3::")
        if v not in TCP_VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(TCP_VARIANTS)}; got {self.variant!r}")
        object.__setattr__(self, "variant", v)
        if not apps:
            raise ValueError("a Sender needs at least one app")
        if self.cc_params:
            if v != "TcpCubicX":
                raise ValueError(f"cc_params apply only to variant 'TcpCubicX'; got variant {v!r}")
            from tcpmodels.sim.cc import check_cubic_x_params  # noqa: PLC0415 (pure Python)

            check_cubic_x_params(self.cc_params)


@dataclass(frozen=True, kw_only=True)
class Dumbbell:
    """Senders -> left router -> bottleneck -> right router -> one receiver.

    Parameters
    ----------
    senders : tuple of Sender
        One host per entry, each with its own access link (rate, delay, queue).
    bottleneck : Link
        The shared link; its left device's queue is where drops happen.
    receiver_access : Link
        Link from the right router to the receiver.
    duration_s : float
        Simulated time. [s]
    seed : int
        Seeds every random stream: ns-3's run number and the numpy generator
        that draws flow arrivals and sizes.
    tcp : TcpOptions
        Socket defaults.
    loss_rate : float
        Probability that a data packet is dropped on arrival at the right
        router (a ``RateErrorModel`` on the bottleneck's receiving device);
        ACKs are not affected. [-]
    pcap_devices : tuple of str
        Devices to capture, among ``"bottleneck"`` (left router's side),
        ``"receiver"`` and ``"senderN"``.
    pcap_snaplen_bytes : int
        Bytes of each packet kept in captures. [bytes]
    queue_bin_s : float
        Time bin of the queue table. [s]
    trace_cwnd : bool
        Record congestion window, ssthresh and congestion state changes of every
        connection (a compiled C++ tracer; useful for diagnosing RTO lock-out).
    """

    topology: ClassVar[str] = "dumbbell"
    senders: tuple
    bottleneck: Link
    receiver_access: Link = Link(rate_bps=10e9, delay_s=1e-5, queue_packets=10000)
    duration_s: float = 10.0
    seed: int = 0
    tcp: TcpOptions = TcpOptions()
    loss_rate: float = 0.0
    pcap_devices: tuple = ()
    pcap_snaplen_bytes: int = 96
    queue_bin_s: float = 0.1
    trace_cwnd: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "senders", tuple(Sender(**s) if isinstance(s, dict) else s for s in self.senders)
        )
        for name, cls in (("bottleneck", Link), ("receiver_access", Link), ("tcp", TcpOptions)):
            if isinstance(getattr(self, name), dict):
                object.__setattr__(self, name, cls(**getattr(self, name)))
        object.__setattr__(self, "pcap_devices", tuple(self.pcap_devices))
        if not self.senders:
            raise ValueError("a Dumbbell needs at least one sender")
        _positive("duration_s", self.duration_s, "s")
        _positive("queue_bin_s", self.queue_bin_s, "s")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0; got {self.seed!r}")
        if not (0.0 <= self.loss_rate < 1.0):
            raise ValueError(f"loss_rate [-] must be in [0, 1); got {self.loss_rate!r}")
        cubic_x = {config_to_json(s.cc_params) for s in self.senders if s.variant == "TcpCubicX"}
        if len(cubic_x) > 1:
            raise ValueError("all TcpCubicX senders of one scenario must share cc_params (ns-3 attribute defaults)")
        valid = {"bottleneck", "receiver"} | {f"sender{i}" for i in range(len(self.senders))}
        for d in self.pcap_devices:
            if d not in valid:
                raise ValueError(f"pcap_devices entries must be in {sorted(valid)}; got {d!r}")


@dataclass(frozen=True, kw_only=True)
class Caterpillar:
    """The P5 caterpillar: server S behind gateway G1, a chain G1-G2-...-Gn, clients on G2..Gn.

    Downstream traffic (server -> clients) crosses G1 -> G2, the bottleneck.

    Parameters
    ----------
    n_gateways : int
        Gateways in the chain (P5: 6). The server hangs on G1; the clients are
        spread round-robin over the ``n_articulation`` gateways G2..G(1+n_articulation).
    n_articulation : int
        Gateways that carry clients (P5: 4, 8 clients each).
    n_clients : int
        Active clients (P5: 8, 16, 24, 32).
    edge : Link
        Server-gateway and client-gateway links (P5: 10 Mbit/s, 15 ms, 3000 packets).
    backbone : Link
        Every gateway-gateway link, including the bottleneck G1-G2.
    server_link : Link, optional
        The S-G1 link if it differs from ``edge`` (e.g. a smaller queue at S);
        ``None``: ``edge``.
    variant : str
        Congestion control of the server (P5: TcpNewReno).
    workload : PoissonFlows
        Downloads per client (P5: Pareto sizes, 50 files per client).
    duration_s, seed, tcp, pcap_devices, pcap_snaplen_bytes, queue_bin_s
        As in :class:`Dumbbell`; pcap devices are ``"bottleneck"`` and ``"server"``.
    """

    topology: ClassVar[str] = "caterpillar"
    n_clients: int
    workload: PoissonFlows
    n_gateways: int = 6
    n_articulation: int = 4
    edge: Link = Link(rate_bps=10e6, delay_s=0.015, queue_packets=3000)
    backbone: Link = Link(rate_bps=5e6, delay_s=0.015, queue_packets=3000)
    server_link: Link | None = None
    variant: str = "TcpNewReno"
    duration_s: float = 20.0
    seed: int = 0
    tcp: TcpOptions = TcpOptions()
    pcap_devices: tuple = ()
    pcap_snaplen_bytes: int = 96
    queue_bin_s: float = 0.1

    def __post_init__(self) -> None:
        for name, cls in (("edge", Link), ("backbone", Link), ("server_link", Link), ("tcp", TcpOptions),
                          ("workload", PoissonFlows)):
            v = getattr(self, name)
            if isinstance(v, dict):
                v = dict(v)
                v.pop("kind", None)
                object.__setattr__(self, name, cls(**v))
        object.__setattr__(self, "pcap_devices", tuple(self.pcap_devices))
        if not isinstance(self.n_clients, int) or self.n_clients < 1:
            raise ValueError(f"n_clients must be an integer >= 1; got {self.n_clients!r}")
        if not isinstance(self.n_gateways, int) or self.n_gateways < 2:
            raise ValueError(f"n_gateways must be an integer >= 2; got {self.n_gateways!r}")
        if not (1 <= self.n_articulation <= self.n_gateways - 1):
            raise ValueError(
                f"n_articulation must be in [1, n_gateways - 1 = {self.n_gateways - 1}]; got {self.n_articulation!r}"
            )
        if self.variant.removeprefix("ns3::") not in TCP_VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(TCP_VARIANTS)}; got {self.variant!r}")
        _positive("duration_s", self.duration_s, "s")
        _positive("queue_bin_s", self.queue_bin_s, "s")
        for d in self.pcap_devices:
            if d not in ("bottleneck", "server"):
                raise ValueError(f"pcap_devices entries must be 'bottleneck' or 'server'; got {d!r}")


@dataclass(frozen=True, kw_only=True)
class MultipathFlow:
    """One multipath connection: a TCP subflow over each listed path.

    Parameters
    ----------
    paths : tuple of int
        Path index of each subflow (repeat an index to put several subflows
        on one path). One entry with ``coupled=False`` is a plain single-path
        TCP connection.
    coupled : bool
        True: every subflow runs ``ns3::TcpLia`` (RFC 6356 LIA, windows coupled
        within this connection). False: every subflow runs ``variant`` on its own.
    variant : str
        Congestion control of uncoupled subflows (see :data:`TCP_VARIANTS`).
    start_s : float
        Start of subflow 0; the others start when its handshake completes. [s]
    size_bytes : int, optional
        Bytes of the transfer, split over the subflows; ``None``: unlimited. [bytes]
    """

    kind: ClassVar[str] = "multipath"
    paths: tuple
    coupled: bool = True
    variant: str = "TcpLinuxReno"
    start_s: float = 0.0
    size_bytes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(self.paths))
        if not self.paths:
            raise ValueError("a MultipathFlow needs at least one path")
        for p in self.paths:
            if not isinstance(p, int) or isinstance(p, bool) or p < 0:
                raise ValueError(f"paths entries must be path indices (integers >= 0); got {p!r}")
        _check_subflow_cc(self)
        _positive("start_s", self.start_s, "s", allow_zero=True)
        if self.size_bytes is not None and (
            not isinstance(self.size_bytes, int) or isinstance(self.size_bytes, bool) or self.size_bytes < 1
        ):
            raise ValueError(f"size_bytes [bytes] must be an integer >= 1 or None; got {self.size_bytes!r}")


@dataclass(frozen=True, kw_only=True)
class Multipath:
    """One sender and one receiver joined by k disjoint paths; multipath connections between them.

    Path p is sender -> router Ap -> bottleneck ``paths[p]`` -> router Bp ->
    receiver; the access links on both sides are ``access``. Subflow j of a
    connection is addressed to the receiver's interface on its path, so it
    crosses that path only.

    Parameters
    ----------
    paths : tuple of Link
        Bottleneck of each path; its left device's queue is where drops happen.
    connections : tuple of MultipathFlow
        The connections; plain TCP is ``MultipathFlow(paths=(p,), coupled=False)``.
    access : Link
        Sender-Ap and Bp-receiver links of every path.
    loss_rates : tuple of float
        Per path, probability that a data packet is dropped on arrival at Bp
        (empty: no random loss). Every path's error model draws from the same
        random stream, so equal paths carrying equal packet sequences lose the
        same packets (for packet-by-packet comparisons of two algorithms). [-]
    duration_s, seed, tcp, queue_bin_s, trace_cwnd
        As in :class:`Dumbbell` (``trace_cwnd`` traces every subflow).

    Notes
    -----
    The queue table's devices are ``"path0"``, ``"path1"``, ...
    """

    topology: ClassVar[str] = "multipath"
    paths: tuple
    connections: tuple
    access: Link = Link(rate_bps=1e9, delay_s=1e-3, queue_packets=1000)
    loss_rates: tuple = ()
    duration_s: float = 10.0
    seed: int = 0
    tcp: TcpOptions = TcpOptions()
    queue_bin_s: float = 0.1
    trace_cwnd: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(Link(**p) if isinstance(p, dict) else p for p in self.paths))
        conns = []
        for c in self.connections:
            if isinstance(c, dict):
                c = dict(c)
                c.pop("kind", None)
                c = MultipathFlow(**c)
            conns.append(c)
        object.__setattr__(self, "connections", tuple(conns))
        object.__setattr__(self, "loss_rates", tuple(self.loss_rates))
        for name, cls in (("access", Link), ("tcp", TcpOptions)):
            if isinstance(getattr(self, name), dict):
                object.__setattr__(self, name, cls(**getattr(self, name)))
        if not self.paths:
            raise ValueError("a Multipath topology needs at least one path")
        if not self.connections:
            raise ValueError("a Multipath topology needs at least one connection")
        for c in self.connections:
            for p in c.paths:
                if p >= len(self.paths):
                    raise ValueError(f"path index {p} out of range: the topology has {len(self.paths)} paths")
        if self.loss_rates and len(self.loss_rates) != len(self.paths):
            raise ValueError(f"loss_rates needs one entry per path ({len(self.paths)}); got {len(self.loss_rates)}")
        for p in self.loss_rates:
            if not isinstance(p, (int, float)) or not (0.0 <= p < 1.0):
                raise ValueError(f"loss_rates entries [-] must be in [0, 1); got {p!r}")
        _positive("duration_s", self.duration_s, "s")
        _positive("queue_bin_s", self.queue_bin_s, "s")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0; got {self.seed!r}")


#: Host-to-host round-trip propagation delay across the core in P1's Table 1. [s]
FAT_TREE_RTT_S = 0.5e-3
#: Links a packet crosses one way between hosts in different pods (host-edge-agg-core-agg-edge-host). [-]
FAT_TREE_HOPS = 6


def fat_tree_link(rate_bps: float, *, rtt_s: float = FAT_TREE_RTT_S, queue_bytes: int = 100_000) -> Link:
    """A fat-tree link whose delay makes the inter-pod host-to-host RTT ``rtt_s``.

    Parameters
    ----------
    rate_bps : float
        Line rate. [bit/s]
    rtt_s : float
        Round-trip propagation delay between two hosts in different pods
        (6 links each way, so each link gets ``rtt_s / 12``). [s]
    queue_bytes : int
        Drop-tail queue at each end of the link. [bytes]

    References
    ----------
    .. [1] H. Fujii, H. Tazaki, Y. Sekiya, P1 Table 1 (``../shared/PAPERS.md``):
       100/200/400 Mbit/s, RTT 0.5 ms, 100 KB buffers.
    """
    _positive("rtt_s", rtt_s, "s", allow_zero=True)
    return Link(rate_bps=rate_bps, delay_s=rtt_s / (2 * FAT_TREE_HOPS), queue_bytes=queue_bytes)


@dataclass(frozen=True)
class FatTreeConnection:
    """One connection between two hosts of the k=4 fat-tree (:class:`FatTree`).

    Parameters
    ----------
    src, dst : int
        Sending and receiving host, 0..15 (host n sits in pod n // 4 under edge
        switch (n // 2) % 2).
    start_s : float
        Start of the (first) subflow's handshake. [s]
    size_bytes : int or None
        Bytes to transfer; ``None``: unlimited (a background transfer until the end). [bytes]
    cores : tuple of int, optional
        ``None``: one single-path TCP connection on the plane chosen by
        :attr:`FatTree.ecmp`. Otherwise one subflow per listed core (distinct,
        0..3), each between the two hosts' plane-c addresses, so it crosses
        core c; ``cores=(c,)`` pins a single-path connection to core c.
    coupled : bool
        True: the subflows run ``ns3::TcpLia`` (RFC 6356 LIA, windows coupled
        within this connection; see :mod:`tcpmodels.sim.multipath`). False:
        every subflow runs ``variant`` on its own.
    variant : str
        Congestion control of uncoupled subflows (see :data:`TCP_VARIANTS`, not ``TcpCubicX``).
    tag : str
        Free label copied to the result rows (e.g. ``"background"``, ``"short"``).
    """

    kind: ClassVar[str] = "fattree_connection"
    src: int
    dst: int
    start_s: float
    size_bytes: int | None
    cores: tuple | None = None
    coupled: bool = False
    variant: str = "TcpNewReno"
    tag: str = ""

    def __post_init__(self) -> None:
        for name in ("src", "dst"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not (0 <= v <= 15):
                raise ValueError(f"{name} [host index] must be an integer in [0, 15]; got {v!r}")
        if self.src == self.dst:
            raise ValueError(f"src and dst must be different hosts; got both {self.src}")
        _positive("start_s", self.start_s, "s", allow_zero=True)
        if self.size_bytes is not None and (
            not isinstance(self.size_bytes, int) or isinstance(self.size_bytes, bool) or self.size_bytes < 1
        ):
            raise ValueError(f"size_bytes [bytes] must be an integer >= 1 or None; got {self.size_bytes!r}")
        if self.cores is not None:
            cores = tuple(self.cores)
            object.__setattr__(self, "cores", cores)
            if not cores:
                raise ValueError("cores must be None or hold 1 to 4 core indices; got ()")
            for c in cores:
                if not isinstance(c, int) or isinstance(c, bool) or not (0 <= c <= 3):
                    raise ValueError(f"cores entries [core index] must be integers in [0, 3]; got {c!r}")
            if len(set(cores)) != len(cores):
                raise ValueError(f"cores entries must be distinct (one subflow per core); got {cores!r}")
        _check_subflow_cc(self)
        if not isinstance(self.tag, str):
            raise ValueError(f"tag must be a string; got {self.tag!r}")


@dataclass(frozen=True, kw_only=True)
class FatTree:
    """The k=4 fat-tree of P1: 16 hosts, 8 edge, 8 aggregation and 4 core routers.

    The addressing plan is the kernel testbed's
    (:func:`tcpmodels.testbed.topologies.fat_tree`): host n has four addresses
    ``10.{16c + n}.0.1``, one per core ("plane" c = 0..3), and every router
    forwards plane-c destinations through core c with static routes, so a
    subflow between two hosts' plane-c addresses in different pods crosses
    core c both ways (within a pod it turns at aggregation switch c // 2).
    Built by :func:`tcpmodels.sim.fattree.build_fattree`.

    Parameters
    ----------
    connections : tuple of FatTreeConnection
        The traffic.
    host_link, edge_agg_link, agg_core_link : Link
        The three tiers. Defaults: P1 Table 1, 100 / 200 / 400 Mbit/s, 100 KB
        drop-tail queue at each link end, 0.5 ms inter-pod RTT
        (:func:`fat_tree_link`).
    ecmp : {"flow", "none"}
        Plane of a connection with ``cores=None``: ``"flow"`` hashes (src, dst,
        connection index, seed), which in this fat-tree is per-flow ECMP over
        the 4 cores; ``"none"`` puts every such connection on plane 0.
    tcp : TcpOptions
        Socket defaults (the 4 MiB buffers fill 400 Mbit/s at 0.5 ms many times over).
    duration_s : float
        Simulated time. [s]
    seed : int
        ns-3 run number and the ECMP hash seed.
    pcap_hosts : tuple of int
        Hosts whose link device (both directions) is captured to ``h{n}.pcap``.
    pcap_snaplen_bytes : int
        Bytes of each captured packet kept. [bytes]
    queue_bin_s : float
        Time bin of the queue and per-connection tables. [s]
    trace_cwnd : bool
        Trace cwnd, ssthresh, state, RTO and RTT of every subflow; in the
        ``cwnd`` table, ``flow_index`` is ``4 * connection + subflow``.

    Notes
    -----
    Results (:class:`~tcpmodels.sim.run.SimResult`):

    ``apps``
        One row per connection: ``connection`` (= ``flow_index``, its index in
        ``connections``), ``tag``, ``src``, ``dst``, ``start_s``,
        ``size_bytes`` (NaN: unlimited), ``cores`` (planes used, e.g. ``"0,1,2,3"``;
        for ECMP the chosen one), ``n_subflows``, ``coupled``, ``variant``
        (``"TcpLia"`` if coupled), ``rx_bytes`` (delivered to the receiver),
        ``rx_bytes_core0`` .. ``rx_bytes_core3`` (delivered per subflow, by
        core), ``fct_s`` (NaN if not completed), ``completed``, ``goodput_bps``.
    ``flows``
        FlowMonitor, one row per subflow and direction; ``flow_index`` is the
        connection, the plane is :func:`tcpmodels.sim.fattree.plane_of_address`
        of ``dst`` (data) or ``src`` (ack).
    ``bins``
        Bytes delivered per connection and time bin.
    ``queues``
        Every link end, named ``"{from}->{to}"`` with the testbed's node names
        (``h0``..``h15``, ``e{pod}{i}``, ``a{pod}{j}``, ``c{j}{m}``; core
        c = 2j + m), e.g. ``"a00->c00"``.

    Examples
    --------
    P1's workload in miniature: two MPTCP (LIA over all 4 cores) background
    transfers and 70 KB single-path TCP flows (per-flow ECMP)::

        from tcpmodels.sim import FatTree, FatTreeConnection, run_config

        conns = [FatTreeConnection(0, 12, 0.0, None, cores=(0, 1, 2, 3), coupled=True, tag="background"),
                 FatTreeConnection(5, 9, 0.0, None, cores=(0, 1, 2, 3), coupled=True, tag="background")]
        conns += [FatTreeConnection(2, 14, 0.5 + 0.2 * k, 70_000, tag="short") for k in range(20)]
        res = run_config(FatTree(connections=tuple(conns), duration_s=5.0, seed=1), "runs/p1/example")
        short = res.apps[res.apps["tag"] == "short"]
        print(short["fct_s"].describe())           # [s]; NaN if a flow did not finish
        print(short["cores"].value_counts())       # the ECMP plane each short flow took
        bg = res.apps[res.apps["tag"] == "background"]
        print(bg[[f"rx_bytes_core{c}" for c in range(4)]])   # bytes per subflow (= per core)
        data = res.flows[res.flows["direction"] == "data"]   # FlowMonitor, one row per subflow

    References
    ----------
    .. [1] H. Fujii, H. Tazaki, Y. Sekiya, P1 (``../shared/PAPERS.md``), Table 1.
    .. [2] M. Al-Fares, A. Loukissas, A. Vahdat, "A scalable, commodity data
       center network architecture", SIGCOMM 2008.
    .. [3] C. Raiciu et al., "Improving datacenter performance and robustness
       with multipath TCP", SIGCOMM 2011.
    """

    topology: ClassVar[str] = "fattree"
    connections: tuple
    host_link: Link = fat_tree_link(100e6)
    edge_agg_link: Link = fat_tree_link(200e6)
    agg_core_link: Link = fat_tree_link(400e6)
    ecmp: str = "flow"
    tcp: TcpOptions = TcpOptions()
    duration_s: float = 10.0
    seed: int = 0
    pcap_hosts: tuple = ()
    pcap_snaplen_bytes: int = 96
    queue_bin_s: float = 0.1
    trace_cwnd: bool = False

    def __post_init__(self) -> None:
        conns = []
        for c in self.connections:
            if isinstance(c, dict):
                c = dict(c)
                c.pop("kind", None)
                c = FatTreeConnection(**c)
            elif not isinstance(c, FatTreeConnection):
                raise ValueError(f"connections entries must be FatTreeConnection; got {type(c).__name__}")
            conns.append(c)
        object.__setattr__(self, "connections", tuple(conns))
        for name, cls in (("host_link", Link), ("edge_agg_link", Link), ("agg_core_link", Link), ("tcp", TcpOptions)):
            if isinstance(getattr(self, name), dict):
                object.__setattr__(self, name, cls(**getattr(self, name)))
        object.__setattr__(self, "pcap_hosts", tuple(self.pcap_hosts))
        if not self.connections:
            raise ValueError("a FatTree needs at least one connection")
        if self.ecmp not in ("flow", "none"):
            raise ValueError(f"ecmp must be 'flow' or 'none'; got {self.ecmp!r}")
        _positive("duration_s", self.duration_s, "s")
        _positive("queue_bin_s", self.queue_bin_s, "s")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0; got {self.seed!r}")
        for h in self.pcap_hosts:
            if not isinstance(h, int) or isinstance(h, bool) or not (0 <= h <= 15):
                raise ValueError(f"pcap_hosts entries [host index] must be integers in [0, 15]; got {h!r}")


_TOPOLOGIES = {"dumbbell": Dumbbell, "caterpillar": Caterpillar, "multipath": Multipath, "fattree": FatTree}


def config_to_dict(config: Any) -> dict:
    """A config as plain JSON-able data, with ``topology`` / ``kind`` tags for round trips."""

    def conv(o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            d = {}
            for tag in ("topology", "kind"):
                if tag in type(o).__dict__ and isinstance(type(o).__dict__[tag], str):
                    d[tag] = type(o).__dict__[tag]
            for f in dataclasses.fields(o):
                value = getattr(o, f.name)
                if f.metadata.get("omit_when_default") and value == f.default:
                    continue  # a field added later, at its default: the stored form (and hash) of older configs
                d[f.name] = conv(value)
            return d
        if isinstance(o, (list, tuple)):
            return [conv(v) for v in o]
        if isinstance(o, dict):
            return {str(k): conv(v) for k, v in o.items()}
        if isinstance(o, float) and not math.isfinite(o):
            raise ValueError(f"non-finite number {o!r} cannot be stored in a config")
        return o

    return conv(config)


def config_from_dict(d: dict) -> Dumbbell | Caterpillar | Multipath | FatTree:
    """Inverse of :func:`config_to_dict`."""
    d = dict(d)
    topo = d.pop("topology", None)
    if topo not in _TOPOLOGIES:
        raise ValueError(f"topology must be one of {sorted(_TOPOLOGIES)}; got {topo!r}")
    if topo == "dumbbell":
        d["senders"] = [
            {**s, "apps": [_app_from_dict(a) for a in s.get("apps", [])]} for s in d.get("senders", [])
        ]
    return _TOPOLOGIES[topo](**d)


def config_to_json(config: Any) -> str:
    """Canonical JSON (sorted keys, no whitespace) of a dataclass config."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        data = config_to_dict(config)
    else:
        data = config
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


def config_hash(config: Any) -> str:
    """SHA-256 of :func:`config_to_json`, hex."""
    return hashlib.sha256(config_to_json(config).encode()).hexdigest()
