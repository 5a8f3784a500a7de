"""Notebook parameters are typed (papermill --help-notebook shows the types) and checked before any work,
with the valid values in the error; the notebooks find their folders from wherever papermill runs them."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import nbformat
import pytest

from tcpmodels.notebook.params import Param, check_parameters, choice, find_folder, flag, folder, integer, real, text

REPO = Path(__file__).resolve().parents[1]
#: Lecture notebook -> the module whose PARAMETERS its setup cell checks.
LECTURES = {
    "teach_bdp_window_scaling": "tcpmodels.teaching.bdp",
    "teach_throughput_models": "tcpmodels.teaching.throughput",
    "teach_mptcp_lia": "tcpmodels.teaching.mptcp",
    "teach_heavy_tails": "tcpmodels.teaching.heavytail",
    "teach_trace_explorer": "tcpmodels.teaching.traces",
    "teach_cubic_vs_reno": "tcpmodels.teaching.cubic",
    "teach_bufferbloat_bbr": "tcpmodels.teaching.bufferbloat",
}


def _parameters_cell(name: str) -> dict[str, tuple[str, object]]:
    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    out = {}
    for node in ast.parse(cell.source).body:
        assert isinstance(node, ast.AnnAssign), f"{name}: untyped parameter {ast.unparse(node)!r}"
        out[node.target.id] = (ast.unparse(node.annotation), ast.literal_eval(node.value))
    return out


@pytest.mark.parametrize("name", sorted(LECTURES))
def test_parameters_cell_types_and_defaults_agree_with_the_checked_specification(name):
    spec = importlib.import_module(LECTURES[name]).PARAMETERS
    cell = _parameters_cell(name)
    assert list(cell) == list(spec) or set(cell) == set(spec), (list(cell), list(spec))
    for key, (annotation, default) in cell.items():
        assert annotation == spec[key].kind, f"{name}: {key} is annotated {annotation}, checked as {spec[key].kind}"
    check_parameters(spec, **{key: default for key, (_, default) in cell.items()})  # the defaults are valid


@pytest.mark.parametrize("name", sorted(LECTURES))
def test_papermill_help_shows_a_type_and_a_help_line_for_every_parameter(name):
    papermill = pytest.importorskip("papermill")
    params = papermill.inspect_notebook(str(REPO / "notebooks" / f"{name}.ipynb"))
    assert params, name
    for key, info in params.items():
        assert info["inferred_type_name"] in ("bool", "int", "float", "str"), (key, info)
        assert info["help"].strip(), f"{name}: {key} has no help comment"


def test_check_parameters_names_every_bad_parameter_with_its_valid_values():
    spec = {"quick": flag(), "rtt_ms": real(0, 1000, "ms", low_open=True), "n": integer(1, 10), "how": choice(("a", "b")),
            "where": folder(), "name": text()}  # fmt: skip
    check_parameters(spec, quick=False, rtt_ms=1000, n=1, how="b", where="../data", name="x")
    with pytest.raises(ValueError) as info:
        check_parameters(spec, quick="true", rtt_ms="abc", n=2.0, how="c", where=1, name="x")
    text_ = str(info.value)
    assert "quick must be True or False; got 'true' (str)" in text_
    assert "rtt_ms must be a number in (0, 1000] ms; got 'abc' (str)" in text_
    assert "n must be an integer in [1, 10]; got 2.0 (float)" in text_
    assert "how must be one of 'a', 'b'; got 'c'" in text_
    assert "where must be a string" in text_ and "papermill -p NAME VALUE" in text_
    for bad in (0, 1000.5, float("nan"), True):
        with pytest.raises(ValueError, match="rtt_ms must be a number in \\(0, 1000\\] ms"):
            check_parameters({"rtt_ms": spec["rtt_ms"]}, rtt_ms=bad)
    with pytest.raises(ValueError, match=r"zoom is unknown .*; rtt_ms is missing"):
        check_parameters({"rtt_ms": spec["rtt_ms"]}, zoom=1)
    with pytest.raises(ValueError, match="kind must be one of"):
        Param(kind="list")


def test_find_folder_from_the_notebooks_folder_the_project_root_and_below(tmp_path):
    project = tmp_path / "work"
    (project / "notebooks").mkdir(parents=True)
    (project / "data" / "captures").mkdir(parents=True)
    (project / "notebooks" / "x.ipynb").write_text("{}")
    data = str((project / "data").resolve())
    for cwd in (project / "notebooks", project, project / "data" / "captures"):
        assert find_folder("../data", cwd=cwd) == data, cwd
    figures = find_folder("../figures", "figures_dir", create=True, cwd=project)
    assert figures == str((project / "figures").resolve()) and Path(figures).is_dir()
    assert find_folder(data, cwd=tmp_path) == data  # absolute: as given
    with pytest.raises(FileNotFoundError) as info:
        find_folder("../data", "data_dir", cwd=tmp_path)
    assert f"working directory {tmp_path.resolve()}" in str(info.value) and "-p data_dir" in str(info.value)


@pytest.mark.notebook
@pytest.mark.timeout(300)
def test_a_wrong_type_fails_in_the_first_cell_after_the_parameters_naming_the_valid_values(tmp_path):
    from tcpmodels.report import run_notebook

    nb = REPO / "notebooks" / "teach_bdp_window_scaling.ipynb"
    run = run_notebook(nb, tmp_path, parameters={"rtt_ms": "abc", "figures_dir": str(tmp_path)}, timeout_s=240)
    assert run.status == "failed"
    assert run.failing_cell == 2, run  # the setup cell, right after the parameters: before any figure is drawn
    assert "rtt_ms must be a number in [0.1, 1000] ms; got 'abc' (str)" in run.error


@pytest.mark.notebook
@pytest.mark.timeout(300)
def test_papermill_run_from_the_project_root_finds_data(tmp_path):
    """`papermill notebooks/teach_trace_explorer.ipynb out.ipynb` from the checkout's root (its working directory)."""
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(str(REPO / "notebooks" / "teach_trace_explorer.ipynb"), str(out), cwd=str(REPO),
                               parameters={"quick": True, "figures_dir": str(tmp_path / "figures")},
                               progress_bar=False, kernel_name="python3")  # fmt: skip
    assert (tmp_path / "figures" / "teach_trace_explorer.png").is_file()
