"""One host-wide lock for timing-sensitive testbed work (campaign samples, kernel tests), handed out first come, first served.

Campaigns and the real-kernel tests share this host's two cores; two of them
measuring at once distort each other's throughput and RTTs. Each unit of timed
work (one campaign sample, one test) takes :func:`host_lock` around itself, so
units of different campaigns interleave instead of overlapping::

    with host_lock(timeout_s=600, holder="p2 sample 17"):
        ...  # build, measure, tear down

Two mechanisms, one for order and one for exclusion:

- **A ticket queue (FIFO).** A waiter first draws the next number of a counter
  and creates a ticket file ``<number>-<pid>.json`` in the queue folder beside
  the lock (``host.lock.queue/``); it takes the lock only once its ticket is
  the oldest *live* one. A ticket is live while the process that drew it runs
  (its pid exists, is not a zombie and has the start time written in the
  ticket, so a recycled pid does not count); tickets of dead processes are
  removed by whoever sees them. The holder keeps its ticket until it releases,
  so a campaign that releases and asks again between samples queues behind
  everyone already waiting: a plain lock let one campaign re-take it sample
  after sample while another waited 4-8 min per sample, and starved the
  kernel tests of ``make test`` behind campaigns.
- **Exclusion: ``fcntl.flock``** on the lock file itself (``/run/tcpmodels/host.lock``,
  tmpfs, beside the testbed's run state files), taken by the waiter at the head of
  the queue (at once if free; if a process without a ticket holds it, e.g. one
  running an older version of this module, in a blocking ``flock`` that the kernel
  wakes at its release; the woken waiter must run before such a holder takes the
  lock again, which on a loaded host it can fail to do several releases in a row:
  the order is first come, first served only among processes that use this queue).
  The kernel drops it when the holder exits,
  even on SIGKILL, so a crashed campaign never leaves a stale lock, and two
  processes never hold it at once whatever state the queue folder is in.

While held, the lock file names the holder (pid, ``holder`` label, since when);
a waiter that times out says who holds it and since when, and how many live
tickets were ahead of its own.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed._system import TestbedError

__all__ = ["host_lock", "HostLockTimeout", "LOCK_PATH", "queue_dir", "queue"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    lock_path : str or Path, optional
        The lock file; default :data:`LOCK_PATH`.
""")

#: the lock file (override with TCPMODELS_HOST_LOCK, e.g. in tests)
LOCK_PATH = Path(os.environ.get("TCPMODELS_HOST_LOCK", "/run/tcpmodels/host.lock"))

_COUNTER = "counter"


class HostLockTimeout(TestbedError):
    """The host lock stayed held (or queued ahead) by others for longer than the timeout."""


@_PARAMETERS.fill
def queue_dir(lock_path: str | Path | None = None) -> Path:
    """The ticket folder of a lock file: ``<lock file name>.queue`` beside it.

    Parameters
    ----------
    {lock_path}

    Returns
    -------
    Path
        The folder (not created here).
    """
    p = Path(lock_path) if lock_path is not None else LOCK_PATH
    return p.with_name(p.name + ".queue")


