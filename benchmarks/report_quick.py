"""Wall and CPU time of the quick report (``tcpmodels report -p quick True``), notebook by notebook.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/report_quick.py                  # every notebook
    PYTHONPATH=. .venv/bin/python benchmarks/report_quick.py p5_selfsimilar   # some of them
    PYTHONPATH=. .venv/bin/python benchmarks/report_quick.py --cells 5        # and the 5 slowest cells of each
    PYTHONPATH=. .venv/bin/python benchmarks/report_quick.py --jobs 0         # side by side, as tcpmodels report

Each notebook of ``notebooks/`` runs as ``tcpmodels report`` runs it
(:func:`tcpmodels.report.run_notebook`: papermill in a worker process, its own
folder as working directory, HTML rendering included) with ``quick=True``;
the executed copies and the figures go to a temporary folder, never to
``reports/`` or ``figures/``. Per notebook: wall time, and the CPU time (user
+ system) of this process and its children (the worker: papermill and the HTML
rendering; the kernel template and the kernel), which a busy machine changes
much less than the wall time; with the 1-minute load average
before and after. With ``--jobs`` the notebooks run as ``tcpmodels report -p
quick True`` runs them, side by side, one worker per job for all its notebooks
(CPU time then only in total; kernels forked warm on Linux). One by one (no
``--jobs``), each notebook gets a worker of its own and a kernel launched the
usual way, so its CPU time includes the worker's start (~2 s, which the report
pays once per job) and the kernel's imports (which warm kernels share). One row
per notebook and one ``TOTAL`` row are appended to
``benchmarks/results/report_quick.csv`` with the machine and the versions.

No test times the report (timed tests fail on a shared machine for reasons
that are not bugs); this script keeps the measurement instead.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pandas as pd

from tcpmodels.report import find_notebooks, run_notebook

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "report_quick.csv"


def _children_cpu_s() -> float:
    """User + system CPU of this process (the HTML rendering runs here) and its finished children."""
    return sum(ru.ru_utime + ru.ru_stime for ru in (resource.getrusage(resource.RUSAGE_CHILDREN),
                                                     resource.getrusage(resource.RUSAGE_SELF)))


def slowest_cells(executed: Path, n: int) -> list[tuple[int, float, str]]:
    """The ``n`` longest cells of an executed notebook: (position, seconds from papermill's metadata, first line)."""
    try:
        cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return []
    out = []
    for i, cell in enumerate(cells):
        duration = cell.get("metadata", {}).get("papermill", {}).get("duration")
        if cell.get("cell_type") == "code" and duration is not None:
            first = "".join(cell.get("source", "")).strip().splitlines()[:1]
            out.append((i, float(duration), first[0][:70] if first else ""))
    return sorted(out, key=lambda x: -x[1])[:n]


def measure(names: list[str] | None = None, notebooks_dir: Path = ROOT / "notebooks", cells: int = 0,
            keep: Path | None = None) -> pd.DataFrame:
    """Run the notebooks in quick mode; one row per notebook (wall_s, cpu_s, status, load before/after)."""
    notebooks = find_notebooks(notebooks_dir, names)
    rows = []
    with tempfile.TemporaryDirectory(prefix="report_quick_") as tmp:
        out_dir = keep if keep is not None else Path(tmp) / "reports"
        params = {"quick": True, "figures_dir": str(Path(tmp) / "figures")}
        for nb in notebooks:
            load0 = os.getloadavg()[0]
            cpu0 = _children_cpu_s()
            run = run_notebook(nb, out_dir, {k: v for k, v in params.items() if k != "figures_dir"
                                             or _has_parameter(nb, k)})
            cpu = _children_cpu_s() - cpu0
            rows.append(dict(notebook=nb.stem, status=run.status, wall_s=round(run.seconds, 2), cpu_s=round(cpu, 2),
                             load1_before=round(load0, 2), load1_after=round(os.getloadavg()[0], 2)))
            print(f"{run.status:6s} {run.seconds:7.1f} s wall {cpu:7.1f} s cpu  load {load0:.2f}  {nb.stem}",
                  file=sys.stderr, flush=True)
            for pos, secs, first in slowest_cells(run.output_ipynb, cells):
                print(f"         cell {pos:3d} {secs:7.1f} s  {first}", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    total = dict(notebook="TOTAL", status="ok" if (df["status"] == "ok").all() else "failed",
                 wall_s=round(df["wall_s"].sum(), 2), cpu_s=round(df["cpu_s"].sum(), 2),
                 load1_before=df["load1_before"].iloc[0], load1_after=df["load1_after"].iloc[-1])
    return pd.concat([df, pd.DataFrame([total])], ignore_index=True)


def measure_side_by_side(names: list[str] | None = None, notebooks_dir: Path = ROOT / "notebooks",
                         jobs: int | None = None) -> pd.DataFrame:
    """Run the notebooks as ``tcpmodels report -p quick True`` does (:func:`run_report`, ``jobs`` at a time).

    One row per notebook (its own wall time; CPU time only for the whole run, in the ``TOTAL`` row).
    """
    from tcpmodels.report import default_jobs, run_report

    jobs = default_jobs() if jobs is None else jobs
    with tempfile.TemporaryDirectory(prefix="report_quick_") as tmp:
        load0, cpu0, t0 = os.getloadavg()[0], _children_cpu_s(), time.perf_counter()
        runs = run_report(names, {"quick": True, "figures_dir": str(Path(tmp) / "figures")},
                          notebooks_dir=notebooks_dir, output_dir=Path(tmp) / "reports", progress=False, jobs=jobs)
        wall, cpu, load1 = time.perf_counter() - t0, _children_cpu_s() - cpu0, os.getloadavg()[0]
    rows = [dict(notebook=r.name, status=r.status, wall_s=round(r.seconds, 2), cpu_s=float("nan"),
                 load1_before=round(load0, 2), load1_after=round(load1, 2), jobs=jobs) for r in runs]
    rows.append(dict(notebook="TOTAL", status="ok" if all(r.status == "ok" for r in runs) else "failed",
                     wall_s=round(wall, 2), cpu_s=round(cpu, 2), load1_before=round(load0, 2),
                     load1_after=round(load1, 2), jobs=jobs))
    return pd.DataFrame(rows)


def _has_parameter(notebook: Path, name: str) -> bool:
    from tcpmodels.report import notebook_parameters

    return name in notebook_parameters(notebook)


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "absent"


def environment() -> dict:
    """Machine, load and versions stamped on every appended row."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=ROOT, check=False).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                    text=True, cwd=ROOT, check=False).stdout.strip())
    except OSError:
        commit, dirty = "", False
    return dict(date_utc=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                host=platform.node(), machine=platform.machine(), cpus=os.cpu_count(),
                python=platform.python_version(), numpy=_version("numpy"), pandas=_version("pandas"),
                scipy=_version("scipy"), papermill=_version("papermill"), tcpmodels_commit=commit,
                git_dirty=dirty)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    ap.add_argument("--cells", type=int, default=0, help="also print the N slowest cells of each notebook")
    ap.add_argument("--keep", type=Path, default=None, help="keep the executed notebooks in this folder")
    ap.add_argument("--jobs", type=int, default=None,
                    help="run them as tcpmodels report does, JOBS at a time (0: its default); per-notebook CPU "
                         "is then not measured, only the total (default: one by one, each measured)")
    ap.add_argument("--no-save", action="store_true", help="print only, do not append to the CSV")
    ap.add_argument("--results", type=Path, default=RESULTS, help="CSV to append to (default %(default)s)")
    ap.add_argument("--commit", default=None, help="commit to record when this copy is not a git checkout")
    args = ap.parse_args(argv)
    if args.jobs is None:
        df = measure(args.names or None, cells=args.cells, keep=args.keep).assign(jobs=1)
    else:
        df = measure_side_by_side(args.names or None, jobs=args.jobs or None)
    print(df.to_string(index=False))
    if not args.no_save:
        env = environment()
        if args.commit:
            env.update(tcpmodels_commit=args.commit, git_dirty=False)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        df.assign(**env).to_csv(args.results, mode="a", header=not args.results.exists(), index=False)
    return 0 if (df["status"] == "ok").all() else 1


if __name__ == "__main__":
    sys.exit(main())
