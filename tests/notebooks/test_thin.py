"""Notebooks are thin: no code cell holds more than about ten lines of logic (imports do not count).

Logic that is re-run (tables, joins, provenance, verdict printing) lives in the package; a
notebook calls it. A line of logic is a non-blank, non-comment source line outside an import
statement (a statement spread over several lines counts every line).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
#: "about ten lines" of STYLE.md (Notebooks)
MAX_LOGIC_LINES = 10


def logic_lines(source: str) -> int:
    """Non-blank, non-comment lines of ``source`` that are not part of an import statement."""
    lines = source.splitlines()
    clean = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)
    imports = set()
    for node in ast.walk(ast.parse(clean)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for i, ln in enumerate(lines, 1)
               if ln.strip() and not ln.strip().startswith(("#", "%", "!")) and i not in imports)


def test_logic_lines_counts_what_it_should():
    src = "from a import (\n    b,\n    c,\n)\n# note\n\nx = 1\ny = f(\n    x,\n)\n%matplotlib inline\n"
    assert logic_lines(src) == 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_code_cells_are_thin(path):
    nb = nbformat.read(path, as_version=4)
    fat = [(i, n) for i, c in enumerate(nb.cells) if c.cell_type == "code"
           if (n := logic_lines(c.source)) > MAX_LOGIC_LINES]
    assert not fat, (f"{path.name}: cells (index, lines of logic) {fat} exceed {MAX_LOGIC_LINES}; "
                     "move the logic into the package")
