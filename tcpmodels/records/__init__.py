"""Campaign records and provenance: resumable JSONL records, host facts, git state, timestamps.

A campaign is a list of samples, each with a stable key. Records are appended to
a JSONL file one line per finished sample (written, flushed and fsynced before
the next sample starts), so a crash or a kill loses at most the sample in
progress and a rerun skips every key already on file. The dataset builders
(:mod:`tcpmodels.experiments`, :mod:`tcpmodels.fit.dataset`) read them back and
record where and how the data were made with :func:`host_facts`,
:func:`git_state`, :func:`load_average` and :func:`utc_now`.

Standard library only: a low layer that every campaign and dataset builder may use.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Iterator

from tcpmodels._docstrings import SharedEntries

__all__ = ["JsonlRecords", "Stopwatch", "gzip_reproducibly", "reproducible_gzip_writer", "records_git_summary", "load_average", "git_state", "utc_now", "host_facts", "DirtyTreeError",
           "shipped_git_state"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    dst : str or Path
        Where the ``.gz`` goes (overwritten).
""")


def utc_now() -> str:
    """Current UTC time, ISO 8601 to the second.

    Returns
    -------
    str
        E.g. ``"2026-11-24T19:57:46+00:00"``.
    """
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages of the host. [runnable tasks]

    Returns
    -------
    list of float
        The three averages, rounded to two decimals. [runnable tasks]
    """
    return [round(x, 2) for x in os.getloadavg()]


def git_state(repo: str | Path) -> dict:
    """Commit and whether the working tree differs from it (``None`` outside a git checkout).

    Parameters
    ----------
    repo : str or Path
        A directory inside the git checkout.

    Returns
    -------
    dict
        ``{"commit": str or None, "dirty": bool or None}``; ``dirty`` ignores untracked
        files. Both are ``None`` where git is missing, times out (20 s) or fails.
    """
    def _git(*args):
        try:
            proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


class DirtyTreeError(ValueError):
    """A shipped dataset was about to be written from a working tree that differs from its commit."""


def shipped_git_state(repo: str | Path, out_dir: str | Path, *, allow_dirty: bool = False) -> dict:
    """The git state for a dataset's provenance; refuse a shipped dataset from a dirty tree.

    A dataset is *shipped* when ``out_dir`` lies inside ``repo/data`` (what the
    repository commits). Its provenance must name the commit that made it, so a
    working tree with uncommitted changes to tracked files is refused unless
    ``allow_dirty`` (the provenance then says so). Call before writing anything.

    Parameters
    ----------
    repo : str or Path
        The repository (its ``data`` folder holds the shipped datasets).
    out_dir : str or Path
        Where the dataset is about to be written.
    allow_dirty : bool
        Write even from a dirty tree (``--allow-dirty`` of the campaigns' ``dataset`` commands).

    Returns
    -------
    dict
        :func:`git_state` (``commit``, ``dirty``) with ``shipped`` (bool) and ``allow_dirty`` (bool).

    Raises
    ------
    DirtyTreeError
        For a shipped dataset from a dirty tree without ``allow_dirty``.
    """
    state = git_state(repo)
    try:
        shipped = Path(out_dir).resolve().is_relative_to((Path(repo) / "data").resolve())
    except OSError:
        shipped = False
    if shipped and state["dirty"] and not allow_dirty:
        raise DirtyTreeError(f"the working tree of {repo} has uncommitted changes (commit {state['commit']}): a "
                             f"shipped dataset in {out_dir} must come from a committed tree; commit first, or pass "
                             "--allow-dirty (the provenance then says so)")
    return {**state, "shipped": shipped, "allow_dirty": bool(allow_dirty)}


def records_git_summary(recs: list[dict]) -> dict:
    """Which code ran a campaign's records: ``records_git`` (each distinct ``"<commit> (dirty <bool>)"``,
    sorted) and ``records_without_git`` (records written before records carried their commit).

    Parameters
    ----------
    recs : list of dict
        Campaign records, each with an optional ``git`` (:func:`git_state`).

    Returns
    -------
    dict
        ``records_git`` (list of str) and ``records_without_git`` (int).
    """
    with_git = [r["git"] for r in recs if r.get("git")]
    return {"records_git": sorted({f"{g.get('commit')} (dirty {g.get('dirty')})" for g in with_git}),
            "records_without_git": len(recs) - len(with_git)}


def host_facts() -> dict:
    """Host name, kernel, CPU count and Python of the machine running the campaign.

    Returns
    -------
    dict
        ``hostname``, ``kernel`` (release), ``machine`` (architecture), ``cpus`` and
        ``python`` (version string).
    """
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

    Attributes
    ----------
    lines_skipped : int
        Unparsable (torn) lines the last :meth:`read` passed over (0 before any read).

    Notes
    -----
    A torn line (the process killed mid-write; a later append starts on a fresh line, so it can stand
    mid-file after a resume) is skipped on reading, counted in :attr:`lines_skipped`, and its sample
    counts as not done.
    """

    def __init__(self, path: str | Path, key_fields: tuple[str, ...]):
        self.path = Path(path)
        self.key_fields = tuple(key_fields)
        self.lines_skipped = 0

    def key(self, record: dict) -> tuple:
        """The key of ``record``; ``KeyError`` naming the missing field.

        Parameters
        ----------
        record : dict
            A record holding (at least) the key fields.

        Returns
        -------
        tuple
            The values of ``key_fields``, in that order.

        Raises
        ------
        KeyError
            If ``record`` lacks a key field.
        """
        missing = [k for k in self.key_fields if k not in record]
        if missing:
            raise KeyError(f"record lacks key field(s) {missing}")
        return tuple(record[k] for k in self.key_fields)

    def read(self) -> list[dict]:
        """Every complete record on file, in file order.

        Returns
        -------
        list of dict
            The parsed records; empty if the file does not exist. Blank lines are skipped, unparsable
            (torn) ones too, counted in :attr:`lines_skipped`.
        """
        self.lines_skipped = 0
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
                except ValueError:  # torn by a killed run
                    self.lines_skipped += 1
        return out

    def done_keys(self) -> set[tuple]:
        """Keys of the samples already recorded.

        Returns
        -------
        set of tuple
            The keys of the records on file that hold every key field.
        """
        return {self.key(r) for r in self.read() if all(k in r for k in self.key_fields)}

    def pending(self, plan: list[dict]) -> list[dict]:
        """The samples of ``plan`` not recorded yet, in plan order (what a resumed campaign still has to run).

        Parameters
        ----------
        plan : list of dict
            Every sample of the campaign, each holding the key fields.

        Returns
        -------
        list of dict
            The samples of ``plan`` whose key is not on file.

        Raises
        ------
        KeyError
            If a sample of ``plan`` lacks a key field.
        """
        done = self.done_keys()
        return [s for s in plan if self.key(s) not in done]

    def append(self, record: dict) -> None:
        """Append one record durably (flush + fsync).

        Parameters
        ----------
        record : dict
            A JSON-serialisable record holding every key field; written as one line
            (after a newline if the file's last line is torn).

        Raises
        ------
        KeyError
            If ``record`` lacks a key field (nothing is written).
        TypeError
            If ``record`` is not JSON-serialisable.
        """
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


