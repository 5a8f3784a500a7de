"""The one campaign runner: the sample loop, its progress bar and clock, and a kernel campaign's grid.

:func:`run_samples` is the one campaign runner (resume, host lock, testbed
rebuild, progress, durable records); a :class:`KernelGrid` is a kernel campaign's
grid run through it on one testbed session re-tuned per sample. The records and provenance a campaign
writes are :mod:`tcpmodels.records`.

What else every campaign shares has its own module and stays importable from here:
its command line (:func:`campaign_errors`, :func:`campaign_parser`, :func:`add_run_command`,
:func:`with_reps`: :mod:`tcpmodels.experiments.campaign_cli`) and its kernel testbed
(:data:`KERNEL_TESTBEDS`, :func:`kernel_testbed_of`, :func:`testbed_label`, :class:`ServerTestbed`:
:mod:`tcpmodels.experiments.campaign_testbed`).
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets import KERNEL_TESTBEDS, REPO_ROOT
from tcpmodels.experiments.campaign_cli import add_run_command, campaign_errors, campaign_parser, with_reps
from tcpmodels.experiments.campaign_testbed import ServerTestbed, kernel_testbed_of, testbed_label
from tcpmodels.records import JsonlRecords, git_state

__all__ = ["KERNEL_TESTBEDS", "kernel_testbed_of", "testbed_label", "ServerTestbed", "campaign_errors", "run_samples", "KernelGrid", "progress_bar", "campaign_parser", "add_run_command", "with_reps"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
""")


def progress_bar(total: int, initial: int, desc: str, enabled: bool, *, unit: str = "sample") -> tqdm:
    """The campaigns' tqdm bar on stderr (a quiet refresh every 5 s, fixed width for log files).

    Parameters
    ----------
    total : int
        Samples in the whole plan.
    initial : int
        Samples already recorded (the bar starts there).
    desc : str
        Name shown left of the bar (e.g. ``"p3 kernel"``).
    enabled : bool
        False: a disabled bar (updates are no-ops, nothing is printed).
    unit : str
        What one step counts.

    Returns
    -------
    tqdm.tqdm
        The bar; call ``update`` per sample and ``close`` at the end.
    """
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, disable=not enabled, file=sys.stderr,
                mininterval=5.0, dynamic_ncols=False, ncols=100)


@_PARAMETERS.fill
def run_samples(records: JsonlRecords, plan: list[dict], measure: Callable[[dict, Any], dict], *, desc: str,
                session_for: Callable[[dict, Any], Any] | None = None,
                on_host: Callable[[dict], bool] = lambda sample: True,
                finish: Callable[[dict, dict], dict] | None = None,
                limit: int | None = None, progress: bool = True, lock_timeout_s: float = 1800.0,
                lock_path: str | Path | None = None, yield_s: float = 0.5, max_failures: int = 3,
                unit: str = "sample", stop_at_utc: str | None = None) -> int:
    """Run the samples of ``plan`` not yet in ``records``, append one record each; return how many ran.

    The one campaign loop: what is already recorded is skipped (a rerun resumes),
    a sample on the real kernel holds the host lock (:func:`tcpmodels.testbed.hostlock.host_lock`)
    for its measurement only, so campaigns interleave sample by sample; a testbed
    that fails is torn down and rebuilt, up to ``max_failures`` failures in a row;
    every finished sample is appended durably before the next starts.

    Parameters
    ----------
    records : tcpmodels.records.JsonlRecords
        Where the records go; its key fields identify a sample.
    plan : list of dict
        Every sample of the campaign, in run order.
    measure : callable
        ``measure(sample, session) -> dict``: run one sample (``session`` is None
        without ``session_for``); timed as ``wall_s``. A
        :class:`~tcpmodels.testbed.TestbedError` counts as a failure of the testbed.
    desc : str
        Name on the progress bar, the lock and the messages (e.g. ``"p3 kernel"``).
    session_for : callable, optional
        ``session_for(sample, session) -> session``: the open testbed session for
        ``sample`` (a context manager, entered), given the current one or None:
        reuse (e.g. set the delays) or open a new one. Closed at the end.
    on_host : callable
        ``on_host(sample) -> bool``: whether the sample runs on the real kernel
        (takes the host lock); ns-3 samples do not.
    finish : callable, optional
        ``finish(sample, result) -> dict``: work after the lock is released (e.g.
        reading captures); its dict is what the record keeps. Default: ``result``.
    limit : int, optional
        Stop after this many new samples.
    {progress, lock_timeout_s}
    lock_path : path, optional
        Lock file (default: the host's).
    yield_s : float
        Pause after releasing the lock (the lock serves waiters in arrival order, so this is no longer
        needed for fairness; it only spaces samples). [s]
    max_failures : int
        Failed samples in a row after which the error propagates.
    unit : str
        What one step of the progress bar counts (e.g. ``"run"``).
    stop_at_utc : str, optional
        ISO 8601 UTC time (``2026-12-07T11:35``) after which no new sample starts: the sample running then
        finishes and is recorded, so a session stops by the clock at a sample boundary (:func:`parse_utc`).

    Returns
    -------
    int
        Number of samples run and recorded by this call (0 when all were recorded already).

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        At once, without root or namespaces.
    tcpmodels.testbed.TestbedError
        After ``max_failures`` failed samples in a row.
    tcpmodels.testbed.hostlock.HostLockTimeout
        At once, if the host lock is not free within ``lock_timeout_s``.

    Notes
    -----
    Each record is ``{**sample, "load_avg", "load_avg_after", "lock_wait_s", "wall_s",
    "started_utc", **finish(sample, measure(sample, session))}``.
    """
    from tcpmodels.records import Stopwatch, load_average, utc_now
    from tcpmodels.testbed import PrivilegeError, TestbedError
    from tcpmodels.testbed.hostlock import host_lock

    stop_at = None if stop_at_utc is None else parse_utc(stop_at_utc)
    pending = records.pending(plan)
    todo = pending if limit is None else pending[:limit]
    bar = progress_bar(len(plan), len(plan) - len(pending), desc, progress, unit=unit)
    session, failures, n = None, 0, 0

    def close_session():
        nonlocal session
        if session is not None:
            session.__exit__(None, None, None)
            session = None

    try:
        for s in todo:
            if stop_at is not None and datetime.now(timezone.utc) >= stop_at:
                print(f"{desc}: stopped by the clock at {stop_at_utc} UTC after {n} {unit}s", file=sys.stderr)
                break
            locked = on_host(s)
            lock = (host_lock(timeout_s=lock_timeout_s, holder=f"{desc} {s.get('order', '')} pid {os.getpid()}",
                              path=lock_path) if locked else nullcontext(0.0))
            with lock as waited_s:
                watch = Stopwatch()
                started, load = utc_now(), load_average()
                try:
                    if session_for is not None:
                        session = session_for(s, session)
                    res = measure(s, session)
                except PrivilegeError:  # not root: no rebuild can help
                    raise
                except TestbedError as exc:
                    failures += 1
                    print(f"{desc}: sample {s.get('order', '')} failed ({exc}); rebuilding the testbed",
                          file=sys.stderr)
                    close_session()
                    if failures >= max_failures:
                        raise
                    continue
                wall_s = watch.elapsed_s
            failures = 0
            kept = finish(s, res) if finish is not None else res
            records.append({**s, "load_avg": load, "load_avg_after": load_average(),
                            "lock_wait_s": round(waited_s, 3), "wall_s": round(wall_s, 3), "started_utc": started,
                            **kept})
            n += 1
            bar.update(1)
            bar.set_postfix_str(f"last {wall_s:.1f} s, load {load[0]:.1f}")
            if locked and yield_s > 0:
                time.sleep(yield_s)
    finally:
        close_session()
        bar.close()
    return n


