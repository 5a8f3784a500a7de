"""Real-kernel testbed: Linux network namespaces running the kernel's own TCP and MPTCP.

Build a :class:`Topology` (or take one from :mod:`tcpmodels.testbed.topologies`),
enter a :class:`Testbed` (namespaces, veth links, ``tbf``/``htb`` rate limiters,
drop-tail buffers, a compiled userspace delay element standing in for ``netem``),
drive traffic with :mod:`tcpmodels.testbed.traffic`, capture with
:mod:`tcpmodels.testbed.capture`, or run a whole TOML config with :func:`run_config`.
Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_NET_RAW); refuses before any side effect otherwise.
"""

from tcpmodels.testbed._system import PrivilegeError, TestbedError, missing_privileges, tool_versions
from tcpmodels.testbed.netns import Testbed, cleanup
from tcpmodels.testbed.topologies import PathSpec, dumbbell, fat_tree, single_link, two_path
from tcpmodels.testbed.topology import Link, MptcpEndpoint, Node, Route, Rule, Topology

__all__ = [
    "PrivilegeError", "TestbedError", "missing_privileges", "tool_versions", "Testbed", "cleanup",
    "PathSpec", "single_link", "two_path", "dumbbell", "fat_tree",
    "Link", "MptcpEndpoint", "Node", "Route", "Rule", "Topology",
]
