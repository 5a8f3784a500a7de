r"""A coupled multipath sender for ns-3: k TCP subflows whose windows follow RFC 6356 LIA.

ns-3 has no MPTCP. A multipath *connection* here is k ordinary ns-3 TCP
connections (subflows), one per chosen path, opened by one application that
hands out the bytes of the transfer, plus a congestion control
``ns3::TcpLia`` (compiled at run time with cppyy) that couples the subflows'
windows.

What is modeled
---------------
- **Coupled increase (RFC 6356 Sec. 3).** Every ``TcpLia`` instance registers
  in a per-connection registry (connection id -> subflows). On each ACK in
  congestion avoidance subflow i grows by

  .. math::
      \min\left(\frac{\alpha\,\mathrm{bytes\_acked}\,\mathrm{MSS}_i}{\mathrm{cwnd\_total}},
                \frac{\mathrm{bytes\_acked}\,\mathrm{MSS}_i}{\mathrm{cwnd}_i}\right),
      \qquad
      \alpha = \mathrm{cwnd\_total}\,
      \frac{\max_j \mathrm{cwnd}_j / \mathrm{rtt}_j^2}{\left(\sum_j \mathrm{cwnd}_j / \mathrm{rtt}_j\right)^2}

  bytes, with the windows and smoothed RTTs [s] of every subflow of the
  connection at that moment (subflows without an RTT sample yet are left out).
  Windows enter the increase in whole segments, as in Linux's LIA. The increase
  runs on ``TcpLinuxReno``'s ACK counter (+1 segment when the count reaches
  cwnd_i in segments), each ACK weighted by min(alpha cwnd_i / cwnd_total, 1),
  so with one subflow (alpha = 1) ``TcpLia`` is exactly ``TcpLinuxReno``.
- **Slow start and loss response as Reno** (``TcpLinuxReno``): slow start by
  segments acknowledged up to ssthresh, ssthresh = max(2 MSS, cwnd / 2).
- **Uncoupled subflows** (``coupled=False``): each subflow runs the given
  ns-3 congestion control (``TcpLinuxReno`` by default) on its own, like
  Linux MPTCP, which has no coupled controller.
- **Data split.** The application keeps the connection's count of bytes not
  yet handed out. Whenever a subflow's send buffer holds less than its cwnd
  plus one chunk (16 segments), it takes the next chunk from the shared
  count, so faster subflows take more. A finite transfer of S bytes completes
  when the k sinks together have received S bytes (``fct_s`` of every
  subflow row of that connection).
- **Join delay.** Subflow 0 starts at ``start_s``; the others send their SYN
  when subflow 0's handshake completes, as MP_JOIN follows MP_CAPABLE, so
  each starts one handshake (one RTT of path 0) later.

What is not modeled
-------------------
As in htsim's MPTCP model, the connection-level receive side is not modeled:

- **No connection-level reordering or reassembly:** bytes count as delivered
  when any subflow's sink receives them in that subflow's order; data on a
  slow subflow never delays data on a fast one (no head-of-line blocking).
- **No receive-buffer coupling:** each subflow has its own receive window; no
  shared connection-level window limits the subflows together.
- No reinjection: bytes handed to a subflow stay there (also after an RTO).
- No DATA_ACK / DATA_FIN / MPTCP options (headers are plain TCP, 20 bytes
  shorter per packet than real MPTCP with DSS), no subflow failure handling,
  no path manager: subflows and paths are fixed by the config.

References
----------
.. [1] C. Raiciu, M. Handley, D. Wischik, "Coupled Congestion Control for
   Multipath Transport Protocols", RFC 6356, 2011, Sec. 3 and 4.
.. [2] D. Wischik, C. Raiciu, A. Greenhalgh, M. Handley, "Design, implementation
   and evaluation of congestion control for multipath TCP", NSDI 2011
   (htsim).
.. [3] RFC 8684, "TCP Extensions for Multipath Operation with Multiple
   Addresses" (MP_CAPABLE, MP_JOIN).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LIA_CPP", "load_lia", "CHUNK_SEGMENTS"]

#: Segments a subflow takes from the connection at a time.
CHUNK_SEGMENTS = 16

LIA_CPP = r"""
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>
namespace ns3 {

class TcpLia;
inline std::map<uint32_t, std::vector<TcpLia *>> g_liaRegistry;

class TcpLia : public TcpCongestionOps {
 public:
  static TypeId GetTypeId() {
    static TypeId tid =
        TypeId("ns3::TcpLia")
            .SetParent<TcpCongestionOps>()
            .SetGroupName("Internet")
            .AddConstructor<TcpLia>()
            .AddAttribute("ConnectionId", "multipath connection this subflow belongs to", UintegerValue(0),
                          MakeUintegerAccessor(&TcpLia::m_conn), MakeUintegerChecker<uint32_t>());
    return tid;
  }
  TcpLia() = default;
  TcpLia(const TcpLia &o) : TcpCongestionOps(o), m_conn(o.m_conn) {}
  ~TcpLia() override { Unregister(); }
  std::string GetName() const override { return "TcpLia"; }
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpLia>(this); }

