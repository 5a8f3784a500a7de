"""The sitting effect: this session's alternated runs against the shipped runs of the same seeds (known answers)."""

import math

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments.p1.abab import TCP_EXT_KEPT, abab_frames, abab_plan
from tcpmodels.papers.p1_datacenter_fct.abab import Abab
from tcpmodels.papers.p1_datacenter_fct.sittings import paired_sessions, sitting_effect, sitting_sentence


def _session(n_seeds, rng, base_s=0.030, load=9.0, mptcp_factor=1.1):
    """Fake alternated-campaign records: 70 KB flows of mean ``base_s`` (x``mptcp_factor`` beside MPTCP), both
    testbeds."""
    recs = []
    for p in abab_plan(range(n_seeds)):
        mean = base_s * (mptcp_factor if p["protocol"] == "mptcp" else 1.0) * math.exp(rng.normal(0, 0.005))
        flows = [{"conn_id": i, "kind": "short", "src": 1, "dst": 2, "start_s": 0.1 * i, "size_bytes": 70000,
                  "fct_s": float(mean), "rate_bps": None, "retransmitted_packets": 0, "pattern": None, "error": None}
                 for i in range(50)]
        flows.append({"conn_id": 99, "kind": "background", "src": 3, "dst": 4, "start_s": 0.0, "size_bytes": None,
                      "fct_s": 45.0, "rate_bps": 90e6, "retransmitted_packets": None})
        recs.append({**p, "started_utc": "2026-12-06T10:00:00+00:00", "wall_s": 60.0, "load_avg": [load] * 3,
                     "load_avg_after": [load] * 3, "lock_wait_s": 0.0, "cpu_time_s": {}, "flows": flows,
                     "tcp_ext": {k: 0 for k in TCP_EXT_KEPT} | {"TCPOrigDataSent": 1000}, "git": {"commit": "abc"}})
    return Abab(*abab_frames(recs))


def _shipped(n_seeds, rng, base_s=0.020):
    """Fake shipped P1 flows and runs of the same seeds: mean x1.25 beside MPTCP (headline log 1.25), load 1."""
    flows, runs = [], []
    for seed in range(n_seeds):
        for engine in ("kernel", "kernel_steered"):
            for protocol, cc in (("tcp", "reno"), ("mptcp", "uncoupled"), ("mptcp", "tm_lia")):
                factor = {"tcp": 1.0, "uncoupled": 1.25, "tm_lia": 3.0}[cc if protocol == "mptcp" else "tcp"]
                mean = base_s * factor * math.exp(rng.normal(0, 0.005))
                flows += [{"engine": engine, "experiment": "s4", "protocol": protocol, "cc": cc, "seed": seed,
                           "kind": "short", "fct_s": mean} for _ in range(20)]
                runs.append({"engine": engine, "experiment": "s4", "protocol": protocol, "cc": cc, "seed": seed,
                             "load_avg_1m": 1.0})
    return pd.DataFrame(flows), pd.DataFrame(runs)


def test_known_sitting_effect():
    rng = np.random.default_rng(4)
    session = _session(6, rng)
    flows, runs = _shipped(8, rng)  # seeds 6-7 have no session runs: left out
    e = sitting_effect(session, flows, runs).set_index(["testbed", "quantity"])
    head = e.loc[("unsteered", "headline log(MPTCP/TCP) [-]")]
    assert head["shipped"] == pytest.approx(math.log(1.25), abs=0.03)  # the coupled runs are not mixed in
    assert head["session"] == pytest.approx(math.log(1.1), abs=0.03)
    assert head["difference"] == pytest.approx(math.log(1.1 / 1.25), abs=0.03)
    assert head["ci_high"] < 0 and head["seeds"] == 6
    fct = e.loc[("steered", "mean FCT beside TCP [ms]")]
    assert fct["difference"] == pytest.approx(10.0, abs=1.0)
    load = e.loc[("steered", "1-min load at the runs' starts")]
    assert load["difference"] == pytest.approx(8.0)
    text = sitting_sentence(e.reset_index())
    assert "not stated before the run" in text and "unsteered (6 seeds)" in text


def test_nothing_to_compare_is_said():
    rng = np.random.default_rng(5)
    session = _session(3, rng)
    flows, runs = _shipped(2, rng)
    flows = flows.assign(seed=flows["seed"] + 10)
    runs = runs.assign(seed=runs["seed"] + 10)
    e = sitting_effect(session, flows, runs)
    assert e.empty
    assert "no seed" in sitting_sentence(e)


