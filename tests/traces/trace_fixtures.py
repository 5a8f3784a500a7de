"""Shared fixtures for the trace tests: the committed captures, read once per session."""

from __future__ import annotations

import functools
import json
import shutil
import warnings
from pathlib import Path

import pytest

from tcpmodels.traces import TraceWarning, read_pcap

CAPTURES = Path(__file__).resolve().parents[2] / "data" / "captures"
FIXTURES = ["cubic_bulk.pcap.gz", "reno_bulk.pcap.gz", "mptcp_2path.pcapng.gz", "short_flows_any.pcap.gz"]

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None,
                                  reason="tshark not on PATH (install with `make system-deps` or apt-get install tshark)")


@functools.lru_cache(maxsize=None)
def load(name: str, engine: str = "native"):
    """Packet table of a committed fixture (its expected ARP-only skip warning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return read_pcap(CAPTURES / name, engine=engine)


@functools.lru_cache(maxsize=None)
def provenance(name: str) -> dict:
    return json.loads((CAPTURES / (name.split(".")[0] + ".json")).read_text())
