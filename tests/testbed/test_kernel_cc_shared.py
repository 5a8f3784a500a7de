"""Shared registrations of the tm_* congestion controls: a second holder joins a registration with
the same parameters, the last live holder unregisters it, other parameters fail while a live
process holds it, and a killed holder does not count.

The bookkeeping runs against a fake kernel registry (no root: the register/unregister calls are
replaced, the holders are real processes); the last two tests do it for real with tm_reno and a
second Python process (root and BPF needed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tcpmodels.testbed import kernel_cc
from tcpmodels.testbed._system import TestbedError
from tcpmodels.testbed.kernel_cc import loader

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_kernel(monkeypatch, tmp_path):
    """A registry of names instead of the kernel's; the state directory in tmp_path."""
    registry: list[str] = []
    calls: list[tuple[str, str]] = []

    def register(obj, name):
        registry.append(name)
        calls.append(("register", name))

    def unregister(name):
        registry.remove(name)
        calls.append(("unregister", name))

    monkeypatch.setattr(loader, "CC_STATE_DIR", tmp_path / "kernel_cc")
    monkeypatch.setattr(loader, "_require", lambda need_root=True: None)
    monkeypatch.setattr(loader, "build", lambda name, params=None: tmp_path / f"{name}.bpf.o")
    monkeypatch.setattr(loader, "_register", register)
    monkeypatch.setattr(loader, "_unregister", unregister)
    monkeypatch.setattr(loader, "available_congestion_controls", lambda: list(registry))
    return registry, calls


@pytest.fixture
def other_process():
    procs = []

    def start():
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.kill()
        p.wait()


def test_second_holder_joins_and_last_one_unregisters(fake_kernel, other_process):
    registry, calls = fake_kernel
    other = other_process()
    first = loader.acquire("tm_cubic_x", {"reading": "divide"}, pid=other.pid)
    assert not first["joined"] and registry == ["tm_cubic_x"]
    with kernel_cc.congestion_control("tm_cubic_x", {"reading": "divide"}) as rec:
        assert rec["joined"] and sorted(loader.live_holders("tm_cubic_x")) == sorted([other.pid, os.getpid()])
        # the first holder lets go while this one still uses it: it stays
        assert loader.release("tm_cubic_x", pid=other.pid) is False and registry == ["tm_cubic_x"]
        assert loader.live_holders("tm_cubic_x") == [os.getpid()]
    assert registry == [] and calls == [("register", "tm_cubic_x"), ("unregister", "tm_cubic_x")]


def test_other_parameters_fail_while_a_live_process_holds_it(fake_kernel, other_process):
    registry, _ = fake_kernel
    other = other_process()
    loader.acquire("tm_cubic_x", {"reading": "divide"}, pid=other.pid)
    with pytest.raises(TestbedError, match=rf"held by live process\(es\) \[{other.pid}\].*'reading': 'multiply'"):
        with kernel_cc.congestion_control("tm_cubic_x", {"reading": "multiply"}):
            pass
    assert registry == ["tm_cubic_x"] and loader._read_state("tm_cubic_x")["params"]["reading"] == "divide"
    with pytest.raises(TestbedError, match="not replaced under them"):
        loader.load("tm_cubic_x", {"reading": "multiply"}, owner_pid=os.getpid(), replace=True)


def test_a_registration_from_other_sources_is_not_joined(fake_kernel, other_process, monkeypatch, tmp_path):
    """Same parameters, other code (an older checkout's object): not joined while a live process holds
    it, replaced once none does."""
    registry, calls = fake_kernel
    other = other_process()
    loader.acquire("tm_olia", pid=other.pid)
    monkeypatch.setattr(loader, "build", lambda name, params=None: tmp_path / f"{name}-new.bpf.o")
    with pytest.raises(TestbedError, match=r"held by live process\(es\).*tm_olia-new\.bpf\.o"):
        with kernel_cc.congestion_control("tm_olia"):
            pass
    other.kill()
    other.wait()
    with kernel_cc.congestion_control("tm_olia") as rec:
        assert not rec["joined"] and rec["object"].endswith("tm_olia-new.bpf.o")
    assert registry == [] and calls == [("register", "tm_olia"), ("unregister", "tm_olia"), ("register", "tm_olia"),
                                        ("unregister", "tm_olia")]


