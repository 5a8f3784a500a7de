"""Execute notebooks with papermill and write an HTML report.

``tcpmodels report [NAMES...] [-p key value]...`` (also ``python -m tcpmodels
report`` and ``make report``) runs every notebook in ``./notebooks`` (or the
ones named) with that folder as working directory, writes the executed copy
and its HTML rendering to ``./reports``, and an index page
``reports/index.html`` with one line per notebook: status, run time, link.
Both folders are relative to the working directory unless given as flags;
outside a checkout, ``tcpmodels init DIR`` writes a ready folder first.
Notebooks run side by side, as many as there are CPUs (at most 4; ``--jobs``):
each job is a worker process that imports papermill and nbconvert once and
executes its notebooks one after the other, every notebook in a kernel of its
own; a notebook that hangs past ``--timeout`` takes only its worker down, and the
next notebook gets a new one. On Linux the kernels start warm: each is forked from
a template process that has imported ipykernel, numpy, pandas, scipy and pyplot
once (:mod:`tcpmodels.report.kernels`), and becomes what a launched kernel would be.

On failure the executed notebook is kept (papermill writes it cell by cell),
the notebook and the failing cell are named, and the command exits non-zero
after the remaining notebooks have run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["KERNEL_START_FAILURES", "NotebookRun", "default_dirs", "default_jobs", "find_notebooks", "notebook_parameters", "positive_int", "run_notebook",
           "run_report", "write_index"]

#: Seconds one notebook may take before the run of that notebook is failed.
DEFAULT_TIMEOUT_S = 1800


@dataclass(frozen=True, kw_only=True)
class NotebookRun:
    """Outcome of executing one notebook."""

    name: str
    status: str  # "ok" or "failed"
    seconds: float
    output_ipynb: Path
    output_html: Path | None
    error: str = ""
    failing_cell: int | None = None
    #: times the notebook was started again because its kernel died before running anything
    #: (:data:`KERNEL_START_FAILURES`)
    kernel_start_retries: int = 0

    def to_dict(self) -> dict[str, Any]:
        """All fields as JSON-ready values (paths as strings).

        Returns
        -------
        dict of str to Any
            One entry per field.
        """
        d = asdict(self)
        d["output_ipynb"] = str(self.output_ipynb)
        d["output_html"] = str(self.output_html) if self.output_html else None
        return d


def default_dirs(
    notebooks_dir: str | Path | None = None,
    output_dir: str | Path | None = None,
    cwd: str | Path | None = None,
) -> tuple[Path, Path]:
    """The notebooks and reports folders: the flags if given, else ``notebooks/`` and ``reports/`` in ``cwd``.

    Never relative to the installed package: a wheel lives in ``site-packages``, which
    holds neither the user's notebooks nor a place for their reports.

    Parameters
    ----------
    notebooks_dir : str or Path, optional
        Folder of notebooks (``--notebooks-dir``); relative paths are taken from ``cwd``.
    output_dir : str or Path, optional
        Folder for executed copies and ``index.html`` (``--output-dir``).
    cwd : str or Path, optional
        Base of the defaults; the process's working directory if omitted.

    Returns
    -------
    tuple of Path
        ``(notebooks_dir, output_dir)``, absolute.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    notebooks = base / (notebooks_dir if notebooks_dir is not None else "notebooks")
    output = base / (output_dir if output_dir is not None else "reports")
    return notebooks.resolve(), output.resolve()


