"""The k=4 fat-tree of P1 in ns-3: per-flow ECMP and the builder.

Addressing and routing are the kernel testbed's
(:func:`tcpmodels.testbed.topologies.fat_tree`), both taken from
:mod:`tcpmodels.topology.addressing` so that the two engines run the same
experiment:

- host ``h{n}``, n = 4 pod + 2 edge + index, has four addresses
  ``10.{16c + n}.0.1`` ("plane" c = 0..3), configured with a /12 mask so that
  ns-3's source-address selection picks the plane-c address for a plane-c
  destination (the kernel testbed uses a route ``src`` for this);
- every router has static routes only: edge ``e{p}{i}`` sends
  ``10.{16c + n}.0.0/16`` to its host n and ``10.{16c}.0.0/12`` up to
  aggregation switch ``a{p}{c // 2}``; aggregation ``a{p}{j}`` sends
  ``10.{16c + 4p + 2i}.0.0/15`` down to edge i and ``10.{16c}.0.0/12`` up to
  core ``c{j}{m}`` (c = 2j + m); core c sends ``10.{16c + 4p}.0.0/14`` to pod p.

So traffic between two hosts' plane-c addresses in different pods crosses
core c both ways; within a pod it turns at ``a{p}{c // 2}``, under one edge at
the edge. A single-path connection (``cores=None``) is put on the plane given
by :func:`ecmp_plane`, a hash of (src, dst, connection index, seed): in this
topology choosing the destination plane *is* per-flow ECMP over the four
cores (ns-3's own ECMP is per packet and would reorder).

Every connection, single-path or multipath, is driven by the subflow
application of :mod:`tcpmodels.sim.multipath` (one per subflow, congestion
control set per socket, later subflows joining after the first handshake) and
received by one ``PacketSink`` per connection, on which a small C++ trace
counts bytes per sending plane.

References
----------
.. [1] M. Al-Fares, A. Loukissas, A. Vahdat, "A scalable, commodity data center
   network architecture", SIGCOMM 2008.
.. [2] C. Raiciu, S. Barre, C. Pluntke, A. Greenhalgh, D. Wischik, M. Handley,
   "Improving datacenter performance and robustness with multipath TCP",
   SIGCOMM 2011.
.. [3] C. Hopps, "Analysis of an Equal-Cost Multi-Path Algorithm", RFC 2992, 2000.
"""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from tcpmodels.sim.blocks import FIRST_PORT, Built, Net, set_tcp_defaults, watched_sink
from tcpmodels.sim.config import FatTree
from tcpmodels.topology.addressing import (
    N_CORES,
    N_HOSTS,
    check_host,
    core_name,
    fat_tree_links,
    fat_tree_routes,
    host_name,
    host_of_address,
    plane_address,
    plane_of_address,
)

__all__ = [
    "N_HOSTS",
    "N_CORES",
    "host_name",
    "core_name",
    "plane_address",
    "plane_of_address",
    "host_of_address",
    "ecmp_plane",
    "connection_planes",
    "fat_tree_links",
    "fat_tree_routes",
    "build_fattree",
]

#: Per-connection, per-plane byte counter on the receiving PacketSink.
PLANE_RX_CPP = r"""
#include <array>
#include <map>
namespace tcpmodels_ft {
using namespace ns3;
inline std::map<uint32_t, std::array<uint64_t, 4>> g_planeRx;

// bytes received by connection `conn` from a sender address 10.{16c + n}.0.1, counted under plane c
inline void PlaneRx(uint32_t conn, Ptr<const Packet> p, const Address &from) {
  if (!InetSocketAddress::IsMatchingType(from)) return;
  uint32_t ip = InetSocketAddress::ConvertFrom(from).GetIpv4().Get();
  uint32_t plane = ((ip >> 16) & 0xff) / 16;
  if (plane < 4) g_planeRx[conn][plane] += p->GetSize();
}
inline bool WatchPlanes(Ptr<Application> sink, uint32_t conn) {
  g_planeRx[conn] = {0, 0, 0, 0};
  return sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&PlaneRx, conn));
}
inline uint64_t PlaneRxBytes(uint32_t conn, uint32_t plane) { return g_planeRx[conn].at(plane); }
}  // namespace tcpmodels_ft
"""


