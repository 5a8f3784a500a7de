"""The host-wide lock that keeps timing-sensitive testbed work (campaign samples, kernel tests) apart.

Plain file locking: no root needed, so these run everywhere.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tcpmodels.testbed.hostlock import HostLockTimeout, host_lock

_HOLD = """
import sys, time
from tcpmodels.testbed.hostlock import host_lock
with host_lock(path=sys.argv[1], holder="other campaign sample 7"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _hold_in_child(path, seconds):
    child = subprocess.Popen([sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held"
    return child


def test_lock_is_exclusive_between_processes_and_names_the_holder(tmp_path):
    path = tmp_path / "host.lock"
    child = _hold_in_child(path, 30)
    try:
        t0 = time.monotonic()
        with pytest.raises(HostLockTimeout, match=r"host\.lock still held after 0\.5 s by .*other campaign sample 7"):
            with host_lock(path=path, timeout_s=0.5, poll_s=0.05):
                pass
        assert time.monotonic() - t0 >= 0.5
    finally:
        child.kill()
        child.communicate()
    # the kernel released the dead holder's lock: no stale lock
    with host_lock(path=path, timeout_s=2, holder="me") as waited_s:
        assert waited_s < 1.0
        assert json.loads(path.read_text())["holder"] == "me"
    assert path.read_text() == ""  # holder cleared on release


def test_waiter_gets_the_lock_when_the_holder_finishes(tmp_path):
    path = tmp_path / "host.lock"
    child = _hold_in_child(path, 0.6)
    with host_lock(path=path, timeout_s=10, poll_s=0.05) as waited_s:
        assert 0.2 < waited_s < 5
    child.communicate()


def test_lock_is_reentrant_across_sequential_uses_and_released_on_error(tmp_path):
    path = tmp_path / "host.lock"
    with pytest.raises(RuntimeError):
        with host_lock(path=path, timeout_s=1):
            raise RuntimeError("sample failed")
    with host_lock(path=path, timeout_s=1):
        pass


@pytest.mark.parametrize("kw, match", [({"timeout_s": 0}, r"timeout_s \[s\]"), ({"poll_s": -1}, r"poll_s \[s\]")])
def test_bad_arguments_are_named(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        with host_lock(path=tmp_path / "x.lock", **kw):
            pass


_WAIT_BLOCKING = """
import signal, sys, time
from tcpmodels.testbed.hostlock import HostLockTimeout, host_lock
assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # so host_lock takes its blocking (fair) path
t0 = time.monotonic()
try:
    with host_lock(path=sys.argv[1], timeout_s=0.5):
        print("acquired")
except HostLockTimeout as exc:
    print(f"timeout {time.monotonic() - t0:.2f} {exc}")
print("handler restored", signal.getsignal(signal.SIGALRM) == signal.SIG_DFL)
"""


def test_blocking_wait_in_a_main_thread_times_out_and_restores_sigalrm(tmp_path):
    """Outside pytest (no pytest-timeout alarm armed) host_lock waits in a blocking flock under a
    SIGALRM timer; the timeout still names the holder and the previous handler comes back."""
    path = tmp_path / "host.lock"
    child = _hold_in_child(path, 30)
    try:
        out = subprocess.run([sys.executable, "-c", _WAIT_BLOCKING, str(path)], capture_output=True, text=True,
                             timeout=60).stdout
    finally:
        child.kill()
        child.communicate()
    assert "acquired" not in out
    seconds = float(out.split()[1])
    assert 0.45 < seconds < 5 and "other campaign sample 7" in out
    assert "handler restored True" in out