def find_notebooks(notebooks_dir: Path, names: list[str] | None = None) -> list[Path]:
    """Notebooks to run, sorted by name; ``names`` may omit the ``.ipynb`` suffix.

    Parameters
    ----------
    notebooks_dir : Path
        Folder holding the notebooks.
    names : list of str, optional
        Notebook names (stems or file names); all notebooks of the folder if omitted.

    Returns
    -------
    list of Path
        The chosen notebooks.

    Raises
    ------
    FileNotFoundError
        If the folder is missing or empty (saying how to get one), or naming every requested
        notebook that does not exist and listing the ones that do.
    """
    if not notebooks_dir.is_dir():
        raise FileNotFoundError(
            f"no notebooks folder {notebooks_dir} (the default is ./notebooks in the working directory); "
            "run `tcpmodels init DIR` to write the shipped notebooks and data into DIR and run the report there, "
            "or pass --notebooks-dir"
        )
    available = sorted(p for p in notebooks_dir.glob("*.ipynb") if not p.name.startswith("."))
    if not available:
        raise FileNotFoundError(f"no .ipynb notebook in {notebooks_dir}")
    if not names:
        return available
    by_stem = {p.stem: p for p in available}
    chosen, missing = [], []
    for name in names:
        stem = Path(name).stem
        (chosen.append(by_stem[stem]) if stem in by_stem else missing.append(name))
    if missing:
        raise FileNotFoundError(
            f"no notebook named {', '.join(missing)} in {notebooks_dir}; "
            f"available: {', '.join(sorted(by_stem)) or 'none'}"
        )
    return chosen


#: The report worker (:func:`_serve`) without the import of ``rfc3987_syntax``: jsonschema (under nbformat)
#: imports it for its "iri" format checker, which no notebook schema uses, and it builds ~35 Lark parsers on
#: import (3 of the 4 s of CPU papermill took to start here; python-jsonschema/jsonschema#1428). A ``None`` entry
#: in ``sys.modules`` makes the import raise ImportError, which jsonschema expects of an optional checker. The
#: folder holding this ``tcpmodels`` goes first on the worker's path, so that it runs this same code.
_WORKER_MAIN = ("import sys; sys.modules['rfc3987_syntax'] = None; sys.path.insert(0, {root!r}); "
                "from tcpmodels.report import _serve; _serve(warm_kernels={warm!r})")

#: Fork every kernel from a template process with the common imports done (:mod:`tcpmodels.report.kernels`);
#: False: let Jupyter launch each kernel as ``python -m ipykernel_launcher``. Linux only: elsewhere ``fork``
#: is missing (Windows) or unsafe after the template's imports (macOS system frameworks).
WARM_KERNELS = sys.platform.startswith("linux")

#: Tags of cells papermill adds to an executed copy; skipped when numbering cells.
_PAPERMILL_TAGS = {"injected-parameters", "papermill-error-cell-tag"}


def _source_cells(nb_path: Path) -> list:
    """Cells of an executed copy without the ones papermill inserted, so that
    positions match the source notebook."""
    import nbformat

    try:
        nb = nbformat.read(nb_path, as_version=4)
    except (OSError, ValueError):  # the executed copy may be missing, or cut short, if papermill died early
        return []
    return [c for c in nb.cells if not _PAPERMILL_TAGS & set(c.get("metadata", {}).get("tags", []))]


def _failing_cell(nb_path: Path) -> tuple[int | None, str]:
    """Position (0-based, in the source notebook) and error of the first cell whose output is an error."""
    for index, cell in enumerate(_source_cells(nb_path)):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                first_line = cell.get("source", "").strip().splitlines()[:1]
                where = f" [{first_line[0][:60]}]" if first_line else ""
                return index, f"{output.get('ename')}: {output.get('evalue')}{where}"
    return None, ""


#: Notebook metadata key: when true, its HTML shows outputs only (as ``jupyter nbconvert --no-input``), for a
#: report read by someone who did not write it (the ``tcpmodels analyze`` report); the notebook keeps its code.
HIDE_INPUT_KEY = "tcpmodels_report_hide_input"


def _to_html(nb_path: Path, exporter: Any = None) -> Path:
    """Render an executed notebook to HTML beside it (``exporter``: an nbconvert ``HTMLExporter`` to reuse)."""
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    if exporter is None or nb.metadata.get(HIDE_INPUT_KEY):
        from nbconvert import HTMLExporter

        exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True) \
            if nb.metadata.get(HIDE_INPUT_KEY) else HTMLExporter()
    body, _ = exporter.from_notebook_node(nb)
    out = nb_path.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out


