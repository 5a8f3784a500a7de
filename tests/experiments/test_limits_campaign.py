"""The limitation campaign: scenario plans, the tuning/test split, Sundaresan's tuning, the claims on the shipped
dataset, and one short real run on the testbed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments.limits import campaign, score
from tcpmodels.stats import VERDICTS

DATA = Path(__file__).resolve().parents[2] / "data"


def test_seeds_are_split_before_scoring_and_every_seed_belongs_to_one_split():
    seeds = [set(campaign.TUNING_SEEDS), set(campaign.TEST_SEEDS), set(campaign.TEST2_SEEDS)]
    assert not (seeds[0] & seeds[1] or seeds[0] & seeds[2] or seeds[1] & seeds[2])
    assert [campaign.split_of(s) for s in (0, 3, 4, 7, 8, 11)] == ["tuning", "tuning", "test", "test", "test2", "test2"]
    with pytest.raises(ValueError, match="seed must be one of"):
        campaign.split_of(12)


def test_scenario_plans_limit_what_they_say():
    for seed in (0, 4):
        bdp = campaign.path_of(seed)["bdp_bytes"]
        assert campaign.scenario_plan("rwnd", seed)["rcvbuf_bytes"] < bdp
        assert campaign.scenario_plan("sndbuf", seed)["flows"][0]["sndbuf_bytes"] < bdp
        assert campaign.scenario_plan("self", seed)["buffer_bytes"] >= 3 * bdp
        cross = campaign.scenario_plan("cross", seed)
        assert cross["cross_s"] > cross["cross_lead_s"] + sum(f["duration_s"] + f["pause_before_s"]
                                                                for f in cross["flows"])
        assert campaign.scenario_plan("loss", seed)["loss_rate"] > 0
        assert all(f["size_bytes"] < 64_000 for f in campaign.scenario_plan("short", seed)["flows"])
    with pytest.raises(ValueError, match="scenario must be one of"):
        campaign.scenario_plan("bbr", 0)


def test_tune_signature_finds_the_gap():
    f = pd.DataFrame({"norm_diff": [0.1, 0.3, 0.45, 0.75, 0.8, np.nan],
                      "truth": ["external"] * 3 + ["self-induced"] * 3})
    tuned = score.tune_signature(f)
    assert tuned["norm_diff"] == pytest.approx(0.6) and tuned["accuracy"] == 1.0 and tuned["n"] == 5
    with pytest.raises(ValueError, match="truth"):
        score.tune_signature(f.assign(truth="other"))


def test_claims_on_the_shipped_dataset():
    intervals, flows, prov = score.load_dataset(DATA)
    assert prov["tuning_seeds"] == list(campaign.TUNING_SEEDS) and prov["test_seeds"] == list(campaign.TEST_SEEDS)
    assert set(intervals["split"]) == {"tuning", "test", "test2"}
    table = score.claims(intervals, flows)
    assert len(table) == len(score.CLAIM_SPECS) and table["verdict"].isin(VERDICTS).all()
    # every run of the test seeds is in the dataset, each with both capture points
    runs = intervals[intervals["split"] == "test"].groupby(["scenario", "seed"])["point"].nunique()
    assert len(runs) == len(campaign.SCENARIOS) * len(campaign.TEST_SEEDS) and (runs == 2).all()
    conf = score.confusion(intervals, point="sender")
    assert list(conf.index) == list(score.KERNEL_CLASSES)


def test_kernel_label_refinement_by_the_app_limited_bit():
    t = 500.0 + 0.01 * np.arange(11)
    s = pd.DataFrame({"t_unix_s": t, "busy_s": 0.01 * np.arange(11), "rwnd_limited_s": 0.0, "sndbuf_limited_s": 0.0,
                      "app_limited": True, "delivery_rate_bps": 1e6, "app_in_send_s": 0.0})
    k = score.kernel_intervals(s)
    # busy the whole interval: the counters alone say network; every rate sample app-limited, the application
    # not blocked in send(): the application
    assert k["kernel_chrono"].tolist() == ["network"] and k["kernel"].tolist() == ["application"]
    blocked = score.kernel_intervals(s.assign(app_in_send_s=0.01 * np.arange(11)))
    assert blocked["kernel"].tolist() == ["send_buffer"]


@pytest.mark.testbed
def test_one_short_run_on_the_testbed(testbed_available, tmp_path):
    from tcpmodels.experiments.limits.dataset import diagnose_run
    from tcpmodels.testbed.hostlock import host_lock

    # tests/experiments has no autouse lock fixture (tests/testbed has): hold the host lock like a campaign sample
    with host_lock(timeout_s=900, holder=f"pytest test_one_short_run_on_the_testbed pid {os.getpid()}"):
        rec = campaign.run_scenario("short", 0, tmp_path)
    assert len(rec["flows"]) == 8 and all(f["bytes"] == f["size_bytes"] for f in rec["flows"])
    assert all(len(f["samples"]) >= 2 for f in rec["flows"])
    for point in ("sender", "receiver"):
        assert rec["captures"][point]["packets_dropped_by_kernel"] == 0
    intervals, flows = diagnose_run(json.loads(json.dumps(rec)), tmp_path)
    assert (flows["limit"] == "opportunity").all()
    assert set(intervals["point"]) == {"sender", "receiver"}


def test_drops_are_split_by_where():
    from tcpmodels.experiments.limits.dataset import drops

    def counters(bn, elsewhere):
        return {"ra:bn": {"qdisc_drops": bn, "rx_dropped": 0}, "s0:a0": {"qdisc_drops": 0, "rx_dropped": elsewhere}}

    rec = {"counters": {"before": counters(5, 0), "after": counters(12, 3)},
           "delay_elements": {"a0": {"a_to_b": {"dropped_loss": 4, "dropped_queue_full": 1, "send_errors": 0},
                                     "b_to_a": {"dropped_loss": 2}}}}
    assert drops(rec) == {"bottleneck_queue": 7, "random_loss": 6,
                          "elsewhere": {"s0:a0 rx_dropped": 3, "a0:a_to_b dropped_queue_full": 1}}
