r"""Congestion control compiled at run time (cppyy) and registered as ns-3 TypeIds.

``ns3::TcpCubicX``
    A complete CUBIC (``TcpCongestionOps``; ns-3's ``TcpCubic`` keeps its state
    and ``Update()`` private, so it cannot be subclassed usefully) whose K can be
    scaled by x(RTT) as in Kozu & Yamaguchi (P3) eq. (4), in both readings of
    the garbled formula (:func:`tcpmodels.models.cubic.kozu_k_s`):

    .. math::
        K = \sqrt[3]{x^{\pm 1}\,(W_{max} - W_{red}) / C},\qquad W_{red} = \beta_{cubic} W_{max}

    ``"multiply"`` uses x, ``"divide"`` 1/x, ``"none"`` gives plain CUBIC.
    x(RTT) is a power law through two points (:class:`tcpmodels.models.cubic.PowerLawX`)
    or a table interpolated linearly in log RTT and log x (constant beyond its
    ends), evaluated at the flow's minimum RTT. The rest follows RFC 9438 the way
    Linux and ns-3 do: window growth as a count of ACKs per segment (``cnt``)
    towards the target ``W(t + RTT_min)``, target capped at 1.5 cwnd
    (RFC 9438 Sec. 4.2), at most one segment per two ACKs, fast convergence,
    the Reno-friendly region with alpha = 3 (1 - beta) / (1 + beta), reset on
    RTO, ssthresh = beta_cubic * cwnd. No HyStart: compare it with ``TcpCubic``
    with ``HyStart`` off (:func:`tcpmodels.sim.scenarios` does that for every
    scenario that uses ``TcpCubicX``).

References
----------
.. [1] RFC 9438, "CUBIC for Fast and Long-Distance Networks", Sec. 4.
.. [2] T. Kozu, S. Yamaguchi, FIT2013, eq. (4) (paper P3; see ``PAPERS.md``).
"""

from __future__ import annotations

import math
from typing import Any

from tcpmodels import congestion

__all__ = ["CUBIC_X_CPP", "CUBIC_X_DEFAULTS", "load_cubic_x", "configure_cubic_x", "check_cubic_x_params"]

