"""tcpmodels.papers.common: Comparison / comparison_frame, the claims views and the answer box."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tcpmodels.papers.common import (
    COMPARISON_COLUMNS,
    Comparison,
    comparison_frame,
)


def test_comparison_frame_relative_difference():
    frame = comparison_frame(
        [
            Comparison(quantity="rate", paper=29.0, ours=29.0196, unit="Gbit/s", note="window / RTT"),
            Comparison(quantity="share", paper=97.7, ours=99.93, unit="%"),
            Comparison(quantity="bdp", paper=math.nan, ours=3.7, unit="GB"),
            Comparison(quantity="zero", paper=0.0, ours=1.0, unit="-"),
            Comparison(quantity="negative", paper=-2.0, ours=-1.0, unit="-"),
        ]
    )
    assert tuple(frame.columns) == COMPARISON_COLUMNS
    assert frame.rel_diff.iloc[0] == pytest.approx(0.0196 / 29)
    assert frame.rel_diff.iloc[1] == pytest.approx((99.93 - 97.7) / 97.7)
    assert math.isnan(frame.rel_diff.iloc[2]) and math.isnan(frame.rel_diff.iloc[3])
    assert frame.rel_diff.iloc[4] == pytest.approx(0.5)
    assert frame.note.iloc[1] == ""
    assert pd.api.types.is_float_dtype(frame.paper) and pd.api.types.is_float_dtype(frame.ours)


def test_comparison_frame_rejects_other_rows():
    with pytest.raises(TypeError, match="rows must be Comparison instances; got tuple"):
        comparison_frame([("rate", 1, 2, "-")])


def _table():
    from tcpmodels.stats import ClaimSpec, claims_table, difference, not_testable

    spec = ClaimSpec(claim="C9.1 x", part="p", paper_says="p", quantity="q", smallest_effect=0.1, effect_source="t")
    return claims_table([difference(spec, [0.5, 0.6, 0.55]), difference(spec, [0.01, 0.02, 0.015]),
                         not_testable(spec, we_measured="m", why="no data here")], family="kernel")


def test_check_claims_badges_and_summary_views():
    from tcpmodels.papers.common import check_claims
    from tcpmodels.papers.display import claims_full, claims_summary, verdict_badge
    from tcpmodels.stats import VERDICT_COLUMNS

    t = _table()
    assert tuple(t.columns) == VERDICT_COLUMNS and check_claims(t) is t
    with pytest.raises(ValueError, match="unknown verdicts"):
        check_claims(t.assign(verdict="holds"))
    with pytest.raises(ValueError, match="columns"):
        check_claims(t.drop(columns="pvalue_holm"))
    assert 'class="verdict verdict-supported"' in verdict_badge("supported")
    assert 'class="verdict verdict-smaller-than-claimed"' in verdict_badge("smaller than claimed")
    head = claims_summary(t, rows=[0]).to_html()
    assert "p (Holm)" in head and head.count('class="verdict ') == 1
    assert claims_full(t).to_html().count('class="verdict ') == 3


def test_answer_box_and_holm_note():
    from tcpmodels.papers.display import answer_box, holm_note

    t = _table()
    assert t["verdict"].tolist() == ["supported", "smaller than claimed", "not testable here"]
    note = str(holm_note(t))
    assert "kernel 2" in note and "changed no label" in note
    box = answer_box(["One.", "Two"])
    assert str(box) == "One. Two." and "Answer." in box._repr_html_()
    with pytest.raises(ValueError, match="1 to 3"):
        answer_box(["a.", "b.", "c.", "d."])
    with pytest.raises(ValueError, match="1 to 3"):
        answer_box([])
    with pytest.raises(ValueError, match="one sentence"):
        answer_box(["Does it hold? Yes, on 2 of 3 engines.", "Two."])
    assert str(answer_box(["A mean of 0.05 [0.01, 0.09] (C3.1) holds, e.g. on the kernel."])).count(".") == 7


def test_a_rerun_takes_over_only_once_it_replaces_every_unsteered_cell():
    from tcpmodels.papers.common import rerun_once_caught_up

    old = pd.DataFrame({"testbed": "reordering", "cell": ["a", "a", "b"]})
    rerun = lambda cells, tb="pinned": pd.DataFrame({"testbed": tb, "cell": cells})  # noqa: E731
    assert rerun_once_caught_up(old, ["cell"], "pinned") == "reordering"  # no rerun sample
    assert rerun_once_caught_up(pd.concat([old, rerun(["a", "b"])]), ["cell"], "pinned") == "reordering"  # a: 1 < 2
    assert rerun_once_caught_up(pd.concat([old, rerun(["a", "a", "b"])]), ["cell"], "pinned") == "pinned"
    # samples of another rerun do not count for this one
    assert rerun_once_caught_up(pd.concat([old, rerun(["a", "a", "b"], "steered")]), ["cell"], "pinned") == "reordering"
    # a rerun at a setting with no unsteered sample replaces nothing
    assert rerun_once_caught_up(rerun(["a", "b"]), ["cell"], "pinned") == "reordering"


def test_holm_note_names_the_parts_the_correction_made_inconclusive():
    from tcpmodels.papers.display import holm_note
    from tcpmodels.stats import ClaimSpec, claims_table, difference

    def spec(claim, part):
        return ClaimSpec(claim=claim, part=part, paper_says="p", quantity="q", smallest_effect=0.1, effect_source="t")

    rng = np.random.default_rng(5)
    rows = [difference(spec("C1.3 [kernel, tm_lia] x", "a"), rng.normal(1.0, 0.5, 40)),
            difference(spec("Fig. 7 [kernel, tm_lia] y", "b"), [0.05, 0.6, 0.35, 0.9, 0.5, 0.1, 0.45]),  # p = 0.027
            difference(spec("C1.1 [kernel, tm_lia] z", "c"), [-0.2, 0.5, 0.1, 0.3])]
    note = str(holm_note(claims_table(rows, family="P1 kernel")))
    assert "P1 kernel 3" in note and "It made 1 decided label(s) inconclusive: Fig. 7 [kernel, tm_lia] / b." in note
