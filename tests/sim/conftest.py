"""Shared fixtures for the ns-3 tests: skip without the ``sim`` extra; one small run reused."""

from __future__ import annotations

import pytest

from tcpmodels.sim import _ns3


def pytest_collection_modifyitems(config, items):
    if _ns3.available():
        return
    skip = pytest.mark.skip(reason="ns-3 is not installed (pip install -e '.[sim]')")
    for item in items:
        if "sim" in item.keywords:
            item.add_marker(skip)