def parse_utc(text: str) -> datetime:
    """An ISO 8601 time read as UTC (``2026-12-07T11:35``; an explicit offset is honoured).

    Parameters
    ----------
    text : str
        The time.

    Returns
    -------
    datetime.datetime
        Timezone-aware.

    Raises
    ------
    ValueError
        Naming the text and the expected form.
    """
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"stop time {text!r} is not an ISO 8601 time such as 2026-12-07T11:35 (UTC)") from None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t


@dataclass(frozen=True)
class KernelGrid:
    """A kernel campaign's grid, run sample by sample on one testbed session that each sample re-tunes or
    replaces; called as ``run_kernel_campaign(records_path, config, ...)`` (:meth:`__call__`).

    What the kernel grids of the BBR, P3 and P4 campaigns share is stated here once: the records keyed by
    ``key`` (a rerun resumes), the code at the start (:func:`tcpmodels.records.git_state`) handed to every
    record, the loop of :func:`run_samples`; each campaign gives its plan, session and record.

    Parameters
    ----------
    key : tuple of str
        The fields that identify a sample; samples on file with the same key are skipped.
    plan_of : callable
        ``plan_of(config) -> list of dict``: every sample of the grid, in run order.
    session_for : callable
        ``session_for(config, sample, session) -> session``: the open testbed session for ``sample``, given
        the current one (None at first): re-tuned, or a new one entered (the old one left).
    measure : callable
        ``measure(config, sample, session, git) -> dict``: one sample's record, ``git`` the code at the start.
    desc : str or callable
        The campaign as the progress bar and the host lock name it (``"p3 kernel"``), or ``desc(config) -> str``.
    default_config : object
        The setting when the caller gives none.
    """

    key: tuple[str, ...]
    plan_of: Callable[[Any], list[dict]]
    session_for: Callable[[Any, dict, Any], Any]
    measure: Callable[[Any, dict, Any, dict], dict]
    desc: str | Callable[[Any], str]
    default_config: Any = None

    @_PARAMETERS.fill
    def __call__(self, records_path: str | Path, config: Any = None, *, limit: int | None = None,
                 progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None,
                 yield_s: float = 0.5) -> int:
        """Run (or resume) the grid; return the number of samples measured in this call.

        Parameters
        ----------
        records_path : str or Path
            JSONL file, one line per sample; samples already on file (same ``key``) are skipped.
        config : object, optional
            The campaign's setting (default: ``default_config``).
        limit : int, optional
            Stop after this many new samples (to time a sample; used by tests).
        {progress, lock_timeout_s}
        plan : list of dict, optional
            Samples to run instead of ``plan_of(config)`` (a repeat plan, or a test's).
        yield_s : float
            Pause after releasing the lock (see :func:`run_samples`). [s]

        Returns
        -------
        int
            Samples measured and recorded by this call.

        Raises
        ------
        tcpmodels.testbed.PrivilegeError
            Without root.
        tcpmodels.testbed.TestbedError
            After three failed samples in a row.
        """
        config = self.default_config if config is None else config
        git = git_state(REPO_ROOT)  # the code that runs, in every record
        return run_samples(JsonlRecords(records_path, self.key), self.plan_of(config) if plan is None else plan,
                           lambda sample, session: self.measure(config, sample, session, git),
                           desc=self.desc(config) if callable(self.desc) else self.desc,
                           session_for=lambda sample, session: self.session_for(config, sample, session),
                           limit=limit, progress=progress, lock_timeout_s=lock_timeout_s, yield_s=yield_s)
