"""Fixtures for the testbed tests: skip cleanly where namespaces or root are unavailable."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tcpmodels.testbed import missing_privileges


def _namespaces_work() -> str | None:
    """None if a network namespace can be made and removed here, else why not."""
    missing = missing_privileges()
    if missing:
        return "needs root: " + "; ".join(missing)
    probe = f"tmprobe{os.getpid()}"  # not of the testbed's tm<6 hex>- pattern, so no cleanup touches it
    proc = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"network namespaces unavailable: {proc.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    for tool in ("ethtool", "cc"):
        if shutil.which(tool) is None and not (tool == "cc" and shutil.which("gcc")):
            return f"{tool} is not installed (make system-deps)"
    return None


_REASON = None


@pytest.fixture(scope="session")
def testbed_available():
    """Skip the test with the reason when the real-kernel testbed cannot run here."""
    global _REASON
    if _REASON is None:
        _REASON = _namespaces_work() or ""
    if _REASON:
        pytest.skip(f"testbed: {_REASON}")


@pytest.fixture(autouse=True)
def _hold_host_lock(request):
    """Real-kernel tests take the host lock so that they never overlap a campaign's timed
    sample (campaigns take it per sample; see :mod:`tcpmodels.testbed.hostlock`)."""
    if request.node.get_closest_marker("testbed") is None or request.module.__name__.endswith("test_hostlock"):
        yield
        return
    if missing_privileges():
        yield  # the test skips itself with the reason; no lock needed
        return
    from tcpmodels.testbed.hostlock import host_lock

    with host_lock(timeout_s=900, holder=f"pytest {request.node.nodeid} pid {os.getpid()}"):
        yield