CUBIC_X_CPP = r"""
#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>
namespace ns3 {

class TcpCubicX : public TcpCongestionOps {
 public:
  static TypeId GetTypeId() {
    static TypeId tid =
        TypeId("ns3::TcpCubicX")
            .SetParent<TcpCongestionOps>()
            .SetGroupName("Internet")
            .AddConstructor<TcpCubicX>()
            .AddAttribute("C", "CUBIC scaling constant [segments/s^3]", DoubleValue(0.4),
                          MakeDoubleAccessor(&TcpCubicX::m_c), MakeDoubleChecker<double>(0.0))
            .AddAttribute("Beta", "beta_cubic, fraction of the window kept", DoubleValue(0.7),
                          MakeDoubleAccessor(&TcpCubicX::m_beta), MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("FastConvergence", "RFC 9438 Sec. 4.7", BooleanValue(true),
                          MakeBooleanAccessor(&TcpCubicX::m_fastConvergence), MakeBooleanChecker())
            .AddAttribute("RenoFriendly", "RFC 9438 Sec. 4.3", BooleanValue(true),
                          MakeBooleanAccessor(&TcpCubicX::m_renoFriendly), MakeBooleanChecker())
            .AddAttribute("XReading", "0 none, 1 multiply, 2 divide", UintegerValue(0),
                          MakeUintegerAccessor(&TcpCubicX::m_reading), MakeUintegerChecker<uint32_t>(0, 2))
            .AddAttribute("XTable", "x(RTT) as 'rtt_s:x,rtt_s:x,...' (empty: power law)", StringValue(""),
                          MakeStringAccessor(&TcpCubicX::SetTable, &TcpCubicX::GetTable), MakeStringChecker())
            .AddAttribute("XRtt1", "power law point 1 RTT [s]", DoubleValue(0.001),
                          MakeDoubleAccessor(&TcpCubicX::m_rtt1), MakeDoubleChecker<double>(0.0))
            .AddAttribute("X1", "power law point 1 x", DoubleValue(10.0),
                          MakeDoubleAccessor(&TcpCubicX::m_x1), MakeDoubleChecker<double>(0.0))
            .AddAttribute("XRtt2", "power law point 2 RTT [s]", DoubleValue(1.0),
                          MakeDoubleAccessor(&TcpCubicX::m_rtt2), MakeDoubleChecker<double>(0.0))
            .AddAttribute("X2", "power law point 2 x", DoubleValue(1.0),
                          MakeDoubleAccessor(&TcpCubicX::m_x2), MakeDoubleChecker<double>(0.0));
    return tid;
  }
  TcpCubicX() = default;
  TcpCubicX(const TcpCubicX &o) = default;
  std::string GetName() const override { return "TcpCubicX"; }
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpCubicX>(this); }

  void SetTable(std::string s) {
    m_tableText = s;
    m_table.clear();
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
      auto pos = item.find(':');
      if (pos == std::string::npos) continue;
      m_table.emplace_back(std::stod(item.substr(0, pos)), std::stod(item.substr(pos + 1)));
    }
    std::sort(m_table.begin(), m_table.end());
  }
  std::string GetTable() const { return m_tableText; }

  double X(double rtt) const {
    if (!m_table.empty()) {
      if (rtt <= m_table.front().first) return m_table.front().second;
      if (rtt >= m_table.back().first) return m_table.back().second;
      for (size_t i = 1; i < m_table.size(); ++i) {
        if (rtt <= m_table[i].first) {
          auto a = m_table[i - 1], b = m_table[i];
          double f = std::log(rtt / a.first) / std::log(b.first / a.first);
          return std::exp(std::log(a.second) + f * std::log(b.second / a.second));
        }
      }
    }
    double k = std::log(m_x2 / m_x1) / std::log(m_rtt2 / m_rtt1);
    return m_x1 * std::pow(rtt / m_rtt1, k);
  }

  double XFactor() const {
    if (m_reading == 0 || m_delayMin <= 0) return 1.0;
    double x = X(m_delayMin);
    return m_reading == 1 ? x : 1.0 / x;
  }

  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time &rtt) override {
    if (rtt.IsPositive()) {
      double r = rtt.GetSeconds();
      if (m_delayMin <= 0 || r < m_delayMin) m_delayMin = r;
    }
  }

  void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
    if (!tcb->m_isCwndLimited) return;
    uint32_t mss = tcb->m_segmentSize;
    if (tcb->m_cWnd < tcb->m_ssThresh) {
      // slow start by bytes acknowledged (RFC 3465), as ns-3's TcpCubic does
      tcb->m_cWnd += segmentsAcked * mss;
      return;
    }
    Update(tcb, segmentsAcked);
    // at most one segment per ACK, as ns-3's TcpCubic (and RFC 6356's per-ACK rule)
    m_cwndCnt += segmentsAcked;
    if (m_cwndCnt >= m_cnt) {
      tcb->m_cWnd += mss;
      m_cwndCnt -= m_cnt;
    }
  }

  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
    double w = double(tcb->m_cWnd) / tcb->m_segmentSize;
    m_epochStart = -1.0;
    if (m_fastConvergence && w < m_wMax) {
      m_wMax = w * (1.0 + m_beta) / 2.0;
    } else {
      m_wMax = w;
    }
    return std::max<uint32_t>(uint32_t(w * m_beta) * tcb->m_segmentSize, 2 * tcb->m_segmentSize);
  }

  void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t s) override {
    if (s == TcpSocketState::CA_LOSS) {  // after an RTO start over, RTT_min included
      m_epochStart = -1.0;
      m_wMax = 0.0;
      m_ackCnt = 0.0;
      m_wEst = 0.0;
      m_delayMin = -1.0;
    }
  }

  double LastK() const { return m_k; }

 private:
  void Update(Ptr<TcpSocketState> tcb, uint32_t acked) {
    double now = Simulator::Now().GetSeconds();
    double cwnd = double(tcb->m_cWnd) / tcb->m_segmentSize;
    if (m_epochStart < 0) {
      m_epochStart = now;
      m_ackCnt = acked;
      m_wEst = cwnd;
      if (m_wMax <= cwnd) {
        m_k = 0.0;
        m_origin = cwnd;
      } else {
        m_k = std::cbrt(XFactor() * (m_wMax - cwnd) / m_c);
        m_origin = m_wMax;
      }
    } else {
      m_ackCnt += acked;
    }
    double rtt = m_delayMin > 0 ? m_delayMin : 0.1;
    double t = now - m_epochStart + rtt;
    double target = m_origin + m_c * std::pow(t - m_k, 3.0);
    target = std::min(target, 1.5 * cwnd);  // RFC 9438 Sec. 4.2
    double cnt = target > cwnd ? cwnd / (target - cwnd) : 100.0 * cwnd;
    if (m_wMax == 0.0 && cnt > 20.0) cnt = 20.0;  // no loss seen yet
    if (m_renoFriendly) {
      double alpha = 3.0 * (1.0 - m_beta) / (1.0 + m_beta);
      // W_est grows by alpha segments per window of ACKed segments (RFC 9438 Sec. 4.3)
      while (m_ackCnt >= m_wEst / alpha && m_wEst > 0) {
        m_ackCnt -= m_wEst / alpha;
        m_wEst += 1.0;
      }
      if (m_wEst > cwnd) cnt = std::min(cnt, cwnd / (m_wEst - cwnd));
    }
    m_cnt = std::max<uint32_t>(2u, uint32_t(cnt));
  }

  double m_c{0.4}, m_beta{0.7};
  bool m_fastConvergence{true}, m_renoFriendly{true};
  uint32_t m_reading{0};
  double m_rtt1{0.001}, m_x1{10.0}, m_rtt2{1.0}, m_x2{1.0};
  std::string m_tableText;
  std::vector<std::pair<double, double>> m_table;
  double m_wMax{0.0}, m_origin{0.0}, m_k{0.0}, m_epochStart{-1.0}, m_wEst{0.0}, m_ackCnt{0.0};
  double m_delayMin{-1.0};
  uint32_t m_cnt{2}, m_cwndCnt{0};
};

}  // namespace ns3
"""

