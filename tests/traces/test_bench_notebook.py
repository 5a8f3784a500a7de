"""benchmarks/plot_results.ipynb: committed clean, a literal parameters cell, no definitions; it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from tcpmodels.report import run_notebook

NOTEBOOK = Path(__file__).resolve().parents[2] / "benchmarks" / "plot_results.ipynb"


def _code(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_plot_results_notebook_is_clean():
    cells = _code(NOTEBOOK)
    assert not [i for i, c in enumerate(cells) if c.get("outputs") or c.get("execution_count")]
    tagged = [c for c in cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for node in ast.parse(tagged[0].source).body:
        assert isinstance(node, ast.Assign)
        ast.literal_eval(node.value)
    for cell in cells:
        for node in ast.walk(ast.parse(cell.source)):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))


@pytest.mark.notebook
def test_plot_results_notebook_runs(tmp_path):
    run = run_notebook(NOTEBOOK, tmp_path, parameters={"figures_dir": str(tmp_path)}, timeout_s=600)
    assert run.status == "ok", f"failed at cell {run.failing_cell}: {run.error}"
    executed = nbformat.read(run.output_ipynb, as_version=4)
    text = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "results from" in text
    assert (tmp_path / "bench_hurst.png").exists() and (tmp_path / "bench_streaming.png").exists()
