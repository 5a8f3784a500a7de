"""Building blocks shared by the ns-3 scenario builders (needs ns-3 only when called).

The builders in :mod:`tcpmodels.sim.scenarios` (dumbbell, caterpillar,
multipath) and :mod:`tcpmodels.sim.fattree` are made of these: TCP defaults
from a :class:`~tcpmodels.sim.config.TcpOptions`, point-to-point links whose
device queue is the only queue (:class:`Net`), the congestion control of a
node's sockets, the connections an application opens, a PacketSink whose Rx
trace feeds the glue's completion bookkeeping, and cwnd tracing. Each builder
returns a :class:`Built`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tcpmodels._docstrings import SharedEntries
from tcpmodels.sim.config import BulkApp, Link, PoissonFlows, TcpOptions

__all__ = ["FIRST_PORT", "Built", "Net", "set_tcp_defaults", "set_socket_type", "flow_schedule", "watched_sink",
           "install_flow", "cc_trace"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    ns : module
        The ``ns`` namespace of the ns-3 Python bindings (cppyy).
""")

#: Port of the first connection a builder opens; connection k listens on FIRST_PORT + k.
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


@_PARAMETERS.fill
def set_tcp_defaults(ns: Any, tcp: TcpOptions) -> None:
    """Make ``tcp`` the default of every TCP socket created afterwards in this ns-3 process.

    Parameters
    ----------
    {ns}
    tcp : TcpOptions
        Segment size, buffers, delayed-ACK count, initial window, timeouts, SACK,
        HyStart and recovery algorithm to set as ``ns3::TcpSocket*`` defaults.
    """
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


class Net:
    """Point-to-point links with addresses, their queues set to exactly the configured size."""

    def __init__(self, ns: Any):
        self.ns = ns
        self.addr = ns.Ipv4AddressHelper()
        self.addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))
        self.tch = ns.TrafficControlHelper()
        self.keep: list[Any] = []
        self.n_jittered = 0  # jittered links built so far: each gets its own random stream

    def link(self, a: Any, b: Any, link: Link) -> tuple[Any, Any, Any]:
        """Join nodes a, b; return (device at a, device at b, interfaces).

        The link is a point-to-point channel of ``link.rate_bps`` and ``link.delay_s``
        (a jittered channel when ``link.jitter_s > 0``), the traffic-control layer's
        queue disc is removed and each device's drop-tail queue is set to
        ``link.queue_size_string``, so that queue is the only one.

        Parameters
        ----------
        a, b : ns3::Ptr<Node>
            The two nodes to join.
        link : Link
            Rate, propagation delay, jitter and queue size of the link.

        Returns
        -------
        tuple
            ``(device at a, device at b, Ipv4InterfaceContainer)``: the two
            ``PointToPointNetDevice`` pointers and the interfaces of the new /30 subnet.
        """
        ns = self.ns
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(_rate(link)))
        p2p.SetChannelAttribute("Delay", ns.StringValue(_delay(link)))
        # Without flow control the device's own queue drops (and counts) what does
        # not fit; with it, and no queue disc, the traffic-control layer would drop
        # the packet uncounted by the device queue.
        p2p.DisableFlowControl()
        if link.jitter_s > 0:
            from tcpmodels.sim.jitter import install_jitter_link

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


@_PARAMETERS.fill
def set_socket_type(ns: Any, node: Any, variant: str, cc_params: dict) -> None:
    """Congestion control ``variant`` (``TcpCubicX`` configured by ``cc_params``) for the sockets of ``node``.

    Parameters
    ----------
    {ns}
    node : ns3::Ptr<Node>
        The node whose ``TcpL4Protocol::SocketType`` is set.
    variant : str
        ns-3 TCP congestion-control type without the ``ns3::`` prefix, e.g. ``"TcpCubic"``;
        ``"TcpCubicX"`` compiles and loads :mod:`tcpmodels.sim.cc` first.
    cc_params : dict
        Keyword arguments of :func:`tcpmodels.sim.cc.configure_cubic_x` (used only for
        ``TcpCubicX``).
    """
    if variant == "TcpCubicX":
        from tcpmodels.sim import cc

        cc.load_cubic_x()
        cc.configure_cubic_x(ns, **cc_params)
    tid = ns.TypeId.LookupByName(f"ns3::{variant}")
    ns.Config.Set(
        f"/NodeList/{node.GetId()}/$ns3::TcpL4Protocol/SocketType",
        ns.TypeIdValue(tid),
    )


def flow_schedule(app: BulkApp | PoissonFlows, rng: np.random.Generator, duration_s: float) -> list[dict]:
    """Start times and sizes of the connections one application opens.

    Parameters
    ----------
    app : BulkApp or PoissonFlows
        A bulk application opens one connection; Poisson flows open connections at
        exponential inter-arrival times from ``app.start_s`` until its stop time (or
        ``duration_s``) or ``app.max_flows``, with sizes drawn from ``app.size``.
    rng : numpy.random.Generator
        Source of the inter-arrival times and sizes.
    duration_s : float
        Length of the simulation; no Poisson flow starts at or after it. [s]

    Returns
    -------
    list of dict
        One dict per connection, in order of start, with ``start_s`` [s],
        ``size_bytes`` (None: unlimited) [bytes], ``stop_s`` [s] (None for Poisson flows) and
        ``kind`` (``"bulk"`` or ``"poisson"``).
    """
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


