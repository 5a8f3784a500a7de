"""Reno (RFC 5681): AIMD, +1 segment per RTT, halve on loss."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl
from tcpmodels.congestion.registry import register
from tcpmodels.models.bottleneck import reno_cubic_bottleneck
from tcpmodels.models.cubic import reno_window_segments
from tcpmodels.models.throughput import mathis_throughput_bps, padhye_throughput_bps
from tcpmodels.models.window_dynamics import reno_window_trajectory

__all__ = ["RENO"]

RENO = register(CongestionControl(
    name="reno",
    title="Reno / NewReno: additive increase of one segment per RTT, multiplicative decrease by 1/2",
    closed_forms=(mathis_throughput_bps, padhye_throughput_bps, reno_window_segments),
    window_models=(reno_window_trajectory, reno_cubic_bottleneck),
    ns3_type_id="TcpLinuxReno",
    kernel_name="reno",
    bpf_program="tm_reno",
    validated_by=("tcpmodels.experiments.fit", "tcpmodels.experiments.sim_vs_kernel",
                  "tcpmodels.experiments.kernel_coupled_cc (tm_reno against the kernel's reno)"),
    references=("RFC 5681", "Mathis et al., CCR 1997", "Padhye et al., SIGCOMM 1998"),
))