  void Init(Ptr<TcpSocketState> tcb) override { Observe(tcb); }

  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t, const Time &) override { Observe(tcb); }

  void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
    Observe(tcb);
    uint32_t mss = tcb->m_segmentSize;
    if (tcb->m_cWnd < tcb->m_ssThresh) {  // slow start exactly as TcpLinuxReno
      if (segmentsAcked >= 1) {
        tcb->m_cWnd = std::min<uint32_t>(tcb->m_cWnd + segmentsAcked * mss, tcb->m_ssThresh);
      }
    } else {
      // congestion avoidance: TcpLinuxReno's ACK counter, each ACK weighted by
      // f = min(alpha w_i / w_total, 1), so cwnd_i grows min(alpha / w_total, 1 / w_i)
      // segments per ACKed segment (RFC 6356 Sec. 3, windows in whole segments as in Linux)
      uint32_t w = std::max<uint32_t>(1, tcb->m_cWnd / mss);
      double f = std::min(1.0, Alpha() * w / TotalSegments(mss));
      if (f > 1.0 - 1e-12) f = 1.0;
      m_lastInc = f * segmentsAcked * mss / w;
      if (m_cnt + 1e-9 >= w) {
        m_cnt = 0;
        tcb->m_cWnd += mss;
      }
      m_cnt += f * segmentsAcked;
      if (m_cnt + 1e-9 >= w) {
        uint32_t delta = uint32_t((m_cnt + 1e-9) / w);
        m_cnt = std::max(0.0, m_cnt - double(delta) * w);
        tcb->m_cWnd += delta * mss;
      }
    }
    m_cwnd = double(tcb->m_cWnd.Get());
  }

  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override {
    return std::max<uint32_t>(2 * tcb->m_segmentSize, tcb->m_cWnd / 2);  // as TcpLinuxReno
  }

  // alpha of this subflow's connection, from the windows and RTTs last seen [-]
  double Alpha() const {
    double total = 0, best = 0, sum = 0;
    for (TcpLia *s : g_liaRegistry[m_conn]) {
      if (s->m_rtt <= 0 || s->m_cwnd <= 0) continue;
      total += s->m_cwnd;
      best = std::max(best, s->m_cwnd / (s->m_rtt * s->m_rtt));
      sum += s->m_cwnd / s->m_rtt;
    }
    return sum > 0 ? total * best / (sum * sum) : 1.0;
  }
  // sum of the connection's windows in whole segments (at least 1 per subflow) [segments]
  double TotalSegments(uint32_t mss) const {
    double total = 0;
    bool self = false;
    for (TcpLia *s : g_liaRegistry[m_conn]) {
      if (s == this || (s->m_rtt > 0 && s->m_cwnd > 0)) {
        total += std::max<uint32_t>(1, uint32_t(s->m_cwnd) / mss);
        self = self || s == this;
      }
    }
    return self ? total : total + std::max<uint32_t>(1, uint32_t(m_cwnd) / mss);
  }
  uint32_t ConnectionId() const { return m_conn; }
  // increase of the last congestion-avoidance ACK, before rounding to whole segments [bytes]
  double LastIncreaseBytes() const { return m_lastInc; }

 private:
  void Observe(Ptr<const TcpSocketState> tcb) {
    if (!m_registered) {
      g_liaRegistry[m_conn].push_back(this);
      m_registered = true;
    }
    m_cwnd = double(tcb->m_cWnd.Get());
    double r = tcb->m_srtt.Get().GetSeconds();
    if (r > 0) m_rtt = r;
  }
  void Unregister() {
    if (!m_registered) return;
    auto &v = g_liaRegistry[m_conn];
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
    m_registered = false;
  }

  uint32_t m_conn{0};
  bool m_registered{false};
  double m_cwnd{0}, m_rtt{0}, m_cnt{0}, m_lastInc{0};
};