class _IpynbWriter:
    """``nbformat.writes`` of a version-4 notebook, the same text, each cell encoded only when it changed.

    Papermill saves the executed copy at the start and at the end of every cell (so that a
    killed notebook's copy shows where it stopped), each time encoding the whole notebook with
    the pure-Python JSON encoder (indented output): most of the CPU papermill itself takes
    (~10 s of the quick report, 2 s for P5's notebook alone). Here a cell's indented text is kept
    under its compact encoding (C encoder) and reused while that does not change.
    """

    _CELLS_EMPTY = '{\n "cells": [],\n'

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def writes(self, nb: Any) -> str:
        import copy

        import nbformat
        from nbformat.v4 import rwbase
        from nbformat.v4.nbjson import BytesEncoder

        version, _ = nbformat.reader.get_version(nb)
        if version != 4:
            return nbformat.writes(nb)
        try:
            nbformat.validate(nb)
        except nbformat.ValidationError as exc:  # as nbformat.writes: logged, and written all the same
            nbformat.get_logger().error("Notebook JSON is invalid: %s", exc)
        pretty = dict(cls=BytesEncoder, indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False)
        texts, parts = {}, []
        for cell in nb.cells:
            key = json.dumps(cell, cls=BytesEncoder, sort_keys=True, ensure_ascii=False)
            text = self._texts.get(key)
            if text is None:
                one = nbformat.NotebookNode(cells=[copy.deepcopy(cell)], metadata=nbformat.NotebookNode())
                one = rwbase.strip_transient(rwbase.split_lines(one))
                text = "\n".join("  " + line for line in json.dumps(one.cells[0], **pretty).split("\n"))
            texts[key] = text
            parts.append(text)
        self._texts = texts
        head = copy.deepcopy(nbformat.NotebookNode({k: v for k, v in nb.items() if k != "cells"}))
        head["cells"] = []
        if "metadata" in head:
            for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
                head.metadata.pop(key, None)
        doc = json.dumps(head, **pretty)
        if not parts or not doc.startswith(self._CELLS_EMPTY):
            return doc if not parts else nbformat.writes(nb)
        return '{\n "cells": [\n' + ",\n".join(parts) + "\n ],\n" + doc[len(self._CELLS_EMPTY):]


def _cache_lexer_lookups() -> None:
    """Make ``pygments.lexers.get_lexer_by_name`` look each lexer name up once per worker.

    nbconvert highlights every code cell with ``get_lexer_by_name(language)``; for ``ipython3``
    (a lexer IPython registers as a plugin) each call scans the installed packages' entry points:
    ~7 ms per cell, ~350 cells in the quick report. The name -> class lookup
    (``find_lexer_class_by_name``, the same search) is kept; each call still gets a new lexer
    with its own options, so the highlighted HTML is the same. Names not found are not cached
    (the lookup raises ``ClassNotFound`` as before).
    """
    import functools

    import pygments.lexers

    if getattr(pygments.lexers.get_lexer_by_name, "_tcpmodels_cached", False):
        return
    find = functools.lru_cache(maxsize=64)(pygments.lexers.find_lexer_class_by_name)

    def get_lexer_by_name(_alias: str, **options: Any) -> Any:
        return find(_alias)(**options)

    get_lexer_by_name._tcpmodels_cached = True  # type: ignore[attr-defined]
    pygments.lexers.get_lexer_by_name = get_lexer_by_name


