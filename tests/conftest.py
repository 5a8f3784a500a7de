"""Shared test configuration: a deterministic hypothesis profile, a headless matplotlib, and the
``testbed_available`` fixture that skips real-kernel tests (with the reason) where they cannot run."""

import os
import shutil
import subprocess

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

try:
    from hypothesis import settings

    settings.register_profile("tcpmodels", derandomize=True, deadline=None, max_examples=60)
    settings.load_profile("tcpmodels")
except ImportError:  # hypothesis is in the `test` extra
    pass


def _testbed_unavailable() -> str | None:
    """None if the real-kernel testbed can run here (root, namespaces, tools), else why not."""
    from tcpmodels.testbed import missing_privileges

    missing = missing_privileges()
    if missing:
        return "needs root: " + "; ".join(missing)
    probe = f"tmprobe{os.getpid()}"  # not of the testbed's tm<6 hex>- pattern, so no cleanup touches it
    proc = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"network namespaces unavailable: {proc.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    for tool in ("tc", "ethtool", "tcpdump"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make system-deps)"
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        return "a C compiler (cc) is needed for the delay element (make system-deps)"
    return None


_TESTBED_REASON: str | None = None


@pytest.fixture(scope="session")
def testbed_available():
    """Skip the test with the reason when the real-kernel testbed cannot run here."""
    global _TESTBED_REASON
    if _TESTBED_REASON is None:
        _TESTBED_REASON = _testbed_unavailable() or ""
    if _TESTBED_REASON:
        pytest.skip(f"testbed: {_TESTBED_REASON}")