@_PARAMETERS.fill
def watched_sink(ns: Any, node: Any, port: int, expected_bytes: int | None,
                 *also: Callable[[Any], bool]) -> tuple[Any, Any, str]:
    """A PacketSink on ``node:port`` from t = 0 whose Rx trace feeds the FCT bookkeeping of the glue.

    ``expected_bytes`` (None: unlimited) marks completion; each of ``also`` is a
    further watcher called with the sink, returning False if it could not connect.
    Returns ``(helper, sinks, config path of the sink)``; keep the first two alive.

    Parameters
    ----------
    {ns}
    node : ns3::Ptr<Node>
        The receiving node.
    port : int
        TCP port the sink listens on.
    expected_bytes : int or None
        Bytes after which the connection counts as complete; None (or 0) never completes. [bytes]
    *also : callable
        Further watchers, each called with the sink application; one returning False
        makes this function raise.

    Returns
    -------
    tuple
        ``(PacketSinkHelper, ApplicationContainer, str)``: the helper and the installed
        sinks (keep both alive), and the config path of the sink.

    Raises
    ------
    RuntimeError
        If the glue or one of ``also`` could not connect to the sink's Rx trace.
    """
    from tcpmodels.sim._ns3 import glue

    index = node.GetNApplications()
    helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sinks = helper.Install(node)
    sinks.Start(ns.Seconds(0.0))
    path = f"/NodeList/{node.GetId()}/ApplicationList/{index}/$ns3::PacketSink"
    if not (glue().WatchSink(sinks.Get(0), path, int(expected_bytes or 0)) and all(w(sinks.Get(0)) for w in also)):
        raise RuntimeError(f"could not connect to the Rx trace of {path}")
    return helper, sinks, path


@_PARAMETERS.fill
def install_flow(ns: Any, built: Built, src: Any, dst: Any, dst_addr: Any, flow: dict, duration_s: float) -> None:
    """A BulkSend on ``src`` to a PacketSink of its own port on ``dst``.

    The connection gets port ``FIRST_PORT + len(built.flows)``; the sender starts at
    ``flow["start_s"]`` and stops at ``flow["stop_s"]`` (or 1 s after the end of the
    run). The flow is appended to ``built.flows`` and the ns-3 objects to ``built.keep``.

    Parameters
    ----------
    {ns}
    built : Built
        What the builder has made so far; amended in place.
    src, dst : ns3::Ptr<Node>
        Sending and receiving node.
    dst_addr : ns3::Ipv4Address
        Address of ``dst`` the sender connects to.
    flow : dict
        One entry of :func:`flow_schedule` (``start_s``, ``size_bytes``, ``stop_s``, ``kind``).
    duration_s : float
        Length of the simulation. [s]
    """
    port = FIRST_PORT + len(built.flows)
    sink_helper, sinks, path = watched_sink(ns, dst, port, flow["size_bytes"])
    sender = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst_addr, port).ConvertTo())
    sender.SetAttribute("MaxBytes", ns.UintegerValue(flow["size_bytes"] or 0))
    sender.SetAttribute("SendSize", ns.UintegerValue(1448 * 8))
    apps = sender.Install(src)
    apps.Start(ns.Seconds(flow["start_s"]))
    apps.Stop(ns.Seconds(flow["stop_s"] if flow["stop_s"] is not None else duration_s + 1.0))
    built.keep.extend([sink_helper, sinks, sender, apps])
    built.flows.append({**flow, "flow_index": len(built.flows), "port": port, "sink_path": path, "src_node": src.GetId()})


def cc_trace(built: Built, node: Any, flows_on_node: list[dict]) -> None:
    """Trace cwnd etc. of the sockets a node opens (in order of their start).

    Socket k of the node (k-th flow by start time) is connected to the glue's
    congestion-control trace just after its flow starts, and recorded in ``built.cc_sockets``.

    Parameters
    ----------
    built : Built
        What the builder made; ``cc_sockets`` is appended to.
    node : ns3::Ptr<Node>
        The sending node.
    flows_on_node : list of dict
        The entries of ``built.flows`` whose sender is ``node`` (with ``start_s`` and
        ``flow_index``).
    """
    from tcpmodels.sim._ns3 import glue

    order = sorted(flows_on_node, key=lambda f: (f["start_s"], f["flow_index"]))
    for k, f in enumerate(order):
        path = f"/NodeList/{node.GetId()}/$ns3::TcpL4Protocol/SocketList/{k}/$ns3::TcpSocketBase"
        glue().ScheduleConnectCc(f["start_s"] + 1e-9, path, int(f["flow_index"]))
        built.cc_sockets.append({"flow_index": f["flow_index"], "socket_path": path})