// alpha and the per-ACK increase [bytes] of each subflow for given windows [bytes] and
// smoothed RTTs [s], one segment acknowledged (a check of TcpLia outside a simulation)
inline std::vector<double> LiaProbe(uint32_t conn, std::vector<double> cwnd, std::vector<double> rtt, uint32_t mss) {
  std::vector<Ptr<TcpLia>> cc;
  std::vector<Ptr<TcpSocketState>> tcb;
  for (size_t i = 0; i < cwnd.size(); ++i) {
    Ptr<TcpSocketState> t = CreateObject<TcpSocketState>();
    t->m_segmentSize = mss;
    t->m_cWnd = uint32_t(cwnd[i]);
    t->m_ssThresh = mss;  // congestion avoidance
    t->m_srtt = Seconds(rtt[i]);
    Ptr<TcpLia> c = CreateObject<TcpLia>();
    c->SetAttribute("ConnectionId", UintegerValue(conn));
    c->Init(t);
    cc.push_back(c);
    tcb.push_back(t);
  }
  std::vector<double> out{cc.empty() ? 0.0 : cc[0]->Alpha()};
  for (size_t i = 0; i < cc.size(); ++i) {
    cc[i]->IncreaseWindow(tcb[i], 1);
    out.push_back(cc[i]->LastIncreaseBytes());
  }
  return out;
}

}  // namespace ns3

namespace tcpmodels_mp {
using namespace ns3;

class Subflow;
struct Conn {
  uint64_t size = 0;    // bytes to transfer; 0: unlimited
  uint64_t handed = 0;  // bytes handed to subflows
  uint64_t rx = 0;      // bytes received by all sinks
  double done_s = -1.0;
  std::vector<Subflow *> subs;
};
inline std::map<uint32_t, Conn> g_conns;

class Subflow : public Application {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("tcpmodels_mp::Subflow").SetParent<Application>().SetGroupName("Applications");
    return tid;
  }
  void Setup(uint32_t conn, uint32_t index, Address peer, std::string cc, uint32_t chunk, int traceId) {
    m_conn = conn;
    m_index = index;
    m_peer = peer;
    m_cc = cc;
    m_chunk = chunk;
    m_traceId = traceId;
  }
  double StartedS() const { return m_startedS; }
  double ConnectedS() const { return m_connectedS; }
  uint64_t Handed() const { return m_handed; }

  void Open() {
    if (m_sock || !m_running) return;
    m_startedS = Simulator::Now().GetSeconds();
    m_sock = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    Ptr<TcpSocketBase> tsb = DynamicCast<TcpSocketBase>(m_sock);
    ObjectFactory f;
    f.SetTypeId(m_cc);
    if (m_cc == "ns3::TcpLia") f.Set("ConnectionId", UintegerValue(m_conn));
    tsb->SetCongestionControlAlgorithm(f.Create<TcpCongestionOps>());
    UintegerValue buf;
    m_sock->GetAttribute("SndBufSize", buf);
    m_sndBuf = buf.Get();
    m_sock->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&Subflow::CwndChanged, this));
    if (m_traceId >= 0) {
      int id = m_traceId;
      m_sock->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&tcpmodels_glue::CwndT, id));
      m_sock->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&tcpmodels_glue::SsthT, id));
      m_sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&tcpmodels_glue::StateT, id));
      m_sock->TraceConnectWithoutContext("RTO", MakeBoundCallback(&tcpmodels_glue::RtoT, id));
      m_sock->TraceConnectWithoutContext("RTT", MakeBoundCallback(&tcpmodels_glue::RttT, id));
    }
    m_sock->SetConnectCallback(MakeCallback(&Subflow::Connected, this), MakeCallback(&Subflow::Failed, this));
    m_sock->SetSendCallback(MakeCallback(&Subflow::Room, this));
    m_sock->Bind();
    m_sock->Connect(m_peer);
  }

 private:
  void StartApplication() override {
    m_running = true;
    if (m_index == 0) Open();
  }
  void StopApplication() override {
    m_running = false;
    if (m_sock) m_sock->Close();
  }
  void Connected(Ptr<Socket>) {
    m_connectedS = Simulator::Now().GetSeconds();
    if (m_index == 0) {  // MP_JOIN of the other subflows after the first handshake
      for (Subflow *s : g_conns[m_conn].subs) {
        if (s != this) Simulator::ScheduleNow(&Subflow::Open, s);
      }
    }
    Fill();
  }
  void Failed(Ptr<Socket>) {}
  void Room(Ptr<Socket>, uint32_t) { Fill(); }
  void CwndChanged(uint32_t, uint32_t v) {
    m_cwnd = v;
    if (!m_fillPending) {
      m_fillPending = true;
      Simulator::ScheduleNow(&Subflow::Fill, this);
    }
  }
  void Fill() {
    m_fillPending = false;
    if (m_connectedS < 0 || !m_running) return;
    Conn &c = g_conns[m_conn];
    uint64_t buffered = m_sndBuf - m_sock->GetTxAvailable();
    while (buffered < uint64_t(m_cwnd) + m_chunk) {
      uint64_t n = m_chunk;
      if (c.size > 0) n = std::min<uint64_t>(n, c.size - c.handed);
      n = std::min<uint64_t>(n, m_sock->GetTxAvailable());
      if (n == 0) break;
      int sent = m_sock->Send(Create<Packet>(uint32_t(n)));
      if (sent <= 0) break;
      c.handed += sent;
      m_handed += sent;
      buffered += sent;
    }
  }

  uint32_t m_conn{0}, m_index{0}, m_chunk{1448}, m_cwnd{0};
  uint64_t m_sndBuf{0}, m_handed{0};
  int m_traceId{-1};
  Address m_peer;
  std::string m_cc;
  Ptr<Socket> m_sock;
  bool m_running{false}, m_fillPending{false};
  double m_startedS{-1.0}, m_connectedS{-1.0};
};

