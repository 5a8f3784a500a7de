"""The host-wide lock that keeps timing-sensitive testbed work (campaign samples, kernel tests) apart.

Plain file locking: no root needed, so these run everywhere. The children are separate
processes (what the lock is for); they signal their progress through files, so no test
depends on how fast the machine starts them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tcpmodels.testbed.hostlock import HostLockTimeout, host_lock, queue, queue_dir

_HOLD = """
import sys, time
from tcpmodels.testbed.hostlock import host_lock
with host_lock(path=sys.argv[1], holder="other campaign sample 7"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""

# takes the lock ``n`` times in a row (asks again at once after each release), logging each turn;
# the first turn lasts until the file ``go`` exists, the others ``hold_s``
_TURNS = """
import os, sys, time
from tcpmodels.testbed.hostlock import host_lock
path, label, log, go, n, hold_s = sys.argv[1:7]
for i in range(int(n)):
    with host_lock(path=path, holder=label, poll_s=0.02, timeout_s=60):
        with open(log, "a") as fh:
            fh.write(f"{label}{i}\\n")
        if i == 0 and go != "-":
            while not os.path.exists(go):
                time.sleep(0.01)
        else:
            time.sleep(float(hold_s))
"""


def _hold_in_child(path, seconds):
    child = subprocess.Popen([sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held"
    return child


def _turns(path, label, log, go="-", n=1, hold_s=0.05):
    return subprocess.Popen([sys.executable, "-c", _TURNS, str(path), label, str(log), str(go), str(n), str(hold_s)])


def _wait_for(cond, what, timeout_s=30.0):
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout_s, f"timed out waiting for {what}"
        time.sleep(0.01)


def _finish(*children):
    for c in children:
        assert c.wait(timeout=60) == 0


def test_waiters_are_served_in_arrival_order_and_a_greedy_holder_queues_behind_them(tmp_path):
    """G holds the lock and asks again at once after each release (a campaign between samples);
    W1, W2, W3 arrive one after the other while G holds it. Each gets its turn in arrival
    order before G's second turn: with a plain flock G re-took the lock sample after sample."""
    path, log, go = tmp_path / "host.lock", tmp_path / "log", tmp_path / "go"
    greedy = _turns(path, "G", log, go=go, n=4, hold_s=0.05)
    _wait_for(lambda: log.exists() and log.read_text() == "G0\n", "G's first turn")
    waiters = []
    for i in (1, 2, 3):
        waiters.append(_turns(path, f"W{i}", log))
        _wait_for(lambda n=i + 1: len(queue(path)) == n, f"W{i}'s ticket")
    assert [t["holder"] for t in queue(path)] == ["G", "W1", "W2", "W3"]
    go.touch()
    _finish(greedy, *waiters)
    assert log.read_text().split() == ["G0", "W10", "W20", "W30", "G1", "G2", "G3"]
    assert queue(path) == [] and sorted(p.name for p in queue_dir(path).iterdir()) == ["counter"]


# a holder without a ticket (an older version of host_lock): a plain flock, released and taken again at once
_LEGACY_GREEDY = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
t_end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < t_end:
    time.sleep(0.2)
    fcntl.flock(fd, fcntl.LOCK_UN)
    fcntl.flock(fd, fcntl.LOCK_EX)
"""


def test_a_holder_without_a_ticket_that_retakes_the_lock_at_once_is_overtaken_at_a_release(tmp_path):
    """The waiter at the head waits in a blocking flock, which the kernel wakes at the release: it gets the
    lock at one of the greedy holder's releases (every 0.2 s), not after the holder's 40 s. (Not certain:
    the woken waiter must run before the holder re-takes the lock microseconds later; on a loaded host it
    can lose a few releases in a row. A poll-only waiter timed out after 6 s here.)"""
    path = tmp_path / "host.lock"
    greedy = subprocess.Popen([sys.executable, "-c", _LEGACY_GREEDY, str(path), "40"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert greedy.stdout.readline().strip() == "held"
        with host_lock(path=path, timeout_s=60, poll_s=0.05) as waited_s:
            assert greedy.poll() is None  # taken while the greedy holder still runs
            assert waited_s < 30
    finally:
        greedy.kill()
        greedy.communicate()


@pytest.mark.parametrize("reap", [True, False], ids=["reaped", "zombie"])
def test_a_killed_waiters_ticket_does_not_block(tmp_path, reap):
    """A waiter SIGKILLed while queued (reaped, or still a zombie of its parent) leaves a ticket
    behind; the next waiter skips it, removes it, and gets the lock when the holder is done."""
    path = tmp_path / "host.lock"
    holder = _hold_in_child(path, 1.0)
    victim = _turns(path, "victim", tmp_path / "log")
    _wait_for(lambda: len(queue(path)) == 2, "the victim's ticket")
    victim.kill()
    if reap:
        victim.wait()
    tickets = [p.name for p in queue_dir(path).iterdir() if p.name != "counter"]
    assert len(tickets) == 2  # the victim's ticket is still on disk
    try:
        with host_lock(path=path, timeout_s=20, poll_s=0.02, holder="me") as waited_s:
            assert waited_s < 10
            assert [t["holder"] for t in queue(path)] == ["me"]
            assert json.loads(path.read_text())["holder"] == "me"
    finally:
        victim.wait()
        holder.communicate()
    assert not (tmp_path / "log").exists()  # the victim never got a turn


def test_a_killed_holder_frees_the_lock_and_a_timeout_names_holder_and_since(tmp_path):
    path = tmp_path / "host.lock"
    child = _hold_in_child(path, 30)
    try:
        t0 = time.monotonic()
        with pytest.raises(HostLockTimeout, match=r"host\.lock still held after 0\.5 s by pid \d+ "
                                                  r"'other campaign sample 7' since 20\d\d-\d\d-\d\dT[\d:]+Z \(\d+ s\); "
                                                  r"1 live ticket\(s\) were ahead"):
            with host_lock(path=path, timeout_s=0.5, poll_s=0.05):
                pass
        assert time.monotonic() - t0 >= 0.5
        assert [t["holder"] for t in queue(path)] == ["other campaign sample 7"]  # the timed-out ticket withdrawn
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    # the kernel released the dead holder's flock; its ticket is dead: no stale lock
    with host_lock(path=path, timeout_s=2, holder="me") as waited_s:
        assert waited_s < 1.0
        assert json.loads(path.read_text())["holder"] == "me"
    assert path.read_text() == ""  # holder cleared on release
    assert queue(path) == []


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
    assert queue(path) == []


def test_threads_of_one_process_exclude_each_other(tmp_path):
    """Threads of one process hold separate tickets and separate flocks: never two inside at once."""
    path, inside, overlaps = tmp_path / "host.lock", [], []

    def work():
        for _ in range(3):
            with host_lock(path=path, timeout_s=30, poll_s=0.01):
                inside.append(1)
                overlaps.append(len(inside))
                time.sleep(0.01)
                inside.pop()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [1] * 9


def test_ticket_numbers_never_repeat_when_the_counter_is_lost(tmp_path):
    """A counter file cut short (a crash mid-write) or deleted: numbers continue after the live tickets."""
    path = tmp_path / "host.lock"
    holder = _hold_in_child(path, 30)
    try:
        (queue_dir(path) / "counter").write_text("")
        first = queue(path)[0]["number"]
        with pytest.raises(HostLockTimeout):
            with host_lock(path=path, timeout_s=0.2, poll_s=0.05):
                pass
        assert int((queue_dir(path) / "counter").read_text()) == first + 1
    finally:
        holder.kill()
        holder.communicate()


def test_a_dead_pid_recycled_by_another_process_does_not_keep_a_ticket_alive(tmp_path):
    """A ticket whose pid now belongs to a process started later (pid reuse) is dead."""
    path = tmp_path / "host.lock"
    queue_dir(path).mkdir(parents=True)
    # this process's pid with a start time it does not have
    (queue_dir(path) / f"{1:012d}-{os.getpid()}.json").write_text(
        json.dumps({"pid": os.getpid(), "start_ticks": 1, "holder": "ghost", "since_unix_s": 0}))
    (queue_dir(path) / f"{2:012d}-1.json").write_text("{not json")  # corrupt: dead too
    assert queue(path) == []
    with host_lock(path=path, timeout_s=1) as waited_s:
        assert waited_s < 0.5


@pytest.mark.parametrize("kw, match", [({"timeout_s": 0}, r"timeout_s \[s\]"), ({"poll_s": -1}, r"poll_s \[s\]")])
def test_bad_arguments_are_named(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        with host_lock(path=tmp_path / "x.lock", **kw):
            pass
