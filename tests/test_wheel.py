"""The built wheel works outside the repository: install it in a fresh venv and run the CLI there.

Offline by design: the wheel is built with the running environment's setuptools
(``--no-build-isolation``), installed with ``--no-deps``, and the new venv sees the
dependencies through a ``.pth`` line naming the running environment's ``site-packages``
(the effect of ``--system-site-packages``, pointed at the environment that has them).
The repository's own ``tcpmodels`` is never on that path: the editable install's hook is
a ``.pth`` file of that folder, which a ``.pth`` *line* does not process, and the test
checks where ``tcpmodels`` is imported from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Not part of a source tree to build from.
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "reports", "runs", "*.egg-info", ".hypothesis",
                                     ".pytest_cache", "__pycache__", ".ipynb_checkpoints", "_bin", "figures")  # fmt: skip

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _run(cmd, cwd, env, timeout_s=600):
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("wheel", reason="building a wheel offline needs the `wheel` package (the `test` extra)")
    src = tmp_path_factory.mktemp("src") / "tcpmodels"
    shutil.copytree(REPO, src, ignore=_NOT_SOURCE)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), str(src)],
         cwd=src, env=dict(os.environ))  # fmt: skip
    (path,) = out.glob("tcpmodels-*.whl")
    return path


def test_wheel_ships_typing_marker_notebooks_and_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "tcpmodels/py.typed" in names
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        assert f"tcpmodels/_shipped/notebooks/{nb.name}" in names
    captures = {p.name for p in (REPO / "data" / "captures").iterdir()}
    assert captures and all(f"tcpmodels/_shipped/data/captures/{c}" in names for c in captures)
    assert not [n for n in names if ".ipynb_checkpoints" in n or n.endswith(".pyc")]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", str(root)], cwd=root.parent, env=dict(os.environ))
    purelib = Path(_run([str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                        cwd=root.parent, env=_clean_env(root)).strip())  # fmt: skip
    (purelib / "_tcpmodels_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "--no-deps", "--no-index", "-q", str(wheel)],
         cwd=root.parent, env=_clean_env(root))  # fmt: skip
    return root


def _clean_env(root: Path) -> dict[str, str]:
    """No PYTHONPATH (it would import the checkout) and the new venv first on PATH (the kernel's `python`)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MPLBACKEND")}
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(root)
    # the dependencies' data files (nbconvert's HTML templates, the kernel spec) live under the
    # running environment's prefix; pip would have put them under the new venv's
    env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(Path(sys.prefix) / "share" / "jupyter"), env.get("JUPYTER_PATH")]))
    return env


def test_installed_package_is_the_wheel_not_the_checkout(venv, tmp_path):
    where = _run([str(venv / "bin" / "python"), "-c", "import tcpmodels; print(tcpmodels.__file__, tcpmodels.__version__)"],
                 cwd=tmp_path, env=_clean_env(venv)).split()  # fmt: skip
    assert Path(where[0]).is_relative_to(venv), where
    import tcpmodels

    assert where[1] == tcpmodels.__version__


