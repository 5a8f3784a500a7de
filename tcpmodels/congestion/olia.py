"""OLIA (Khalili et al. 2013): the opportunistic linked increase of MPTCP subflows."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl
from tcpmodels.congestion.registry import register

__all__ = ["OLIA"]

#: No closed form in models/ yet, and no ns-3 class: the increase is checked only against its
#: own arithmetic run from Python (tcpmodels.testbed.kernel_cc.arithmetic.olia_increase_segments).
OLIA = register(CongestionControl(
    name="olia",
    title="OLIA: Pareto-optimal coupled increase (Khalili, Gast, Popovic, Le Boudec)",
    multipath=True,
    bpf_program="tm_olia",
    validated_by=("tcpmodels.experiments.kernel_coupled_cc (olia_incr: in-kernel increase vs its arithmetic)",),
    references=("R. Khalili et al., IEEE/ACM ToN 21(5), 2013", "RFC 6356 (the coupling it replaces)"),
))
