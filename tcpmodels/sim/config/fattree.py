"""P1's k=4 fat-tree: its links, its connections, the topology (built by :mod:`tcpmodels.sim.fattree`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tcpmodels.sim.config.base import check_subflow_cc, coerce, positive
from tcpmodels.sim.config.parts import Link, TcpOptions

__all__ = ["FAT_TREE_RTT_S", "FAT_TREE_HOPS", "fat_tree_link", "FatTreeConnection", "FatTree"]


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

    Returns
    -------
    Link
        The link, with ``delay_s = rtt_s / (2 * FAT_TREE_HOPS)``.

    Raises
    ------
    ValueError
        If ``rtt_s`` is negative or not finite, or the :class:`Link` refuses
        ``rate_bps`` or ``queue_bytes``.

    References
    ----------
    .. [1] S. Fujii, H. Tazaki, Y. Sekiya, "MultiPath TCP 適用時のデータセンターネットワークでのフローサイズが与える影響に関する一考察"
       (the effect of flow size in a data-center network with MultiPath TCP), Table 1: 100/200/400 Mbit/s, RTT 0.5 ms, 100 KB buffers.
    """
    positive("rtt_s", rtt_s, "s", allow_zero=True)
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
        positive("start_s", self.start_s, "s", allow_zero=True)
        if self.size_bytes is not None and (
            not isinstance(self.size_bytes, int) or isinstance(self.size_bytes, bool) or self.size_bytes < 1
        ):
            raise ValueError(f"size_bytes [bytes] must be an integer >= 1 or None; got {self.size_bytes!r}")
        if self.cores is not None:
            coerce(self, cores=tuple)
            cores = self.cores
            if not cores:
                raise ValueError("cores must be None or hold 1 to 4 core indices; got ()")
            for c in cores:
                if not isinstance(c, int) or isinstance(c, bool) or not (0 <= c <= 3):
                    raise ValueError(f"cores entries [core index] must be integers in [0, 3]; got {c!r}")
            if len(set(cores)) != len(cores):
                raise ValueError(f"cores entries must be distinct (one subflow per core); got {cores!r}")
        check_subflow_cc(self)
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
    .. [1] S. Fujii, H. Tazaki, Y. Sekiya, "MultiPath TCP 適用時のデータセンターネットワークでのフローサイズが与える影響に関する一考察"
       (the effect of flow size in a data-center network with MultiPath TCP), Table 1.
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
        coerce(self, connections=[FatTreeConnection], host_link=Link, edge_agg_link=Link, agg_core_link=Link,
               tcp=TcpOptions, pcap_hosts=tuple)
        for c in self.connections:
            if not isinstance(c, FatTreeConnection):
                raise ValueError(f"connections entries must be FatTreeConnection; got {type(c).__name__}")
        if not self.connections:
            raise ValueError("a FatTree needs at least one connection")
        if self.ecmp not in ("flow", "none"):
            raise ValueError(f"ecmp must be 'flow' or 'none'; got {self.ecmp!r}")
        positive("duration_s", self.duration_s, "s")
        positive("queue_bin_s", self.queue_bin_s, "s")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0; got {self.seed!r}")
        for h in self.pcap_hosts:
            if not isinstance(h, int) or isinstance(h, bool) or not (0 <= h <= 15):
                raise ValueError(f"pcap_hosts entries [host index] must be integers in [0, 15]; got {h!r}")
