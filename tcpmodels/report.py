"""Execute notebooks with papermill and write an HTML report.

``tcpmodels report [NAMES...] [-p key value]...`` (also ``python -m tcpmodels
report`` and ``make report``) runs every notebook in ``notebooks/`` (or the
ones named) from the ``notebooks/`` folder as working directory, writes the
executed copy and its HTML rendering to ``reports/``, and an index page
``reports/index.html`` with one line per notebook: status, run time, link.

On failure the executed notebook is kept (papermill writes it cell by cell),
the notebook and the failing cell are named, and the command exits non-zero
after the remaining notebooks have run.
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["NotebookRun", "find_notebooks", "run_notebook", "run_report", "write_index"]

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

    def to_dict(self) -> dict:
        d = asdict(self)
        d["output_ipynb"] = str(self.output_ipynb)
        d["output_html"] = str(self.output_html) if self.output_html else None
        return d


def project_root() -> Path:
    """The checkout that holds ``notebooks/`` (the package's parent folder)."""
    return Path(__file__).resolve().parent.parent


def find_notebooks(notebooks_dir: Path, names: list[str] | None = None) -> list[Path]:
    """Notebooks to run, sorted by name; ``names`` may omit the ``.ipynb`` suffix.

    Raises
    ------
    FileNotFoundError
        Naming every requested notebook that does not exist and listing the ones that do.
    """
    available = sorted(p for p in notebooks_dir.glob("*.ipynb") if not p.name.startswith("."))
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


#: Tags of cells papermill adds to an executed copy; skipped when numbering cells.
_PAPERMILL_TAGS = {"injected-parameters", "papermill-error-cell-tag"}


def _source_cells(nb_path: Path) -> list:
    """Cells of an executed copy without the ones papermill inserted, so that
    positions match the source notebook."""
    import nbformat

    try:
        nb = nbformat.read(nb_path, as_version=4)
    except Exception:  # the executed copy may be missing if papermill died early
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


def _to_html(nb_path: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nbformat.read(nb_path, as_version=4))
    out = nb_path.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out


def run_notebook(
    notebook: Path,
    output_dir: Path,
    parameters: dict | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    kernel_name: str = "python3",
) -> NotebookRun:
    """Execute one notebook with papermill in its own folder; never raises for notebook errors.

    Papermill runs in a child process (its own session) so that ``timeout_s``
    bounds the whole notebook, kernel included: on expiry the process group is
    killed and the run is marked failed with the cell it was in.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    out = output_dir / notebook.name
    cmd = [
        sys.executable, "-m", "papermill", str(notebook), str(out),
        "--cwd", str(notebook.parent), "--kernel", kernel_name,
        "--no-progress-bar", "--no-log-output",
        "-y", json.dumps(parameters or {}),
    ]
    start = time.perf_counter()
    status, error = "ok", ""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout_s)
        if proc.returncode != 0:
            status = "failed"
            error = _last_error_line(stderr) or f"papermill exited with status {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        status, error = "failed", f"timed out after {timeout_s:g} s"
    seconds = time.perf_counter() - start
    cell = None
    if status == "failed":
        cell, cell_error = _failing_cell(out)
        if cell is None and "timed out" in error:
            cell = _running_cell(out)
        error = cell_error or error
    html_path = None
    if out.exists():
        try:
            html_path = _to_html(out)
        except Exception as exc:  # an unrenderable notebook still gets an index line
            error = error or f"HTML conversion failed: {exc}"
    return NotebookRun(
        name=notebook.stem,
        status=status,
        seconds=seconds,
        output_ipynb=out,
        output_html=html_path,
        error=error,
        failing_cell=cell,
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


def write_index(runs: list[NotebookRun], output_dir: Path) -> Path:
    """Write ``index.html`` (see :func:`tcpmodels.report_index.write_index`)."""
    from tcpmodels.report_index import write_index as _write_index

    return _write_index(runs, output_dir)


def run_report(
    names: list[str] | None = None,
    parameters: dict | None = None,
    notebooks_dir: Path | None = None,
    output_dir: Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: bool = True,
) -> list[NotebookRun]:
    """Execute the notebooks and write the report; returns one :class:`NotebookRun` each."""
    from tqdm.auto import tqdm

    root = project_root()
    notebooks_dir = notebooks_dir or root / "notebooks"
    output_dir = output_dir or root / "reports"
    notebooks = find_notebooks(notebooks_dir, names)
    runs: list[NotebookRun] = []
    bar = tqdm(notebooks, desc="notebooks", unit="nb", disable=not progress, file=sys.stderr)
    for nb in bar:
        bar.set_postfix_str(nb.stem)
        runs.append(run_notebook(nb, output_dir, parameters, timeout_s))
    write_index(runs, output_dir)
    return runs


def _parse_value(text: str):
    """Interpret a ``-p key value`` value as a Python literal where possible, else a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _cmd_report(args: argparse.Namespace) -> int:
    params = {key: _parse_value(value) for key, value in (args.parameter or [])}
    try:
        runs = run_report(args.names, params, notebooks_dir=args.notebooks_dir, output_dir=args.output_dir,
                          timeout_s=args.timeout, progress=not args.no_progress)
    except FileNotFoundError as exc:
        print(f"tcpmodels report: {exc}", file=sys.stderr)
        return 2
    failed = [r for r in runs if r.status != "ok"]
    out = runs[0].output_ipynb.parent if runs else project_root() / "reports"
    for r in runs:
        mark = "ok    " if r.status == "ok" else "FAILED"
        print(f"{mark} {r.seconds:7.1f} s  {r.name}")
    for r in failed:
        where = f"cell {r.failing_cell}" if r.failing_cell is not None else "before any cell ran"
        print(f"tcpmodels report: {r.name} failed at {where}: {r.error} (executed copy: {r.output_ipynb})",
              file=sys.stderr)
    print(f"report: {out / 'index.html'}")
    return 1 if failed else 0


def add_subcommand(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="execute notebooks with papermill and write reports/index.html",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("names", nargs="*", help="notebooks to run (default: all in notebooks/)")
    p.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   help="notebook parameter, e.g. -p quick True (Python literal or string)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help="seconds one notebook may take, kernel included (default %(default)s)")
    p.add_argument("--notebooks-dir", type=Path, default=None, help="folder of notebooks (default: notebooks/)")
    p.add_argument("--output-dir", type=Path, default=None, help="where executed copies go (default: reports/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_report)
