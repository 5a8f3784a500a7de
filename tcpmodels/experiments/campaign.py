"""What every campaign shares: the sample loop, its command-line errors, a testbed with a traffic server.

:func:`run_samples` is the one campaign runner (resume, host lock, testbed
rebuild, progress, durable records); a :class:`KernelGrid` is a kernel campaign's
grid run through it on one testbed session re-tuned per sample; :func:`campaign_errors` turns expected
failures into exit codes; :class:`ServerTestbed` keeps a testbed and a traffic
server up across samples. The records and provenance a campaign writes are
:mod:`tcpmodels.records`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from tcpmodels.datasets import KERNEL_TESTBEDS, REPO_ROOT
from tcpmodels.records import JsonlRecords, git_state
from tcpmodels.testbed import Topology

__all__ = ["KERNEL_TESTBEDS", "kernel_testbed_of", "testbed_label", "ServerTestbed", "campaign_errors", "run_samples", "KernelGrid", "progress_bar", "campaign_parser", "add_run_command", "with_reps"]


@contextmanager
def campaign_errors(name: str, also: tuple[type[Exception], ...] = ()) -> Iterator[None]:
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

    Yields
    ------
    None
        Run the command's body inside the ``with`` block.

    Raises
    ------
    SystemExit
        With status 77, 1 or 130 for the failures above (other exceptions propagate).
    """
    from tcpmodels.testbed import PrivilegeError, TestbedError

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




def kernel_testbed_of(record: dict) -> str:
    """The kernel testbed a sample ran on, from what its record holds.

    Parameters
    ----------
    record : dict
        A kernel sample's record: ``delay_element_cpus`` (the pinned elements' CPUs) and ``rps_cpus``
        (the RPS mask) where the testbed had them.

    Returns
    -------
    str
        One of :data:`KERNEL_TESTBEDS`: ``pinned`` if the record names pinned delay elements, else
        ``steered`` if it has an RPS mask, else ``reordering``.
    """
    if record.get("delay_element_cpus"):
        return "pinned"
    return "steered" if record.get("rps_cpus") else "reordering"


def testbed_label(campaign: str, keep_flow_order: bool, pin_delay_elements: bool = False) -> str:
    """A kernel campaign's ``campaign`` label on a testbed: the samples of two testbeds never share a key.

    Parameters
    ----------
    campaign : str
        The label on the unsteered testbed, e.g. ``"p3_kernel"``.
    keep_flow_order, pin_delay_elements : bool
        The testbed (:class:`tcpmodels.testbed.Testbed`'s options of those names).

    Returns
    -------
    str
        ``campaign``, ``campaign + "_steered"`` or ``campaign + "_pinned"``.

    Raises
    ------
    ValueError
        If ``pin_delay_elements`` is set without ``keep_flow_order``.
    """
    if pin_delay_elements and not keep_flow_order:
        raise ValueError("pin_delay_elements needs keep_flow_order; got keep_flow_order=False")
    return campaign + ("_pinned" if pin_delay_elements else "_steered" if keep_flow_order else "")


class ServerTestbed:
    """A testbed with one traffic server, kept up across the samples of a campaign; a context manager.

    Subclasses implement :meth:`topology` and set ``server_node``, ``port`` and
    ``mptcp``. If the server does not start, the testbed is torn down before the
    error propagates. The server's records are read and dropped as they come (each
    sample reads its own); on exit the server is stopped and the testbed torn down.
    """

    server_node = "s"
    port = 5201
    mptcp = False
    #: :class:`tcpmodels.testbed.Testbed`'s ``keep_flow_order`` (RPS steering against reordering)
    keep_flow_order = False
    #: :class:`tcpmodels.testbed.Testbed`'s ``pin_delay_elements`` (with ``keep_flow_order``)
    pin_delay_elements = False
    tb = None
    server = None

    def topology(self) -> Topology:
        """The :class:`tcpmodels.testbed.Topology` to build.

        Returns
        -------
        tcpmodels.testbed.Topology
            The namespaces, links and routes of the testbed; must contain ``server_node``.

        Raises
        ------
        NotImplementedError
            Always, in this base class: subclasses implement it.
        """
        raise NotImplementedError

    def __enter__(self):
        from tcpmodels.testbed import Testbed
        from tcpmodels.testbed import workload as wl

        self.tb = Testbed(self.topology(), keep_flow_order=self.keep_flow_order,
                          pin_delay_elements=self.pin_delay_elements).__enter__()
        try:
            self.server = wl.start_server(self.tb, self.server_node, port=self.port, mptcp=self.mptcp,
                                          keep_records=False)
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
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
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
        progress : bool
            tqdm bar on stderr.
        lock_timeout_s : float
            Longest wait for the host lock per sample. [s]
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


def campaign_parser(campaign: str, doc: str) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The skeleton of a campaign's command line: ``python -m tcpmodels.experiments.<campaign> <command> ...``.

    Returns the parser (described by the first line of ``doc``, the campaign's
    docstring) and its required subcommands, to which the campaign adds its own.

    Parameters
    ----------
    campaign : str
        Module name under ``tcpmodels.experiments`` (the program name shown in usage).
    doc : str
        The campaign module's docstring; its first line is the description.

    Returns
    -------
    tuple
        ``(argparse.ArgumentParser, subparsers action)``; the subcommand chosen is
        ``args.cmd``.
    """
    parser = argparse.ArgumentParser(prog=f"python -m tcpmodels.experiments.{campaign}",
                                     description=doc.split("\n")[0])
    return parser, parser.add_subparsers(dest="cmd", required=True)


def add_run_command(sub: argparse._SubParsersAction, name: str, help: str, *,
                    reps: bool = False) -> argparse.ArgumentParser:
    """A subcommand that runs or resumes records: ``--records`` (required), ``--limit``, ``--no-progress``
    (and ``--reps`` with ``reps=True``); the campaign adds the rest.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of :func:`campaign_parser`.
    name : str
        Name of the subcommand (e.g. ``"run"``).
    help : str
        One line shown in the campaign's ``--help``.
    reps : bool
        Also add ``--reps N`` (repetitions per configuration).

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser, to add campaign-specific options to.
    """
    p = sub.add_parser(name, help=help)
    p.add_argument("--records", required=True)
    p.add_argument("--limit", type=int)
    if reps:
        p.add_argument("--reps", type=int)
    p.add_argument("--no-progress", action="store_true")
    return p


def with_reps(config: Any, reps: int | None) -> Any:
    """The setting of a run with the ``--reps`` of :func:`add_run_command` applied: ``config`` with ``reps``
    repetitions when the option was given, else ``config`` itself.

    Parameters
    ----------
    config : dataclass
        The campaign's setting (a frozen dataclass with a ``reps`` field).
    reps : int or None
        ``args.reps`` (None or 0: not given).

    Returns
    -------
    dataclass
        ``dataclasses.replace(config, reps=reps)``, or ``config``.
    """
    return replace(config, reps=reps) if reps else config
