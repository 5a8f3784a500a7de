"""Build ns-3 scenarios from the configs in :mod:`tcpmodels.sim.config` (needs ns-3).

Call only inside a fresh process (see :mod:`tcpmodels.sim.run`): ns-3 keeps one
global simulator, and cppyy definitions cannot be unloaded.

Every builder returns a :class:`Built` record naming what the runner samples:
the devices whose queues are watched, the flows (one row per TCP connection
that an application opens, with its port and start; for multipath, one row
per subflow), the PacketSink paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tcpmodels.sim.config import BulkApp, Caterpillar, Dumbbell, FatTree, Link, Multipath, PoissonFlows, TcpOptions

__all__ = ["Built", "build"]

FIRST_PORT = 10000


@dataclass
class Built:
    """What a builder made and the runner measures."""

    devices: dict[str, Any] = field(default_factory=dict)  # name -> Ptr<PointToPointNetDevice>
    flows: list[dict] = field(default_factory=list)  # one dict per TCP connection
    cc_sockets: list[dict] = field(default_factory=list)  # sockets whose cwnd is traced
    keep: list[Any] = field(default_factory=list)  # Python references ns-3 objects need alive
    # after the run: amend the per-connection table (pandas DataFrame -> DataFrame)
    finish: Callable[[Any], Any] | None = None


def _set_tcp_defaults(ns: Any, tcp: TcpOptions) -> None:
    cfg = ns.Config
    cfg.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(tcp.mss_bytes))
    cfg.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(tcp.sndbuf_bytes))
    cfg.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(tcp.rcvbuf_bytes))
    cfg.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(tcp.delayed_ack_count))
    cfg.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(tcp.initial_cwnd_segments))
    cfg.SetDefault("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(tcp.conn_timeout_s)))
    cfg.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(tcp.min_rto_s)))
    cfg.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(tcp.sack))
    cfg.SetDefault("ns3::TcpCubic::HyStart", ns.BooleanValue(tcp.cubic_hystart))
    cfg.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName(f"ns3::{tcp.recovery}")),
    )


def _rate(link: Link) -> str:
    return f"{int(round(link.rate_bps))}bps"


def _delay(link: Link) -> str:
    return f"{int(round(link.delay_s * 1e9))}ns"


#: Random streams of jittered channels start here (ns-3 numbers unassigned streams from 2^63; apps use few).
_JITTER_STREAM_BASE = 100_000


class _Net:
    """Point-to-point links with addresses, their queues set to exactly the configured size."""

    def __init__(self, ns: Any):
        self.ns = ns
        self.addr = ns.Ipv4AddressHelper()
        self.addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))
        self.tch = ns.TrafficControlHelper()
        self.keep: list[Any] = []
        self.n_jittered = 0  # jittered links built so far: each gets its own random stream

    def link(self, a: Any, b: Any, link: Link) -> tuple[Any, Any, Any]:
        """Join nodes a, b; return (device at a, device at b, interfaces)."""
        ns = self.ns
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(_rate(link)))
        p2p.SetChannelAttribute("Delay", ns.StringValue(_delay(link)))
        # Without flow control the device's own queue drops (and counts) what does
        # not fit; with it, and no queue disc, the traffic-control layer would drop
        # the packet uncounted by the device queue.
        p2p.DisableFlowControl()
        if link.jitter_s > 0:
            from tcpmodels.sim.jitter import install_jitter_link  # noqa: PLC0415

            self.n_jittered += 1
            devs = install_jitter_link(ns, a, b, rate=_rate(link), delay=_delay(link), jitter_s=link.jitter_s,
                                       stream=_JITTER_STREAM_BASE + self.n_jittered)
        else:
            devs = p2p.Install(a, b)
        ifaces = self.addr.Assign(devs)
        self.addr.NewNetwork()
        # Drop the traffic-control layer's default pfifo_fast (1000 packets) so the
        # device's drop-tail queue below is the only queue.
        out = []
        for i in range(2):
            nd = devs.Get(i)
            tc = nd.GetNode().GetObject[ns.TrafficControlLayer]()
            if tc and tc.GetRootQueueDiscOnDevice(nd):
                self.tch.Uninstall(nd)
            dev = nd.GetObject[ns.PointToPointNetDevice]()
            dev.GetQueue().SetMaxSize(ns.QueueSize(link.queue_size_string))
            out.append(dev)
        self.keep.extend([p2p, devs, ifaces])
        return out[0], out[1], ifaces


def _socket_type(ns: Any, node: Any, variant: str, cc_params: dict) -> None:
    if variant == "TcpCubicX":
        from tcpmodels.sim import cc  # noqa: PLC0415

        cc.load_cubic_x(ns)
        cc.configure_cubic_x(ns, **cc_params)
    tid = ns.TypeId.LookupByName(f"ns3::{variant}")
    ns.Config.Set(
        f"/NodeList/{node.GetId()}/$ns3::TcpL4Protocol/SocketType",
        ns.TypeIdValue(tid),
    )


def _flow_schedule(app: BulkApp | PoissonFlows, rng: np.random.Generator, duration_s: float) -> list[dict]:
    """Start times and sizes of the connections one application opens."""
    if isinstance(app, BulkApp):
        return [{"start_s": app.start_s, "size_bytes": app.size_bytes, "stop_s": app.stop_s, "kind": "bulk"}]
    stop = duration_s if app.stop_s is None else min(app.stop_s, duration_s)
    starts: list[float] = []
    t = app.start_s
    limit = app.max_flows if app.max_flows is not None else np.inf
    while len(starts) < limit:
        t += float(rng.exponential(app.mean_interarrival_s))
        if t >= stop:
            break
        starts.append(t)
    sizes = app.size.sample_bytes(rng, len(starts))
    return [{"start_s": s, "size_bytes": n, "stop_s": None, "kind": "poisson"} for s, n in zip(starts, sizes)]


def _watched_sink(ns: Any, node: Any, port: int, expected_bytes: int | None, *also: Callable[[Any], bool]):
    """A PacketSink on ``node:port`` from t = 0 whose Rx trace feeds the FCT bookkeeping of the glue.

    ``expected_bytes`` (None: unlimited) marks completion; each of ``also`` is a
    further watcher called with the sink, returning False if it could not connect.
    Returns ``(helper, sinks, config path of the sink)``; keep the first two alive.
    """
    from tcpmodels.sim._ns3 import glue  # noqa: PLC0415

    index = node.GetNApplications()
    helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sinks = helper.Install(node)
    sinks.Start(ns.Seconds(0.0))
    path = f"/NodeList/{node.GetId()}/ApplicationList/{index}/$ns3::PacketSink"
    if not (glue().WatchSink(sinks.Get(0), path, int(expected_bytes or 0)) and all(w(sinks.Get(0)) for w in also)):
        raise RuntimeError(f"could not connect to the Rx trace of {path}")
    return helper, sinks, path


def _install_flow(ns: Any, built: Built, src: Any, dst: Any, dst_addr: Any, flow: dict, duration_s: float) -> None:
    """A BulkSend on ``src`` to a PacketSink of its own port on ``dst``."""
    port = FIRST_PORT + len(built.flows)
    sink_helper, sinks, path = _watched_sink(ns, dst, port, flow["size_bytes"])
    sender = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst_addr, port).ConvertTo())
    sender.SetAttribute("MaxBytes", ns.UintegerValue(flow["size_bytes"] or 0))
    sender.SetAttribute("SendSize", ns.UintegerValue(1448 * 8))
    apps = sender.Install(src)
    apps.Start(ns.Seconds(flow["start_s"]))
    apps.Stop(ns.Seconds(flow["stop_s"] if flow["stop_s"] is not None else duration_s + 1.0))
    built.keep.extend([sink_helper, sinks, sender, apps])
    built.flows.append({**flow, "flow_index": len(built.flows), "port": port, "sink_path": path, "src_node": src.GetId()})


def _cc_trace(built: Built, node: Any, flows_on_node: list[dict]) -> None:
    """Trace cwnd etc. of the sockets a node opens (in order of their start)."""
    from tcpmodels.sim._ns3 import glue  # noqa: PLC0415

    order = sorted(flows_on_node, key=lambda f: (f["start_s"], f["flow_index"]))
    for k, f in enumerate(order):
        path = f"/NodeList/{node.GetId()}/$ns3::TcpL4Protocol/SocketList/{k}/$ns3::TcpSocketBase"
        glue().ScheduleConnectCc(f["start_s"] + 1e-9, path, int(f["flow_index"]))
        built.cc_sockets.append({"flow_index": f["flow_index"], "socket_path": path})


def build_dumbbell(ns: Any, config: Dumbbell, out_dir: str) -> Built:
    """Senders -> left router -> bottleneck -> right router -> receiver."""
    from tcpmodels.sim._ns3 import glue  # noqa: PLC0415

    _set_tcp_defaults(ns, config.tcp)
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

    net = _Net(ns)
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
        _socket_type(ns, node, s.variant, s.cc_params)
        mine = []
        for j, app in enumerate(s.apps):
            rng = np.random.default_rng([config.seed, i, j])
            for flow in _flow_schedule(app, rng, config.duration_s):
                flow.update(sender=i, app=j, variant=s.variant)
                _install_flow(ns, built, node, rx, rx_addr, flow, config.duration_s)
                mine.append(built.flows[-1])
        if config.trace_cwnd:
            _cc_trace(built, node, [f for f in mine if f["kind"] == "bulk"])

    for name in config.pcap_devices:
        glue().EnablePcap(built.devices[name], f"{out_dir}/{name}.pcap", config.pcap_snaplen_bytes)
    return built


def build_caterpillar(ns: Any, config: Caterpillar, out_dir: str) -> Built:
    """P5: S - G1 - G2 - ... - Gn, clients round-robin on G2..G(1+n_articulation); downloads S -> clients."""
    from tcpmodels.sim._ns3 import glue  # noqa: PLC0415

    _set_tcp_defaults(ns, config.tcp)
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
    net = _Net(ns)
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
    _socket_type(ns, server.Get(0), variant, {})
    for c in range(config.n_clients):
        rng = np.random.default_rng([config.seed, c])
        for flow in _flow_schedule(config.workload, rng, config.duration_s):
            flow.update(sender=c, app=0, variant=variant)
            _install_flow(ns, built, server.Get(0), clients.Get(c), client_addr[c], flow, config.duration_s)
    for name in config.pcap_devices:
        glue().EnablePcap(built.devices[name], f"{out_dir}/{name}.pcap", config.pcap_snaplen_bytes)
    return built


def build_multipath(ns: Any, config: Multipath, out_dir: str) -> Built:
    """Sender -> (Ap -> path p -> Bp, for each p) -> receiver; one subflow application per subflow.

    Rows of ``flows`` are subflows, with ``connection``, ``subflow`` and ``path``
    columns; ``finish`` fills in, after the run, each subflow's actual start
    (its SYN; later than the connection's for joined subflows), handshake
    completion, bytes handed to it, and the connection's completion.
    """
    import pandas as pd  # noqa: PLC0415

    from tcpmodels.sim.multipath import CHUNK_SEGMENTS, load_lia  # noqa: PLC0415

    _set_tcp_defaults(ns, config.tcp)
    mp = load_lia(ns)
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
    net = _Net(ns)
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
            helper, sinks, path = _watched_sink(ns, rcv, port, None, lambda sink, c=c: mp.WatchConnSink(sink, c))
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


def build(ns: Any, config: Any, out_dir: str) -> Built:
    """Dispatch on the config type."""
    if isinstance(config, Dumbbell):
        return build_dumbbell(ns, config, out_dir)
    if isinstance(config, Caterpillar):
        return build_caterpillar(ns, config, out_dir)
    if isinstance(config, Multipath):
        return build_multipath(ns, config, out_dir)
    if isinstance(config, FatTree):
        from tcpmodels.sim.fattree import build_fattree  # noqa: PLC0415 (it imports this module)

        return build_fattree(ns, config, out_dir)
    raise ValueError(f"no ns-3 builder for {type(config).__name__}")