def test_section_says_when_there_is_no_campaign(tmp_path):
    from tcpmodels.papers.p1_datacenter_fct.sittings import session_section

    flows, runs = _shipped(2, np.random.default_rng(6))
    assert "no shipped dataset" in session_section(flows, runs, tmp_path)


def _ship(session, data_dir, name):
    """Write a fake session as the dataset of session ``name`` (its schema checks the tables)."""
    from tcpmodels.datasets import write_dataset
    from tcpmodels.papers.p1_datacenter_fct.abab import SESSION_SCHEMAS

    write_dataset(SESSION_SCHEMAS[name], data_dir / "datasets", {"flows": session.flows, "runs": session.runs}, {})


def test_two_sessions_the_idle_one_is_the_test_the_loaded_one_beside_it(tmp_path):
    from tcpmodels.papers.p1_datacenter_fct.abab import ABAB_FAMILY, ABAB_LOADED_FAMILY, load_abab
    from tcpmodels.papers.p1_datacenter_fct.sittings import load_section, session_section

    rng = np.random.default_rng(7)
    loaded, idle = _session(5, rng, base_s=0.030, load=12.0), _session(4, rng, base_s=0.020, load=1.0)
    flows, runs = _shipped(5, rng)
    _ship(loaded, tmp_path, "loaded")
    only_first = session_section(flows, runs, tmp_path)
    assert "the first session, other jobs on the host; 5 seeds" in only_first and "The load" not in only_first
    _ship(idle, tmp_path, "idle")
    got_idle, got_loaded = load_abab(tmp_path, "idle"), load_abab(tmp_path, "loaded")
    assert got_idle.verdicts()["family"].unique().tolist() == [ABAB_FAMILY]
    text = session_section(flows, runs, tmp_path)
    assert text.startswith("**Steered against unsteered in one session** (the second session, nothing else on the "
                           "host; 4 seeds")
    assert "**The first session**" in text and "**The load**" in text and "**The sitting**" in text
    # the load: loaded minus idle on the same seeds (0-3): mean FCT beside TCP 30 ms against 20 ms, load 12 against 1
    sentence = load_section(got_loaded, got_idle)
    assert "unsteered (4 seeds)" in sentence and "1-min load 1.0 -> 12.0 (+11.0" in sentence
    e = paired_sessions(got_idle.per_seed, got_loaded.per_seed).set_index(["testbed", "quantity"])
    fct = e.loc[("unsteered", "mean FCT beside TCP [ms]")]
    assert fct["first"] == pytest.approx(20.0, abs=0.5) and fct["second"] == pytest.approx(30.0, abs=0.5)
    assert fct["difference"] == pytest.approx(10.0, abs=0.5) and fct["ci_low"] > 0 and fct["seeds"] == 4
    assert f"mean FCT beside TCP {fct['first']:.1f} -> {fct['second']:.1f} ({fct['difference']:+.1f}" in sentence
    from dataclasses import replace

    assert replace(got_loaded, family=ABAB_LOADED_FAMILY).verdicts()["family"].unique().tolist() == [ABAB_LOADED_FAMILY]
    with pytest.raises(ValueError, match="session='second': expected one of"):
        load_abab(tmp_path, "second")


def test_two_sessions_reading_names_the_load_when_it_moves_the_headline():
    from tcpmodels.papers.p1_datacenter_fct.sittings import two_sessions_reading

    rng = np.random.default_rng(8)
    idle = _session(4, rng, base_s=0.020, load=1.0)
    same = _session(4, rng, base_s=0.030, load=12.0)  # slower flows, the same headline (log 1.1)
    text = two_sessions_reading(same, idle)
    assert "the load was not shown to move the headline on either testbed" in text
    # steering moves nothing (both testbeds alike): the decided-equal case is "smaller than claimed" or inconclusive
    assert "steering is" in text and "(sd unsteered" in text
    higher = _session(4, rng, base_s=0.030, load=12.0, mptcp_factor=1.3)  # the headline up by log(1.3/1.1)
    text = two_sessions_reading(higher, idle)
    assert "the host's load moved the headline with the testbed held fixed: unsteered +0.16" in text
    assert "for a 1-min load 1.0 -> 12.0" in text
