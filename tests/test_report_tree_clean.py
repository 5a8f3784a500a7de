"""Nothing that `make report` runs rewrites a tracked file: git status is the same before and after.

Two checks. The static one covers every notebook cheaply: each figure a notebook saves
(``save_figure(fig, figures_dir, "NAME")`` or a ``NAME.png`` in a code cell, saved to its figures
folder) and each file the report writer produces
(``reports/NAME.ipynb``, ``.html``, ``index.html``) lands on a path git ignores and does not track.
The real one runs ``tcpmodels report`` in the checkout itself, as ``make report`` does, on the
P4 notebook (which used to rewrite the README's tracked figure) and one lecture, in quick mode,
and compares ``git status`` before and after.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
#: ``save_figure(fig, figures_dir, "name")`` as the teaching notebooks call it.
SAVE_FIGURE = re.compile(r"save_figure\(\s*\w+\s*,\s*figures_dir\s*,\s*[\"']([^\"']+)[\"']")
#: A PNG file name in a code cell (``fig.savefig(Path(figures_dir) / "p4_sizing.png")`` and the like).
PNG_NAME = re.compile(r"([\w.-]+)\.png\b")

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(),
                                reason="needs git and a checkout")  # fmt: skip


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout


def _status() -> set[str]:
    return set(_git("status", "--porcelain", "--untracked-files=all").splitlines())


def _report_paths() -> list[str]:
    paths = ["reports/index.html"]
    for nb in NOTEBOOKS:
        paths += [f"reports/{nb.stem}.ipynb", f"reports/{nb.stem}.html"]
        source = "\n".join(c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code")
        names = set(SAVE_FIGURE.findall(source)) | set(PNG_NAME.findall(source))
        paths += [f"figures/{name}.png" for name in sorted(names)]
    return paths


def test_every_path_the_report_writes_is_ignored_and_untracked():
    paths = _report_paths()
    assert any(p.startswith("figures/p4_") for p in paths), "found no figure saved by the P4 notebook"
    tracked = set(_git("ls-files", "--", "reports", "figures").splitlines()) - {"figures/.gitkeep"}
    assert not tracked, f"tracked files where the report writes: {sorted(tracked)}"
    ignored = set(_git("check-ignore", "--no-index", *paths).splitlines())
    assert not set(paths) - ignored, f"not ignored by git: {sorted(set(paths) - ignored)}"


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_git_status_is_unchanged_by_a_report_run():
    exe = Path(sys.executable).with_name("tcpmodels")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tcpmodels"]
    before = _status()
    done = subprocess.run([*cmd, "report", "p4_lftcp_100g", "teach_bdp_window_scaling", "-p", "quick", "True",
                           "--no-progress"], cwd=REPO, capture_output=True, text=True, timeout=540)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (REPO / "figures" / "p4_ceiling_vs_rtt.png").is_file(), "the P4 notebook saved no figure"
    after = _status()
    assert after == before, f"the report changed the working tree: new {sorted(after - before)}, gone {sorted(before - after)}"
