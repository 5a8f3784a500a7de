"""P3 at the paper's windows (issue 57, item 5): the pilot's rule, the setting's windows, the plan, the claims."""

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments.p3.windows import choose_setting, windows_config, windows_plan
from tcpmodels.papers.p3_cubic_fairness.windows import windows_verdicts


def _pilot(drops, util):
    return [{"rate_bps": 4e8, "cpu_drops": 0, "utilization": 0.93},
            {"rate_bps": 1e9, "cpu_drops": drops, "utilization": util, "error": None}]


def test_pilot_rule():
    assert choose_setting(_pilot(0, 0.93))["rate_bps"] == 1e9
    bad = choose_setting(_pilot(12, 0.95))
    assert bad["rate_bps"] == 4e8 and bad["rtt_scale"] == 2.5
    assert choose_setting(_pilot(0, 0.7))["rtt_scale"] == 2.5
    with pytest.raises(ValueError, match="1000"):
        choose_setting(_pilot(0, 0.9)[:1])


@pytest.mark.parametrize("setting", [{"rate_bps": 1e9, "rtt_scale": 1.0}, {"rate_bps": 4e8, "rtt_scale": 2.5}])
def test_both_settings_reach_the_papers_windows(setting):
    c = windows_config(setting)
    per = c.scaling()["per_rtt"]
    alone = sorted(round(v["w_max_alone_segments"]) for v in per.values())
    assert alone == [1468, 1727, 2762, 6906]  # the paper's windows at 1 Gbit/s, 1-64 ms
    plan = windows_plan(c)
    assert len(plan) == 2 * 4 * c.reps
    assert [p["cubic_rtt_ms"] / setting["rtt_scale"] for p in plan[:8:2]] == [64.0, 16.0, 4.0, 1.0]
    assert [p["kind"] for p in plan[:2]] == ["standard", "divide"]
    assert plan[0]["reno_start_s"] == plan[1]["reno_start_s"]  # the kinds of a pair share their start offsets


def test_claims_on_known_answers():
    rng = np.random.default_rng(0)
    rows = []
    for rep in range(6):
        for cubic, gain in ((1, 0.0), (4, 0.0), (16, 0.1), (64, 0.2)):
            j = 0.8 + rng.normal(0, 0.005)
            rows += [{"rep": rep, "kind": "standard", "reno_rtt_ms": 2.5, "cubic_rtt_ms": 2.5 * cubic, "jain": j,
                      "rtt_scale": 2.5},
                     {"rep": rep, "kind": "divide", "reno_rtt_ms": 2.5, "cubic_rtt_ms": 2.5 * cubic, "jain": j + gain,
                      "rtt_scale": 2.5}]
    v = windows_verdicts(pd.DataFrame(rows)).set_index("key")
    assert v.loc["C3.1", "effect"] == pytest.approx(0.075, abs=0.01)
    assert v.loc["C3.1", "verdict"] == "supported" and v.loc["64 ms", "verdict"] == "supported"


def test_section_without_the_dataset_says_so(tmp_path):
    from tcpmodels.papers.p3_cubic_fairness.windows import windows_section

    assert "has no shipped dataset yet" in windows_section(tmp_path)
