"""P1's alternated testbed campaign (issue 57, item 1): the plan, the tables from records, the claims on known answers."""

import math

import numpy as np
import pytest

from tcpmodels.experiments.p1.abab import TCP_EXT_KEPT, abab_frames, abab_plan
from tcpmodels.papers.p1_datacenter_fct.abab import Abab, abab_reading


def test_plan_alternates_the_testbeds_per_seed():
    plan = abab_plan([3, 4, 5])
    assert [p["order"] for p in plan] == list(range(12))
    firsts = [plan[4 * k]["engine"] for k in range(3)]
    assert firsts == ["kernel", "kernel_steered", "kernel"]
    for k in range(3):
        block = plan[4 * k:4 * k + 4]
        assert {p["seed"] for p in block} == {[3, 4, 5][k]}
        assert [p["protocol"] for p in block] == ["tcp", "mptcp", "tcp", "mptcp"]
        assert block[0]["engine"] == block[1]["engine"] != block[2]["engine"] == block[3]["engine"]
    with pytest.raises(ValueError, match="without repeats"):
        abab_plan([1, 1])


def _records(n_seeds, tcp_slowdown, mptcp_slowdown, rng):
    """Fake records: 70 KB flows whose mean FCT is 20 ms x the arm's factor, with per-seed noise."""
    recs = []
    for p in abab_plan(range(n_seeds)):
        steered = p["engine"] == "kernel_steered"
        base = 0.020 * (1.25 if p["protocol"] == "mptcp" else 1.0)
        factor = (tcp_slowdown if p["protocol"] == "tcp" else mptcp_slowdown) if steered else 1.0
        seed_noise = math.exp(rng.normal(0, 0.02))
        fct = base * factor * seed_noise * np.exp(rng.normal(0, 0.05, 200))
        flows = [{"conn_id": i, "kind": "short", "src": 1, "dst": 2, "start_s": 0.1 * i, "size_bytes": 70000,
                  "fct_s": float(x), "rate_bps": None, "retransmitted_packets": int(i % (7 if steered else 9) == 0),
                  "pattern": None, "error": None} for i, x in enumerate(fct)]
        flows.append({"conn_id": 999, "kind": "background", "src": 3, "dst": 4, "start_s": 0.0, "size_bytes": None,
                      "fct_s": 45.0, "rate_bps": 84e6 if steered else 92e6, "retransmitted_packets": None})
        ext = {k: 0 for k in TCP_EXT_KEPT} | {"TCPOrigDataSent": 2_000_000,
                                              "TCPSACKReorder": 0 if steered else 1200, "TCPTimeouts": 10}
        recs.append({**p, "started_utc": f"2026-12-06T10:{p['order']:02d}:00+00:00", "wall_s": 60.0,
                     "load_avg": [1.0, 1.0, 1.0], "load_avg_after": [1.5, 1.0, 1.0], "lock_wait_s": 0.0,
                     "cpu_time_s": {"cpu0": {"steal": 0.1, "softirq": 5.0, "idle": 10.0}}, "flows": flows,
                     "tcp_ext": ext, "git": {"commit": "abc", "dirty": False}})
    return recs


def test_known_answers_name_the_factor():
    rng = np.random.default_rng(1)
    abab = Abab(*abab_frames(_records(10, 1.25, 1.0, rng)))
    v = abab.verdicts().set_index("key")
    assert v.loc["tcp arm", "verdict"] == "supported"          # +22 % beside TCP
    assert v.loc["mptcp arm", "verdict"] == "supported"        # equivalent beside MPTCP
    assert v.loc["headline", "verdict"] == "supported"         # so the headline falls by 22 %
    assert v.loc["headline", "effect"] == pytest.approx(-math.log(1.25), abs=0.03)
    assert v.loc["reordering", "verdict"] == "supported"       # 0.6 per 1000 -> 0
    assert v.loc["background rate", "verdict"] == "supported"  # 92 -> 84 Mbit/s
    assert "Steering is the factor" in abab_reading(abab.verdicts())
    mech = abab.mechanism().set_index("quantity")
    assert mech.loc["reordering per 1000 segments (TCP bg)", "unsteered"] == pytest.approx(0.6)
    assert mech.loc["TCP background rate [Mbit/s]", "difference"] == pytest.approx(-8.0)
    assert "10 seeds" in abab.paragraph()


def test_no_steering_effect_excludes_steering():
    rng = np.random.default_rng(2)
    verdicts = Abab(*abab_frames(_records(10, 1.0, 1.0, rng))).verdicts()
    assert verdicts.set_index("key").loc["headline", "verdict"] == "contradicted"
    assert "Steering is excluded" in abab_reading(verdicts)


def test_incomplete_seed_is_left_out():
    rng = np.random.default_rng(3)
    recs = _records(4, 1.0, 1.0, rng)[:-1]  # the last seed lacks its last run
    assert Abab(*abab_frames(recs)).verdicts()["n_runs"].max() == 3


def test_record_without_key_is_named():
    with pytest.raises(ValueError, match="lacks"):
        abab_frames([{"order": 3}])


def test_ns3_window_rows_sample_the_trace_like_tcp_info():
    import pandas as pd

    from tcpmodels.experiments.p1.ns3_windows import ns3_window_rows
    from tcpmodels.topology.addressing import plane_address

    conns = [{"conn_id": 0, "kind": "background", "src": 1, "dst": 2, "start_s": 0.0, "end_s": 10.0,
              "size_bytes": None, "mptcp": False, "plane": 2},
             {"conn_id": 1, "kind": "short", "src": 3, "dst": 4, "start_s": 1.0, "end_s": 1.1, "size_bytes": 70000,
              "mptcp": False, "plane": 0}]
    # window 20 segments for 5 s, halved to 10 at t = 5 s (one reduction), trace of connection 0, subflow 0
    ev = pd.DataFrame({"t_s": [0.0, 0.0, 0.0, 5.0, 5.0, 5.0], "flow_index": [0] * 6,
                       "what": ["cwnd_bytes", "ssthresh_bytes", "cong_state", "ssthresh_bytes", "cwnd_bytes",
                                "cong_state"],
                       "value": [20 * 1448, 2**31 - 1, 0, 10 * 1448, 10 * 1448, 0]})
    fm = pd.DataFrame({"flow_index": [0], "direction": ["data"], "dst": [plane_address(2, 2)], "tx_packets": [1000]})
    rows = ns3_window_rows(conns, ev, fm)
    assert len(rows) == 1 and rows[0]["subflow"] == 2
    assert rows[0]["cwnd_mean_segments"] == pytest.approx(15.0, abs=0.2)
    assert rows[0]["loss_events"] == 1 and rows[0]["reductions"] == 1
    assert rows[0]["loss_event_rate"] == pytest.approx(0.001)