_READINGS = {"none": 0, "multiply": 1, "divide": 2}
#: ``cc_params`` of ``TcpCubicX`` and their defaults: the ns-3 parameters of :mod:`tcpmodels.congestion.cubic_x`
CUBIC_X_DEFAULTS = congestion.get("cubic_x").defaults("ns3")


def check_cubic_x_params(params: dict) -> None:
    """Validate ``Sender.cc_params`` for ``TcpCubicX``; raise ValueError naming the problem.

    Keys: ``reading`` (``"none"``, ``"multiply"``, ``"divide"``); either
    ``x_table`` (list of ``[rtt_s, x]``, RTT [s] and x [-] positive) or
    ``x_power_law`` (dict ``rtt1_s, x1, rtt2_s, x2`` as in
    :class:`tcpmodels.models.cubic.PowerLawX`; default (1 ms, 10), (1 s, 1));
    optional ``c`` [segments/s^3] and ``beta_cubic`` [-].

    Parameters
    ----------
    params : dict
        The ``cc_params`` of a sender whose variant is ``TcpCubicX`` (keys above).

    Raises
    ------
    ValueError
        For an unknown key, an unknown ``reading``, both ``x_table`` and
        ``x_power_law``, a table row or power-law value that is not a finite positive
        number, ``c`` not > 0 or ``beta_cubic`` outside (0, 1).
    """
    unknown = set(params) - set(CUBIC_X_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown TcpCubicX cc_params {sorted(unknown)}; "
                         f"valid: {', '.join(CUBIC_X_DEFAULTS)}")
    if params.get("reading", "none") not in _READINGS:
        raise ValueError(f"reading must be one of {sorted(_READINGS)}; got {params.get('reading')!r}")
    if "x_table" in params and "x_power_law" in params:
        raise ValueError("give x_table or x_power_law, not both")
    for row in params.get("x_table", []):
        if len(row) != 2 or not all(isinstance(v, (int, float)) and v > 0 and math.isfinite(v) for v in row):
            raise ValueError(f"x_table rows must be [rtt_s, x] with both > 0 (RTT [s], x [-]); got {row!r}")
    pl = params.get("x_power_law", {})
    for k in pl:
        if k not in CUBIC_X_DEFAULTS["x_power_law"]:
            raise ValueError(f"x_power_law keys are {', '.join(CUBIC_X_DEFAULTS['x_power_law'])}; got {k!r}")
        if not (isinstance(pl[k], (int, float)) and pl[k] > 0 and math.isfinite(pl[k])):
            raise ValueError(f"x_power_law {k} must be > 0; got {pl[k]!r}")
    if "c" in params and not params["c"] > 0:
        raise ValueError(f"c [segments/s^3] must be in (0, inf); got {params['c']!r}")
    if "beta_cubic" in params and not 0 < params["beta_cubic"] < 1:
        raise ValueError(f"beta_cubic [-] must be in (0, 1); got {params['beta_cubic']!r}")


