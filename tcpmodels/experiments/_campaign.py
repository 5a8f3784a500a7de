"""Shared campaign plumbing: resumable JSONL records, provenance, host facts.

A campaign is a list of samples, each with a stable key. Records are appended to
a JSONL file one line per finished sample (written, flushed and fsynced before
the next sample starts), so a crash or a kill loses at most the sample in
progress and a rerun skips every key already on file.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["JsonlRecords", "ServerTestbed", "load_average", "git_state", "utc_now", "host_facts", "campaign_errors"]


def utc_now() -> str:
    """Current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages of the host. [runnable tasks]"""
    return [round(x, 2) for x in os.getloadavg()]


def git_state(repo: str | Path) -> dict:
    """Commit and whether the working tree differs from it (``None`` outside a git checkout)."""
    def _git(*args):
        try:
            proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def host_facts() -> dict:
    """Host name, kernel, CPU count and Python of the machine running the campaign."""
    return {"hostname": socket.gethostname(), "kernel": platform.release(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version()}


class JsonlRecords:
    """Append-only JSONL file of records keyed by ``key_fields``.

    Parameters
    ----------
    path : str or Path
        The file; created (with parents) on the first append.
    key_fields : tuple of str
        Fields whose values identify a sample (e.g. ``("kind", "rep", "rtt1_ms", "rtt2_ms")``).

    Notes
    -----
    A torn last line (the process killed mid-write) is ignored on reading and
    its sample counts as not done.
    """

    def __init__(self, path: str | Path, key_fields: tuple[str, ...]):
        self.path = Path(path)
        self.key_fields = tuple(key_fields)

    def key(self, record: dict) -> tuple:
        """The key of ``record``; ``KeyError`` naming the missing field."""
        missing = [k for k in self.key_fields if k not in record]
        if missing:
            raise KeyError(f"record lacks key field(s) {missing}")
        return tuple(record[k] for k in self.key_fields)

    def read(self) -> list[dict]:
        """Every complete record on file, in file order."""
        if not self.path.exists():
            return []
        out = []
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue  # torn last line of a killed run
        return out

    def done_keys(self) -> set[tuple]:
        """Keys of the samples already recorded."""
        return {self.key(r) for r in self.read() if all(k in r for k in self.key_fields)}

    def pending(self, plan: list[dict]) -> list[dict]:
        """The samples of ``plan`` not recorded yet, in plan order (what a resumed campaign still has to run)."""
        done = self.done_keys()
        return [s for s in plan if self.key(s) not in done]

    def append(self, record: dict) -> None:
        """Append one record durably (flush + fsync)."""
        self.key(record)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(record, separators=(",", ":"), sort_keys=False) + "\n"
        # a torn previous line would swallow this one: start on a fresh line
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    text = "\n" + text
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())


class Stopwatch:
    """Monotonic wall-clock timer. [s]"""

    def __init__(self):
        self.t0 = time.monotonic()

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.t0


@contextmanager
def campaign_errors(name: str, also: tuple[type[Exception], ...] = ()):
    """Turn a campaign command's expected failures into one line on stderr and an exit code.

    For the ``main()`` of every campaign module: what a user can cause or fix
    reads as a sentence, never as a traceback, and a script can tell the cases
    apart by the exit status (raised as :class:`SystemExit`).

    ====================================================  ====
    no root / no namespaces (:class:`PrivilegeError`)      77 (the "skipped" status of automake and pytest plugins)
    :class:`TestbedError`, :class:`ValueError`, ``also``   1
    Ctrl-C (the records on disk stay valid: rerun resumes) 130
    ====================================================  ====

    Parameters
    ----------
    name : str
        Prefix of the message, e.g. ``"p3"``.
    also : tuple of exception types
        Further expected failures of this command (exit status 1).
    """
    from tcpmodels.testbed._system import PrivilegeError, TestbedError

    try:
        yield
    except PrivilegeError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(77) from None
    except (TestbedError, ValueError, *also) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"{name}: interrupted; rerun the same command to resume", file=sys.stderr)
        raise SystemExit(130) from None


class ServerTestbed:
    """A testbed with one traffic server, kept up across the samples of a campaign; a context manager.

    Subclasses implement :meth:`topology` and set ``server_node``, ``port`` and
    ``mptcp``; :meth:`on_server_started` runs once the server is up. If the
    server does not start, the testbed is torn down before the error propagates.
    On exit the server is stopped (its records are not kept: each sample reads
    its own) and the testbed torn down.
    """

    server_node = "s"
    port = 5201
    mptcp = False
    tb = None
    server = None

    def topology(self):
        """The :class:`tcpmodels.testbed.Topology` to build."""
        raise NotImplementedError

    def on_server_started(self) -> None:
        """Hook after the server is up (e.g. a thread draining its output)."""

    def __enter__(self):
        from tcpmodels.testbed import Testbed
        from tcpmodels.testbed import workload as wl

        self.tb = Testbed(self.topology()).__enter__()
        try:
            self.server = wl.start_server(self.tb, self.server_node, port=self.port, mptcp=self.mptcp)
            self.on_server_started()
        except BaseException:
            self.tb.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.server is not None:
                self.server.stop()
        except Exception:  # noqa: BLE001 - the testbed teardown kills it anyway
            pass
        self.tb.__exit__(*exc)
