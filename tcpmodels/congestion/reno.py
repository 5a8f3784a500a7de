"""Reno (RFC 5681): AIMD, +1 segment per RTT, halve on loss."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl
from tcpmodels.congestion.registry import register

__all__ = ["RENO"]

RENO = register(CongestionControl(
    name="reno",
    title="Reno / NewReno: additive increase of one segment per RTT, multiplicative decrease by 1/2",
    closed_forms=("throughput.mathis_throughput_bps", "throughput.padhye_throughput_bps", "cubic.reno_window_segments"),
    window_models=("window_dynamics.reno_window_trajectory", "bottleneck.reno_cubic_bottleneck"),
    ns3_type_id="TcpLinuxReno",
    kernel_name="reno",
    bpf_program="tm_reno",
    validated_by=("tcpmodels.experiments.fit", "tcpmodels.experiments.sim_vs_kernel",
                  "tcpmodels.experiments.kernel_coupled_cc (tm_reno against the kernel's reno)"),
    references=("RFC 5681", "Mathis et al., CCR 1997", "Padhye et al., SIGCOMM 1998"),
))