def _start_ticks(pid: int) -> int | None:
    """Start time of a running process (clock ticks since boot), None if it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):  # exited, not yet reaped: it will never release anything
        return None
    return int(fields[19])


def _read_ticket(path: Path) -> dict | None:
    try:
        t = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return t if isinstance(t, dict) else None


def _live(ticket: dict | None) -> bool:
    if ticket is None:
        return False
    try:
        return _start_ticks(int(ticket["pid"])) == ticket.get("start_ticks")
    except (KeyError, TypeError, ValueError):
        return False


def _ticket_number(path: Path) -> int | None:
    head = path.name.split("-", 1)[0]
    return int(head) if head.isdigit() and path.suffix == ".json" else None


def _remove_orphan_draft(path: Path) -> None:
    """Delete a ticket draft left by a process killed between writing it and renaming it."""
    pid = path.stem.rsplit("-", 1)[-1]
    if pid.isdigit() and _start_ticks(int(pid)) is None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


@_PARAMETERS.fill
def queue(lock_path: str | Path | None = None, *, remove_dead: bool = True) -> list[dict]:
    """The live tickets of a lock, oldest first (the head holds the lock or is about to).

    Parameters
    ----------
    {lock_path}
    remove_dead : bool
        Delete the tickets of processes that no longer run (and unreadable ones) on the way.

    Returns
    -------
    list of dict
        Per ticket: ``number``, ``pid``, ``start_ticks``, ``holder``, ``since_unix_s`` (when it was
        drawn) [s] and ``path``.
    """
    folder = queue_dir(lock_path)
    try:
        names = list(folder.iterdir())
    except FileNotFoundError:
        return []
    out = []
    for p in names:
        number = _ticket_number(p)
        if number is None:
            if remove_dead and p.name.startswith(".") and p.suffix == ".tmp":
                _remove_orphan_draft(p)
            continue
        t = _read_ticket(p)  # tickets appear whole (os.replace): unreadable means corrupt
        if not _live(t):
            if remove_dead:
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass
            continue
        out.append({**t, "number": number, "path": str(p)})
    return sorted(out, key=lambda t: t["number"])


def _draw_ticket(folder: Path, holder: str) -> Path:
    """Create this process's ticket with the next number (the counter is read and bumped under its own flock)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / _COUNTER, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for microseconds, by ticket drawers only
        raw = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        last = int(raw) if raw.isdigit() else 0
        # a counter lost (or cut short by a crash mid-write) never hands out a number twice
        last = max([last] + [n for n in map(_ticket_number, folder.iterdir()) if n is not None])
        number = last + 1
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(number).encode(), 0)
        pid = os.getpid()
        ticket = folder / f"{number:012d}-{pid}.json"
        body = {"pid": pid, "start_ticks": _start_ticks(pid), "holder": holder, "since_unix_s": time.time()}
        tmp = folder / f".{number:012d}-{pid}.tmp"
        tmp.write_text(json.dumps(body))
        os.replace(tmp, ticket)  # appears complete: a reader never sees half a ticket
        return ticket
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _flock_now(fd: int) -> bool:
    """Take the flock if it is free; False if someone holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return False


def _flock_within(fd: int, timeout_s: float) -> bool:
    """A blocking flock bounded by ``timeout_s``: True once held, False at the timeout.

    The wait runs in a daemon thread (no signal needed, so it works in any thread and beside a
    pytest-timeout alarm). A wait that times out stays blocked in the kernel; the caller closes
    ``fd``, so if that flock succeeds later, the lock belongs to a file nobody holds open any more
    and is released as the call returns.
    """
    if timeout_s <= 0:
        return False
    result: dict = {}

    def take():
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            result["held"] = True
        except OSError as exc:  # pragma: no cover - flock on a regular file does not fail here
            result["error"] = exc

    waiter = threading.Thread(target=take, name="host_lock flock", daemon=True)
    waiter.start()
    waiter.join(timeout_s)
    if waiter.is_alive():
        return False
    if "error" in result:
        raise result["error"]
    return True


def _utc(unix_s) -> str:
    try:
        return datetime.fromtimestamp(float(unix_s), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError, OverflowError):
        return "an unknown time"


def _timeout_error(lock_path: Path, timeout_s: float, ahead: list[dict]) -> HostLockTimeout:
    try:
        current = json.loads(lock_path.read_text() or "null")
    except (OSError, ValueError):
        current = None
    if isinstance(current, dict):
        since = current.get("since_unix_s")
        held_for = f" ({time.time() - float(since):.0f} s)" if isinstance(since, (int, float)) else ""
        who = (f"pid {current.get('pid')} {current.get('holder') or '(no holder label)'!r} "
               f"since {_utc(since)}{held_for}")
    else:
        who = "unknown (no holder recorded)"
    return HostLockTimeout(
        f"host lock {lock_path} still held after {timeout_s:g} s by {who}; {len(ahead)} live ticket(s) "
        f"were ahead of this one in {queue_dir(lock_path)}; wait for those runs to finish, or raise timeout_s"
    )


@contextmanager
def host_lock(*, timeout_s: float = 900.0, holder: str = "", path: str | Path | None = None,
              poll_s: float = 0.1) -> Iterator[float]:
    """Hold the host-wide testbed lock for the duration of the ``with`` block; waiters are served in arrival order.

    Parameters
    ----------
    timeout_s : float
        Longest wait for the lock. [s]
    holder : str
        Written into the ticket and, while held, into the lock file (who holds it, for the error
        message of others).
    path : str or Path, optional
        Lock file; default :data:`LOCK_PATH`. Its tickets live in :func:`queue_dir` of it.
    poll_s : float
        Interval between looks at the queue while waiting. [s]

    Yields
    ------
    float
        Time spent waiting for the lock. [s]

    Raises
    ------
    ValueError
        If ``timeout_s`` or ``poll_s`` is not positive.
    HostLockTimeout
        If the lock is still held or queued ahead by other live processes after ``timeout_s``;
        the message names the lock file, its current holder and since when, and the number of
        live tickets ahead. The ticket is withdrawn.
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout_s [s] must be > 0; got {timeout_s}")
    if not poll_s > 0:
        raise ValueError(f"poll_s [s] must be > 0; got {poll_s}")
    lock_path = Path(path) if path is not None else LOCK_PATH
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    ticket = _draw_ticket(queue_dir(lock_path), holder)
    fd = None
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            live = queue(lock_path)
            mine = [i for i, t in enumerate(live) if t["path"] == str(ticket)]
            if not mine:  # removed by someone (a clean-up of the folder): queue again, at the back
                ticket = _draw_ticket(queue_dir(lock_path), holder)
                continue
            ahead = live[:mine[0]]
            if not ahead:
                if _flock_now(fd):
                    break
                # held by a process without a live ticket (an older version of this module, which
                # takes the lock again at once after each sample): wait in a blocking flock, which the
                # kernel wakes at the release, where a poller would lose every race; nobody queues past
                # the head meanwhile
                if _flock_within(fd, timeout_s - (time.monotonic() - t0)):
                    break
                raise _timeout_error(lock_path, timeout_s, ahead)
            if time.monotonic() - t0 >= timeout_s:
                raise _timeout_error(lock_path, timeout_s, ahead)
            time.sleep(poll_s)
        waited_s = time.monotonic() - t0
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "holder": holder, "since_unix_s": time.time()}).encode(), 0)
        try:
            yield waited_s
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        if fd is not None:
            os.close(fd)
        try:
            ticket.unlink()
        except FileNotFoundError:
            pass
