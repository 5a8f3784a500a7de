"""ns-3 scenarios (optional extra ``sim``): dumbbell, the P5 caterpillar, coupled multipath and the P1 fat-tree, measured into pandas.

Importing this package does not import ns-3: configs (:mod:`tcpmodels.sim.config`)
are plain dataclasses, and :func:`run_config` simulates one in a fresh Python
process (``python -m tcpmodels.sim.run CONFIG.json OUT_DIR``), because ns-3 keeps
one global simulator per process and cppyy cannot unload compiled code. Run many
configs with :func:`tcpmodels.sweep.sweep` and :func:`tcpmodels.sweep.run_sim`.

Multipath (RFC 6356 LIA)
------------------------
ns-3 has no MPTCP. :class:`Multipath` joins one sender and one receiver by k
disjoint paths; each :class:`MultipathFlow` is k ordinary ns-3 TCP subflows
(one per listed path) fed from one shared byte count, with windows coupled by
``ns3::TcpLia`` (RFC 6356 LIA, compiled at run time; exactly ``TcpLinuxReno``
with one subflow) or left uncoupled. Subflows after the first start when the
first one's handshake completes (MP_JOIN); a finite transfer completes when
the subflows' sinks together received every byte. Not modeled, as in htsim:
connection-level reordering and head-of-line blocking, receive-buffer
coupling, reinjection, MPTCP options (DSS) in the headers. Details in
:mod:`tcpmodels.sim.multipath`.

Configuration choices that differ from ns-3's defaults, and why
----------------------------------------------------------------
- The traffic-control layer's ``pfifo_fast`` (1000 packets) is removed from every
  link, so the configured drop-tail queue is the only queue.
- ``ConnTimeout`` (SYN retransmission) is 1 s as in Linux, not ns-3's 3 s.
- Socket buffers default to 4 MiB, not ns-3's 128 KiB, which caps a window at
  about 90 segments.
- Loss recovery is ``TcpPrrRecovery`` (as in Linux).

Known artifact: RTO lock-out
----------------------------
With ns-3's default of one ACK per two segments (``DelAckCount = 2``), a flow
that takes an RTO while a drop-tail queue is full can stay at cwnd = 1 segment
for the rest of the run: its cwnd trace shows CA_LOSS -> CA_OPEN about one RTT
after each RTO, no window growth and no transmission afterwards, and the next
RTO 200 ms (MinRto) later. Reproduced on this machine (TcpLinuxReno against
TcpCubic or TcpLinuxReno, SACK on, 4 MiB buffers), throughput of the locked
flow over the run after 2 s:

=====================================  ===============  ===================
scenario                               DelAckCount 2    DelAckCount 1
=====================================  ===============  ===================
10 Mbit/s, 50-packet queue, 24 ms      0.04 Mbit/s      7.7 and 1.9 Mbit/s,
(PRR; classic recovery locks the       (36 RTOs in 8 s)  no RTO cycle
other flow instead, 30 RTOs)
100 Mbit/s, 1000 packets, 20 ms        0.0-0.5 (classic) 7-12 Mbit/s, growing
50 Mbit/s, 1000 packets, 20 ms         0.2-0.3 (either)  0.9-1.7, growing
=====================================  ===============  ===================

SACK off did not help (both flows collapsed to 2 and 1.7 Mbit/s on the
10 Mbit/s link), PRR helped only at 100 Mbit/s, a 100-packet queue helped at
100 Mbit/s. So the default here is ``delayed_ack_count=1`` (``b = 1``; Linux
acknowledges every segment in quick-ACK mode and about every second one
otherwise). The cause inside ns-3 was not found (the wheel has no NS_LOG).
Check every new scenario's ``cwnd`` table (``trace_cwnd=True``) for
repeated CA_LOSS before trusting its numbers; ``tests/sim/test_lockout.py``
guards the default.

Known artifact: drop-tail phase locking
---------------------------------------
With exact delays, flows with fixed RTTs through a full drop-tail queue are
phase locked: which flow loses at each overflow depends on timing to a fraction
of a packet, not on windows (Floyd and Jacobson, 1992). Measured against the
kernel (:mod:`tcpmodels.experiments.sim_vs_kernel`, 50 Mbit/s, Reno x 3 at
10/20/40 ms): exact delays gave 11.3 / 32.0 / 5.0 Mbit/s, the kernel 24.5 /
11.8 / 11.5; moving one RTT by 0.12 ms handed the lead to another flow.
``Link(jitter_s=...)`` (:mod:`tcpmodels.sim.jitter`) adds a uniform,
order-preserving extra delay per packet; one bottleneck packet time on the
access links brings both that case and Reno/CUBIC/Reno within 0.08 of the
kernel's shares. The default stays 0 because the shipped P1, P3 and P5 ns-3
datasets were made without it: multi-flow results from them carry this caveat,
and new scenarios with competing flows should set it.
"""

from tcpmodels.sim._ns3 import MissingNs3Error, available, ns3_version
from tcpmodels.sim.config import (
    TCP_VARIANTS,
    BulkApp,
    Caterpillar,
    Dumbbell,
    FatTree,
    FatTreeConnection,
    Link,
    Multipath,
    MultipathFlow,
    PoissonFlows,
    Sender,
    SizeDistribution,
    TcpOptions,
    config_from_dict,
    config_hash,
    config_to_dict,
    config_to_json,
)
from tcpmodels.sim.run import SimResult, SimulationError, load_result, run_config

__all__ = [
    "TCP_VARIANTS",
    "BulkApp",
    "Caterpillar",
    "Dumbbell",
    "FatTree",
    "FatTreeConnection",
    "Link",
    "Multipath",
    "MultipathFlow",
    "PoissonFlows",
    "Sender",
    "SizeDistribution",
    "TcpOptions",
    "config_from_dict",
    "config_hash",
    "config_to_dict",
    "config_to_json",
    "SimResult",
    "SimulationError",
    "load_result",
    "run_config",
    "MissingNs3Error",
    "available",
    "ns3_version",
]
