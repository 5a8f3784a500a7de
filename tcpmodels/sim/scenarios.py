"""Build ns-3 scenarios from the configs in :mod:`tcpmodels.sim.config` (needs ns-3).

Call only inside a fresh process (see :mod:`tcpmodels.sim.run`): ns-3 keeps one
global simulator, and cppyy definitions cannot be unloaded.

Every builder returns a :class:`~tcpmodels.sim.blocks.Built` record naming
what the runner samples: the devices whose queues are watched, the flows (one row per TCP connection
that an application opens, with its port and start; for multipath, one row
per subflow), the PacketSink paths. The parts the builders share, including
those of :func:`tcpmodels.sim.fattree.build_fattree`, are in
:mod:`tcpmodels.sim.blocks`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tcpmodels._docstrings import SharedEntries
from tcpmodels.sim.blocks import (
    FIRST_PORT,
    Built,
    Net,
    cc_trace,
    flow_schedule,
    install_flow,
    set_socket_type,
    set_tcp_defaults,
    watched_sink,
)
from tcpmodels.sim.config import Caterpillar, Dumbbell, FatTree, Multipath
from tcpmodels.sim.fattree import build_fattree

__all__ = ["Built", "build", "build_dumbbell", "build_caterpillar", "build_multipath"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    ns : module
        The loaded ``ns`` namespace (:func:`tcpmodels.sim._ns3.load`).
    out_dir : str
        Where pcap files of ``config.pcap_devices`` go (``{device}.pcap``).
""")


@_PARAMETERS.fill
def build_dumbbell(ns: Any, config: Dumbbell, out_dir: str) -> Built:
    """Senders -> left router -> bottleneck -> right router -> receiver.

    Each sender has its own access link and congestion control; random packet loss
    (``config.loss_rate``) is applied where the bottleneck enters the right router.
    Each application's connections are drawn with a generator seeded by
    ``(config.seed, sender, app)``.

    Parameters
    ----------
    {ns}
    config : Dumbbell
        The scenario.
    {out_dir}

    Returns
    -------
    tcpmodels.sim.blocks.Built
        One ``flows`` row per connection; ``devices`` holds ``sender{i}`` (each
        sender's device towards the left router), ``bottleneck`` (the left router's
        device onto the bottleneck) and ``receiver`` (the right router's device
        towards the receiver).
    """
    from tcpmodels.sim._ns3 import glue

    set_tcp_defaults(ns, config.tcp)
    built = Built()
    n = len(config.senders)
    senders = ns.NodeContainer()
    senders.Create(n)
    routers = ns.NodeContainer()
    routers.Create(2)
    receiver = ns.NodeContainer()
    receiver.Create(1)
    built.keep.extend([senders, routers, receiver])
    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(routers)
    stack.Install(receiver)

    net = Net(ns)
    built.keep.append(net)
    left, right, rx = routers.Get(0), routers.Get(1), receiver.Get(0)
    for i, s in enumerate(config.senders):
        dev_s, _, _ = net.link(senders.Get(i), left, s.access)
        built.devices[f"sender{i}"] = dev_s
    dev_bl, dev_br, _ = net.link(left, right, config.bottleneck)
    built.devices["bottleneck"] = dev_bl
    dev_rr, _, rx_ifaces = net.link(right, rx, config.receiver_access)
    built.devices["receiver"] = dev_rr
    rx_addr = rx_ifaces.GetAddress(1)

    if config.loss_rate > 0:
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorRate", ns.DoubleValue(config.loss_rate))
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        em.AssignStreams(1000)
        dev_br.SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        built.keep.append(em)

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    for i, s in enumerate(config.senders):
        node = senders.Get(i)
        set_socket_type(ns, node, s.variant, s.cc_params)
        mine = []
        for j, app in enumerate(s.apps):
            rng = np.random.default_rng([config.seed, i, j])
            for flow in flow_schedule(app, rng, config.duration_s):
                flow.update(sender=i, app=j, variant=s.variant)
                install_flow(ns, built, node, rx, rx_addr, flow, config.duration_s)
                mine.append(built.flows[-1])
        if config.trace_cwnd:
            cc_trace(built, node, [f for f in mine if f["kind"] == "bulk"])

    for name in config.pcap_devices:
        glue().EnablePcap(built.devices[name], f"{out_dir}/{name}.pcap", config.pcap_snaplen_bytes)
    return built


