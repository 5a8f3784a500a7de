"""tcpmodels.papers.common: Claim / claims_frame and Comparison / comparison_frame."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest

from tcpmodels.papers.common import (
    CLAIM_COLUMNS,
    COMPARISON_COLUMNS,
    Claim,
    Comparison,
    claims_frame,
    comparison_frame,
)


def _claim(holds):
    return Claim(claim="C1", paper_says="x is 2", we_measured="x = 2.1", holds=holds, why="rounding")


def test_claims_frame_columns_and_nullable_verdicts():
    frame = claims_frame([_claim(True), _claim(False), _claim(None)])
    assert tuple(frame.columns) == CLAIM_COLUMNS == ("claim", "paper_says", "we_measured", "holds", "why")
    assert str(frame["holds"].dtype) == "boolean"
    assert frame["holds"].iloc[0] is True or frame["holds"].iloc[0] == True  # noqa: E712
    assert frame["holds"].iloc[1] == False  # noqa: E712
    assert frame["holds"].isna().tolist() == [False, False, True]


def test_claims_frame_empty_keeps_columns():
    frame = claims_frame([])
    assert tuple(frame.columns) == CLAIM_COLUMNS and len(frame) == 0


def test_claim_is_frozen_keyword_only_and_validated():
    c = _claim(True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.holds = False
    with pytest.raises(TypeError):
        Claim("C1", "a", "b", True, "c")  # positional arguments are refused
    with pytest.raises(ValueError, match="holds must be True, False or None; got 'yes'"):
        _claim("yes")
    with pytest.raises(ValueError, match="why must be a non-empty string"):
        Claim(claim="C1", paper_says="a", we_measured="b", holds=None, why=" ")
    assert c.to_dict() == {"claim": "C1", "paper_says": "x is 2", "we_measured": "x = 2.1", "holds": True, "why": "rounding"}


def test_claims_frame_rejects_other_rows():
    with pytest.raises(TypeError, match="claims must be Claim instances; got dict"):
        claims_frame([{"claim": "C1"}])


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


def test_read_frames_accepts_data_or_datasets_dir_and_names_the_command(tmp_path):
    import json

    from tcpmodels.papers.common import read_frames

    d = tmp_path / "datasets"
    d.mkdir()
    pd.DataFrame({"a": [1, 2]}).to_parquet(d / "px_runs.parquet")
    (d / "px_provenance.json").write_text(json.dumps({"k": 1}))
    for where in (tmp_path, d):
        got = read_frames(where, "px", ("runs",), optional=("extra",), command="make px")
        assert got["runs"]["a"].tolist() == [1, 2] and got["provenance"] == {"k": 1} and "extra" not in got
    with pytest.raises(FileNotFoundError, match="make px"):
        read_frames(tmp_path, "px", ("runs", "bins"), command="make px")


def test_check_claims_badges_and_before_after():
    from tcpmodels.papers.common import before_after, check_claims, from_old_verdicts, verdict_badge
    from tcpmodels.stats import CLAIM_COLUMNS

    old = claims_frame([Claim(claim="C9.1 x", paper_says="p", we_measured="m", holds=True, why="w"),
                        Claim(claim="C9.2 y", paper_says="p", we_measured="m", holds=None, why="w")])
    new = from_old_verdicts(old, n_runs=3, reason="test")
    assert tuple(new.columns) == CLAIM_COLUMNS and new["verdict"].tolist() == ["supported", "inconclusive"]
    assert check_claims(new) is new
    with pytest.raises(ValueError, match="unknown verdicts"):
        check_claims(new.assign(verdict="holds"))
    changed = new.assign(verdict=["contradicted", "inconclusive"])
    ba = before_after(old, changed)
    assert ba.set_index("id")["changed"].to_dict() == {"C9.1": True, "C9.2": False}
    assert 'class="verdict verdict-supported"' in verdict_badge("supported")


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
