"""Topologies of the dumbbell, the P5 caterpillar and k disjoint paths (:class:`Multipath`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tcpmodels.sim.config.base import TCP_VARIANTS, canonical_json, check_subflow_cc, coerce, positive
from tcpmodels.sim.config.parts import Link, PoissonFlows, Sender, TcpOptions

__all__ = ["Dumbbell", "Caterpillar", "MultipathFlow", "Multipath"]


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
        coerce(self, senders=[Sender], bottleneck=Link, receiver_access=Link, tcp=TcpOptions, pcap_devices=tuple)
        if not self.senders:
            raise ValueError("a Dumbbell needs at least one sender")
        positive("duration_s", self.duration_s, "s")
        positive("queue_bin_s", self.queue_bin_s, "s")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0; got {self.seed!r}")
        if not (0.0 <= self.loss_rate < 1.0):
            raise ValueError(f"loss_rate [-] must be in [0, 1); got {self.loss_rate!r}")
        cubic_x = {canonical_json(s.cc_params) for s in self.senders if s.variant == "TcpCubicX"}
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
        coerce(self, edge=Link, backbone=Link, server_link=Link, tcp=TcpOptions, workload=PoissonFlows,
               pcap_devices=tuple)
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
        positive("duration_s", self.duration_s, "s")
        positive("queue_bin_s", self.queue_bin_s, "s")
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
        coerce(self, paths=tuple)
        if not self.paths:
            raise ValueError("a MultipathFlow needs at least one path")
        for p in self.paths:
            if not isinstance(p, int) or isinstance(p, bool) or p < 0:
                raise ValueError(f"paths entries must be path indices (integers >= 0); got {p!r}")
        check_subflow_cc(self)
        positive("start_s", self.start_s, "s", allow_zero=True)
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
        coerce(self, paths=[Link], connections=[MultipathFlow], loss_rates=tuple, access=Link, tcp=TcpOptions)
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
        positive("duration_s", self.duration_s, "s")
        positive("queue_bin_s", self.queue_bin_s, "s")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0; got {self.seed!r}")
