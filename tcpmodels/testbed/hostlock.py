"""One host-wide lock for timing-sensitive testbed work (campaign samples, kernel tests).

Campaigns and the real-kernel tests share this host's two cores; two of them
measuring at once distort each other's throughput and RTTs. Each unit of timed
work (one campaign sample, one test) takes :func:`host_lock` around itself, so
units of different campaigns interleave instead of overlapping::

    with host_lock(timeout_s=600, holder="p2 sample 17"):
        ...  # build, measure, tear down

The lock is ``fcntl.flock`` on ``/run/tcpmodels/host.lock`` (tmpfs, beside the
testbed's run state files): the kernel drops it when the holder exits, even on
SIGKILL, so a crashed campaign never leaves a stale lock.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tcpmodels.testbed._system import TestbedError

__all__ = ["host_lock", "HostLockTimeout", "LOCK_PATH"]

#: the lock file (override with TCPMODELS_HOST_LOCK, e.g. in tests)
LOCK_PATH = Path(os.environ.get("TCPMODELS_HOST_LOCK", "/run/tcpmodels/host.lock"))


class HostLockTimeout(TestbedError):
    """The host lock stayed held by someone else for longer than the timeout."""


def _timeout_error(lock_path: Path, timeout_s: float) -> HostLockTimeout:
    try:
        current = lock_path.read_text().strip() or "unknown"
    except OSError:
        current = "unknown"
    return HostLockTimeout(
        f"host lock {lock_path} still held after {timeout_s:g} s by {current}; "
        "wait for that run to finish, or raise timeout_s"
    )


def _wait_blocking(fd: int, timeout_s: float, lock_path: Path) -> None:
    """A blocking flock bounded by a SIGALRM timer (main thread only).

    Fair between campaigns: the kernel hands the lock to a process blocked in
    ``flock`` at the moment it is released, whereas a poller loses every race
    against a holder that releases and re-takes it between samples.
    """
    def _expired(signum, frame):
        raise _timeout_error(lock_path, timeout_s)

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _wait_polling(fd: int, timeout_s: float, poll_s: float, lock_path: Path) -> None:
    """Poll with ``LOCK_NB`` (where SIGALRM is not ours to use: other threads, or a timer already armed)."""
    t0 = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() - t0 >= timeout_s:
            raise _timeout_error(lock_path, timeout_s)
        time.sleep(poll_s)


@contextmanager
def host_lock(*, timeout_s: float = 900.0, holder: str = "", path: str | Path | None = None,
              poll_s: float = 0.2) -> Iterator[float]:
    """Hold the host-wide testbed lock for the duration of the ``with`` block.

    Parameters
    ----------
    timeout_s : float
        Longest wait for the lock. [s]
    holder : str
        Written into the lock file while held (who holds it, for the error message of others).
    path : str or Path, optional
        Lock file; default :data:`LOCK_PATH`.
    poll_s : float
        Interval between attempts while waiting. [s]

    Yields
    ------
    float
        Time spent waiting for the lock. [s]

    Raises
    ------
    ValueError
        If ``timeout_s`` or ``poll_s`` is not positive.
    HostLockTimeout
        If the lock is still held by another process after ``timeout_s``; the message
        names the lock file and its current holder.
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout_s [s] must be > 0; got {timeout_s}")
    if not poll_s > 0:
        raise ValueError(f"poll_s [s] must be > 0; got {poll_s}")
    lock_path = Path(path) if path is not None else LOCK_PATH
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    t0 = time.monotonic()
    try:
        # SIGALRM is free only in the main thread with no timer armed (pytest-timeout, say, arms one)
        if threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] == 0:
            _wait_blocking(fd, timeout_s, lock_path)
        else:
            _wait_polling(fd, timeout_s, poll_s, lock_path)
        waited_s = time.monotonic() - t0
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "holder": holder, "since_unix_s": time.time()}).encode(), 0)
        try:
            yield waited_s
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