def ecmp_plane(src: int, dst: int, flow_id: int, seed: int) -> int:
    """Per-flow ECMP: the core a single-path connection uses, from a hash of its identity.

    Parameters
    ----------
    src, dst : int
        Hosts, 0..15.
    flow_id : int
        Connection index (stands in for the port numbers of a 5-tuple hash).
    seed : int
        Hash seed (the run's seed): another seed re-deals the flows.

    Returns
    -------
    int
        Plane 0..3, uniform over flows (SHA-256 of the four numbers, modulo 4).

    References
    ----------
    .. [1] C. Hopps, RFC 2992, 2000 (hash-threshold ECMP over a flow identity).
    """
    check_host(src)
    check_host(dst)
    digest = hashlib.sha256(f"{int(src)},{int(dst)},{int(flow_id)},{int(seed)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % N_CORES


def connection_planes(config: FatTree) -> list[tuple[int, ...]]:
    """Planes of each connection's subflows: its ``cores``, or the ECMP choice (plane 0 with ``ecmp="none"``).

    Parameters
    ----------
    config : FatTree
        The scenario; its ``connections``, ``ecmp`` mode and ``seed`` decide the planes.

    Returns
    -------
    list of tuple of int
        One tuple per connection, in order: the core plane (0 to ``N_CORES - 1``) of each
        of its subflows (one plane unless the connection names its ``cores``).
    """
    out = []
    for k, conn in enumerate(config.connections):
        if conn.cores is not None:
            out.append(tuple(conn.cores))
        elif config.ecmp == "none":
            out.append((0,))
        else:
            out.append((ecmp_plane(conn.src, conn.dst, k, config.seed),))
    return out


def _load_plane_rx() -> Any:
    from tcpmodels.sim._ns3 import cppdef_once

    return cppdef_once("tcpmodels_ft", PLANE_RX_CPP).tcpmodels_ft


def build_fattree(ns: Any, config: FatTree, out_dir: str) -> Built:
    """Build the k=4 fat-tree and its connections in the current ns-3 process.

    Parameters
    ----------
    ns : module
        The loaded ``ns`` namespace (:func:`tcpmodels.sim._ns3.load`).
    config : FatTree
        The scenario.
    out_dir : str
        Where pcap files go (``h{n}.pcap``).

    Returns
    -------
    tcpmodels.sim.blocks.Built
        One ``flows`` row per connection (one sink each); ``devices`` holds
        every link end as ``"{from}->{to}"``; ``finish`` adds the per-plane
        delivered bytes.
    """
    import numpy as np
    import pandas as pd

    from tcpmodels.sim._ns3 import glue
    from tcpmodels.sim.multipath import CHUNK_SEGMENTS, load_lia

    set_tcp_defaults(ns, config.tcp)
    mp = load_lia()
    ft = _load_plane_rx()
    built = Built()

    names = [f"h{n}" for n in range(N_HOSTS)]
    names += [f"e{p}{i}" for p in range(4) for i in range(2)]
    names += [f"a{p}{j}" for p in range(4) for j in range(2)]
    names += [f"c{j}{m}" for j in range(2) for m in range(2)]
    nodes = ns.NodeContainer()
    nodes.Create(len(names))
    node = {name: nodes.Get(k) for k, name in enumerate(names)}
    built.keep.append(nodes)
    ns.InternetStackHelper().Install(nodes)

    net = Net(ns)
    # transit /30s in 10.100.0.0/16 as in the testbed (10.0.0.0/8 below 10.64 holds the plane addresses)
    net.addr.SetBase(ns.Ipv4Address("10.100.0.0"), ns.Ipv4Mask("255.255.255.252"))
    built.keep.append(net)
    static = ns.Ipv4StaticRoutingHelper()
    built.keep.append(static)
    iface: dict[tuple[str, str], int] = {}  # (node, neighbour) -> interface index at node
    gateway: dict[tuple[str, str], Any] = {}  # (node, neighbour) -> neighbour's address on the link

    def join(a: str, b: str, link: Any) -> None:
        dev_a, dev_b, ifs = net.link(node[a], node[b], link)
        built.devices[f"{a}->{b}"] = dev_a
        built.devices[f"{b}->{a}"] = dev_b
        iface[(a, b)] = node[a].GetObject[ns.Ipv4]().GetInterfaceForDevice(dev_a)
        iface[(b, a)] = node[b].GetObject[ns.Ipv4]().GetInterfaceForDevice(dev_b)
        gateway[(a, b)], gateway[(b, a)] = ifs.GetAddress(1), ifs.GetAddress(0)

    def route(at: str, prefix: str, via: str) -> None:
        net_ = ipaddress.IPv4Network(prefix)
        ip = node[at].GetObject[ns.Ipv4]()
        static.GetStaticRouting(ip).AddNetworkRouteTo(
            ns.Ipv4Address(str(net_.network_address)), ns.Ipv4Mask(str(net_.netmask)), gateway[(at, via)],
            iface[(at, via)],
        )

    for a, b, tier in fat_tree_links():
        join(a, b, getattr(config, tier))
    for n in range(N_HOSTS):
        host, edge = f"h{n}", f"e{n // 4}{(n // 2) % 2}"
        ip = node[host].GetObject[ns.Ipv4]()
        for c in range(N_CORES):
            # /12: the connected route 10.{16c}/12 out of the host's only link is the
            # testbed's "10.{16c}.0.0/12 via edge src plane-c address", and ns-3's
            # source address selection picks this address for plane-c destinations.
            ip.AddAddress(
                iface[(host, edge)],
                ns.Ipv4InterfaceAddress(ns.Ipv4Address(plane_address(n, c)), ns.Ipv4Mask("255.240.0.0")),
            )
    for at, prefix, via in fat_tree_routes():
        if not at.startswith("h"):
            route(at, prefix, via)

    chunk = CHUNK_SEGMENTS * config.tcp.mss_bytes
    planes = connection_planes(config)
    for k, conn in enumerate(config.connections):
        src, dst = node[f"h{conn.src}"], node[f"h{conn.dst}"]
        port = FIRST_PORT + k
        mp.NewConn(k, conn.size_bytes or 0)
        helper, sinks, path = watched_sink(ns, dst, port, conn.size_bytes, lambda sink, k=k: ft.WatchPlanes(sink, k))
        cc = "ns3::TcpLia" if conn.coupled else f"ns3::{conn.variant}"
        for j, c in enumerate(planes[k]):
            trace_id = 4 * k + j if config.trace_cwnd else -1
            app = mp.AddSubflow(
                src, k, j, ns.Ipv4Address(plane_address(conn.dst, c)), port, cc, chunk, trace_id,
                conn.start_s, config.duration_s + 1.0,
            )
            built.keep.append(app)
            if config.trace_cwnd:
                built.cc_sockets.append({"flow_index": trace_id, "socket_path": ""})
        built.keep.extend([helper, sinks])
        built.flows.append(
            {
                "start_s": conn.start_s,
                "size_bytes": conn.size_bytes,
                "stop_s": None,
                "kind": "fattree",
                "flow_index": k,
                "connection": k,
                "tag": conn.tag,
                "src": conn.src,
                "dst": conn.dst,
                "cores": ",".join(str(c) for c in planes[k]),
                "n_subflows": len(planes[k]),
                "coupled": conn.coupled,
                "variant": cc.removeprefix("ns3::"),
                "port": port,
                "sink_path": path,
                "src_node": src.GetId(),
            }
        )

    for n in config.pcap_hosts:
        glue().EnablePcap(built.devices[f"h{n}->e{n // 4}{(n // 2) % 2}"], f"{out_dir}/h{n}.pcap",
                          config.pcap_snaplen_bytes)

    def finish(apps: pd.DataFrame) -> pd.DataFrame:
        apps = apps.copy()
        conn_ids = apps["connection"].to_numpy()
        for c in range(N_CORES):
            apps[f"rx_bytes_core{c}"] = np.array([int(ft.PlaneRxBytes(int(k), c)) for k in conn_ids], dtype=np.int64)
        return apps

    built.finish = finish
    return built
