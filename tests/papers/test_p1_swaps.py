"""P1's factor swaps (issue 57, item 2): the plan, the variants, the dataset through its schema, the claims and the
stated reading rule on synthetic runs whose answer is known."""

import json

import numpy as np
import pytest

from tcpmodels.datasets import p1_swaps
from tcpmodels.datasets.p1_abab import TCP_EXT_KEPT
from tcpmodels.experiments.p1.abab import abab_frames
from tcpmodels.experiments.p1.swaps import TESTBED_ARMS, build_swaps_dataset, swaps_plan
from tcpmodels.papers.p1_datacenter_fct.swaps import SWAPS_SPECS, load_swaps, swaps_reading, swaps_verdicts


def test_plan_rotates_the_variants_and_pairs_each_with_both_backgrounds():
    plan = swaps_plan()
    assert len(plan) == 12 * p1_swaps.RUNS_PER_SEED == 96 and [p["order"] for p in plan] == list(range(96))
    assert tuple(TESTBED_ARMS) == p1_swaps.ARMS  # the campaign's testbeds are the dataset's variants
    firsts = [p["engine"] for p in plan if p["arm_position"] == 0 and p["protocol"] == "tcp"]
    assert firsts[:4] == list(p1_swaps.ARMS)  # seed k starts at variant k mod 4
    for seed in range(12):
        runs = [(p["engine"], p["protocol"], p["cc"]) for p in plan if p["seed"] == seed]
        assert sorted(runs) == sorted((a, pr, cc) for a in p1_swaps.ARMS
                                      for pr, cc in (("tcp", "uncoupled"), ("mptcp", "tm_lia")))
    assert TESTBED_ARMS["kernel_norack"].host_sysctls == (("net.ipv4.tcp_recovery", "0"),
                                                          ("net.ipv4.tcp_early_retrans", "0"))
    with pytest.raises(ValueError, match="without repeats"):
        swaps_plan([1, 1])


def _records(shift: dict, bg_share: dict, seeds=range(6)):
    rng = np.random.default_rng(3)
    recs = []
    for p in swaps_plan(seeds):
        arm = p["engine"]
        base = 0.030 * (1 + 0.1 * p["seed"] / 6)  # the seed sets the level; the runs of a seed share it
        fct = base * (np.exp(shift.get(arm, 0.0) + 0.02 * rng.standard_normal()) if p["protocol"] == "mptcp" else 1)
        flows = [{"conn_id": i, "kind": "short", "src": 1, "dst": 2, "start_s": 0.5, "size_bytes": 70000,
                  "fct_s": fct, "rate_bps": None, "retransmitted_packets": 0, "pattern": "lossless", "error": None}
                 for i in range(3)]
        flows.append({"conn_id": 9, "kind": "background", "src": 3, "dst": 4, "start_s": 0.0, "size_bytes": None,
                      "fct_s": 45.0, "rate_bps": 9e7 * bg_share.get(arm, 1.0), "retransmitted_packets": 1,
                      "pattern": None, "error": None})
        recs.append({**p, "load_avg": [1.0] * 3, "load_avg_after": [1.0] * 3, "lock_wait_s": 0.0, "wall_s": 60.0,
                     "started_utc": f"2026-12-07T01:{p['order'] % 60:02d}:00+00:00", "setup_s": 3.0,
                     "git": {"commit": "abc", "dirty": False}, "flows": flows, "rps_cpus": None, "cpu_time_s": {},
                     "tcp_ext": {k: 10 for k in TCP_EXT_KEPT}, "config": {}})
    return recs


def test_the_reading_names_the_factor_excludes_one_and_sets_aside_an_rtt_arm_that_did_not_keep_up(tmp_path):
    recs = _records(shift={"kernel_norack": 0.15}, bg_share={"kernel_rtt05": 0.55})
    path = tmp_path / "swaps.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    prov = build_swaps_dataset(path, tmp_path / "data")
    assert prov["seeds_complete"] == list(range(6)) and prov["runs"] == 48
    flows, runs = load_swaps(tmp_path / "data")
    p1_swaps.SCHEMA.validate({"flows": flows, "runs": runs})
    v = swaps_verdicts(flows, runs).set_index("key")
    assert v.loc["kernel_norack", "verdict"] == "supported"
    assert v.loc["kernel_norack", "effect"] == pytest.approx(0.15, abs=0.02)
    assert v.loc["kernel_steered", "verdict"] in ("contradicted", "smaller than claimed")
    assert v.loc["kernel_rtt05", "verdict"] == "not testable here" and "55%" in v.loc["kernel_rtt05", "we_measured"]
    assert set(v["family"]) == {"P1 swaps"} and set(v.index) == set(SWAPS_SPECS) - {"kernel_ack_every"}
    text = swaps_reading(v.reset_index())
    assert "the factor the swaps isolate: RACK and tail loss probes off" in text
    assert "excluded as the main factor: no reordering" in text and "not testable here: the 0.5 ms base RTT" in text
    assert "has no shipped dataset yet" in swaps_reading(None)


def test_incomplete_seeds_do_not_count():
    recs = _records(shift={}, bg_share={})
    flows, runs = abab_frames(recs[:-1])  # the last seed lacks one run
    v = swaps_verdicts(flows, runs)
    assert (v["n_runs"] == 5).all()  # seeds 0-4