def test_help_and_report_work_outside_the_repository(venv, tmp_path):
    env = _clean_env(venv)
    exe = str(venv / "bin" / "tcpmodels")
    assert not tmp_path.is_relative_to(REPO)
    text = _run([exe, "--help"], cwd=tmp_path, env=env)
    assert "init" in text and "report" in text and "``" not in text  # plain text, not reStructuredText
    assert "``" not in _run([exe, "report", "--help"], cwd=tmp_path, env=env)

    # an empty folder: a clear error that says what to do, not a path inside site-packages
    done = subprocess.run([exe, "report", "p4_lftcp_100g"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "tcpmodels init" in done.stderr and "site-packages" not in done.stderr, done.stderr

    out = _run([exe, "init", "work"], cwd=tmp_path, env=env)
    work = tmp_path / "work"
    assert str(work) in out and (work / "notebooks" / "p4_lftcp_100g.ipynb").is_file() and (work / "figures").is_dir()
    done = subprocess.run([exe, "report", "p4_lftcp_100g", "--no-progress"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0 and "ok" in done.stdout and "p4_lftcp_100g" in done.stdout, done
    assert "tcpmodels report:" not in done.stderr, done.stderr  # no failure, no HTML-conversion error
    assert (work / "reports" / "p4_lftcp_100g.html").is_file() and (work / "reports" / "index.html").is_file()
    assert list((work / "figures").glob("p4_*.png")), "the notebook saved no figure into DIR/figures"
    shipped = Path(_run([str(venv / "bin" / "python"), "-c", "import tcpmodels.report.project as p; print(p.shipped_root())"],
                        cwd=tmp_path, env=env).strip())  # fmt: skip
    assert shipped.is_relative_to(venv) and not (shipped / "reports").exists() and not (shipped / "figures").exists()


def test_analyze_works_outside_the_repository(venv, tmp_path):
    """``tcpmodels analyze`` from the installed wheel finds its report notebook in the package (it looked for
    ``site-packages/notebooks/analyze_capture.ipynb``, built from the repository's layout: issue 49)."""
    env = _clean_env(venv)
    exe = str(venv / "bin" / "tcpmodels")
    capture = tmp_path / "bulk.pcap.gz"
    shutil.copy(REPO / "data" / "captures" / "reno_bulk.pcap.gz", capture)
    done = subprocess.run([exe, "analyze", str(capture), "--output-dir", "out", "--top", "1"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done
    report = tmp_path / "out" / "bulk"
    assert (report / "analyze_capture.ipynb").is_file() and (report / "analyze_capture.html").is_file()
    assert done.stdout.split() == ["out/bulk/analyze_capture.html"]
    assert "site-packages" not in done.stderr, done.stderr


# --------------------------------------------------------------------------- a course from the wheel (issue 55)


def test_a_course_runs_from_the_wheel_students_copies_and_a_lecture_in_lecture_mode(venv, tmp_path):
    """`tcpmodels init course --students` outside the repository, then a lecture executed by `tcpmodels report`
    in lecture mode: student copies without answers, the examples, the lecture's report and figure."""
    env = dict(_clean_env(venv), TCPMODELS_LECTURE="1")
    exe = str(venv / "bin" / "tcpmodels")
    out = _run([exe, "init", "course", "--students"], cwd=tmp_path, env=env)
    course = tmp_path / "course"
    assert "student copies" in out and (course / "examples" / "two_path.toml").is_file()
    lecture = (course / "notebooks" / "teach_bdp_window_scaling.ipynb").read_text()
    assert "<details>" not in lecture and "## Exercises" in lecture
    done = subprocess.run([exe, "report", "teach_bdp_window_scaling", "-p", "quick", "True", "--no-progress"], cwd=course,
                          env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0 and "ok" in done.stdout, done
    assert (course / "reports" / "teach_bdp_window_scaling.html").is_file()
    from PIL import Image

    with Image.open(course / "figures" / "teach_bdp_window_scaling.png") as png:  # the lecture-mode figure: 6 in wide
        assert png.size[0] == 6 * 120, png.size


@pytest.mark.testbed
@pytest.mark.timeout(600)
def test_the_testbed_example_runs_from_an_init_folder(venv, tmp_path, testbed_available):
    """`tcpmodels testbed run examples/two_path.toml` in a folder made by `init`, with the wheel's executable
    (as `sudo .venv/bin/tcpmodels ...` runs it): captures on both paths."""
    env = _clean_env(venv)
    exe = str(venv / "bin" / "tcpmodels")
    _run([exe, "init", "work"], cwd=tmp_path, env=env)
    out = _run([exe, "testbed", "run", "examples/two_path.toml", "--no-progress"], cwd=tmp_path / "work", env=env, timeout_s=540)
    assert "0 failed" in out, out
    captures = list((tmp_path / "work" / "runs").rglob("*.pcap*"))
    assert len(captures) >= 2 and all(c.stat().st_size > 0 for c in captures), captures
