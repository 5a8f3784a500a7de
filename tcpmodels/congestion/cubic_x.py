"""CUBIC-x: CUBIC whose K is scaled by x(RTT), Kozu & Yamaguchi (paper P3) eq. (4), in both readings."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl, Parameter
from tcpmodels.congestion.registry import register
from tcpmodels.models.constants import BETA_CUBIC, C_CUBIC

__all__ = ["CUBIC_X"]

CUBIC_X = register(CongestionControl(
    name="cubic_x",
    title="CUBIC with K = cbrt(x^(+-1) (W_max - W_red) / C), x(RTT) a power law (P3 eq. (4))",
    parameters=(
        Parameter(name="reading", default="none", unit="choice",
                  doc="none (plain CUBIC), multiply (x) or divide (1/x): the two readings of eq. (4)"),
        Parameter(name="x_exponent", default=-1.0 / 3.0, unit="-",
                  doc="k of x(RTT) = (RTT / 1 s)^k (models.cubic.x_power_law_params)", engines=("kernel",)),
        Parameter(name="x_table", default=(), unit="[[s, -], ...]",
                  doc="x(RTT) as rows [rtt_s, x], interpolated in log-log (instead of the power law)",
                  engines=("ns3",)),
        Parameter(name="x_power_law", default={"rtt1_s": 0.001, "x1": 10.0, "rtt2_s": 1.0, "x2": 1.0},
                  unit="{s, -, s, -}", doc="x(RTT) through two points (models.cubic.PowerLawX); k = -1/3",
                  engines=("ns3",)),
        Parameter(name="c", default=C_CUBIC, unit="segments/s^3", doc="CUBIC scaling constant C"),
        Parameter(name="beta_cubic", default=BETA_CUBIC, unit="-", doc="fraction of the window kept after a loss"),
        Parameter(name="fast_convergence", default=1, unit="bool", doc="RFC 9438 Sec. 4.7", engines=("kernel",)),
        Parameter(name="hystart", default=1, unit="bool", doc="HyStart slow-start exit (as the kernel's cubic)",
                  engines=("kernel",)),
    ),
    closed_forms=("cubic.kozu_k_s", "cubic.kozu_x"),
    ns3_type_id="TcpCubicX",
    ns3_compiled_by="tcpmodels.sim.cc",
    bpf_program="tm_cubic_x",
    validated_by=("tcpmodels.experiments.kernel_coupled_cc (tm_cubic_x against the kernel's cubic)",
                  "tests/testbed/test_cubic_x_vs_kernel.py (slow-start exit, restart after idle)",
                  "tcpmodels.experiments.p3"),
    references=("T. Kozu, S. Yamaguchi, FIT2013, eq. (4)", "RFC 9438"),
))
