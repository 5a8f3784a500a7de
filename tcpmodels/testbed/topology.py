"""Declarative description of a testbed: nodes, links, routes, rules, MPTCP endpoints.

A :class:`Topology` is plain data (frozen dataclasses); :class:`tcpmodels.testbed.Testbed`
turns it into network namespaces, veth links, qdiscs and delay elements, and removes
them again. Quantities carry SI units in their names (``rate_bps``, ``delay_s``,
``buffer_bytes``).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass, field

__all__ = ["Node", "Link", "Route", "Rule", "MptcpEndpoint", "Topology"]

_NODE_RE = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_LINK_RE = re.compile(r"^[a-z][a-z0-9]{0,12}$")
#: node name used for the namespace holding the delay elements
DELAY_NODE = "dly"
QDISCS = ("tbf", "htb")


def _check_cidr(name: str, value: str) -> None:
    try:
        ipaddress.ip_interface(value)
    except ValueError as exc:
        raise ValueError(f"{name} must be an address with prefix length like '10.0.1.1/24'; got {value!r}") from exc
    if "/" not in value:
        raise ValueError(f"{name} must carry a prefix length like '10.0.1.1/24'; got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Node:
    """One network namespace.

    Parameters
    ----------
    name : str
        Short name, ``[a-z][a-z0-9]{0,11}``; the namespace is ``tm<run id>-<name>``.
    forwarding : bool
        Route packets between interfaces (routers, switches).
    mptcp_subflows : int
        ``ip mptcp limits set subflows N`` (extra subflows per connection). [-]
    mptcp_add_addr_accepted : int
        ``ip mptcp limits set add_addr_accepted N``. [-]
    sysctls : tuple of (str, str)
        Extra sysctls set in the namespace, e.g. ``(("net.ipv4.fib_multipath_hash_policy", "3"),)``.
    """

    name: str
    forwarding: bool = False
    mptcp_subflows: int = 0
    mptcp_add_addr_accepted: int = 0
    sysctls: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if not _NODE_RE.match(self.name) or self.name == DELAY_NODE:
            raise ValueError(
                f"node name must match [a-z][a-z0-9]{{0,11}} and not be {DELAY_NODE!r}; got {self.name!r}"
            )
        for attr in ("mptcp_subflows", "mptcp_add_addr_accepted"):
            value = getattr(self, attr)
            if not 0 <= value <= 8:
                raise ValueError(f"{attr} [-] must be in [0, 8] (kernel limit); got {value}")


@dataclass(frozen=True, kw_only=True)
class Link:
    """A point-to-point link between two nodes (a veth pair, or two with a delay element between).

    Parameters
    ----------
    name : str
        Link name ``[a-z][a-z0-9]{0,12}``; it is also the interface name on both ends.
    a, b : str
        Node names of the two ends.
    a_addrs, b_addrs : tuple of str
        Addresses with prefix length on each end, e.g. ``("10.0.1.1/24",)``.
    rate_bps : float or None
        Rate limit in both directions, by a ``tbf`` or ``htb`` qdisc on each end. [bit/s]
    buffer_bytes, buffer_packets : int or None
        Drop-tail buffer of the rate limiter (give at most one). Default 1000 packets. [bytes], [packets]
    delay_s : float
        One-way delay added in each direction by the userspace delay element; the
        round-trip time of a path over this link grows by ``2 * delay_s``. [s]
    loss_rate : float
        Probability that the delay element drops a frame, each direction. [-]
    qdisc : {"tbf", "htb"}
        Rate limiter.
    burst_bytes : int or None
        Token bucket depth; default ``max(3028, rate_bps / 8 * 1 ms)``. [bytes]
    offloads : bool or None
        Leave checksum/TSO/GSO/GRO offloads on. ``None``: off when a delay element
        bridges the link (it needs whole, checksummed frames), on otherwise.
    """

    name: str
    a: str
    b: str
    a_addrs: tuple[str, ...] = ()
    b_addrs: tuple[str, ...] = ()
    rate_bps: float | None = None
    buffer_bytes: int | None = None
    buffer_packets: int | None = None
    delay_s: float = 0.0
    loss_rate: float = 0.0
    qdisc: str = "tbf"
    burst_bytes: int | None = None
    offloads: bool | None = None

    def __post_init__(self):
        if not _LINK_RE.match(self.name):
            raise ValueError(f"link name must match [a-z][a-z0-9]{{0,12}}; got {self.name!r}")
        if self.a == self.b:
            raise ValueError(f"link {self.name}: both ends are node {self.a!r}")
        for side in ("a_addrs", "b_addrs"):
            value = getattr(self, side)
            if isinstance(value, str):
                object.__setattr__(self, side, (value,))
            for addr in getattr(self, side):
                _check_cidr(f"link {self.name} {side}", addr)
        if self.rate_bps is not None and not 1e3 <= self.rate_bps <= 1e11:
            raise ValueError(f"link {self.name}: rate_bps [bit/s] must be in [1e3, 1e11]; got {self.rate_bps}")
        if self.buffer_bytes is not None and self.buffer_packets is not None:
            raise ValueError(f"link {self.name}: give buffer_bytes or buffer_packets, not both")
        if self.buffer_bytes is not None and not 1514 <= self.buffer_bytes <= 1 << 30:
            raise ValueError(f"link {self.name}: buffer_bytes [bytes] must be in [1514, 2^30]; got {self.buffer_bytes}")
        if self.buffer_packets is not None and not 1 <= self.buffer_packets <= 1_000_000:
            raise ValueError(
                f"link {self.name}: buffer_packets [packets] must be in [1, 1e6]; got {self.buffer_packets}"
            )
        if not 0.0 <= self.delay_s <= 10.0:
            raise ValueError(f"link {self.name}: delay_s [s] must be in [0, 10]; got {self.delay_s}")
        if not 0.0 <= self.loss_rate < 1.0:
            raise ValueError(f"link {self.name}: loss_rate [-] must be in [0, 1); got {self.loss_rate}")
        if self.qdisc not in QDISCS:
            raise ValueError(f"link {self.name}: qdisc must be one of {QDISCS}; got {self.qdisc!r}")
        if self.burst_bytes is not None and not 1514 <= self.burst_bytes <= 1 << 26:
            raise ValueError(f"link {self.name}: burst_bytes [bytes] must be in [1514, 2^26]; got {self.burst_bytes}")

    @property
    def delayed(self) -> bool:
        """True when a delay element bridges this link (delay or loss requested)."""
        return self.delay_s > 0 or self.loss_rate > 0

    def addrs(self, node: str) -> tuple[str, ...]:
        """Addresses (with prefix) on the end of this link at ``node``.

        Parameters
        ----------
        node : str
            One end of the link.

        Returns
        -------
        tuple of str
            The interface addresses, e.g. ``("10.0.1.1/24",)``; empty if it has none.

        Raises
        ------
        ValueError
            If ``node`` is not an end of this link.
        """
        if node == self.a:
            return self.a_addrs
        if node == self.b:
            return self.b_addrs
        raise ValueError(f"node {node!r} is not an end of link {self.name} ({self.a}, {self.b})")

    def peer(self, node: str) -> str:
        """The node at the other end.

        Parameters
        ----------
        node : str
            One end of the link (not checked: any other name gives end ``a``).

        Returns
        -------
        str
            ``b`` if ``node`` is ``a``, else ``a``.
        """
        return self.b if node == self.a else self.a


@dataclass(frozen=True, kw_only=True)
class Route:
    """A route in one node: ``ip route add DST [via VIA] [dev LINK] [src SRC] [table T] [quickack 1]``.

    ``nexthops`` (pairs of gateway address and link name) makes an ECMP route instead of ``via``.
    ``quickack`` sets the route's ``RTAX_QUICKACK`` metric: a TCP connection whose ACKs take the route
    acknowledges every segment at once (no delayed ACKs; Linux has no sysctl for it, ip-route(8)).
    """

    node: str
    dst: str
    via: str | None = None
    link: str | None = None
    src: str | None = None
    table: int | None = None
    nexthops: tuple[tuple[str, str], ...] = ()
    quickack: bool = False

    def ip_args(self) -> list[str]:
        """Arguments of ``ip`` that add this route (run in the route's node).

        Returns
        -------
        list of str
            E.g. ``["route", "add", "10.0.2.0/24", "via", "10.0.1.2", "dev", "l1"]``.
        """
        args = ["route", "add", self.dst]
        if self.nexthops:
            for via, link in self.nexthops:
                args += ["nexthop", "via", via, "dev", link]
        else:
            if self.via:
                args += ["via", self.via]
            if self.link:
                args += ["dev", self.link]
        if self.src:
            args += ["src", self.src]
        if self.table is not None:
            args += ["table", str(self.table)]
        if self.quickack:
            args += ["quickack", "1"]
        return args


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A policy-routing rule: packets from ``from_prefix`` use routing table ``table``."""

    node: str
    from_prefix: str
    table: int
    priority: int | None = None

    def ip_args(self) -> list[str]:
        """Arguments of ``ip`` that add this rule.

        Returns
        -------
        list of str
            ``["rule", "add", "from", PREFIX, "table", T]`` and ``["priority", P]`` if set.
        """
        args = ["rule", "add", "from", self.from_prefix, "table", str(self.table)]
        if self.priority is not None:
            args += ["priority", str(self.priority)]
        return args


@dataclass(frozen=True, kw_only=True)
class MptcpEndpoint:
    """``ip mptcp endpoint add ADDR [dev LINK] FLAGS`` in one node.

    ``flags`` is a space-separated subset of ``subflow signal backup fullmesh``.
    """

    node: str
    addr: str
    flags: str = "subflow"
    link: str | None = None

    def ip_args(self) -> list[str]:
        """Arguments of ``ip`` that add this endpoint.

        Returns
        -------
        list of str
            ``["mptcp", "endpoint", "add", ADDR]``, ``["dev", LINK]`` if set, then the flags.
        """
        args = ["mptcp", "endpoint", "add", self.addr]
        if self.link:
            args += ["dev", self.link]
        return args + self.flags.split()


@dataclass(frozen=True, kw_only=True)
class Topology:
    """Everything a testbed is made of; validated on construction."""

    name: str
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    routes: tuple[Route, ...] = ()
    rules: tuple[Rule, ...] = ()
    endpoints: tuple[MptcpEndpoint, ...] = ()
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"topology {self.name}: duplicate node names in {names}")
        link_names = [lk.name for lk in self.links]
        if len(set(link_names)) != len(link_names):
            raise ValueError(f"topology {self.name}: duplicate link names in {link_names}")
        known = set(names)
        for lk in self.links:
            for end in (lk.a, lk.b):
                if end not in known:
                    raise ValueError(f"link {lk.name}: unknown node {end!r}")
        for item in (*self.routes, *self.rules, *self.endpoints):
            if item.node not in known:
                raise ValueError(f"{type(item).__name__} refers to unknown node {item.node!r}")
            link = getattr(item, "link", None)
            links_at_node = {lk.name for lk in self.links if item.node in (lk.a, lk.b)}
            for ref in [link] + [lk for _, lk in getattr(item, "nexthops", ())]:
                if ref is not None and ref not in links_at_node:
                    raise ValueError(f"{type(item).__name__} in node {item.node}: no link {ref!r} at that node")

    def node(self, name: str) -> Node:
        """The node called ``name``.

        Parameters
        ----------
        name : str
            Node name.

        Returns
        -------
        Node

        Raises
        ------
        KeyError
            If the topology has no such node.
        """
        return self._named("node", self.nodes, name)

    def link(self, name: str) -> Link:
        """The link called ``name``.

        Parameters
        ----------
        name : str
            Link name (also the interface name at both ends).

        Returns
        -------
        Link

        Raises
        ------
        KeyError
            If the topology has no such link.
        """
        return self._named("link", self.links, name)

    def _named(self, kind: str, items: tuple[Node, ...] | tuple[Link, ...], name: str) -> Node | Link:
        """The item of ``items`` called ``name``; ``KeyError`` naming the ``kind`` and this topology if none."""
        for item in items:
            if item.name == name:
                return item
        raise KeyError(f"no {kind} {name!r} in topology {self.name}")

    def to_dict(self) -> dict:
        """Plain-data form (for the run record).

        Returns
        -------
        dict
            The fields, recursively through :func:`dataclasses.asdict` (nodes, links,
            routes, rules and endpoints as tuples of dicts).
        """
        return asdict(self)