def _serve(warm_kernels: bool = True) -> None:
    """Body of the report worker: execute the notebooks the parent sends, one after the other.

    Reads one JSON job per line on stdin (notebook, output, cwd, parameters, kernel), runs it with
    papermill in this process, each notebook in a kernel of its own, as ``papermill NOTEBOOK OUTPUT
    --cwd DIR --kernel K --no-progress-bar --no-log-output -y PARAMETERS`` would, and answers on stdout
    with two JSON lines: ``executed`` (status and, on failure, the last line of the traceback, which is
    what the papermill command would print last) and ``html`` (the rendering, or why it failed).
    papermill, nbconvert and the HTML templates are loaded once for all notebooks; a notebook's
    failure is an answer, not the end of the worker. Ends at the end of stdin.
    """
    import logging
    import traceback

    # as the papermill command does: the kernels inherit it (no debugger warning about frozen modules)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # anything else written to stdout (a library, a kernel) goes to the log, not into the answers
    logging.basicConfig(level="INFO", format="%(message)s")
    from tcpmodels.report.kernels import ForkingKernelManager, KernelTemplate

    template = KernelTemplate()
    if warm_kernels:
        template.start()  # its imports overlap with papermill's and nbconvert's here
    import papermill.engines
    import papermill.iorw
    from nbconvert import HTMLExporter
    from papermill import execute_notebook

    exporter = HTMLExporter()
    _cache_lexer_lookups()
    writer = _IpynbWriter()
    if getattr(papermill.engines, "write_ipynb", None) is papermill.iorw.write_ipynb:
        # the cell-by-cell saves of the executed copy (NotebookExecutionManager.save), the same text for less CPU
        papermill.engines.write_ipynb = lambda nb, path: papermill.iorw.papermill_io.write(writer.writes(nb), path)
    managers = {"kernel_manager_class": ForkingKernelManager(template)} if warm_kernels else {}
    for line in sys.stdin:
        job = json.loads(line)
        status, error = "ok", ""
        try:
            execute_notebook(job["notebook"], job["output"], parameters=job["parameters"], cwd=job["cwd"],
                             kernel_name=job["kernel"], progress_bar=False, log_output=False, **managers)
        except Exception as exc:  # noqa: BLE001 - reported to the parent like the command's exit status
            status, error = "failed", _last_error_line("".join(traceback.format_exception(exc)))
        answers.write(json.dumps({"event": "executed", "status": status, "error": error}) + "\n")
        html_path, html_error = None, ""
        if Path(job["output"]).exists():
            try:
                html_path = str(_to_html(Path(job["output"]), exporter))
            except Exception as exc:  # noqa: BLE001 - an unrenderable notebook still gets an index line
                html_error = f"HTML conversion failed: {exc}"
        answers.write(json.dumps({"event": "html", "path": html_path, "error": html_error}) + "\n")
    template.close()