@_PARAMETERS.fill
@contextlib.contextmanager
def reproducible_gzip_writer(dst: str | Path, *, text: bool = False) -> Iterator[IO]:
    """Open ``dst`` for writing as ``gzip -9 -n`` does: no file name and mtime 0 in the header, so the
    same content always gives the same bytes (a shipped file's SHA-256 then changes only with its content).

    Parameters
    ----------
    {dst}
    text : bool
        Yield a UTF-8 text stream (as ``gzip.open(dst, "wt")``) instead of a binary one.

    Yields
    ------
    file object
        Write the uncompressed content to it; the file is complete when the ``with`` block ends.
    """
    import gzip
    import io

    with Path(dst).open("wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as gz:
        if not text:
            yield gz
            return
        wrapper = io.TextIOWrapper(gz, encoding="utf-8")
        try:
            yield wrapper
        finally:
            wrapper.flush()
            wrapper.detach()  # the gzip stream is closed by its own ``with``


@_PARAMETERS.fill
def gzip_reproducibly(src: str | Path, dst: str | Path) -> None:
    """``gzip -9 -n`` of ``src`` into ``dst`` (:func:`reproducible_gzip_writer`): the same input always
    gives the same bytes.

    Parameters
    ----------
    src : str or Path
        The file to compress.
    {dst}
    """
    import shutil

    with Path(src).open("rb") as fin, reproducible_gzip_writer(dst) as fout:
        shutil.copyfileobj(fin, fout)
