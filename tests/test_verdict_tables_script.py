"""scripts/verdict_tables.py: the before/after comparison of two verdict dumps (the dump runs the notebooks' calls)."""

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "verdict_tables.py"


@pytest.fixture(scope="module")
def vt():
    spec = importlib.util.spec_from_file_location("verdict_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(claim, part, effect, lo, hi, n, verdict, needed=float("nan")):
    return {"claim": claim, "part": part, "paper_says": "-", "we_measured": "-", "effect": effect, "ci_low": lo,
            "ci_high": hi, "n_runs": n, "test": "-", "verdict": verdict, "runs_needed": needed, "why": "-"}


def _dump(folder: Path, rows) -> Path:
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "p1.csv", index=False)
    return folder


def test_parts_are_matched_after_a_rename_and_parts_on_one_side_show_a_dash(vt, tmp_path):
    before = _dump(tmp_path / "b", [
        _row("C1.3 [kernel] Table 2: all higher", "mean higher", 0.365, 0.23, 0.5, 4, "supported"),
        _row("C1.3 [kernel] Table 2: all higher", "gone since", 0.1, -0.1, 0.3, 4, "inconclusive", 38),
    ])
    after = _dump(tmp_path / "a", [
        _row("C1.3 [kernel, uncoupled] Table 2: all higher", "mean higher", 0.226, 0.195, 0.256, 17, "supported"),
        _row("Fig. 7 [kernel, tm_lia] more flows see loss", "(a) share", 0.0232, 0.0122, 0.0342, 17, "contradicted"),
    ])
    text = vt.compare(before, after, ["[kernel]=[kernel, uncoupled]"], ["p1"])
    lines = text.splitlines()
    assert "| C1.3 [kernel, uncoupled] | mean higher | +0.365 [+0.23, +0.5] sup., n=4 | " \
           "+0.226 [+0.195, +0.256] sup., n=17 |" in lines
    assert "| Fig. 7 [kernel, tm_lia] | (a) share | — | +0.0232 [+0.0122, +0.0342] contr., n=17 |" in lines
    assert "| C1.3 [kernel, uncoupled] | gone since | +0.1 [-0.1, +0.3] inc. (38), n=4 | — |" in lines


def test_a_point_value_has_no_interval_and_a_missing_dump_names_its_file(vt, tmp_path):
    assert vt.cell(_row("C4.1 x", "p", 0.0196, 0.0196, 0.0196, 0, "supported")) == "+0.0196 sup."
    assert vt.short_claim("C3.1 With Reno at 1 ms [reading: divide]") == "C3.1 [reading: divide]"
    after = _dump(tmp_path / "a", [_row("C1.1 [ns3, lia] q", "(a)", 0.01, 0.0, 0.02, 10, "supported")])
    with pytest.raises(SystemExit, match=r"nothere/p1\.csv: missing"):
        vt.compare(tmp_path / "nothere", after, [], ["p1"])
    with pytest.raises(SystemExit, match="OLD=NEW"):
        vt.compare(after, after, ["no-equals-sign"], ["p1"])


def test_counts_table_and_the_new_outcomes_are_shortened(vt, tmp_path):
    before = _dump(tmp_path / "b", [_row("C3.2 x", "divide", 0.0091, 0.0002, 0.018, 30, "supported"),
                                    _row("C2.3 y", "gain", 0.04, 0.02, 0.06, 256, "contradicted")])
    after = _dump(tmp_path / "a", [_row("C3.2 x", "divide", 0.0091, 0.0002, 0.018, 30, "inconclusive", 5603),
                                   _row("C2.3 y", "gain", 0.04, 0.02, 0.06, 256, "not testable here")])
    table = vt.counts(before, after, ["p1", "p2"]).splitlines()
    assert table[0] == "| paper | parts | supported | smaller than claimed | contradicted | inconclusive | not testable here |"
    assert table[2] == "| P1 | 2 -> 2 | 1 -> 0 | 0 -> 0 | 1 -> 0 | 0 -> 1 | 0 -> 1 |"
    assert table[3] == "| P2 | - -> - | - -> - | - -> - | - -> - | - -> - | - -> - |"
    assert vt.cell(_row("C", "p", 0.04, 0.02, 0.06, 256, "not testable here")) == "+0.04 [+0.02, +0.06] n.t., n=256"
    assert vt.cell(_row("C", "p", 0.02, 0.01, 0.03, 9, "smaller than claimed")) == "+0.02 [+0.01, +0.03] smaller, n=9"


def test_a_paper_one_dump_did_not_judge_shows_a_dash_on_that_side(vt, tmp_path):
    """dump writes no CSV for a paper whose dataset is not shipped (P2's lossy setting before its first complete
    repetition): compare shows its parts as new, but a dump folder that does not exist is still an error."""
    before = _dump(tmp_path / "b", [_row("C2.1 x", "p", 0.01, 0.0, 0.02, 10, "supported")])
    after = _dump(tmp_path / "a", [_row("C2.1 x", "p", 0.01, 0.0, 0.02, 10, "supported")])
    pd.DataFrame([_row("C2.2 [lossy] y", "fraction", 0.3, 0.2, 0.4, 256, "supported")]).to_csv(
        after / "p2_lossy.csv", index=False)
    lines = vt.compare(before, after, [], ["p2_lossy"]).splitlines()
    assert "| C2.2 [lossy] | fraction | — | +0.3 [+0.2, +0.4] sup., n=256 |" in lines
    with pytest.raises(SystemExit, match="missing"):
        vt.compare(before, after, [], ["p3"])
