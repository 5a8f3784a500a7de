"""LIA (RFC 6356): the linked increase of MPTCP subflows."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl
from tcpmodels.congestion.registry import register

__all__ = ["LIA"]

LIA = register(CongestionControl(
    name="lia",
    title="RFC 6356 linked increases: each subflow grows by min(alpha/W_total, 1/W_i) per ACK",
    closed_forms=("mptcp.lia_alpha", "mptcp.lia_increase_segments", "mptcp.lia_equilibrium"),
    ns3_type_id="TcpLia",
    ns3_compiled_by="tcpmodels.sim.multipath",
    multipath=True,
    bpf_program="tm_lia",
    validated_by=("tcpmodels.experiments.kernel_coupled_cc", "tcpmodels.experiments.p2"),
    references=("RFC 6356",),
))
