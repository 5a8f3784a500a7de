"""The report command: papermill execution, index page, failure reporting, timeouts."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tcpmodels import cli
from tcpmodels.report import find_notebooks, run_report


def _write_notebook(path: Path, *sources: str, parameters: str = "quick = False") -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), params] + [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture
def notebooks(tmp_path):
    d = tmp_path / "notebooks"
    d.mkdir()
    _write_notebook(d / "good.ipynb", "print('quick is', quick)")
    _write_notebook(d / "bad.ipynb", "x = 1", "raise RuntimeError('boom in cell')")
    return d


@pytest.mark.notebook
def test_report_runs_all_writes_index_and_names_failing_cell(notebooks, tmp_path):
    out = tmp_path / "reports"
    runs = {r.name: r for r in run_report(parameters={"quick": True}, notebooks_dir=notebooks,
                                          output_dir=out, progress=False)}
    assert runs["good"].status == "ok"
    assert runs["bad"].status == "failed"
    # source cells: 0 markdown, 1 parameters, 2 "x = 1", 3 raise (papermill's own cells are not counted)
    assert runs["bad"].failing_cell == 3
    assert "boom in cell" in runs["bad"].error
    executed = nbformat.read(runs["good"].output_ipynb, as_version=4)
    assert "quick is True" in "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    index = (out / "index.html").read_text()
    assert "good.html" in index and "bad.html" in index and "boom in cell" in index
    assert runs["bad"].output_ipynb.exists(), "the failed notebook's executed copy is kept"


@pytest.mark.notebook
def test_side_by_side_and_one_by_one_give_the_same_runs_in_name_order(notebooks, tmp_path):
    _write_notebook(notebooks / "another.ipynb", "print('another', quick)")
    serial = run_report(notebooks_dir=notebooks, output_dir=tmp_path / "one", progress=False, jobs=1)
    parallel = run_report(notebooks_dir=notebooks, output_dir=tmp_path / "two", progress=False, jobs=3)
    assert [r.name for r in serial] == [r.name for r in parallel] == ["another", "bad", "good"]
    assert [(r.status, r.failing_cell) for r in serial] == [(r.status, r.failing_cell) for r in parallel]
    assert [r.status for r in parallel] == ["ok", "failed", "ok"]
    assert all(r.output_ipynb.parent == tmp_path / "two" and r.output_ipynb.exists() for r in parallel)


def test_report_refuses_jobs_below_one(notebooks, tmp_path, capsys):
    with pytest.raises(ValueError, match="jobs must be an integer >= 1; got 0"):
        run_report(notebooks_dir=notebooks, output_dir=tmp_path / "out", progress=False, jobs=0)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["report", "--notebooks-dir", str(notebooks), "--jobs", "0"])
    assert exit_.value.code == 2
    assert "argument -j/--jobs: must be an integer >= 1; got '0'" in capsys.readouterr().err


@pytest.mark.notebook
def test_timeout_bounds_the_whole_notebook(tmp_path):
    d = tmp_path / "nb"
    d.mkdir()
    _write_notebook(d / "slow.ipynb", "import time", "time.sleep(60)")
    (run,) = run_report(notebooks_dir=d, output_dir=tmp_path / "out", timeout_s=8, progress=False)
    assert run.status == "failed"
    assert "timed out" in run.error
    assert run.seconds < 40


def test_unknown_notebook_name_lists_available(notebooks):
    with pytest.raises(FileNotFoundError, match="no notebook named nope.*available: bad, good"):
        find_notebooks(notebooks, ["nope"])


@pytest.mark.notebook
def test_cli_exit_code_names_failure(notebooks, tmp_path, capsys):
    code = cli.main(["report", "bad", "--notebooks-dir", str(notebooks), "--output-dir", str(tmp_path / "r"),
                     "--no-progress"])
    assert code == 1
    err = capsys.readouterr().err
    assert "bad failed at cell 3" in err and "RuntimeError: boom in cell" in err


def test_cli_has_report_and_help(capsys):
    parser = cli.build_parser()
    args = parser.parse_args(["report", "a", "-p", "quick", "True"])
    assert args.names == ["a"] and args.parameter == [["quick", "True"]]
    assert cli.main([]) == 2
    assert "report" in capsys.readouterr().err


# --------------------------------------------------------------------------- paths and help


def test_default_dirs_are_relative_to_the_working_directory_never_the_package(tmp_path, monkeypatch):
    import tcpmodels
    from tcpmodels.report import default_dirs

    monkeypatch.chdir(tmp_path)
    assert default_dirs() == (tmp_path / "notebooks", tmp_path / "reports")
    assert default_dirs("nb", "out") == (tmp_path / "nb", tmp_path / "out")
    assert default_dirs(tmp_path / "x", None, cwd="/elsewhere") == (tmp_path / "x", Path("/elsewhere/reports"))
    package = Path(tcpmodels.__file__).resolve().parent
    assert not any(p.is_relative_to(package.parent) for p in default_dirs())


def test_missing_notebooks_folder_says_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "p4_lftcp_100g", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"no notebooks folder {tmp_path / 'notebooks'}" in err and "tcpmodels init DIR" in err
    (tmp_path / "notebooks").mkdir()
    with pytest.raises(FileNotFoundError, match="no .ipynb notebook in"):
        find_notebooks(tmp_path / "notebooks")


def test_help_is_plain_text(capsys):
    for argv in (["--help"], ["report", "--help"], ["init", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text and "usage: tcpmodels" in text, argv
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    import tcpmodels

    assert capsys.readouterr().out.strip() == f"tcpmodels {tcpmodels.__version__}"


def test_init_writes_a_ready_folder_and_refuses_to_overwrite(tmp_path, capsys):
    from tcpmodels.report.project import shipped_root

    root = Path(__file__).resolve().parents[1]
    assert shipped_root() == root  # a checkout: its own folders are the source
    assert cli.main(["init", str(tmp_path / "work")]) == 0
    work = tmp_path / "work"
    assert sorted(p.name for p in (work / "notebooks").glob("*.ipynb")) == sorted(p.name for p in (root / "notebooks").glob("*.ipynb"))
    assert (work / "data" / "captures" / "cubic_bulk.pcap.gz").read_bytes() == (root / "data" / "captures" / "cubic_bulk.pcap.gz").read_bytes()
    assert (work / "figures").is_dir()
    assert "cd " in capsys.readouterr().out
    assert cli.main(["init", str(work)]) == 2
    assert "--force" in capsys.readouterr().err
    (work / "notebooks" / "extra.ipynb").write_text("{}")
    assert cli.main(["init", str(work), "--force"]) == 0
    assert not (work / "notebooks" / "extra.ipynb").exists()


@pytest.mark.notebook
def test_a_failed_rerun_never_points_at_the_previous_copy(notebooks, tmp_path, capsys):
    out = tmp_path / "reports"
    (first,) = run_report(["good"], notebooks_dir=notebooks, output_dir=out, progress=False)
    assert first.status == "ok" and first.output_ipynb.exists()
    (notebooks / "good.ipynb").write_text("{ this is not a notebook")
    code = cli.main(["report", "good", "--notebooks-dir", str(notebooks), "--output-dir", str(out), "--no-progress"])
    assert code == 1
    err = capsys.readouterr().err
    assert "good.ipynb is not a readable notebook" in err and "(no executed copy)" in err
    assert not (out / "good.ipynb").exists() and not (out / "good.html").exists()
    assert "good.html" not in (out / "index.html").read_text()


@pytest.mark.notebook
def test_a_kernel_that_dies_is_reported_at_its_cell(tmp_path):
    d = tmp_path / "nb"
    d.mkdir()
    _write_notebook(d / "dies.ipynb", "x = 1", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    (run,) = run_report(notebooks_dir=d, output_dir=tmp_path / "out", timeout_s=120, progress=False)
    assert run.status == "failed" and run.failing_cell == 3, run


@pytest.mark.notebook
def test_one_worker_survives_a_dead_kernel_and_is_replaced_after_a_hang(tmp_path):
    # one job: the three notebooks go through the same worker process, in name order
    d = tmp_path / "nb"
    d.mkdir()
    _write_notebook(d / "a_dies.ipynb", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    _write_notebook(d / "b_hangs.ipynb", "import time", "time.sleep(600)")
    _write_notebook(d / "c_good.ipynb", "print('quick is', quick)")
    _write_notebook(d / "d_raises.ipynb", "raise ValueError('late boom')")
    _write_notebook(d / "e_good.ipynb", "print('still', quick)")
    # the timeout also bounds a fresh worker's start before the next notebook: the other four notebooks took
    # 12 s together, fresh workers included, in a full `make test` (2026-11-29), so 30 s each is ample
    runs = run_report(parameters={"quick": True}, notebooks_dir=d, output_dir=tmp_path / "out", timeout_s=30,
                      progress=False, jobs=1)
    assert [(r.name, r.status, r.failing_cell) for r in runs] == [
        ("a_dies", "failed", 2), ("b_hangs", "failed", 3), ("c_good", "ok", None), ("d_raises", "failed", 2),
        ("e_good", "ok", None)], runs
    assert "timed out after 30 s" in runs[1].error and "ValueError: late boom" in runs[3].error
    outputs = {r.name: "".join(o.get("text", "") for c in nbformat.read(r.output_ipynb, as_version=4).cells
                               for o in c.get("outputs", [])) for r in runs if r.status == "ok"}
    assert outputs == {"c_good": "quick is True\n", "e_good": "still True\n"}
    assert all(r.output_html is not None and r.output_html.exists() for r in runs)


@pytest.mark.notebook
def test_a_warm_kernel_looks_like_a_launched_one(tmp_path):
    # what the kernel of a notebook sees of its process must not depend on how the kernel was started
    d = tmp_path / "nb"
    d.mkdir()
    probe = ("import os, sys, random\n"
             "import numpy as np\n"
             "import pandas as pd\n"
             "import matplotlib, matplotlib.pyplot as plt\n"
             "from ipykernel.kernelapp import IPKernelApp\n"
             "app = IPKernelApp.instance()\n"
             "print(os.getcwd(), sys.path, os.path.basename(sys.argv[0]), sys.argv[1], sys.argv[3:], app.parent_handle == os.getppid(),\n"
             "      app.poller is not None, os.getpgid(0) == os.getpid(), sorted(k for k in os.environ if k.startswith(('JPY', 'MPL', 'PYDEVD'))),\n"
             "      pd.get_option('display.max_columns'), pd.get_option('display.width'), matplotlib.get_backend(),\n"
             "      'tcpmodels.report.kernels' in sys.modules, 'matplotlib_inline.backend_inline' in sys.modules)")
    _write_notebook(d / "probe.ipynb", probe, "plt.plot([1, 2]); print(sorted(plt.get_fignums()))")
    seen = {}
    for warm in (False, True):
        out = tmp_path / f"out_{warm}"
        monkey = pytest.MonkeyPatch()
        monkey.setattr("tcpmodels.report.WARM_KERNELS", warm)
        try:
            (run,) = run_report(notebooks_dir=d, output_dir=out, progress=False)
        finally:
            monkey.undo()
        assert run.status == "ok", run
        cells = nbformat.read(run.output_ipynb, as_version=4).cells
        seen[warm] = [[o.get("text") or sorted(o.get("data", {})) for o in c.get("outputs", [])] for c in cells]
    assert seen[True] == seen[False]
    assert " True True True " in seen[True][2][0]  # the kernel ends with its parent, in its own session


@pytest.mark.parametrize("argv, message", [
    (["--timeout", "0"], r"argument --timeout: must be a number of seconds > 0; got '0'"),
    (["--timeout", "-5"], r"argument --timeout: must be a number of seconds > 0; got '-5'"),
    (["--timeout", "soon"], r"argument --timeout: must be a number of seconds > 0; got 'soon'"),
])
def test_report_refuses_impossible_timeouts(argv, message, notebooks, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["report", "--notebooks-dir", str(notebooks), *argv])
    assert exit_.value.code == 2
    import re

    assert re.search(message, capsys.readouterr().err)


def test_report_refuses_unknown_parameters_and_a_file_as_output_dir(notebooks, tmp_path, capsys):
    code = cli.main(["report", "--notebooks-dir", str(notebooks), "-p", "quik", "True", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown notebook parameter(s) ['quik']" in err and "known: ['quick']" in err
    afile = tmp_path / "afile"
    afile.write_text("x")
    code = cli.main(["report", "--notebooks-dir", str(notebooks), "--output-dir", str(afile), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert f"the output directory {afile} is a file, not a folder (--output-dir)" in err
    assert "Traceback" not in err

def _executed(path: Path, *, with_claims: bool = True) -> Path:
    """A small executed notebook: title, papermill parameters, a figure, a claims-table cell with badges."""
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    png = base64.b64encode(buf.getvalue()).decode()
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"parameters": {"quick": True, "seed": 3}}
    figure = nbformat.v4.new_code_cell("fig")
    figure.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    badges = ('<span class="verdict verdict-supported">supported</span>' * 2
              + '<span class="verdict verdict-inconclusive">inconclusive</span>')
    table = nbformat.v4.new_code_cell("claims_full(v)", metadata={"tags": ["claims-table"]})
    table.outputs = [nbformat.v4.new_output("execute_result", data={"text/html": badges}, execution_count=2)]
    nb.cells = [nbformat.v4.new_markdown_cell("# P9 — a paper\n\nmore text"), figure] + ([table] if with_claims else [])
    nbformat.write(nb, path)
    return path


def test_index_shows_description_mode_counts_thumbnail_links_and_failures(tmp_path):
    from tcpmodels.report import NotebookRun, write_index
    from tcpmodels.report.index import notebook_summary

    good = _executed(tmp_path / "p9.ipynb")
    (tmp_path / "p9.html").write_text("<html></html>")
    bad = _executed(tmp_path / "bad.ipynb", with_claims=False)
    info = notebook_summary(good)
    assert info["description"] == "P9 — a paper" and info["mode"] == "quick"
    assert info["counts"] == {"supported": 2, "smaller than claimed": 0, "contradicted": 0, "inconclusive": 1,
                              "not testable here": 0}
    assert notebook_summary(bad)["counts"] is None
    runs = [NotebookRun(name="p9", status="ok", seconds=1.5, output_ipynb=good, output_html=tmp_path / "p9.html"),
            NotebookRun(name="bad", status="failed", seconds=0.2, output_ipynb=bad, output_html=None,
                        error="ValueError: boom", failing_cell=4)]
    page = write_index(runs, tmp_path).read_text()
    assert "P9 — a paper" in page and "seed=3" in page and "<b>quick</b>" in page
    assert "2 supported" in page and "1 inconclusive" in page and "no claims table" in page
    assert "href='p9.html'" in page and "href='p9.ipynb'" in page and "href='bad.ipynb'" in page
    assert "cell 4: ValueError: boom" in page
    assert (tmp_path / "thumbs" / "p9.png").stat().st_size > 500 and "thumbs/p9.png" in page


class _FlakyWorker:
    """Answers like the report worker: first the given failures, then success (writing the executed copy)."""

    def __init__(self, failures):
        self.failures, self.calls = list(failures), 0

    def run(self, job, timeout_s):
        self.calls += 1
        if self.failures:
            return "failed", self.failures.pop(0), 0.5, None, ""
        Path(job["output"]).write_text(Path(job["notebook"]).read_text())
        return "ok", "", 1.0, None, ""


def test_a_notebook_whose_kernel_died_at_start_runs_once_more_and_says_so(notebooks, tmp_path):
    """Kernels started side by side can die before the first cell ("Kernel died before replying to kernel_info",
    1 of 8 parallel runs of three notebooks here): nothing ran, so the notebook gets one more start; a failure in a
    cell, or a second dead start, is reported as it is."""
    from tcpmodels.report import _run_notebook_in

    died = "RuntimeError: Kernel died before replying to kernel_info"
    w = _FlakyWorker([died])
    run = _run_notebook_in(w, notebooks / "good.ipynb", tmp_path / "out", None, 60.0)
    assert (run.status, run.kernel_start_retries, w.calls) == ("ok", 1, 2) and run.seconds == 1.5
    assert run.to_dict()["kernel_start_retries"] == 1
    w = _FlakyWorker([died, died])
    run = _run_notebook_in(w, notebooks / "good.ipynb", tmp_path / "out2", None, 60.0)
    assert (run.status, run.kernel_start_retries, w.calls) == ("failed", 1, 2) and "kernel_info" in run.error
    w = _FlakyWorker(["RuntimeError: boom in cell"])
    run = _run_notebook_in(w, notebooks / "good.ipynb", tmp_path / "out3", None, 60.0)
    assert (run.status, run.kernel_start_retries, w.calls) == ("failed", 0, 1)