class _Worker:
    """A report worker process (:func:`_serve`) and its pipes, started on first use.

    Runs in its own session: on a timeout the whole process group is killed (the kernels, in
    sessions of their own, end when they see their parent gone, as with the papermill command),
    and the next notebook gets a new worker. Its stderr goes to a temporary file, read only when
    it dies.
    """

    def __init__(self, warm_kernels: bool | None = None) -> None:
        self._proc: subprocess.Popen | None = None
        self._log: Any = None
        self._buffer = b""
        self._warm = WARM_KERNELS if warm_kernels is None else warm_kernels

    def _start(self) -> None:
        import tempfile

        self._log = tempfile.TemporaryFile()
        root = str(Path(__file__).resolve().parents[2])
        self._proc = subprocess.Popen([sys.executable, "-c", _WORKER_MAIN.format(root=root, warm=self._warm)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._log, bufsize=0, start_new_session=True)
        self._buffer = b""

    def _answer(self, deadline: float) -> dict | None:
        """The worker's next answer; None if ``deadline`` (``time.monotonic``) passes first.

        Raises
        ------
        EOFError
            If the worker ended.
        """
        import select

        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _last_log_line(self, offset: int) -> str:
        self._log.seek(offset)
        return _last_error_line(self._log.read().decode("utf-8", "replace"))

    def kill(self) -> int | None:
        """End the worker's process group now; its exit status (None if none was running)."""
        if self._proc is None:
            return None
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # already gone
            pass
        return self._reap()

    def _reap(self) -> int:
        code = self._proc.wait()
        for pipe in (self._proc.stdin, self._proc.stdout):
            pipe.close()
        self._log.close()
        self._proc = self._log = None
        return code

    def close(self) -> None:
        """Let the worker finish (end of its stdin) and wait for it."""
        from tcpmodels.report.kernels import end_with_stdin

        if self._proc is None:
            return
        end_with_stdin(self._proc, 60.0)
        self.kill()

    def run(self, job: dict, timeout_s: float) -> tuple[str, str, float, Path | None, str]:
        """Execute one job; (status, error, seconds, HTML path, HTML error), never raising for the notebook.

        Parameters
        ----------
        job : dict
            What :func:`_serve` reads: notebook, output, cwd, parameters, kernel.
        timeout_s : float
            Time the notebook may take, kernel start included; the rendering gets as long again. [s]
        """
        if self._proc is None or self._proc.poll() is not None:
            if self._proc is not None:
                self._reap()
            self._start()
        offset = self._log.tell()
        start = time.monotonic()
        deadline = start + timeout_s
        try:
            self._proc.stdin.write((json.dumps(job) + "\n").encode())
            answer = self._answer(deadline)
        except (EOFError, BrokenPipeError):
            last = self._last_log_line(offset)
            code = self.kill()
            return "failed", last or f"papermill exited with status {code}", time.monotonic() - start, None, ""
        seconds = time.monotonic() - start
        if answer is None:
            self.kill()
            return "failed", f"timed out after {timeout_s:g} s", seconds, None, ""
        try:
            html = self._answer(time.monotonic() + timeout_s)
        except EOFError:
            html = {"path": None, "error": f"HTML conversion failed: {self._last_log_line(offset) or 'worker ended'}"}
            self.kill()
        if html is None:
            self.kill()
            html = {"path": None, "error": "HTML conversion failed: timed out"}
        return answer["status"], answer["error"], seconds, Path(html["path"]) if html["path"] else None, html["error"]


def run_notebook(
    notebook: Path,
    output_dir: Path,
    parameters: dict | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    kernel_name: str = "python3",
) -> NotebookRun:
    """Execute one notebook with papermill in its own folder; never raises for notebook errors.

    Papermill runs in a child process (its own session, :func:`_serve`) so that
    ``timeout_s`` bounds the whole notebook, kernel included: on expiry the
    process group is killed and the run is marked failed with the cell it was in.
    :func:`run_report` keeps such a child per job for many notebooks (papermill and
    nbconvert imported once, kernels forked warm); here it serves this one notebook,
    in a kernel launched the usual way (a kernel template costs more CPU than it saves
    for one notebook: ~3 s of imports against ~2.8 s).

    Parameters
    ----------
    notebook : Path
        The source notebook; it runs with its own folder as working directory.
    output_dir : Path
        Where the executed copy and its HTML go (created if missing).
    parameters : dict, optional
        Values for the cell tagged ``parameters``.
    timeout_s : float
        Time the whole notebook may take, kernel included. [s]
    kernel_name : str
        Jupyter kernel to run it in.

    Returns
    -------
    NotebookRun
        Status, run time, output paths and, on failure, the failing cell and error.
    """
    worker = _Worker(warm_kernels=False)
    try:
        return _run_notebook_in(worker, notebook, output_dir, parameters, timeout_s, kernel_name)
    finally:
        worker.close()


#: Errors of a kernel that died before it ran a cell. Kernels started side by side (``jobs`` > 1) can lose
#: such a race: 1 of 8 parallel runs of three tiny notebooks (2026-11-28, and once in a full test run) ended
#: with "Kernel died before replying to kernel_info". Nothing of the notebook ran, so it is run once more.
KERNEL_START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")


def _run_notebook_in(
    worker: _Worker,
    notebook: Path,
    output_dir: Path,
    parameters: dict | None,
    timeout_s: float,
    kernel_name: str = "python3",
) -> NotebookRun:
    """:func:`run_notebook` in ``worker`` (which may run the next notebook after it)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    out = output_dir / notebook.name
    # a copy from an earlier run must never stand in for this one (e.g. when this run fails before writing)
    out.unlink(missing_ok=True)
    out.with_suffix(".html").unlink(missing_ok=True)
    try:
        import nbformat

        nbformat.read(notebook, as_version=4)
    except Exception as exc:  # noqa: BLE001 - any unreadable notebook is reported, not raised
        return NotebookRun(name=notebook.stem, status="failed", seconds=0.0, output_ipynb=out, output_html=None,
                           error=f"{notebook.name} is not a readable notebook ({type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0] if str(exc) else ''}); no executed copy")
    job = {"notebook": str(notebook), "output": str(out), "cwd": str(notebook.parent),
           "parameters": parameters or {}, "kernel": kernel_name}
    status, error, seconds, html_path, html_error = worker.run(job, timeout_s)
    retries = 0
    while status == "failed" and retries < 1 and any(m in (error or "") for m in KERNEL_START_FAILURES):
        retries += 1
        status, error, more_s, html_path, html_error = worker.run(job, timeout_s)
        seconds += more_s
    cell = None
    if status == "failed":
        cell, cell_error = _failing_cell(out)
        if cell is None:  # timed out, or the kernel died: the cell papermill was in
            cell = _running_cell(out)
        if cell is None:
            cell = _last_started_cell(out)
        error = cell_error or error
        if not out.exists():
            error += "; no executed copy was written"
    if html_path is None and out.exists():
        if html_error:  # the worker rendered it and failed
            error = error or html_error
        else:  # the worker was stopped before it could render
            try:
                html_path = _to_html(out)
            except Exception as exc:  # noqa: BLE001 - an unrenderable notebook still gets an index line
                error = error or f"HTML conversion failed: {exc}"
    return NotebookRun(
        name=notebook.stem,
        status=status,
        seconds=seconds,
        output_ipynb=out,
        output_html=html_path,
        error=error,
        failing_cell=cell,
        kernel_start_retries=retries,
    )


def _last_error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _running_cell(nb_path: Path) -> int | None:
    """Position of the cell papermill marked as running when the notebook was killed."""
    for index, cell in enumerate(_source_cells(nb_path)):
        if cell.get("metadata", {}).get("papermill", {}).get("status") == "running":
            return index
    return None


def _last_started_cell(nb_path: Path) -> int | None:
    """Position of the last cell papermill started (where a dead kernel stopped the notebook)."""
    started = [i for i, cell in enumerate(_source_cells(nb_path))
               if cell.get("metadata", {}).get("papermill", {}).get("start_time")]
    return started[-1] if started else None


def write_index(runs: list[NotebookRun], output_dir: Path) -> Path:
    """Write ``index.html`` (see :func:`tcpmodels.report.index.write_index`).

    Parameters
    ----------
    runs : list of NotebookRun
        One per executed notebook, in the order of the rows.
    output_dir : Path
        The folder of the executed notebooks and their HTML; receives ``index.html``
        and ``thumbs/``.

    Returns
    -------
    Path
        The index page.
    """
    from tcpmodels.report.index import write_index as _write_index

    return _write_index(runs, output_dir)


def run_report(
    names: list[str] | None = None,
    parameters: dict | None = None,
    notebooks_dir: Path | None = None,
    output_dir: Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: bool = True,
    jobs: int | None = None,
) -> list[NotebookRun]:
    """Execute the notebooks and write the report.

    Parameters
    ----------
    names : list of str, optional
        Notebooks to run (stems or file names); all of the folder if omitted.
    parameters : dict, optional
        Parameters passed to every notebook (e.g. ``{"quick": True}``).
    notebooks_dir : Path, optional
        Folder of notebooks; ``./notebooks`` of the working directory if omitted.
    output_dir : Path, optional
        Folder for executed copies and ``index.html``; ``./reports`` if omitted.
    timeout_s : float
        Time one notebook may take. [s]
    progress : bool
        Show a progress bar on stderr.
    jobs : int, optional
        Notebooks executed at the same time, each job a papermill worker process running one
        notebook after the other, each notebook in a kernel of its own;
        :func:`default_jobs` if omitted, 1 for one after the other.

    Returns
    -------
    list of NotebookRun
        One per notebook, in name order.

    Raises
    ------
    FileNotFoundError
        If the notebooks folder is missing or empty, or a named notebook does not exist.
    NotADirectoryError
        If the output directory is a file.
    ValueError
        If ``timeout_s`` is not > 0, ``jobs`` is not >= 1, or a parameter is in no selected notebook's
        parameters cell.
    """
    from tqdm.auto import tqdm

    notebooks_dir, output_dir = default_dirs(notebooks_dir, output_dir)
    notebooks = find_notebooks(notebooks_dir, names)
    if not timeout_s > 0:
        raise ValueError(f"timeout_s [s] must be > 0; got {timeout_s}")
    jobs = default_jobs() if jobs is None else jobs
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be an integer >= 1; got {jobs!r}")
    if output_dir.exists() and not output_dir.is_dir():
        raise NotADirectoryError(f"the output directory {output_dir} is a file, not a folder (--output-dir)")
    known = set().union(*(notebook_parameters(nb) for nb in notebooks))
    unknown = sorted(set(parameters or {}) - known)
    if unknown:
        raise ValueError(f"unknown notebook parameter(s) {unknown}: no selected notebook has them in its "
                         f"'parameters' cell; known: {sorted(known)}")
    runs: list[NotebookRun] = []
    if jobs == 1 or len(notebooks) == 1:
        worker = _Worker()
        try:
            bar = tqdm(notebooks, desc="notebooks", unit="nb", disable=not progress, file=sys.stderr)
            for nb in bar:
                bar.set_postfix_str(nb.stem)
                runs.append(_run_notebook_in(worker, nb, output_dir, parameters, timeout_s))
        finally:
            worker.close()
    else:
        # each thread drives its own worker process (the kernels do the work), so threads suffice
        import queue
        import threading

        todo: queue.Queue = queue.Queue()
        for nb in notebooks:
            todo.put(nb)
        by_notebook: dict[Path, NotebookRun] = {}
        done: queue.Queue = queue.Queue()

        def drive() -> None:
            worker = _Worker()
            try:
                while True:
                    try:
                        nb = todo.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        done.put((nb, _run_notebook_in(worker, nb, output_dir, parameters, timeout_s)))
                    except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                        done.put((nb, exc))
                        return
            finally:
                worker.close()

        threads = [threading.Thread(target=drive, daemon=True) for _ in range(min(jobs, len(notebooks)))]
        for thread in threads:
            thread.start()
        with tqdm(total=len(notebooks), desc="notebooks", unit="nb", disable=not progress, file=sys.stderr) as bar:
            for _ in notebooks:
                nb, result = done.get()
                if isinstance(result, BaseException):
                    raise result
                by_notebook[nb] = result
                bar.set_postfix_str(nb.stem)
                bar.update()
        for thread in threads:
            thread.join()
        runs = [by_notebook[nb] for nb in notebooks]
    write_index(runs, output_dir)
    return runs


def default_jobs() -> int:
    """Notebooks :func:`run_report` executes at a time by default: the CPUs this process may use, at most 4.

    Returns
    -------
    int
        At least 1.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4))


