"""BBR v1 (Cardwell et al. 2016): rate from the max delivery rate, in flight capped at 2 BDP."""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl, Parameter
from tcpmodels.congestion.registry import register
from tcpmodels.models.constants import BBR_CWND_GAIN

__all__ = ["BBR"]

BBR = register(CongestionControl(
    name="bbr",
    title="BBR v1: paced at the max-filtered delivery rate, cwnd = 2 x BtlBw x min RTT, ProbeRTT every 10 s",
    parameters=(
        Parameter(name="cwnd_gain", default=BBR_CWND_GAIN, unit="-",
                  doc="in-flight cap in estimated BDPs (kernel bbr_cwnd_gain, ns-3 TcpBbr CwndGain)", engines=()),
    ),
    closed_forms=("bbr.ware_loss_based_share", "bbr.ware_bbr_share", "bbr.ware_inflight_cap_packets",
                  "bbr.ware_probe_rtt_time_s", "bbr.bbr_standing_queue_packets"),
    ns3_type_id="TcpBbr",
    kernel_name="bbr",
    validated_by=("tcpmodels.experiments.bbr (campaign)", "tcpmodels.papers.bbr_coexistence (claims, verdicts)",
                  "notebooks/bbr_coexistence.ipynb"),
    references=("N. Cardwell et al., ACM Queue 14(5), 2016", "Ware et al., IMC 2019",
                "Hock, Bless, Zitterbart, ICNP 2017"),
))
