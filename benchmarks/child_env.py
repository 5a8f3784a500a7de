"""The environment in which a benchmark starts our code as a whole command.

Our code runs from this checkout (``PYTHONPATH``) with Python's bytecode cached, as it is for a user who
installed the wheel (pip compiles every module at install). A shell with ``PYTHONDONTWRITEBYTECODE=1`` (this
workplace sets it) would otherwise make every timed run compile each imported module from source again:
measured with callgrind on a 200k-packet ``stream_flows`` command, 16 % of all instructions were
``compile()``. The cache lives outside the repository (``PYTHONPYCACHEPREFIX``), so no benchmark writes into
the tree; the first run after a change fills it, which is why the benchmarks make one untimed warm-up run of
every engine (peers included, so that the capture is in the page cache for all of them alike).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYCACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tcpmodels-benchmarks" / "pycache"


def python_env(**extra: str) -> dict[str, str]:
    """``os.environ`` with this checkout first on ``PYTHONPATH``, bytecode written to and read from
    :data:`PYCACHE`, and ``extra`` set."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra)
    return env


def warm_bytecode(modules: str = "tcpmodels.traces, tcpmodels.traces.stream, pandas, pyarrow") -> None:
    """Import ``modules`` once in a child with :func:`python_env`, untimed, so that the timed runs read
    their bytecode from :data:`PYCACHE` (for benchmarks whose peers are too slow to run twice)."""
    import sys

    subprocess.run([sys.executable, "-W", "ignore", "-c", f"import {modules}"], env=python_env(), check=True,
                   stdout=subprocess.DEVNULL)


def git_commit(root: str | os.PathLike = ROOT) -> str:
    """HEAD of the checkout at ``root``, ``+dirty`` if it has uncommitted changes outside ``benchmarks/results``
    (the results files are not code: rows a run appends don't count); ``""`` outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)benchmarks/results"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+dirty" if dirty else "")
