"""P1's CPU-placement test (issue 57, item 1, the stated test of the CPU lead): the plan, the dataset through its
schema, the claim and the validity rule on synthetic runs whose answer is known."""

import json
import re

import numpy as np
import pytest

from tcpmodels.datasets import p1_placement
from tcpmodels.datasets.p1_abab import TCP_EXT_KEPT
from tcpmodels.experiments.p1.abab import abab_frames
from tcpmodels.experiments.p1.placement import TESTBED_ARMS, build_placement_dataset, placement_plan
from tcpmodels.papers.p1_datacenter_fct.placement import (
    placement_per_seed,
    placement_reading,
    placement_section,
    placement_verdicts,
)


def test_plan_alternates_the_first_arm_and_runs_both_on_every_seed_beside_tcp():
    plan = placement_plan()
    assert len(plan) == 12 * p1_placement.RUNS_PER_SEED == 24 and [p["order"] for p in plan] == list(range(24))
    assert tuple(TESTBED_ARMS) == p1_placement.ARMS
    assert [p["engine"] for p in plan if p["arm_position"] == 0][:4] == [*p1_placement.ARMS] * 2
    assert {(p["protocol"], p["cc"]) for p in plan} == {("tcp", "uncoupled")}
    for seed in range(12):
        assert sorted(p["engine"] for p in plan if p["seed"] == seed) == sorted(p1_placement.ARMS)
    assert TESTBED_ARMS["kernel_steered_cpu0"].steer_cpus == (0,) and TESTBED_ARMS["kernel_steered"].steer_cpus is None
    assert all(a.config["keep_flow_order"] for a in TESTBED_ARMS.values())  # both arms steer: no reordering
    with pytest.raises(ValueError, match="without repeats"):
        placement_plan([2, 2])


def _share(bg_share, seed: int) -> float:
    return bg_share(seed) if callable(bg_share) else bg_share


def _records(log_ratio: float, bg_share, seeds=range(8)):
    rng = np.random.default_rng(5)
    recs = []
    for p in placement_plan(seeds):
        one = p["engine"] == "kernel_steered_cpu0"
        level = 0.015 * (1 + 3 * (p["seed"] % 3) / 2)  # seeds spread 15-60 ms, as the steered testbed's did
        fct = level * (np.exp(log_ratio + 0.03 * rng.standard_normal()) if one else 1.0)
        flows = [{"conn_id": i, "kind": "short", "src": 1, "dst": 2, "start_s": 0.5, "size_bytes": 70000,
                  "fct_s": fct, "rate_bps": None, "retransmitted_packets": 0, "pattern": "lossless", "error": None}
                 for i in range(3)]
        flows.append({"conn_id": 9, "kind": "background", "src": 3, "dst": 4, "start_s": 0.0, "size_bytes": None,
                      "fct_s": 45.0, "rate_bps": 9e7 * (_share(bg_share, p["seed"]) if one else 1.0),
                      "retransmitted_packets": 1,
                      "pattern": None, "error": None})
        recs.append({**p, "load_avg": [1.0] * 3, "load_avg_after": [1.0] * 3, "lock_wait_s": 0.0, "wall_s": 60.0,
                     "started_utc": f"2026-12-07T07:{p['order'] % 60:02d}:00+00:00", "setup_s": 3.0,
                     "git": {"commit": "abc", "dirty": False}, "flows": flows, "rps_cpus": "1" if one else "3",
                     "cpu_time_s": {}, "tcp_ext": {k: 10 for k in TCP_EXT_KEPT}, "config": {}})
    return recs


def test_one_cpu_faster_by_a_fifth_is_supported_and_the_paragraph_says_so(tmp_path):
    path = tmp_path / "placement.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(log_ratio=np.log(0.8), bg_share=0.97)))
    prov = build_placement_dataset(path, tmp_path / "data")
    assert prov["seeds_complete"] == list(range(8)) and prov["runs"] == 16
    tables = p1_placement.SCHEMA.read(tmp_path / "data", ("flows", "runs"))
    flows, runs = tables["flows"], tables["runs"]
    p1_placement.SCHEMA.validate({"flows": flows, "runs": runs})
    per = placement_per_seed(flows, runs)
    assert set(per["rps_cpus"]) == {"1", "3"}
    v = placement_verdicts(flows, runs).iloc[0]
    assert v.verdict == "supported" and v.effect == pytest.approx(np.log(0.8), abs=0.03) and v.n_runs == 8
    assert v.family == "P1 placement"
    text = placement_reading(flows, runs)
    assert text == placement_section(tmp_path / "data") and "supported" in text and "the placement of the veth work is a factor" in text
    assert "RPS mask 1" in text and "RPS mask 3" in text and "15.0-60.0 ms" in text


def test_no_gain_is_contradicted_and_a_starved_background_is_not_testable():
    flows, runs = abab_frames(_records(log_ratio=0.0, bg_share=1.0))
    assert placement_verdicts(flows, runs).iloc[0].verdict == "contradicted"
    flows, runs = abab_frames(_records(log_ratio=np.log(0.5), bg_share=0.6))
    v = placement_verdicts(flows, runs).iloc[0]
    assert v.verdict == "not testable here" and "60%" in v.we_measured
    assert "not testable here" in placement_reading(flows, runs)
    assert "has no shipped dataset yet" in placement_reading(None)


def test_incomplete_seeds_do_not_count():
    flows, runs = abab_frames(_records(log_ratio=np.log(0.8), bg_share=1.0)[:-1])
    assert placement_verdicts(flows, runs).iloc[0].n_runs == 7


def test_the_paragraph_says_when_the_gain_follows_what_the_background_lost():
    """Exploratory sentence: seeds whose background lost more on one CPU gain more (here by construction)."""
    recs = _records(log_ratio=0.0, bg_share=lambda seed: 0.90 + 0.01 * seed)
    for r in recs:  # the one-CPU arm's flows faster the more its background lost
        if r["engine"] == "kernel_steered_cpu0":
            for f in r["flows"][:3]:
                f["fct_s"] *= np.exp(-2.0 * (1 - _share(lambda s: 0.90 + 0.01 * s, r["seed"])))
    flows, runs = abab_frames(recs)
    text = placement_reading(flows, runs)
    assert re.search(r"Spearman rho \+0\.9\d", text) and "the 3 seeds whose background kept at least 95% gained" in text
    assert "carried 93.5% of its rate over both, the validity rule asking at least 90%" in text
    assert "Exploratory" not in placement_reading(*abab_frames(_records(log_ratio=-0.2, bg_share=0.97)))
