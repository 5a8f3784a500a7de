"""Unregistering a BPF congestion control while maps of earlier registrations of its name are still being
freed (bpftool answers EINPROGRESS for those): done if the name is gone, an error otherwise. No root needed."""

from __future__ import annotations

import subprocess

import pytest

from tcpmodels.testbed import TestbedError
from tcpmodels.testbed.kernel_cc import loader

STALE = ("Error: can't unload tcp_congestion_ops tm_cubic_x id 224: Operation now in progress\n")


def _fake(monkeypatch, returncode: int, stderr: str, available: list[str]) -> None:
    monkeypatch.setattr(loader, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, returncode, "", stderr))
    monkeypatch.setattr(loader, "available_congestion_controls", lambda: available)


def test_a_map_being_freed_does_not_fail_the_unload(monkeypatch):
    _fake(monkeypatch, 255, STALE, ["reno", "cubic", "bbr"])
    loader._unregister("tm_cubic_x")        # no error: the registration asked for is gone


def test_other_failures_still_fail(monkeypatch):
    _fake(monkeypatch, 255, STALE, ["reno", "cubic", "bbr", "tm_cubic_x"])   # still registered
    with pytest.raises(TestbedError, match="Operation now in progress"):
        loader._unregister("tm_cubic_x")
    _fake(monkeypatch, 255, "Error: can't unload tcp_congestion_ops tm_cubic_x id 9: Permission denied\n", [])
    with pytest.raises(TestbedError, match="Permission denied"):
        loader._unregister("tm_cubic_x")