@_PARAMETERS.fill
def build_caterpillar(ns: Any, config: Caterpillar, out_dir: str) -> Built:
    """P5: S - G1 - G2 - ... - Gn, clients round-robin on G2..G(1+n_articulation); downloads S -> clients.

    Parameters
    ----------
    {ns}
    config : Caterpillar
        The scenario; the server's sockets use ``config.variant``, and the
        connections of client c are drawn with a generator seeded by ``(config.seed, c)``.
    {out_dir}

    Returns
    -------
    tcpmodels.sim.blocks.Built
        One ``flows`` row per download; ``devices`` holds ``server`` (the server's
        device towards G1) and ``bottleneck`` (G1's device towards G2).
    """
    from tcpmodels.sim._ns3 import glue

    set_tcp_defaults(ns, config.tcp)
    built = Built()
    gws = ns.NodeContainer()
    gws.Create(config.n_gateways)
    server = ns.NodeContainer()
    server.Create(1)
    clients = ns.NodeContainer()
    clients.Create(config.n_clients)
    built.keep.extend([gws, server, clients])
    stack = ns.InternetStackHelper()
    for c in (gws, server, clients):
        stack.Install(c)
    net = Net(ns)
    built.keep.append(net)
    dev_s, _, _ = net.link(server.Get(0), gws.Get(0), config.server_link or config.edge)
    built.devices["server"] = dev_s
    for g in range(config.n_gateways - 1):
        d0, _, _ = net.link(gws.Get(g), gws.Get(g + 1), config.backbone)
        if g == 0:
            built.devices["bottleneck"] = d0
    client_addr = []
    for c in range(config.n_clients):
        gw = gws.Get(1 + c % config.n_articulation)
        _, dev_c, ifaces = net.link(gw, clients.Get(c), config.edge)
        client_addr.append(ifaces.GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    variant = config.variant.removeprefix("ns3::")
    set_socket_type(ns, server.Get(0), variant, {})
    for c in range(config.n_clients):
        rng = np.random.default_rng([config.seed, c])
        for flow in flow_schedule(config.workload, rng, config.duration_s):
            flow.update(sender=c, app=0, variant=variant)
            install_flow(ns, built, server.Get(0), clients.Get(c), client_addr[c], flow, config.duration_s)
    for name in config.pcap_devices:
        glue().EnablePcap(built.devices[name], f"{out_dir}/{name}.pcap", config.pcap_snaplen_bytes)
    return built


@_PARAMETERS.fill
def build_multipath(ns: Any, config: Multipath) -> Built:
    """Sender -> (Ap -> path p -> Bp, for each p) -> receiver; one subflow application per subflow.

    Rows of ``flows`` are subflows, with ``connection``, ``subflow`` and ``path``
    columns; ``finish`` fills in, after the run, each subflow's actual start
    (its SYN; later than the connection's for joined subflows), handshake
    completion, bytes handed to it, and the connection's completion.

    Parameters
    ----------
    {ns}
    config : Multipath
        The scenario: the paths, their loss rates and the connections (coupled
        ones use ``ns3::TcpLia``).

    Returns
    -------
    tcpmodels.sim.blocks.Built
        ``devices`` holds ``path{p}`` (the bottleneck of each path at its A router).
    """
    import pandas as pd

    from tcpmodels.sim.multipath import CHUNK_SEGMENTS, load_lia

    set_tcp_defaults(ns, config.tcp)
    mp = load_lia()
    built = Built()
    k = len(config.paths)
    hosts = ns.NodeContainer()
    hosts.Create(2)
    routers = ns.NodeContainer()
    routers.Create(2 * k)
    built.keep.extend([hosts, routers])
    stack = ns.InternetStackHelper()
    stack.Install(hosts)
    stack.Install(routers)
    net = Net(ns)
    built.keep.append(net)
    snd, rcv = hosts.Get(0), hosts.Get(1)
    rx_addr, hops = [], []
    for p, link in enumerate(config.paths):
        a, b = routers.Get(2 * p), routers.Get(2 * p + 1)
        _, _, left = net.link(snd, a, config.access)
        dev_a, dev_b, _ = net.link(a, b, link)
        built.devices[f"path{p}"] = dev_a
        _, _, right = net.link(b, rcv, config.access)
        rx_addr.append(right.GetAddress(1))
        # (sender addr, Ap addr, receiver addr, Bp addr) on the access links of path p
        hops.append((left.GetAddress(0), left.GetAddress(1), right.GetAddress(1), right.GetAddress(0)))
        if config.loss_rates and config.loss_rates[p] > 0:
            em = ns.CreateObject[ns.RateErrorModel]()
            em.SetAttribute("ErrorRate", ns.DoubleValue(config.loss_rates[p]))
            em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
            em.AssignStreams(1000)  # the same stream on every path (see Multipath.loss_rates)
            dev_b.SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
            built.keep.append(em)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    # Global routing sends every path's traffic over one path (the receiver is a
    # shortest-path transit node for all subnets); pin each path with host routes
    # at both ends (static routing is consulted before global routing).
    static = ns.Ipv4StaticRoutingHelper()
    ip_s, ip_r = snd.GetObject[ns.Ipv4](), rcv.GetObject[ns.Ipv4]()
    rt_s, rt_r = static.GetStaticRouting(ip_s), static.GetStaticRouting(ip_r)
    for s_addr, a_addr, r_addr, b_addr in hops:
        rt_s.AddHostRouteTo(r_addr, a_addr, ip_s.GetInterfaceForAddress(s_addr))
        rt_r.AddHostRouteTo(s_addr, b_addr, ip_r.GetInterfaceForAddress(r_addr))
    built.keep.append(static)

    chunk = CHUNK_SEGMENTS * config.tcp.mss_bytes
    for c, conn in enumerate(config.connections):
        mp.NewConn(c, conn.size_bytes or 0)
        cc = "ns3::TcpLia" if conn.coupled else f"ns3::{conn.variant}"
        for j, p in enumerate(conn.paths):
            idx = len(built.flows)
            port = FIRST_PORT + idx
            helper, sinks, path = watched_sink(ns, rcv, port, None, lambda sink, c=c: mp.WatchConnSink(sink, c))
            app = mp.AddSubflow(
                snd, c, j, rx_addr[p], port, cc, chunk, idx if config.trace_cwnd else -1,
                conn.start_s, config.duration_s + 1.0,
            )
            built.keep.extend([helper, sinks, app])
            built.flows.append(
                {
                    "start_s": conn.start_s,
                    "size_bytes": None,
                    "stop_s": None,
                    "kind": "multipath",
                    "sender": 0,
                    "app": c,
                    "variant": cc.removeprefix("ns3::"),
                    "flow_index": idx,
                    "port": port,
                    "sink_path": path,
                    "src_node": snd.GetId(),
                    "connection": c,
                    "subflow": j,
                    "path": p,
                }
            )
            if config.trace_cwnd:
                built.cc_sockets.append({"flow_index": idx, "socket_path": ""})

    def finish(apps: pd.DataFrame) -> pd.DataFrame:
        apps = apps.copy()
        c = apps["connection"].to_numpy()
        j = apps["subflow"].to_numpy()
        started = np.array([float(mp.SubStarted(int(a), int(b))) for a, b in zip(c, j)])
        connected = np.array([float(mp.SubConnected(int(a), int(b))) for a, b in zip(c, j)])
        done = np.array([float(mp.ConnDone(int(a))) for a in c])
        conn_start = np.array([config.connections[int(a)].start_s for a in c])
        apps["start_s"] = np.where(started >= 0, started, np.nan)
        apps["connected_s"] = np.where(connected >= 0, connected, np.nan)
        apps["handed_bytes"] = [int(mp.SubHanded(int(a), int(b))) for a, b in zip(c, j)]
        sizes = [config.connections[int(a)].size_bytes for a in c]
        apps["connection_size_bytes"] = np.array([np.nan if s is None else float(s) for s in sizes])
        apps["connection_rx_bytes"] = [int(mp.ConnRxBytes(int(a))) for a in c]
        apps["completed"] = done >= 0
        apps["fct_s"] = np.where(done >= 0, done - conn_start, np.nan)
        end = np.where(done >= 0, done, config.duration_s)
        span = np.maximum(end - apps["start_s"].to_numpy(), 1e-12)
        apps["goodput_bps"] = np.where(np.isnan(span), 0.0, apps["rx_bytes"] * 8.0 / span)
        return apps

    built.finish = finish
    return built


@_PARAMETERS.fill
def build(ns: Any, config: Dumbbell | Caterpillar | Multipath | FatTree, out_dir: str) -> Built:
    """Dispatch on the config type.

    Parameters
    ----------
    {ns}
    config : Dumbbell, Caterpillar, Multipath or FatTree
        The scenario.
    out_dir : str
        Where the builder writes its captures.

    Returns
    -------
    tcpmodels.sim.blocks.Built
        What the builder for ``config``'s type made.

    Raises
    ------
    ValueError
        If ``config`` is of no type with a builder.
    """
    if isinstance(config, Dumbbell):
        return build_dumbbell(ns, config, out_dir)
    if isinstance(config, Caterpillar):
        return build_caterpillar(ns, config, out_dir)
    if isinstance(config, Multipath):
        return build_multipath(ns, config)  # it writes no captures
    if isinstance(config, FatTree):
        return build_fattree(ns, config, out_dir)
    raise ValueError(f"no ns-3 builder for {type(config).__name__}")
