"""Loading ns-3 (the ``ns3`` wheel, cppyy bindings) and the small C++ measurement glue.

Importing :mod:`tcpmodels.sim` never loads ns-3; :func:`load` does, once per
process (about 5 s). The glue is C++ compiled at run time with ``cppyy.cppdef``
because ns-3's Python callbacks cannot be attached to per-packet trace sources.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from typing import Any

__all__ = ["available", "load", "ns3_version", "cppdef_once", "MissingNs3Error"]


class MissingNs3Error(ImportError):
    """ns-3 is not installed (``pip install -e '.[sim]'``)."""


def available() -> bool:
    """True if the ``ns3`` wheel is importable (without importing it)."""
    return importlib.util.find_spec("ns") is not None


_NS: Any = None

GLUE = r"""
#include <map>
#include <string>
#include <vector>
namespace tcpmodels_glue {
using namespace ns3;

// ---- bytes received per PacketSink, and the time a target byte count was reached ----
struct SinkWatch {
  uint64_t target = 0;  // 0: no target
  uint64_t rx = 0;
  double done_s = -1.0;
};
inline std::map<std::string, SinkWatch> g_sinks;  // inline: one instance however cling splits the code

inline void SinkRx(std::string ctx, Ptr<const Packet> p, const Address &) {
  SinkWatch &w = g_sinks[ctx];
  w.rx += p->GetSize();
  if (w.target > 0 && w.done_s < 0 && w.rx >= w.target) {
    w.done_s = Simulator::Now().GetSeconds();
  }
}

inline bool WatchSink(Ptr<Application> app, std::string key, uint64_t target) {
  g_sinks[key].target = target;
  return app->TraceConnect("Rx", key, MakeCallback(&SinkRx));
}

inline double SinkDone(std::string path) { return g_sinks[path].done_s; }
inline uint64_t SinkBytes(std::string path) { return g_sinks[path].rx; }

// ---- congestion window / state / RTO of chosen sockets ----
struct CcRec {
  double t;
  int sock;
  int what;  // 0 cwnd [bytes], 1 ssthresh [bytes], 2 congestion state, 3 RTO [s], 4 RTT [s]
  double value;
};
inline std::vector<CcRec> g_cc;

inline void CwndT(int s, uint32_t, uint32_t v) { g_cc.push_back({Simulator::Now().GetSeconds(), s, 0, double(v)}); }
inline void SsthT(int s, uint32_t, uint32_t v) { g_cc.push_back({Simulator::Now().GetSeconds(), s, 1, double(v)}); }
inline void StateT(int s, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v) {
  g_cc.push_back({Simulator::Now().GetSeconds(), s, 2, double(int(v))});
}
inline void RtoT(int s, Time, Time v) { g_cc.push_back({Simulator::Now().GetSeconds(), s, 3, v.GetSeconds()}); }
inline void RttT(int s, Time, Time v) { g_cc.push_back({Simulator::Now().GetSeconds(), s, 4, v.GetSeconds()}); }

inline void ConnectCc(std::string sockpath, int id) {
  Config::ConnectWithoutContext(sockpath + "/CongestionWindow", MakeBoundCallback(&CwndT, id));
  Config::ConnectWithoutContext(sockpath + "/SlowStartThreshold", MakeBoundCallback(&SsthT, id));
  Config::ConnectWithoutContext(sockpath + "/CongState", MakeBoundCallback(&StateT, id));
  Config::ConnectWithoutContext(sockpath + "/RTO", MakeBoundCallback(&RtoT, id));
  Config::ConnectWithoutContext(sockpath + "/RTT", MakeBoundCallback(&RttT, id));
}

inline void ScheduleConnectCc(double at_s, std::string sockpath, int id) {
  Simulator::Schedule(Seconds(at_s), &ConnectCc, sockpath, id);
}

inline size_t CcCount() { return g_cc.size(); }
inline std::vector<double> CcColumn(int col) {
  std::vector<double> out;
  out.reserve(g_cc.size());
  for (const auto &r : g_cc) {
    out.push_back(col == 0 ? r.t : col == 1 ? double(r.sock) : col == 2 ? double(r.what) : r.value);
  }
  return out;
}

// ---- pcap of one point-to-point device with a snap length, link type raw IPv4 ----
inline void PppToRaw(Ptr<PcapFileWrapper> file, Ptr<const Packet> p) {
  Ptr<Packet> c = p->Copy();
  PppHeader ppp;
  c->RemoveHeader(ppp);
  file->Write(Simulator::Now(), c);
}

inline void EnablePcap(Ptr<NetDevice> dev, std::string filename, uint32_t snaplen) {
  PcapHelper helper;
  Ptr<PcapFileWrapper> file = helper.CreateFile(filename, std::ios::out, PcapHelper::DLT_RAW, snaplen);
  dev->TraceConnectWithoutContext("PromiscSniffer", MakeBoundCallback(&PppToRaw, file));
}
}  // namespace tcpmodels_glue
"""


@contextlib.contextmanager
def _quiet_stderr():
    """Silence fd 2 while ns-3 loads (it prints a harmless 'Failed to materialize symbols')."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        yield
        return
    saved = os.dup(fd)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), fd)
    try:
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def load() -> Any:
    """Import ns-3 (``from ns import ns``) and compile the glue; return the ``ns`` namespace.

    Raises
    ------
    MissingNs3Error
        If the ``ns3`` wheel is not installed.
    """
    global _NS
    if _NS is not None:
        return _NS
    if not available():
        raise MissingNs3Error("ns-3 is not installed: pip install -e '.[sim]' (the ns3 wheel from PyPI)")
    with _quiet_stderr():
        from ns import ns

    import cppyy

    cppyy.cppdef(GLUE)
    _NS = ns
    return ns


_DEFINED: set[str] = set()


def cppdef_once(key: str, source: str) -> Any:
    """Compile C++ ``source`` into this process once per ``key``; return ``cppyy.gbl``.

    cppyy keeps a definition for the life of the process and refuses to define
    a class twice, so every run-time C++ piece (CUBIC-x, LIA, the fat-tree
    receiver, the jitter channel) goes through here.
    """
    import cppyy

    if key not in _DEFINED:
        cppyy.cppdef(source)
        _DEFINED.add(key)
    return cppyy.gbl


def glue() -> Any:
    """The compiled ``tcpmodels_glue`` C++ namespace (after :func:`load`)."""
    load()
    import cppyy

    return cppyy.gbl.tcpmodels_glue


def ns3_version() -> str:
    """Version of the installed ``ns3`` wheel (no import of ns-3 itself)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ns3")
    except PackageNotFoundError:
        return "not installed"