def test_a_killed_holder_does_not_count(fake_kernel, other_process):
    registry, calls = fake_kernel
    other = other_process()
    loader.acquire("tm_cubic_x", {"reading": "divide"}, pid=other.pid)
    other.send_signal(signal.SIGKILL)
    other.wait()
    assert loader.live_holders("tm_cubic_x") == []
    # other parameters: the dead holder's registration is replaced
    with kernel_cc.congestion_control("tm_cubic_x", {"reading": "multiply"}) as rec:
        assert not rec["joined"] and rec["params"]["reading"] == "multiply"
    assert registry == []
    # same parameters: joined, and unregistered when this (the only live) holder lets go
    dead = other_process()
    loader.acquire("tm_reno", pid=dead.pid)
    dead.kill()
    dead.wait()
    with kernel_cc.congestion_control("tm_reno") as rec:
        assert rec["joined"] and loader.live_holders("tm_reno") == [os.getpid()]
    assert registry == []


def test_cleanup_removes_only_registrations_without_live_holders(fake_kernel, other_process):
    registry, _ = fake_kernel
    alive, dead = other_process(), other_process()
    loader.acquire("tm_lia", pid=alive.pid)
    loader.acquire("tm_olia", pid=dead.pid)
    loader.load("tm_reno")                       # CLI load: pinned, no holder
    dead.kill()
    dead.wait()
    report = kernel_cc.cleanup()
    assert sorted(report.unregistered) == ["tm_olia", "tm_reno"] and report.skipped_live == ["tm_lia"]
    assert registry == ["tm_lia"]
    assert kernel_cc.cleanup(names=["tm_reno"]).unregistered == [] and registry == ["tm_lia"]
    assert kernel_cc.cleanup(include_live=True).unregistered == ["tm_lia"] and registry == []


def test_a_pinned_cli_load_stays_when_its_holders_end(fake_kernel):
    registry, _ = fake_kernel
    loader.load("tm_reno")
    with kernel_cc.congestion_control("tm_reno") as rec:
        assert rec["joined"]
    assert registry == ["tm_reno"] and kernel_cc.loaded()["tm_reno"]["pinned"]


# ------------------------------------------------------------------ the real kernel
REASON = kernel_cc.unavailable_reason()

HOLDER = """
import sys
from tcpmodels.testbed import kernel_cc
with kernel_cc.congestion_control("tm_reno") as rec:
    print("held", rec["joined"], flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def _end(p: subprocess.Popen) -> None:
    p.kill()
    p.wait(30)
    for f in (p.stdin, p.stdout):
        f.close()


def _holder_process() -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    line = p.stdout.readline()
    assert line.startswith("held"), line
    return p


@pytest.mark.testbed
@pytest.mark.skipif(REASON is not None, reason=f"kernel_cc: {REASON}")
def test_two_processes_share_tm_reno():
    if "tm_reno" in kernel_cc.available_congestion_controls() and kernel_cc.live_holders("tm_reno"):
        pytest.skip("tm_reno is held by another live process")
    child = _holder_process()
    try:
        with kernel_cc.congestion_control("tm_reno") as rec:
            assert rec["joined"] and child.pid in kernel_cc.live_holders("tm_reno")
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.stdout.readline().startswith("released") and child.wait(30) == 0
            assert "tm_reno" in kernel_cc.available_congestion_controls()   # still held by this process
        assert "tm_reno" not in kernel_cc.available_congestion_controls()
    finally:
        _end(child)


@pytest.mark.testbed
@pytest.mark.skipif(REASON is not None, reason=f"kernel_cc: {REASON}")
def test_killed_holder_leaves_a_registration_cleanup_removes():
    if "tm_reno" in kernel_cc.available_congestion_controls() and kernel_cc.live_holders("tm_reno"):
        pytest.skip("tm_reno is held by another live process")
    child = _holder_process()
    child.send_signal(signal.SIGKILL)
    _end(child)
    assert "tm_reno" in kernel_cc.available_congestion_controls() and kernel_cc.live_holders("tm_reno") == []
    report = kernel_cc.cleanup(names=["tm_reno"])     # only this test's name: other runs may be alive
    assert report.unregistered == ["tm_reno"] and "tm_reno" not in kernel_cc.available_congestion_controls()