inline void NewConn(uint32_t id, uint64_t size) {
  g_conns[id] = Conn();
  g_conns[id].size = size;
}

inline Ptr<Subflow> AddSubflow(Ptr<Node> node, uint32_t conn, uint32_t index, Ipv4Address peer, uint16_t port,
                               std::string cc, uint32_t chunk, int traceId, double start_s, double stop_s) {
  Ptr<Subflow> app = CreateObject<Subflow>();
  app->Setup(conn, index, InetSocketAddress(peer, port), cc, chunk, traceId);
  node->AddApplication(app);
  app->SetStartTime(Seconds(start_s));
  app->SetStopTime(Seconds(stop_s));
  g_conns[conn].subs.push_back(PeekPointer(app));
  return app;
}

inline void ConnRx(uint32_t id, Ptr<const Packet> p, const Address &) {
  Conn &c = g_conns[id];
  c.rx += p->GetSize();
  if (c.size > 0 && c.done_s < 0 && c.rx >= c.size) c.done_s = Simulator::Now().GetSeconds();
}

inline bool WatchConnSink(Ptr<Application> sink, uint32_t id) {
  return sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&ConnRx, id));
}

inline double ConnDone(uint32_t id) { return g_conns[id].done_s; }
inline uint64_t ConnRxBytes(uint32_t id) { return g_conns[id].rx; }
inline uint64_t ConnHanded(uint32_t id) { return g_conns[id].handed; }
inline double SubStarted(uint32_t id, uint32_t j) { return g_conns[id].subs.at(j)->StartedS(); }
inline double SubConnected(uint32_t id, uint32_t j) { return g_conns[id].subs.at(j)->ConnectedS(); }
inline uint64_t SubHanded(uint32_t id, uint32_t j) { return g_conns[id].subs.at(j)->Handed(); }
}  // namespace tcpmodels_mp
"""

def load_lia() -> Any:
    """Compile ``ns3::TcpLia`` and the multipath application (once per process); return ``tcpmodels_mp``.

    Returns
    -------
    cppyy namespace
        ``cppyy.gbl.tcpmodels_mp``: the ``Subflow`` application and the per-connection
        accessors (``ConnDone``, ``ConnRxBytes``, ``SubStarted``, ...).
    """
    from tcpmodels.sim import _ns3

    _ns3.glue()  # the cwnd tracers the subflows use
    gbl = _ns3.cppdef_once("TcpLia", LIA_CPP)
    gbl.ns3.TcpLia.GetTypeId()
    gbl.tcpmodels_mp.Subflow.GetTypeId()
    return gbl.tcpmodels_mp
