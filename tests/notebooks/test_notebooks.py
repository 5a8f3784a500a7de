"""Every committed notebook: clean (no outputs, a literal-only parameters cell, no logic
definitions) and executable top to bottom with ``quick=True`` under papermill."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from tcpmodels.report import notebook_parameters, run_notebook

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]


def _code_cells(path: Path):
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if c.cell_type == "code"]


def _python_source(cell) -> str:
    """Cell source without IPython magics and shell escapes (which ast cannot parse)."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines()
    )


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOKS_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_without_outputs(path):
    dirty = [i for i, c in enumerate(_code_cells(path)) if c.get("outputs") or c.get("execution_count")]
    assert not dirty, f"{path.name}: code cells {dirty} have outputs or execution counts; strip them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_parameters_cell_holds_only_literals(path):
    tagged = [c for c in _code_cells(path) if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: expected exactly one cell tagged 'parameters', found {len(tagged)}"
    tree = ast.parse(_python_source(tagged[0]))
    names = set()
    for node in tree.body:  # `name = literal` or, typed for papermill --help-notebook, `name: type = literal`
        assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None, (
            f"{path.name}: parameters cell may only assign literals"
        )
        ast.literal_eval(node.value)  # raises if not a literal
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    assert "quick" in names, f"{path.name}: parameters cell must define `quick`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_functions_or_classes(path):
    for index, cell in enumerate(_code_cells(path)):
        for node in ast.walk(ast.parse(_python_source(cell))):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)), (
                f"{path.name} cell {index}: defines a function or class; move it into the package"
            )


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_executes_in_quick_mode(path, tmp_path):
    params = {"quick": True}
    if "figures_dir" in notebook_parameters(path):  # the figures a test run draws must not touch tracked files
        params["figures_dir"] = str(tmp_path / "figures")
    run = run_notebook(path, tmp_path, parameters=params, timeout_s=600)
    assert run.status == "ok", f"{path.name} failed at cell {run.failing_cell}: {run.error}"
    executed = nbformat.read(run.output_ipynb, as_version=4)
    assert any(c.get("outputs") for c in executed.cells if c.cell_type == "code"), "executed notebook shows nothing"
