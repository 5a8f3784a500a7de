"""The report worker's writer of papermill's cell-by-cell saves: the text of nbformat.writes, save after save."""

from __future__ import annotations

import base64
import copy

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tcpmodels.report import _IpynbWriter


def _notebook():
    png = base64.b64encode(bytes(range(256)) * 8).decode()
    cells = [new_markdown_cell("# Title\n\nsome *text* with ünïcode\n"),
             new_code_cell("quick = False", metadata={"tags": ["parameters"]}),
             new_code_cell("print('a')\nprint('b')", outputs=[new_output("stream", name="stdout", text="a\nb\n")]),
             new_code_cell("df", outputs=[new_output("execute_result", execution_count=3, data={
                 "text/plain": "   x\n0  1\n1  2", "text/html": "<table>\n<tr><td>1</td></tr>\n</table>"})]),
             new_code_cell("fig", outputs=[new_output("display_data", data={"image/png": png,
                                                                            "text/plain": "<Figure>"},
                                                      metadata={"needs_background": "light"})]),
             new_code_cell("1/0", outputs=[new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                                      traceback=["Traceback", "  line 1", "ZeroDivisionError"])])]
    cells[-1].metadata["trusted"] = True  # transient: never written
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}, "signature": "x"})
    return nb


def test_every_save_of_a_run_is_the_text_nbformat_writes():
    full = _notebook()
    writer = _IpynbWriter()
    for k in range(len(full.cells) + 1):  # cells after k not run yet, cell k running, as papermill saves them
        state = copy.deepcopy(full)
        for cell in state.cells[k:]:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        if k < len(state.cells):
            state.cells[k].metadata["papermill"] = {"status": "running"}
        state.metadata["papermill"] = {"step": k}
        for _ in range(2):
            assert writer.writes(state) == nbformat.writes(state)
    assert writer.writes(new_notebook()) == nbformat.writes(new_notebook())
    round_trip = nbformat.reads(writer.writes(full), as_version=4)
    assert "trusted" not in round_trip.cells[-1].metadata and "signature" not in round_trip.metadata


def test_a_cell_changed_in_place_is_encoded_again():
    nb = _notebook()
    writer = _IpynbWriter()
    writer.writes(nb)
    nb.cells[2].outputs[0]["text"] = "changed\n"
    nb.cells[4].outputs[0]["data"]["text/plain"] = "<Figure 2>"
    assert writer.writes(nb) == nbformat.writes(nb)
