"""Ready-made topologies: a single link, two paths (P2), a dumbbell (P3), a k=4 fat-tree (P1).

Each function returns a :class:`~tcpmodels.testbed.topology.Topology` and puts the
addresses a caller needs in ``topology.meta``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from tcpmodels.testbed.topology import Link, MptcpEndpoint, Node, Route, Rule, Topology
from tcpmodels.topology.addressing import (
    N_CORES,
    N_HOSTS,
    TRANSIT_PREFIX,
    core_name,
    fat_tree_link_name,
    fat_tree_links,
    fat_tree_routes,
    host_name,
    plane_address,
)

__all__ = ["PathSpec", "single_link", "two_path", "dumbbell", "fat_tree"]


@dataclass(frozen=True, kw_only=True)
class PathSpec:
    """One path of a multipath topology.

    Parameters
    ----------
    rate_bps : float or None
        Rate limit, each direction. [bit/s]
    rtt_s : float
        Round-trip propagation delay added by the delay element (half each way). [s]
    buffer_bytes, buffer_packets : int or None
        Drop-tail buffer at the rate limiter (default 1000 packets). [bytes], [packets]
    loss_rate : float
        Random frame loss probability each direction. [-]
    qdisc : {"tbf", "htb"}
    """

    rate_bps: float | None = None
    rtt_s: float = 0.0
    buffer_bytes: int | None = None
    buffer_packets: int | None = None
    loss_rate: float = 0.0
    qdisc: str = "tbf"

    def link(self, name: str, a: str, b: str, a_addr: str, b_addr: str) -> Link:
        """The :class:`Link` of this path between nodes ``a`` and ``b``.

        Parameters
        ----------
        name : str
            Link (and interface) name.
        a, b : str
            The two end nodes; the delay element gets ``rtt_s / 2`` each way.
        a_addr, b_addr : str
            The ends' addresses with prefix length, e.g. ``"10.0.1.1/24"``.

        Returns
        -------
        Link

        Raises
        ------
        ValueError
            If the link is invalid (from :class:`Link`'s checks, e.g. a bad name or address).
        """
        return Link(
            name=name, a=a, b=b, a_addrs=(a_addr,), b_addrs=(b_addr,), rate_bps=self.rate_bps,
            buffer_bytes=self.buffer_bytes, buffer_packets=self.buffer_packets, delay_s=self.rtt_s / 2,
            loss_rate=self.loss_rate, qdisc=self.qdisc,
        )


def single_link(path: PathSpec) -> Topology:
    """Client ``c`` (10.0.1.1) and server ``s`` (10.0.1.2) joined by one link ``p0``.

    Parameters
    ----------
    path : PathSpec
        Rate, delay, buffer and loss of the link.

    Returns
    -------
    Topology
        ``meta`` holds ``client``, ``server``, ``server_addr``, ``client_addrs``,
        ``server_addrs`` and ``path_links``.
    """
    return Topology(
        name="single_link",
        nodes=(Node(name="c"), Node(name="s")),
        links=(path.link("p0", "c", "s", "10.0.1.1/24", "10.0.1.2/24"),),
        meta={"client": "c", "server": "s", "server_addr": "10.0.1.2", "client_addrs": ["10.0.1.1"],
              "server_addrs": ["10.0.1.2"], "path_links": ["p0"]},
    )


def two_path(paths: list[PathSpec] | tuple[PathSpec, ...]) -> Topology:
    """Client ``c`` and server ``s`` joined by n disjoint paths (links ``p0``, ``p1``, ...).

    Path i is the subnet 10.0.(i+1).0/24, client .1, server .2. For MPTCP the
    server announces its other addresses (``signal`` endpoints) and the client
    accepts them, so a connection to 10.0.1.2 gets one subflow per path. The
    client also has per-source policy routing (address of path i -> table 100+i
    -> link ``p{i}``), so a socket bound to a path's address takes that path
    whatever the destination.

    Parameters
    ----------
    paths : list or tuple of PathSpec
        One spec per path, 1 to 8 of them (2 for P2's two-path setup).

    Returns
    -------
    Topology
        Named ``"two_path"`` for two paths, ``"{n}_path"`` otherwise; ``meta`` as in
        :func:`single_link`, with one client and server address and link per path.

    Raises
    ------
    ValueError
        If ``paths`` holds fewer than 1 or more than 8 specs.
    """
    paths = tuple(paths)
    if not 1 <= len(paths) <= 8:
        raise ValueError(f"paths must hold 1 to 8 PathSpec; got {len(paths)}")
    n = len(paths)
    links, rules, routes, endpoints = [], [], [], []
    for i, spec in enumerate(paths):
        c_addr, s_addr = f"10.0.{i + 1}.1", f"10.0.{i + 1}.2"
        links.append(spec.link(f"p{i}", "c", "s", c_addr + "/24", s_addr + "/24"))
        rules.append(Rule(node="c", from_prefix=c_addr, table=100 + i, priority=100 + i))
        routes.append(Route(node="c", dst="10.0.0.0/16", link=f"p{i}", src=c_addr, table=100 + i))
        rules.append(Rule(node="s", from_prefix=s_addr, table=100 + i, priority=100 + i))
        routes.append(Route(node="s", dst="10.0.0.0/16", link=f"p{i}", src=s_addr, table=100 + i))
        if i > 0:
            endpoints.append(MptcpEndpoint(node="s", addr=s_addr, flags="signal", link=f"p{i}"))
    nodes = (
        Node(name="c", mptcp_subflows=n - 1, mptcp_add_addr_accepted=n - 1),
        Node(name="s", mptcp_subflows=n - 1, mptcp_add_addr_accepted=n - 1),
    )
    return Topology(
        name="two_path" if n == 2 else f"{n}_path", nodes=nodes, links=tuple(links), routes=tuple(routes),
        rules=tuple(rules), endpoints=tuple(endpoints),
        meta={"client": "c", "server": "s", "server_addr": "10.0.1.2",
              "client_addrs": [f"10.0.{i + 1}.1" for i in range(n)],
              "server_addrs": [f"10.0.{i + 1}.2" for i in range(n)], "path_links": [f"p{i}" for i in range(n)]},
    )


def dumbbell(*, access_rtts_s: Iterable[float], bottleneck_rate_bps: float, bottleneck_buffer_bytes: int | None = None,
             bottleneck_buffer_packets: int | None = None, bottleneck_rtt_s: float = 0.0,
             access_rate_bps: float | None = None, qdisc: str = "tbf") -> Topology:
    """Senders ``s0..s{n-1}``, each with its own access delay, sharing one bottleneck to receiver ``d``.

    ``si --a{i}-- ra --bn-- rb --dl-- d``. Sender i's round-trip propagation
    delay is ``access_rtts_s[i] + bottleneck_rtt_s``. The bottleneck's rate
    limiter sits on ``ra``'s end of ``bn`` (data direction) and on ``rb``'s
    (ACK direction). Sender i has 10.1.i.1; the receiver 10.3.0.2.

    Parameters
    ----------
    access_rtts_s : iterable of float
        Round-trip propagation delay of each sender's access link, 1 to 64 senders. [s]
    bottleneck_rate_bps : float
        Rate of the bottleneck, each direction. [bit/s]
    bottleneck_buffer_bytes, bottleneck_buffer_packets : int, optional
        Drop-tail buffer of the bottleneck's rate limiter (at most one; 1000 packets if
        neither). [bytes], [packets]
    bottleneck_rtt_s : float
        Round-trip propagation delay added on the bottleneck. [s]
    access_rate_bps : float, optional
        Rate limit of every access link; none if omitted. [bit/s]
    qdisc : {"tbf", "htb"}
        Rate limiter of the rate-limited links.

    Returns
    -------
    Topology
        ``meta`` holds ``senders``, ``receiver``, ``receiver_addr``, ``sender_addrs``
        and ``bottleneck_link``.

    Raises
    ------
    ValueError
        If ``access_rtts_s`` holds fewer than 1 or more than 64 values, or a link is
        invalid (from :class:`Link`'s checks).
    """
    rtts = list(access_rtts_s)
    if not 1 <= len(rtts) <= 64:
        raise ValueError(f"access_rtts_s must hold 1 to 64 values [s]; got {len(rtts)}")
    nodes = [Node(name=f"s{i}") for i in range(len(rtts))]
    nodes += [Node(name="ra", forwarding=True), Node(name="rb", forwarding=True), Node(name="d")]
    links, routes = [], []
    for i, rtt in enumerate(rtts):
        links.append(Link(name=f"a{i}", a=f"s{i}", b="ra", a_addrs=(f"10.1.{i}.1/24",), b_addrs=(f"10.1.{i}.2/24",),
                          delay_s=rtt / 2, rate_bps=access_rate_bps, qdisc=qdisc))
        routes.append(Route(node=f"s{i}", dst="default", via=f"10.1.{i}.2"))
    links.append(Link(name="bn", a="ra", b="rb", a_addrs=("10.2.0.1/30",), b_addrs=("10.2.0.2/30",),
                      rate_bps=bottleneck_rate_bps, buffer_bytes=bottleneck_buffer_bytes,
                      buffer_packets=bottleneck_buffer_packets, delay_s=bottleneck_rtt_s / 2, qdisc=qdisc))
    links.append(Link(name="dl", a="rb", b="d", a_addrs=("10.3.0.1/24",), b_addrs=("10.3.0.2/24",)))
    routes += [Route(node="ra", dst="10.3.0.0/24", via="10.2.0.2"), Route(node="rb", dst="10.1.0.0/16", via="10.2.0.1"),
               Route(node="d", dst="default", via="10.3.0.1")]
    return Topology(
        name="dumbbell", nodes=tuple(nodes), links=tuple(links), routes=tuple(routes),
        meta={"senders": [f"s{i}" for i in range(len(rtts))], "receiver": "d", "receiver_addr": "10.3.0.2",
              "sender_addrs": [f"10.1.{i}.1" for i in range(len(rtts))], "bottleneck_link": "bn"},
    )


def fat_tree(*, host_rate_bps: float = 100e6, edge_agg_rate_bps: float = 200e6, agg_core_rate_bps: float = 400e6,
             buffer_bytes: int = 100_000, link_delay_s: float = 0.0) -> Topology:
    """A k=4 fat-tree: 16 hosts, 8 edge, 8 aggregation and 4 core switches (L3 routers).

    Host ``h{n}`` (n = 4 pod + 2 edge + index) has four addresses, one per core
    ("plane" c = 0..3): ``10.{16c + n}.0.1``. Every switch routes a destination
    of plane c through core c (core c = 2j + m hangs off aggregation switch j
    of each pod, port m), so a subflow between two hosts' plane-c addresses
    crosses core c both ways. Hosts pick the plane-c source for a plane-c
    destination (route ``src``), and announce planes 1-3 as MPTCP ``signal``
    endpoints, so an MPTCP connection to a host's plane-0 address gets one
    subflow per core. Rates default to the P1 paper's 100/200/400 Mbit/s with
    100 KB drop-tail buffers at every link end. The plan is
    :mod:`tcpmodels.topology.addressing`, which ns-3's fat-tree uses too.

    Parameters
    ----------
    host_rate_bps : float
        Rate of the host-edge links, each direction. [bit/s]
    edge_agg_rate_bps : float
        Rate of the edge-aggregation links. [bit/s]
    agg_core_rate_bps : float
        Rate of the aggregation-core links. [bit/s]
    buffer_bytes : int
        Drop-tail buffer at each end of every link. [bytes]
    link_delay_s : float
        One-way propagation delay of every link (0: no delay elements). [s]

    Returns
    -------
    Topology
        Named ``"fat_tree_k4"``; ``meta`` holds ``hosts``, ``cores`` and ``host_addrs``
        (host name -> its four plane addresses).

    Raises
    ------
    ValueError
        If a link parameter is out of range (from :class:`Link`'s checks).
    """
    rates = {"host_link": host_rate_bps, "edge_agg_link": edge_agg_rate_bps, "agg_core_link": agg_core_rate_bps}
    nodes = [Node(name=host_name(n), mptcp_subflows=3, mptcp_add_addr_accepted=3) for n in range(N_HOSTS)]
    for p in range(4):
        nodes += [Node(name=f"e{p}{i}", forwarding=True) for i in range(2)]
        nodes += [Node(name=f"a{p}{j}", forwarding=True) for j in range(2)]
    nodes += [Node(name=core_name(c), forwarding=True) for c in range(N_CORES)]
    transit = ipaddress.IPv4Network(TRANSIT_PREFIX).network_address
    links, gateway = [], {}  # gateway[(node, neighbour)]: the neighbour's address on their link
    for k, (lower, upper, tier) in enumerate(fat_tree_links()):
        a, b = (upper, lower) if tier == "host_link" else (lower, upper)  # host links: the edge is side a
        a_ip, b_ip = str(transit + 256 * k + 1), str(transit + 256 * k + 2)
        b_addrs = (b_ip + "/30",)
        if tier == "host_link":
            b_addrs += tuple(plane_address(int(lower[1:]), c) + "/32" for c in range(N_CORES))
        links.append(Link(name=fat_tree_link_name(lower, upper), a=a, b=b, a_addrs=(a_ip + "/30",), b_addrs=b_addrs,
                          rate_bps=rates[tier], buffer_bytes=buffer_bytes, delay_s=link_delay_s))
        gateway[(a, b)], gateway[(b, a)] = b_ip, a_ip
    routes = []
    for at, prefix, via in fat_tree_routes():
        # a host sends plane-c destinations from its own plane-c address
        src = plane_address(int(at[1:]), int(prefix.split(".")[1]) // 16) if at.startswith("h") else None
        routes.append(Route(node=at, dst=prefix, via=gateway[(at, via)], src=src))
    endpoints = [MptcpEndpoint(node=host_name(n), addr=plane_address(n, c), flags="signal", link=f"hl{n}")
                 for n in range(N_HOSTS) for c in range(1, N_CORES)]
    return Topology(
        name="fat_tree_k4", nodes=tuple(nodes), links=tuple(links), routes=tuple(routes), endpoints=tuple(endpoints),
        meta={"hosts": [host_name(n) for n in range(N_HOSTS)], "cores": [core_name(c) for c in range(N_CORES)],
              "host_addrs": {host_name(n): [plane_address(n, c) for c in range(N_CORES)] for n in range(N_HOSTS)}},
    )
