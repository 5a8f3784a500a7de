"""Fixtures for the testbed tests: the host lock (``testbed_available`` is in ``tests/conftest.py``)."""

from __future__ import annotations

import os

import pytest

from tcpmodels.testbed import missing_privileges


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
