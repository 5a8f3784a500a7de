"""P1's delayed-ACK swap (issue 57, item 2, second session): the route metric, the plan, the dataset through its
schema, and the swaps' claim and reading rule over both sessions on synthetic runs whose answer is known."""

import json
import re

import numpy as np
import pytest

from tcpmodels.datasets import p1_delack, p1_swaps
from tcpmodels.datasets.p1_abab import TCP_EXT_KEPT
from tcpmodels.experiments.p1.config import DEFAULT_CONFIG
from tcpmodels.experiments.p1.delack import TESTBED_ARMS, build_delack_dataset, delack_plan
from tcpmodels.experiments.p1.kernel import _topology
from tcpmodels.experiments.p1.swaps import build_swaps_dataset, swaps_plan
from tcpmodels.papers.p1_datacenter_fct.swaps import DELACK_FAMILY, swaps_section, swaps_verdicts
from tcpmodels.testbed.topology import Route


def test_a_quickack_route_says_so_to_ip_and_the_arm_puts_it_on_every_host_route_with_no_offloads():
    r = Route(node="h0", dst="10.16.0.0/12", via="10.255.0.1", src="10.16.0.2", quickack=True)
    assert r.ip_args() == ["route", "add", "10.16.0.0/12", "via", "10.255.0.1", "src", "10.16.0.2", "quickack", "1"]
    assert "quickack" not in Route(node="h0", dst="default", via="10.0.0.1").ip_args()
    plain, quick = _topology(DEFAULT_CONFIG), _topology(DEFAULT_CONFIG, ack_every_segment=True)
    assert len(plain.routes) == len(quick.routes) and not any(r.quickack for r in plain.routes)
    assert {r.node[0] for r in quick.routes if r.quickack} == {"h"}  # hosts' routes only: switches forward
    assert all(r.quickack for r in quick.routes if r.node.startswith("h"))
    assert {lk.name for lk in quick.links if lk.offloads is False} == {lk.name for lk in plain.links
                                                                         if lk.name.startswith("hl")}
    assert all(lk.offloads is None for lk in plain.links)


def test_plan_alternates_the_first_arm_and_runs_both_backgrounds_on_each():
    plan = delack_plan()
    assert len(plan) == 12 * p1_delack.RUNS_PER_SEED == 48 and [p["order"] for p in plan] == list(range(48))
    assert tuple(TESTBED_ARMS) == p1_delack.ARMS and TESTBED_ARMS["kernel_ack_every"].ack_every_segment
    assert not TESTBED_ARMS["kernel"].ack_every_segment
    assert [p["engine"] for p in plan if p["arm_position"] == 0 and p["protocol"] == "tcp"][:2] == list(p1_delack.ARMS)
    for seed in range(12):
        assert sorted((p["engine"], p["cc"]) for p in plan if p["seed"] == seed) == sorted(
            (a, cc) for a in p1_delack.ARMS for cc in ("uncoupled", "tm_lia"))
    with pytest.raises(ValueError, match="without repeats"):
        delack_plan([0, 0])


def _records(plan, shift: dict):
    rng = np.random.default_rng(7)
    recs = []
    for p in plan:
        base = 0.030 * (1 + 0.1 * p["seed"] / 6)
        mptcp = p["protocol"] == "mptcp"
        fct = base * (np.exp(shift.get(p["engine"], 0.0) + 0.02 * rng.standard_normal()) if mptcp else 1)
        flows = [{"conn_id": i, "kind": "short", "src": 1, "dst": 2, "start_s": 0.5, "size_bytes": 70000,
                  "fct_s": fct, "rate_bps": None, "retransmitted_packets": 0, "pattern": "lossless", "error": None}
                 for i in range(3)]
        flows.append({"conn_id": 9, "kind": "background", "src": 3, "dst": 4, "start_s": 0.0, "size_bytes": None,
                      "fct_s": 45.0, "rate_bps": 9e7, "retransmitted_packets": 1, "pattern": None, "error": None})
        recs.append({**p, "load_avg": [1.0] * 3, "load_avg_after": [1.0] * 3, "lock_wait_s": 0.0, "wall_s": 60.0,
                     "started_utc": f"2026-12-07T08:{p['order'] % 60:02d}:00+00:00", "setup_s": 3.0,
                     "git": {"commit": "abc", "dirty": False}, "flows": flows, "rps_cpus": None, "cpu_time_s": {},
                     "tcp_ext": {k: 10 for k in TCP_EXT_KEPT}, "config": {}})
    return recs


def _write(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_both_sessions_read_into_one_paragraph_and_the_second_names_delayed_acks(tmp_path):
    data = tmp_path / "data"
    # first session: every swap excluded (no shift at all)
    build_swaps_dataset(_write(tmp_path / "swaps.jsonl", _records(swaps_plan(range(6)), {})), data)
    first_only = swaps_section(data)
    assert "it lies in what was not swapped (delayed ACKs, ns-3's MPTCP)" in first_only
    # second session: delayed ACKs off moves the tm_lia headline by +0.15 toward ns-3
    prov = build_delack_dataset(_write(tmp_path / "delack.jsonl",
                                       _records(delack_plan(range(6)), {"kernel_ack_every": 0.15})), data)
    assert prov["seeds_complete"] == list(range(6)) and prov["plan"]["ack_every_segment"]["kernel_ack_every"] is True
    tables = p1_delack.SCHEMA.read(data, ("flows", "runs"))
    v = swaps_verdicts(tables["flows"], tables["runs"], runs_per_seed=p1_delack.RUNS_PER_SEED, family=DELACK_FAMILY)
    assert list(v["key"]) == ["kernel_ack_every"] and v["family"].iloc[0] == DELACK_FAMILY
    assert v["verdict"].iloc[0] == "supported" and v["effect"].iloc[0] == pytest.approx(0.15, abs=0.02)
    both = swaps_section(data)
    assert re.search(r"the factor the swaps isolate: an ACK for every segment \(no offloads on the host links, quickack\) \(\+0\.1[4-6]\d "
                     r"\[\+0\.1\d\d, \+0\.1\d\d\], supported\)", both), both
    assert "excluded as the main factor: RACK and tail loss probes off" in both and "not swapped" not in both


def test_the_first_sessions_verdicts_keep_their_three_variants():
    recs = _records(swaps_plan(range(4)), {})
    from tcpmodels.experiments.p1.abab import abab_frames

    v = swaps_verdicts(*abab_frames(recs))
    assert list(v["key"]) == list(p1_swaps.ARMS[1:]) and set(v["family"]) == {"P1 swaps"}


def test_the_command_line_builds_the_dataset_and_prints_its_complete_seeds(tmp_path, capsys):
    from tcpmodels.experiments.p1.delack import main

    path = _write(tmp_path / "delack.jsonl", _records(delack_plan(range(3)), {})[:-1])  # seed 2 lacks a run
    assert main(["dataset", "--records", str(path), "--out", str(tmp_path / "data")]) == 0
    assert json.loads(capsys.readouterr().out) == {"runs": 11, "seeds_complete": [0, 1]}