def notebook_parameters(notebook: Path) -> set[str]:
    """Names assigned in the cell tagged ``parameters`` of ``notebook`` (empty if it has none or is unreadable).

    Parameters
    ----------
    notebook : Path
        A source notebook.

    Returns
    -------
    set of str
        The parameter names papermill can set.
    """
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return set()
    names: set[str] = set()
    for cell in cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell.get("source", ""))
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _parse_value(text: str):
    """Interpret a ``-p key value`` value as a Python literal where possible, else a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _cmd_report(args: argparse.Namespace) -> int:
    # this process renders the HTML (nbconvert -> nbformat -> jsonschema): spare it rfc3987_syntax too,
    # unless something imported it already (see _PAPERMILL_MAIN)
    sys.modules.setdefault("rfc3987_syntax", None)
    params = {key: _parse_value(value) for key, value in (args.parameter or [])}
    try:
        runs = run_report(args.names, params, notebooks_dir=args.notebooks_dir, output_dir=args.output_dir,
                          timeout_s=args.timeout, progress=not args.no_progress, jobs=args.jobs)
    except (FileNotFoundError, NotADirectoryError, ValueError) as exc:
        print(f"tcpmodels report: {exc}", file=sys.stderr)
        return 2
    failed = [r for r in runs if r.status != "ok"]
    out = runs[0].output_ipynb.parent if runs else default_dirs(args.notebooks_dir, args.output_dir)[1]
    for r in runs:
        mark = "ok    " if r.status == "ok" else "FAILED"
        print(f"{mark} {r.seconds:7.1f} s  {r.name}")
    for r in failed:
        where = f"cell {r.failing_cell}" if r.failing_cell is not None else "before any cell ran"
        copy = f"executed copy: {r.output_ipynb}" if r.output_ipynb.exists() else "no executed copy"
        print(f"tcpmodels report: {r.name} failed at {where}: {r.error} ({copy})", file=sys.stderr)
    for r in runs:
        if r.status == "ok" and r.error:  # executed, but e.g. the HTML rendering failed
            print(f"tcpmodels report: {r.name}: {r.error}", file=sys.stderr)
    print(f"report: {out / 'index.html'}")
    return 1 if failed else 0


_DESCRIPTION = """\
Execute notebooks with papermill and write an HTML report.

