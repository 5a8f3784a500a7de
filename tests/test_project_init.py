"""`tcpmodels init DIR [--students]`: working copies of the notebooks (no outputs, no saved widget state; for
students without the lectures' answers), the data and the testbed examples."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from tcpmodels import cli
from tcpmodels.report.project import ANSWERS_TAG, working_copy

REPO = Path(__file__).resolve().parents[1]
LECTURES = sorted((REPO / "notebooks").glob("teach_*.ipynb"))


def test_every_lecture_has_one_answers_cell_after_its_exercises():
    for path in LECTURES:
        cells = nbformat.read(path, as_version=4).cells
        tagged = [i for i, c in enumerate(cells) if ANSWERS_TAG in c.metadata.get("tags", [])]
        assert len(tagged) == 1, path.name
        assert cells[tagged[0] - 1].source.startswith("## Exercises") and cells[tagged[0]].source.startswith("<details>")
        # the exercises do not point at a block a student copy leaves out
        assert "collapsed block below" not in cells[tagged[0] - 1].source and "Answers" not in cells[tagged[0] - 1].source


def test_init_students_writes_lectures_without_answers_or_outputs_and_the_examples(tmp_path, capsys):
    assert cli.main(["init", str(tmp_path / "class"), "--students"]) == 0
    assert "student copies" in capsys.readouterr().out
    work = tmp_path / "class"
    assert sorted(p.name for p in (work / "examples").glob("*.toml")) == sorted(p.name for p in (REPO / "examples").glob("*.toml"))
    assert (work / "notebooks" / "README.md").is_file() and (work / "figures").is_dir()
    for path in LECTURES:
        source = nbformat.read(path, as_version=4)
        copy = nbformat.read(work / "notebooks" / path.name, as_version=4)
        text = "\n".join(c.source for c in copy.cells)
        answers = next(c.source for c in source.cells if ANSWERS_TAG in c.metadata.get("tags", []))
        assert "<details>" not in text and answers not in text, path.name
        assert len(copy.cells) == len(source.cells) - 1
        assert "## Exercises" in text  # the questions stay
    for copy in (work / "notebooks").glob("*.ipynb"):
        nb = nbformat.read(copy, as_version=4)
        assert not [c for c in nb.cells if c.cell_type == "code" and (c.outputs or c.execution_count)], copy.name
        assert "widgets" not in nb.metadata


def test_working_copy_clears_outputs_and_saved_widget_state_but_keeps_answers(tmp_path):
    src = LECTURES[0]
    nb = nbformat.read(src, as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", text="old output\n")]
    code.execution_count = 7
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {"stale": {}}}}
    run = tmp_path / "run.ipynb"
    nbformat.write(nb, run)
    working_copy(run, tmp_path / "copy.ipynb")
    copy = json.loads((tmp_path / "copy.ipynb").read_text())
    assert "widgets" not in copy["metadata"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in copy["cells"] if c["cell_type"] == "code")
    assert any(ANSWERS_TAG in c["metadata"].get("tags", []) for c in copy["cells"])
