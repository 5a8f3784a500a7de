"""P2 Fraction-of-RPE setting pilot (issue 57, item 4): the plan and the rule."""

import numpy as np

from tcpmodels.experiments.p2.spread import MAX_CONSTANT_HITS, choose_loss, constant_hits, pilot_plan


def test_plan():
    plan = pilot_plan()
    assert len(plan) == 32 and [p["order"] for p in plan] == list(range(32))
    assert [p["loss_rate"] for p in plan[:16]] == [1e-4] * 16


def test_constant_hits_known_answers():
    assert constant_hits(np.full(10, 5e6)) == 1.0
    # Mathis: rate ~ 1/RTT over 120-180 ms: the mean of 1/RTT hits the middle RTTs only
    y = 1 / np.linspace(0.120, 0.180, 16)
    assert 0.4 < constant_hits(y) < 0.9
    assert constant_hits(np.array([1.0, 3.0])) == 0.0
    assert np.isnan(constant_hits(np.array([np.nan])))


def test_rule_takes_the_smallest_loss_that_leaves_room():
    flat = [{"loss_rate": 1e-4, "rate_bps": 100e6 + i} for i in range(16)]
    spread = [{"loss_rate": 1e-3, "rate_bps": r} for r in np.geomspace(2e6, 20e6, 16)]
    c = choose_loss(flat + spread)
    assert c["by_loss"][1e-4]["constant_hits"] == 1.0
    assert c["by_loss"][1e-3]["constant_hits"] <= MAX_CONSTANT_HITS
    assert c["chosen"] == 1e-3 and c["testable"]
    c = choose_loss(flat)
    assert c["chosen"] == 1e-4 and not c["testable"]


def test_section_from_a_written_pilot(tmp_path):
    import pandas as pd

    from tcpmodels.datasets.p2_spread_pilot import SCHEMA
    from tcpmodels.datasets.writer import write_dataset
    from tcpmodels.papers.p2_mptcp_prediction.spread import spread_section

    assert "no shipped dataset" in spread_section(tmp_path)
    rows = [{"loss_rate": loss, "rtt1_ms": r1, "rtt2_ms": r2, "rate_bps": rate, "wall_s": 5.0,
             "started_utc": "2026-12-06T16:50:00+00:00", "load_avg_1m": 2.0}
            for loss, rate in ((1e-4, 50e6), (1e-3, 20e6)) for r1, r2 in ((120.0, 140.0), (160.0, 180.0))]
    choice = choose_loss(rows)
    write_dataset(SCHEMA, tmp_path, {"": pd.DataFrame(rows)}, {"choice": choice})
    text = spread_section(tmp_path)
    assert "4 samples" in text and f"Rule, fixed before the pilot: {choice['rule']}" in text