Runs every notebook in ./notebooks (or the ones named), each with its own folder
as working directory, writes the executed copy and its HTML rendering to
./reports, and reports/index.html with one line per notebook: status, seconds,
link. Both folders are relative to the working directory unless given as flags.
A failing notebook is named with its failing cell; the others still run, and the
command exits with status 1."""

_EPILOG = """\
examples:
  tcpmodels init work && cd work      write the shipped notebooks and data
  tcpmodels report p4_lftcp_100g      one notebook
  tcpmodels report -p quick True      every notebook, in quick mode"""


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0; got {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0; got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A command-line count: an ``argparse`` type that takes whole numbers >= 1 (``tcpmodels report -j``,
    ``tcpmodels analyze --top``).

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    int
        The count.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not a whole number >= 1 (argparse prints it after the option's name).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}")
    return value


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``tcpmodels report``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``tcpmodels`` parser's sub-command collection.
    """
    p = subparsers.add_parser(
        "report",
        help="execute notebooks with papermill and write reports/index.html",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("names", nargs="*", help="notebooks to run, e.g. p4_lftcp_100g (default: all in the notebooks folder)")
    p.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   help="notebook parameter, e.g. -p quick True (Python literal or string)")
    p.add_argument("--timeout", type=_positive_seconds, default=DEFAULT_TIMEOUT_S,
                   help="seconds one notebook may take, kernel included (default %(default)s)")
    p.add_argument("--notebooks-dir", type=Path, default=None,
                   help="folder of notebooks (default: ./notebooks in the working directory)")
    p.add_argument("--output-dir", type=Path, default=None,
                   help="where executed copies and index.html go (default: ./reports in the working directory)")
    p.add_argument("-j", "--jobs", type=positive_int, default=None,
                   help="notebooks executed at the same time (default: the CPUs available, at most 4; 1: one by one)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_report)
