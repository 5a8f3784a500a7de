"""P4 (LFTCP press release): constants, sizing tables, the 97.7 % analysis, claim verdicts, figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.papers import p4_lftcp as p4
from tcpmodels.papers.common import COMPARISON_COLUMNS
from tcpmodels.papers.display import claims_full, claims_summary
from tcpmodels.stats import VERDICT_COLUMNS

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"


@pytest.mark.parametrize("row", pd.read_csv(PUBLISHED / "p4_lftcp_press_release.csv").to_dict("records"))
def test_constants_match_press_release(row):
    assert getattr(p4, row["constant"]) == pytest.approx(row["value"], rel=1e-12), row["source"]


def _tables(**kw):
    return p4.tables(p4.P4Dataset(**kw))


def _claims(**kw):
    ds = p4.P4Dataset(**kw)
    return p4.claims(ds, p4.tables(ds))


def test_contract():
    ds = p4.load_dataset("data")
    assert ds.link_rate_bps == 100e9 and ds.rtt_s == 0.296
    with pytest.raises(TypeError, match="P4Dataset"):
        p4.tables(None)


def test_tables_keys_and_paper_vs_ours():
    tables = _tables()
    assert set(tables) == {"paper_vs_ours", "path", "in_flight", "sizing", "ratio_97_7"}
    cmp = tables["paper_vs_ours"].set_index("quantity")
    assert tuple(tables["paper_vs_ours"].columns) == COMPARISON_COLUMNS
    limit = cmp.loc["standard TCP limit on the path"]
    assert limit.paper == 29.0 and limit.unit == "Gbit/s"
    assert limit.ours == pytest.approx(29.0196, abs=5e-5)
    assert abs(limit.rel_diff) < 0.5 / 29  # within the printing precision of "29"
    assert cmp.loc["29 Gbit/s as a share of the theoretical value"].ours == pytest.approx(99.93, abs=0.01)
    assert cmp.loc["BDP of the path"].ours == pytest.approx(3.7)
    assert np.isnan(cmp.loc["BDP of the path"].paper)  # the release prints no BDP
    assert cmp.loc["in flight needed for 73 Gbit/s"].ours == pytest.approx(2.701)


def test_path_table_values():
    path = p4.path_table().set_index("quantity").value
    assert path["BDP"] == pytest.approx(3.7e9)
    assert path["largest TCP window (shift 14)"] == 1_073_725_440
    assert path["window ceiling at RTT"] == pytest.approx(1_073_725_440 * 8 / 0.296)
    assert path["window shift needed to fill link"] == 16
    assert path["in flight at 73 Gbit/s"] == pytest.approx(73e9 * 0.296 / 8)
    assert path["sequence-space wrap time at 73 Gbit/s"] == pytest.approx(2**32 * 8 / 73e9)
    assert path["theoretical rate implied by 29 Gbit/s = 97.7 %"] == pytest.approx(29e9 / 0.977)
    assert path["RTT that would make the largest window give that rate"] == pytest.approx(0.28939, abs=1e-5)
    # 2 x 21,153 km at c / 1.468 = 207 ms: the printed 296 ms is above this lower bound
    assert path["fibre propagation RTT over 2 x 21,153 km"] == pytest.approx(0.2072, abs=1e-4)
    assert path["fibre propagation RTT over 2 x 21,153 km"] < p4.RTT_S


def test_in_flight_against_32_bit_limits():
    t = p4.in_flight_table()
    fits = t.set_index(["rate_bps", "limit"]).fits
    assert fits[(29e9, "largest TCP window 65535*2^14")]  # 1.0730 GB <= 1.0737 GB
    assert not fits[(73e9, "largest TCP window 65535*2^14")]
    assert not fits[(73e9, "2^31 - 1 (signed 32-bit)")]  # 2.70 GB > 2.147 GB
    assert fits[(73e9, "2^32 (unsigned 32-bit, sequence space)")]  # 2.70 GB < 4.29 GB
    assert fits[(100e9, "2^32 (unsigned 32-bit, sequence space)")]  # even the full BDP, 3.7 GB
    ratio = t.set_index(["rate_bps", "limit"]).needed_over_limit
    assert ratio[(73e9, "largest TCP window 65535*2^14")] == pytest.approx(2.5155, abs=1e-4)


def test_sizing_grid_covers_requested_rates_and_rtts():
    sizing = _tables(rates_bps=(1e9, 10e9, 40e9, 100e9), rtts_s=(0.001, 0.1, 0.3))["sizing"]
    assert len(sizing) == 12
    # a single standard TCP stream fills 40 Gbit/s up to RTT = 1.0737e9 * 8 / 40e9 = 214.7 ms
    row = sizing[(sizing.rate_bps == 40e9) & (sizing.rtt_s == 0.3)].iloc[0]
    assert row.window_limited and row.achievable_fraction == pytest.approx(1_073_725_440 * 8 / 0.3 / 40e9)


def test_ratio_candidates_none_derives_97_7():
    cand = p4.ratio_candidates()
    first = cand.iloc[0]
    assert first.candidate.startswith("largest TCP window")
    assert first.fraction == pytest.approx(29e9 / (1_073_725_440 * 8 / 0.296))
    assert first.fraction_low == pytest.approx(28.5e9 / (1_073_725_440 * 8 / 0.296))
    # window / RTT itself is not consistent with 97.7 % even allowing for rounding of "29"
    assert not first.consistent_with_97_7
    # frame-overhead efficiencies are not 97.7 % either
    pure = cand[cand.theoretical_bps.isna()]
    assert len(pure) == 4 and not pure.consistent_with_97_7.any()
    assert (np.abs(pure.fraction - 0.977) > 0.005).all()
    # only readings that need an unstated assumption (wire-rate with jumbo frames) remain possible
    assert set(cand[cand.consistent_with_97_7].candidate) == {
        "largest window / RTT, as wire rate with 9000 B jumbo frames"
    }


def test_ratio_consistency_check_can_succeed():
    # At the RTT that 97.7 % would imply (289.4 ms), window / RTT is consistent: the check is not vacuous.
    implied_rtt = 1_073_725_440 * 8 * 0.977 / 29e9
    cand = p4.ratio_candidates(rtt_s=implied_rtt)
    assert cand.iloc[0].consistent_with_97_7
    assert cand.iloc[0].fraction == pytest.approx(0.977, rel=1e-12)


def _verdicts(claims):
    return {(c[:4], part): v for c, part, v in zip(claims.claim, claims.part, claims.verdict)}


def test_claims_verdicts():
    claims = _claims()
    assert tuple(claims.columns) == VERDICT_COLUMNS
    assert (claims.n_runs == 0).all()  # nothing is sampled
    v = _verdicts(claims)
    assert v[("C4.1", "29 Gbit/s = largest window / RTT")] == "supported"
    assert v[("C4.2", "in flight at 29 Gbit/s = largest TCP window")] == "supported"
    # window / RTT gives 98.2-101.7 % for 28.5-29.5 Gbit/s: 97.7 % is outside; other readings undecidable
    assert v[("C4.3", "window / RTT reading")] == "contradicted"
    assert v[("C4.3", "some reading the text allows")] == "not testable here"
    assert v[("C4.4", "73 Gbit/s needs more than the largest window")] == "supported"
    assert v[("C4.4", "73 Gbit/s is more than twice the limit")] == "supported"
    assert v[("C4.5", "exceeds a signed 32-bit byte count")] == "supported"
    assert v[("C4.5", "exceeds an unsigned 32-bit byte count")] == "contradicted"  # 2.70 GB < 4.29 GB
    assert v[("C4.6", "window ceiling below the link rate")] == "supported"
    c43 = claims[claims.part == "window / RTT reading"].iloc[0]
    assert "29.68 Gbit/s" in c43.why
    assert c43.ci_low == pytest.approx(100 * 28.5e9 / (1_073_725_440 * 8 / 0.296) - 97.7)
    assert "29.02 Gbit/s" in claims[claims.claim.str.startswith("C4.1")].iloc[0].we_measured


def test_claims_are_computed_not_fixed():
    # On a 100 ms path the window ceiling is 85.9 Gbit/s: the 29 Gbit/s limit no longer follows.
    v = _verdicts(_claims(rtt_s=0.1))
    assert v[("C4.1", "29 Gbit/s = largest window / RTT")] == "contradicted"
    assert v[("C4.2", "in flight at 29 Gbit/s = largest TCP window")] == "contradicted"
    assert v[("C4.6", "window ceiling below the link rate")] == "supported"  # 85.9 < 100 Gbit/s
    # 29 Gbit/s ceiling > 10 Gbit/s link
    assert _verdicts(_claims(link_rate_bps=10e9))[("C4.6", "window ceiling below the link rate")] == "contradicted"


def test_views_use_readable_units():
    views = p4.views(_tables())
    path = views["path"].set_index("quantity").value
    assert path["window ceiling at RTT"] == "29.02 Gbit/s"
    assert path["RTT"] == "296 ms" and path["BDP"] == "3.7 GB"
    text = " ".join(str(x) for frame in views.values() for x in frame.to_numpy().ravel())
    assert "e+" not in text  # no 2.90196e+10
    assert path["Reno time between losses at 73 Gbit/s (Mathis)"] == "16.55 h"


def test_claims_styled_once_with_badges():
    claims = _claims()
    full = claims_full(claims).to_html()
    assert full.count("verdict-contradicted") == 2 and "text-align: left" in full
    summary = claims_summary(claims).to_html()
    assert summary.count('class="verdict ') == len(claims)


def test_plot_sizing():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = p4.plot_sizing(_tables()["sizing"])
    try:
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert len(texts) == 24 and any(t.startswith("29%") for t in texts)
    finally:
        plt.close(fig)


def test_plot_ceiling_vs_rtt(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = p4.plot_ceiling_vs_rtt(n_rtts=20)
    try:
        ax = fig.axes[0]
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        lines = ax.get_lines()
        assert len(lines) >= 15 + 3  # one per shift plus the marks
        shift14 = lines[14].get_ydata()
        x = lines[14].get_xdata()
        np.testing.assert_allclose(shift14, 1_073_725_440 * 8 / (x / 1e3) / 1e9)
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any("29.0 Gbit/s" in label for label in labels)
        out = tmp_path / "p4.png"
        fig.savefig(out)
        assert out.stat().st_size > 10_000
    finally:
        plt.close(fig)


def _measured_frame(ratio_shift=0.0, n_reps=3):
    """Synthetic kernel transfers: 2 caps x 2 RTTs x n_reps, window 61 % of the cap, rate = window / RTT."""
    rows = []
    rng = np.random.default_rng(0)
    for rep in range(n_reps):
        for cap in (65536, 262144):
            for rtt in (37.0, 296.0):
                wnd = 0.61 * cap
                model = wnd * 8 / (rtt / 1e3)
                ratio = 1.0 + ratio_shift + rng.normal(0, 0.002)
                rows.append({"rep": rep, "rcvbuf_cap_bytes": cap, "rtt_ms": rtt, "span_s": 4.0 + rep,
                             "t_from_s": 3.0, "retrans_in_span": 0, "snd_wnd_bytes": wnd, "model_bps": model,
                             "rate_bps": ratio * model, "ratio": ratio, "ratio_srtt": ratio,
                             "cap_model_bps": cap * 8 / (rtt / 1e3), "adv_fraction_of_cap": 0.61,
                             "link_rate_bps": 400e6, "rate_fraction_of_link": ratio * model / 400e6,
                             "rwnd_limited_fraction": 0.99})
    df = pd.DataFrame(rows)
    df.attrs["provenance"] = {"kernel": {"n_planned": 4 * n_reps}}
    return df


def test_measured_claims_and_findings_follow_the_rows():
    good = _measured_frame()
    v = p4.measured_claims(good)
    assert list(v.columns) == list(VERDICT_COLUMNS)
    assert list(v.verdict) == ["supported", "supported", "supported", "contradicted"]
    text = p4.measured_findings(good)
    assert "12 transfers of the 12 planned" in text and "4 (cap, RTT) cells with 3-3 transfers" in text
    assert "RTTs 37, 296 ms" in text and "64 KiB-256 KiB" in text
    assert "61.0% of the buffer cap" in text and text.count("**supported**") == 3
    off = _measured_frame(ratio_shift=-0.10, n_reps=2)
    text_off = p4.measured_findings(off)
    assert "8 transfers of the 8 planned" in text_off and "**contradicted**" in text_off
    assert p4.measured_findings(off.iloc[0:0]).startswith("No measured transfers")


def test_the_verdicts_use_the_steered_transfers_once_every_cell_has_as_many(tmp_path):
    """Transfers rerun on the steered testbed (2026-11-28) replace the unsteered ones in the verdicts only once
    every (cap, RTT) cell has at least as many; until then testbed_comparison shows both side by side."""
    old = _measured_frame().assign(testbed="reordering", error=None)
    assert p4.measured_testbed(old) == "reordering" and len(p4.testbed_comparison(old)) == 0
    steered = _measured_frame(ratio_shift=0.02).assign(testbed="steered", error=None)
    part = pd.concat([old, steered[steered["rep"] < 2]], ignore_index=True)
    assert p4.measured_testbed(part) == "reordering"
    cmp = p4.testbed_comparison(part)
    assert len(cmp) == 4 and (cmp["runs reordering"] == 3).all() and (cmp["runs steered"] == 2).all()
    assert np.allclose(cmp["steered - reordering"], 0.02, atol=0.005)
    both = pd.concat([old, steered], ignore_index=True)
    assert p4.measured_testbed(both) == "steered"
    assert p4.measured_testbed(pd.concat([old, steered.iloc[1:]], ignore_index=True)) == "reordering"  # one cell short
    # load_measured picks the testbed, or returns both, from a shipped-like folder
    folder = tmp_path / "datasets"
    folder.mkdir()
    both.to_parquet(folder / "p4_kernel.parquet")
    (folder / "p4_provenance.json").write_text("{}")
    auto = p4.load_measured(tmp_path)
    assert auto.attrs["testbed"] == "steered" and len(auto) == 12 and auto.attrs["n_other_testbed"] == 12
    assert "Kernel testbed: steered (12 transfers of the other testbed not used here)." in p4.measured_findings(auto)
    assert len(p4.load_measured(tmp_path, testbed="all")) == 24
    assert set(p4.load_measured(tmp_path, testbed="reordering")["testbed"]) == {"reordering"}
    with pytest.raises(ValueError, match="testbed must be"):
        p4.load_measured(tmp_path, testbed="both")
