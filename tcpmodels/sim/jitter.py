"""A point-to-point channel with a small random, order-preserving delay per packet, against ns-3's phase locking.

Why
---
A drop-tail bottleneck fed by flows with fixed RTTs is *phase locked* in a
simulator: every packet's timing is deterministic, so which flow's packet meets
the full queue at each overflow depends on the flows' relative phase, not on
their windows (S. Floyd, V. Jacobson, "On traffic phase effects in
packet-switched gateways", 1992). Measured here with the sim-vs-kernel
dumbbell (50 Mbit/s, Reno x 3 at 10/20/40 ms): ns-3 gave 11.3 / 32.0 / 5.0
Mbit/s where the kernel gives 25.0 / 12.2 / 10.6, and moving the 20 ms RTT to
20.12 ms turned it into 14.3 / 7.0 / 27.0. Real hosts have jitter (interrupt
coalescing, scheduling) that breaks the phase; Floyd and Jacobson's remedy is
a random delay of up to one bottleneck packet time at the senders.

What
----
``ns3::JitterPointToPointChannel`` is :class:`ns3::PointToPointChannel` whose
``TransmitStart`` schedules the arrival at ``now + txTime + delay + U(0,
jitter)``, but never before the previous packet in the same direction, so the
channel stays FIFO (no reordering, no spurious duplicate ACKs). The mean delay
grows by at most ``jitter / 2``. Its own random stream (``Stream`` attribute)
keeps runs reproducible per seed. The channel's ``TxRxPointToPoint`` trace
(private in the base class) is not fired; device traces (pcap, FlowMonitor)
are unaffected.

:func:`install_jitter_link` joins two nodes the way ``PointToPointHelper``
does with flow control disabled: two ``PointToPointNetDevice`` with fresh
MAC addresses and drop-tail queues, attached to one such channel.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JITTER_CPP", "load_jitter_channel", "install_jitter_link"]

JITTER_CPP = r"""
#include "ns3/point-to-point-channel.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "ns3/nstime.h"
#include "ns3/data-rate.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device-container.h"

namespace ns3 {

class JitterPointToPointChannel : public PointToPointChannel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::JitterPointToPointChannel")
            .SetParent<PointToPointChannel>()
            .SetGroupName("PointToPoint")
            .AddConstructor<JitterPointToPointChannel>()
            .AddAttribute("Jitter", "Upper bound of the uniform extra delay per packet",
                          TimeValue(Seconds(0)), MakeTimeAccessor(&JitterPointToPointChannel::m_jitter),
                          MakeTimeChecker())
            .AddAttribute("Stream", "Stream number of the jitter's random variable",
                          UintegerValue(0), MakeUintegerAccessor(&JitterPointToPointChannel::m_stream),
                          MakeUintegerChecker<uint64_t>());
        return tid;
    }

    JitterPointToPointChannel()
    {
        m_uniform = CreateObject<UniformRandomVariable>();
    }

    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override
    {
        if (!m_streamSet)
        {
            m_uniform->SetStream(m_stream);
            m_streamSet = true;
        }
        uint32_t wire = (src == GetSource(0)) ? 0 : 1;
        Ptr<PointToPointNetDevice> dst = GetDestination(wire);
        Time extra = Seconds(m_uniform->GetValue(0.0, m_jitter.GetSeconds()));
        Time arrival = Simulator::Now() + txTime + GetDelay() + extra;
        if (arrival < m_lastArrival[wire])
        {
            arrival = m_lastArrival[wire];  // FIFO: never overtake the previous packet
        }
        m_lastArrival[wire] = arrival;
        Simulator::ScheduleWithContext(dst->GetNode()->GetId(), arrival - Simulator::Now(),
                                       &PointToPointNetDevice::Receive, dst, p->Copy());
        return true;
    }

  private:
    Time m_jitter;
    uint64_t m_stream{0};
    bool m_streamSet{false};
    Ptr<UniformRandomVariable> m_uniform;
    Time m_lastArrival[2];
};

NetDeviceContainer
TcpmodelsInstallJitterLink(Ptr<Node> a, Ptr<Node> b, std::string rate, Time delay, Time jitter, uint64_t stream)
{
    Ptr<JitterPointToPointChannel> channel = CreateObject<JitterPointToPointChannel>();
    channel->SetAttribute("Delay", TimeValue(delay));
    channel->SetAttribute("Jitter", TimeValue(jitter));
    channel->SetAttribute("Stream", UintegerValue(stream));
    NetDeviceContainer devices;
    for (Ptr<Node> node : {a, b})
    {
        Ptr<PointToPointNetDevice> dev = CreateObject<PointToPointNetDevice>();
        dev->SetAttribute("DataRate", DataRateValue(DataRate(rate)));
        dev->SetAddress(Mac48Address::Allocate());
        node->AddDevice(dev);
        dev->SetQueue(CreateObject<DropTailQueue<Packet>>());
        dev->Attach(channel);
        devices.Add(dev);
    }
    return devices;
}

}  // namespace ns3
"""

def load_jitter_channel() -> Any:
    """Compile ``ns3::JitterPointToPointChannel`` and its install function (once per process); return ``cppyy.gbl``.

    Returns
    -------
    cppyy namespace
        ``cppyy.gbl``, holding ``ns3::JitterPointToPointChannel`` and
        ``ns3::TcpmodelsInstallJitterLink``.
    """
    from tcpmodels.sim._ns3 import cppdef_once

    gbl = cppdef_once("JitterPointToPointChannel", JITTER_CPP)
    gbl.ns3.JitterPointToPointChannel.GetTypeId()
    return gbl


def install_jitter_link(ns: Any, a: Any, b: Any, *, rate: str, delay: str, jitter_s: float, stream: int) -> Any:
    """Join nodes ``a`` and ``b`` with a jittered point-to-point link; returns the ``NetDeviceContainer``.

    Parameters
    ----------
    ns : module
        The ``ns`` namespace of the ns-3 Python bindings (cppyy).
    a, b : ns3::Ptr<Node>
        The two nodes to join.
    rate, delay : str
        ns-3 ``DataRate`` and ``Time`` strings (e.g. ``"50000000bps"``, ``"5ms"``).
    jitter_s : float
        Upper bound of the uniform extra delay per packet. [s]
    stream : int
        Random stream of this channel (distinct per link for independent jitter).

    Returns
    -------
    ns3::NetDeviceContainer
        The two point-to-point devices, at ``a`` then at ``b``, each with a drop-tail queue.
    """
    gbl = load_jitter_channel()
    return gbl.ns3.TcpmodelsInstallJitterLink(a, b, rate, ns.Time(delay), ns.Seconds(float(jitter_s)), int(stream))
