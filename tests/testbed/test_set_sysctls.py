"""Testbed.set_sysctls changes a namespaced sysctl of a running testbed and reads it back."""

from __future__ import annotations

import pytest

from tcpmodels.testbed import PathSpec, Testbed, single_link

pytestmark = [pytest.mark.testbed, pytest.mark.usefixtures("testbed_available")]


def test_set_sysctls_in_one_namespace_only():
    with Testbed(single_link(PathSpec())) as tb:
        before_c = tb.exec("c", ["sysctl", "-n", "net.ipv4.tcp_rmem"]).stdout.split()
        got = tb.set_sysctls("s", [("net.ipv4.tcp_rmem", "4096 65536 262144")])
        assert got == {"net.ipv4.tcp_rmem": "4096 65536 262144"}
        assert tb.exec("s", ["sysctl", "-n", "net.ipv4.tcp_rmem"]).stdout.split() == ["4096", "65536", "262144"]
        assert tb.exec("c", ["sysctl", "-n", "net.ipv4.tcp_rmem"]).stdout.split() == before_c  # per namespace
        assert ("net.ipv4.tcp_rmem", "4096 65536 262144") in tb.topology.node("s").sysctls
        with pytest.raises(ValueError, match="under net"):
            tb.set_sysctls("s", [("kernel.pid_max", "4096")])
        with pytest.raises(ValueError, match="no node"):
            tb.set_sysctls("x", [("net.ipv4.tcp_rmem", "4096 65536 262144")])
