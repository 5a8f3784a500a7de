"""Scenario configurations for the ns-3 layer: frozen dataclasses, JSON round trip.

Nothing here imports ns-3: configs are built, hashed, cached and sent to worker
processes without the simulator. :mod:`tcpmodels.sim.run` turns a config into
an ns-3 simulation in a fresh process.

All quantities are SI with the unit in the name (``rate_bps`` [bit/s],
``delay_s`` [s], ``size_bytes`` [bytes]).

Topologies
----------
:class:`Dumbbell`
    One sender node per :class:`Sender` (its own access link, congestion control
    and applications), two routers joined by the shared bottleneck, one receiver.
:class:`Caterpillar`
    The P5 topology: a chain of gateways G1..Gn, the server behind G1, clients
    spread over the articulation gateways; downstream bottleneck G1 -> G2.
:class:`Multipath`
    One sender and one receiver joined by k disjoint paths, each with its own
    bottleneck; :class:`MultipathFlow` connections open one TCP subflow per
    listed path (coupled by RFC 6356 LIA, see :mod:`tcpmodels.sim.multipath`).
:class:`FatTree`
    P1's k=4 fat-tree (16 hosts, 4 cores) with the kernel testbed's addressing:
    one address per host and core, static routes pinning plane c to core c;
    :class:`FatTreeConnection` is single-path TCP on a per-flow ECMP plane or
    one subflow per listed core (LIA-coupled or not). Built by
    :mod:`tcpmodels.sim.fattree`.

References
----------
.. [1] ns-3 Model Library, "TCP models in ns-3" and "Point-to-point NetDevice",
   https://www.nsnam.org/docs/models/html/
"""

from tcpmodels.sim.config.base import TCP_VARIANTS
from tcpmodels.sim.config.fattree import FAT_TREE_HOPS, FAT_TREE_RTT_S, FatTree, FatTreeConnection, fat_tree_link
from tcpmodels.sim.config.parts import BulkApp, Link, PoissonFlows, Sender, SizeDistribution, TcpOptions
from tcpmodels.sim.config.serial import config_from_dict, config_hash, config_to_dict, config_to_json
from tcpmodels.sim.config.topologies import Caterpillar, Dumbbell, Multipath, MultipathFlow

__all__ = [
    "Link",
    "TcpOptions",
    "BulkApp",
    "SizeDistribution",
    "PoissonFlows",
    "Sender",
    "Dumbbell",
    "Caterpillar",
    "MultipathFlow",
    "Multipath",
    "FatTreeConnection",
    "FatTree",
    "fat_tree_link",
    "FAT_TREE_RTT_S",
    "FAT_TREE_HOPS",
    "config_to_dict",
    "config_from_dict",
    "config_to_json",
    "config_hash",
    "TCP_VARIANTS",
]