def load_cubic_x() -> None:
    """Compile ``ns3::TcpCubicX`` (once per process) and register its TypeId.

    The class is compiled into ``cppyy.gbl`` (no ``ns`` namespace needed, as for
    :func:`tcpmodels.sim.jitter.load_jitter_channel` and :func:`tcpmodels.sim.multipath.load_lia`).
    """
    from tcpmodels.sim._ns3 import cppdef_once

    cppdef_once("TcpCubicX", CUBIC_X_CPP).ns3.TcpCubicX.GetTypeId()


def configure_cubic_x(ns: Any, **params: Any) -> None:
    """Set the ``ns3::TcpCubicX`` attribute defaults from ``Sender.cc_params``.

    Parameters
    ----------
    ns : module
        The ``ns`` namespace of the ns-3 Python bindings (cppyy).
    **params
        The ``cc_params`` of :func:`check_cubic_x_params`; absent keys take the
        defaults of :data:`CUBIC_X_DEFAULTS` (the registry's: reading ``"none"``, power law
        (1 ms, 10), (1 s, 1), ``c`` = 0.4 [segments/s^3], ``beta_cubic`` = 0.7 [-]).

    Raises
    ------
    ValueError
        If ``params`` fails :func:`check_cubic_x_params`.
    """
    check_cubic_x_params(params)
    p = {**CUBIC_X_DEFAULTS, **params}
    cfg = ns.Config
    cfg.SetDefault("ns3::TcpCubicX::XReading", ns.UintegerValue(_READINGS[p["reading"]]))
    table = ",".join(f"{r!r}:{x!r}" for r, x in p["x_table"])
    cfg.SetDefault("ns3::TcpCubicX::XTable", ns.StringValue(table))
    pl = {**CUBIC_X_DEFAULTS["x_power_law"], **params.get("x_power_law", {})}
    for attr, key in (("XRtt1", "rtt1_s"), ("X1", "x1"), ("XRtt2", "rtt2_s"), ("X2", "x2")):
        cfg.SetDefault(f"ns3::TcpCubicX::{attr}", ns.DoubleValue(float(pl[key])))
    cfg.SetDefault("ns3::TcpCubicX::C", ns.DoubleValue(float(p["c"])))
    cfg.SetDefault("ns3::TcpCubicX::Beta", ns.DoubleValue(float(p["beta_cubic"])))
