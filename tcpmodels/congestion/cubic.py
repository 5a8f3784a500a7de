"""CUBIC (RFC 9438): the window as a cubic function of the time since the last reduction."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl, Parameter
from tcpmodels.congestion.registry import register
from tcpmodels.models.constants import BETA_CUBIC, C_CUBIC

__all__ = ["CUBIC"]

CUBIC = register(CongestionControl(
    name="cubic",
    title="CUBIC: W(t) = C (t - K)^3 + W_max, beta_cubic = 0.7, with HyStart in the kernel and ns-3",
    parameters=(
        Parameter(name="c", default=C_CUBIC, unit="segments/s^3", doc="scaling constant C (RFC 9438 Sec. 4.2)",
                  engines=()),
        Parameter(name="beta_cubic", default=BETA_CUBIC, unit="-",
                  doc="fraction of the window kept after a loss (RFC 9438 Sec. 4.6)", engines=()),
    ),
    closed_forms=("cubic.cubic_k_s", "cubic.cubic_window_segments", "cubic.cubic_average_window_segments",
                  "cubic.cubic_loss_rate_for_window"),
    window_models=("window_dynamics.cubic_window_trajectory", "bottleneck.reno_cubic_bottleneck"),
    ns3_type_id="TcpCubic",
    kernel_name="cubic",
    validated_by=("tcpmodels.experiments.sim_vs_kernel", "tcpmodels.experiments.p3 (kernel standard)"),
    references=("RFC 9438", "Ha, Rhee, Xu, ACM SIGOPS OSR 2008"),
))
