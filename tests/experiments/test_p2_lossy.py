"""P2 at the spread pilot's loss rate (issue 57, item 4): the plan, the loss rate read from the pilot, the lossy
testbed's topology and the dataset through its schema (unit; the campaign itself runs on the host, not here)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from tcpmodels.datasets import REPO_ROOT, p2_lossy
from tcpmodels.datasets.p2_lossy import PLANNED_SAMPLES
from tcpmodels.experiments.p2.kernel import Session
from tcpmodels.experiments.p2.lossy import LOSSY_CONFIG, REPS, build_lossy_dataset, loss_rate_of, lossy_plan, main
from tcpmodels.experiments.p2.plans import client_steps, sample_plan

SHIPPED_PILOT = REPO_ROOT / "data" / "datasets" / "p2_spread_pilot.json"


def test_the_loss_rate_is_the_shipped_pilots_choice_and_a_pilot_without_one_is_refused(tmp_path):
    chosen = json.loads(SHIPPED_PILOT.read_text())["choice"]
    assert chosen["testable"] and loss_rate_of(SHIPPED_PILOT) == chosen["chosen"] == 1e-3
    untestable = tmp_path / "p.json"
    untestable.write_text(json.dumps({"choice": {"chosen": 1e-4, "testable": False, "rule": "r"}}))
    with pytest.raises(ValueError, match="no testable loss rate"):
        loss_rate_of(untestable)
    untestable.write_text("{}")
    with pytest.raises(ValueError, match="no 'choice'"):
        loss_rate_of(untestable)


def test_plan_is_p2s_grid_and_order_at_the_loss_rate():
    plan = lossy_plan(1e-3)
    base = sample_plan(LOSSY_CONFIG)
    assert len(plan) == 256 * REPS == len(base) == PLANNED_SAMPLES
    assert [(p["rep"], p["rtt1_ms"], p["rtt2_ms"], p["order"]) for p in plan] == \
        [(p["rep"], p["rtt1_ms"], p["rtt2_ms"], p["order"]) for p in base]
    assert {p["campaign"] for p in plan} == {"p2_lossy"} and {p["loss_rate"] for p in plan} == {1e-3}
    assert [p["rep"] for p in plan[:256]] == [0] * 256  # whole repetitions first
    assert (LOSSY_CONFIG.cc, LOSSY_CONFIG.rate_bps, LOSSY_CONFIG.data_size_bytes) == ("tm_lia", 100e6, 16 * 2**20)


def test_the_session_puts_the_loss_on_every_delayed_link_and_nowhere_without_it():
    lossy = Session(LOSSY_CONFIG, 120.0, 160.0, loss_rate=1e-3).topology()
    clean = Session(LOSSY_CONFIG, 120.0, 160.0).topology()
    delayed = [lk for lk in lossy.links if lk.delayed]
    assert len(delayed) == 2 and all(lk.loss_rate == 1e-3 for lk in delayed)
    assert all(not lk.loss_rate for lk in clean.links)
    assert [replace(lk, loss_rate=0.0) for lk in lossy.links] == [replace(lk, loss_rate=0.0) for lk in clean.links]


def _record(sample: dict, rate_bps: float) -> dict:
    transfers = [{"name": step["name"], "kind": step["kind"], "label": step["label"], "size_bytes": f["size_bytes"],
                  "path": f["path"], "mptcp": f["mptcp"], "rate_bps": rate_bps, "completion_s": 1.0, "connect_s": 0.15,
                  "bytes": f["size_bytes"], "tx_bytes_p0": 600, "tx_bytes_p1": 400, "out_segs": 1000,
                  "retrans_segs": 2, "cc_effective": "tm_lia", "subflow_cc": None, "error": None}
                 for step in client_steps(LOSSY_CONFIG) for f in step["flows"]]
    return {**sample, "schema": 2, "path_rate_bps": LOSSY_CONFIG.rate_bps, "rtt_measured_ms": [120.5, 160.5],
            "run_id": "x", "config_hash": LOSSY_CONFIG.hash(), "config": LOSSY_CONFIG.to_dict(),
            "git": {"commit": "abc1234", "dirty": False}, "transfers": transfers, "tcp_ext": {},
            "load_avg": [0.5, 0.5, 0.5], "load_avg_after": [0.6, 0.5, 0.5], "lock_wait_s": 0.0, "wall_s": 40.0,
            "started_utc": f"2026-12-07T00:{sample['order'] % 60:02d}:00+00:00"}


def test_dataset_is_p2s_samples_table_with_the_loss_rate_and_complete_repetitions(tmp_path):
    plan = lossy_plan(1e-3)
    recs = [_record(s, 2e7 * (1 + 0.01 * s["order"])) for s in plan[:256] + plan[256:260]]
    path = tmp_path / "lossy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    prov = build_lossy_dataset(path, tmp_path / "data")
    got = p2_lossy.SCHEMA.read(tmp_path / "data", ("samples",))
    p2_lossy.SCHEMA.validate({"samples": got["samples"]})  # every column of P2's samples table, no other
    assert len(got["samples"]) == 260 and prov["loss_rate"] == 1e-3 and prov["complete_reps"] == [0]
    assert prov["samples"] == 260 and prov["plan_samples"] == 512
    assert np.allclose(got["samples"]["mptcp_data_share1"], 0.6)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(r | {"loss_rate": lr}) + "\n" for r, lr in zip(recs[:2], (1e-3, 1e-4))))
    with pytest.raises(ValueError, match="mix loss rates"):
        build_lossy_dataset(mixed, tmp_path / "data2")


def test_the_command_line_names_its_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "run" in out and "dataset" in out


def test_the_paper_judges_the_complete_repetitions_as_their_own_family(tmp_path):
    from tcpmodels.papers.p2_mptcp_prediction import claims, load_dataset, lossy_section, lossy_verdicts, tables

    rng = np.random.default_rng(4)
    plan = lossy_plan(1e-3)
    # Mathis-like: the rate falls with the RTTs, with noise; the incomplete repetition 1 is left out
    recs = [_record(s, 4e9 / (s["rtt1_ms"] + s["rtt2_ms"]) * rng.lognormal(0, 0.05)) for s in plan[:256] + plan[256:300]]
    path = tmp_path / "lossy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    build_lossy_dataset(path, tmp_path / "data")
    v = lossy_verdicts(tmp_path / "data", quick=True)
    assert len(v) > 5 and set(v["family"]) == {"P2 lossy"}
    shipped_ds = load_dataset(REPO_ROOT / "data").for_cc("tm_lia")
    shipped = claims(shipped_ds, tables(shipped_ds, quick=True))
    text = lossy_section(shipped, tmp_path / "data", quick=True)
    assert "256 samples of 1 complete repetition(s), 300 of 512 planned measured" in text
    assert "headroom for the Fraction of RPE" in text and "P2 at the pilot's loss rate 0.001" in text


def test_before_a_complete_repetition_the_paragraph_counts_the_shipped_records_only(tmp_path):
    from tcpmodels.papers.p2_mptcp_prediction import lossy_section
    from tcpmodels.records.parts import ship_new_records

    data = tmp_path / "data"
    (data / "datasets").mkdir(parents=True)
    assert "no complete repetition is shipped yet" in lossy_section(None, data)
    assert "recorded so far" not in lossy_section(None, data)
    path = tmp_path / "lossy.jsonl"
    path.write_text("".join(json.dumps(_record(s, 1e6)) + "\n" for s in lossy_plan(1e-3)[:37]))
    ship_new_records(path, data / "datasets" / "p2_lossy_records")
    text = lossy_section(None, data)
    assert "37 of the 512 planned samples are recorded so far" in text and "not judged" in text


def test_the_reading_rule_names_each_fraction_of_rpe_part_by_its_outcome():
    import pandas as pd

    from tcpmodels.papers.p2_mptcp_prediction.lossy import reading

    idx = pd.MultiIndex.from_tuples([
        ("C2.2 [x] collapse", "Fraction of RPE falls"), ("C2.3 [x] gain", "Fraction of RPE gain at 128KB"),
        ("C2.4 [x] equal", "Fraction of RPE equal"), ("C2.3 [x] gain", "RMSE cut at 128KB"),
        ("C2.5 [x] rtt", "Fraction of RPE lower for RTT1 >= RTT2")], names=["claim", "part"])
    side = pd.DataFrame({"shipped": ["not testable here", "not testable here", "supported", "not testable here",
                                     "not testable here"],
                         "lossy": ["contradicted", "not testable here", "inconclusive", "supported", "supported"]},
                        index=idx)
    text = reading(side)
    assert "what hid them: C2.2 Fraction of RPE falls (contradicted)." in text
    assert "whole grid): C2.3 Fraction of RPE gain at 128KB (not testable here)." in text
    assert "Testable in both settings: C2.4 Fraction of RPE equal (inconclusive)." in text
    assert "RMSE" not in text and "C2.5" not in text  # only C2.2-C2.4's Fraction-of-RPE parts
