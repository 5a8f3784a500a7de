"""Issue 57's campaign datasets go through their schemas (tcpmodels.datasets.p1_abab ... p3_windows): built from a few
synthetic records they read back as the builders made them, declared column for column; a column not in the schema
is refused before anything is written; no record is a clear error."""

import json

import pandas as pd
import pytest

from tcpmodels.datasets import SchemaError, p1_abab, p1_ns3_windows, p2_sndbuf, p2_spread_pilot
from tcpmodels.experiments.campaign_dataset import CampaignDataset
from tcpmodels.experiments.p1.abab import TCP_EXT_KEPT, abab_frames, abab_plan, build_abab_dataset
from tcpmodels.experiments.p1.ns3_windows import build_windows_dataset
from tcpmodels.experiments.p2.sndbuf import SNDBUF_KEY, build_sndbuf_dataset, sndbuf_plan
from tcpmodels.experiments.p2.spread import pilot_plan, write_pilot_summary
from tcpmodels.papers.p1_datacenter_fct.abab import load_abab
from tcpmodels.papers.p1_datacenter_fct.windows import with_ns3_windows
from tcpmodels.papers.p2_mptcp_prediction.sndbuf import load_sndbuf


def _common(order):
    return {"load_avg": [1.0, 1.0, 1.0], "load_avg_after": [1.5, 1.0, 1.0], "lock_wait_s": 0.5, "wall_s": 60.0 + order,
            "started_utc": f"2026-12-06T10:{order:02d}:00+00:00", "git": {"commit": "abc1234", "dirty": False}}


def _write(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def _abab_records():
    recs = []
    for p in abab_plan([0, 1]):
        flows = [{"conn_id": 0, "kind": "short", "src": 1, "dst": 2, "start_s": 0.5, "size_bytes": 70000,
                  "fct_s": 0.02 + p["order"] / 1000, "rate_bps": None, "retransmitted_packets": p["order"] % 2,
                  "pattern": "lossless", "error": None},
                 {"conn_id": 1, "kind": "background", "src": 3, "dst": 4, "start_s": 0.0, "size_bytes": None,
                  "fct_s": 45.0, "rate_bps": 9e7, "retransmitted_packets": 12, "pattern": None, "error": None}]
        recs.append({**p, **_common(p["order"]), "setup_s": 3.5, "flows": flows, "rps_cpus": "3",
                     "cpu_time_s": {"cpu0": {"steal": 0.1, "softirq": 5.0, "idle": 10.0}},
                     "tcp_ext": {k: 10 + i for i, k in enumerate(TCP_EXT_KEPT)}, "config": {"seeds": [0, 1]}})
    return recs


def test_abab_dataset_round_trips_through_its_schema(tmp_path):
    recs = _abab_records()
    prov = build_abab_dataset(_write(tmp_path / "abab.jsonl", recs), tmp_path / "data")
    flows, runs = abab_frames(recs)
    got = load_abab(tmp_path / "data")
    pd.testing.assert_frame_equal(got.flows, flows)
    pd.testing.assert_frame_equal(got.runs, runs)
    p1_abab.SCHEMA.validate({"flows": got.flows, "runs": got.runs})  # every declared column there, no other
    stored = json.loads((tmp_path / "data" / "datasets" / "p1_abab_provenance.json").read_text())
    assert stored["schema_version"] == p1_abab.SCHEMA.version and stored["seeds_complete"] == [0, 1] == prov["seeds_complete"]
    assert stored["files"] == ["p1_abab_flows.parquet", "p1_abab_runs.parquet"] and stored["runs"] == 8
    assert stored["records_torn_lines_skipped"] == 0
    torn = tmp_path / "torn.jsonl"
    torn.write_text((tmp_path / "abab.jsonl").read_text().replace("\n", '\n{"campaign": "p1_ab\n', 1))
    assert build_abab_dataset(torn, tmp_path / "data2")["records_torn_lines_skipped"] == 1


def test_sndbuf_and_spread_datasets_round_trip(tmp_path):
    recs = [{**p, **_common(p["order"]), "config": {"cc": "tm_lia"}, "path_rate_bps": 1e8,
             "tcp_ext": {"c": {"TCPFastRetrans": 4}},
             "transfers": [{"label": "fig4_16MiB", "size_bytes": 16 * 2**20, "rate_bps": 8e7, "tx_bytes_p0": 300,
                            "tx_bytes_p1": 700}, {"label": "fig4_64MiB", "size_bytes": 64 * 2**20, "rate_bps": None,
                                                  "error": "timeout", "tx_bytes_p0": 0, "tx_bytes_p1": 0}]}
            for p in sndbuf_plan(1)]
    build_sndbuf_dataset(_write(tmp_path / "sndbuf.jsonl", recs), tmp_path / "data")
    sweep = load_sndbuf(tmp_path / "data")
    p2_sndbuf.SCHEMA.validate({"": sweep})
    assert len(sweep) == 8 and sweep["share1"].dropna().tolist() == [0.3] * 4 and sweep["Bps"].dropna().tolist() == [1e7] * 4
    assert sweep["error"].dropna().tolist() == ["timeout"] * 4

    recs = [{**p, **_common(p["order"]), "config": {"cc": "tm_lia"}, "rate_bps": 5e7 + 1e6 * p["order"]}
            for p in pilot_plan()[:5]]
    prov = write_pilot_summary(_write(tmp_path / "pilot.jsonl", recs), tmp_path / "data")
    pilot = p2_spread_pilot.SCHEMA.read(tmp_path / "data", ("",))
    p2_spread_pilot.SCHEMA.validate({"": pilot[""]})
    assert pilot[""]["rate_bps"].tolist() == [r["rate_bps"] for r in recs]
    # the rates lie within 5 % of their mean: the constant predictor hits every pair, so no loss rate passes the rule
    assert pilot["provenance"]["choice"] == json.loads(json.dumps(prov["choice"]))
    assert prov["choice"]["chosen"] == 1e-4 and prov["choice"]["testable"] is False


def test_the_dataset_command_builds_and_prints_its_answer(tmp_path, capsys):
    from tcpmodels.experiments.p1 import abab

    path = _write(tmp_path / "abab.jsonl", _abab_records())
    assert abab.main(["dataset", "--records", str(path), "--out", str(tmp_path / "data")]) == 0
    assert json.loads(capsys.readouterr().out) == {"session": "loaded", "runs": 8, "seeds_complete": [0, 1]}
    # the second session's records make the second session's dataset (the same tables, its own prefix)
    assert abab.main(["dataset", "--session", "idle", "--records", str(path), "--out", str(tmp_path / "data")]) == 0
    assert json.loads(capsys.readouterr().out) == {"session": "idle", "runs": 8, "seeds_complete": [0, 1]}
    assert (tmp_path / "data" / "datasets" / "p1_abab_idle_runs.parquet").exists()
    with pytest.raises(SystemExit) as exit_:
        abab.main(["dataset", "--records", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "data")])
    assert exit_.value.code == 1 and "no record of the p1 abab campaign" in capsys.readouterr().err


def test_ns3_windows_dataset_fills_the_p1_subflows(tmp_path):
    sf = {"conn_id": 0, "src": 1, "dst": 2, "mptcp": True, "subflow": 1, "remote": "core1", "duration_s": 40.0,
          "cwnd_mean_segments": 20.0, "loss_events": 3, "reductions": 4, "segments_sent": 1000.0,
          "loss_event_rate": 0.003}
    recs = [{"campaign": "p1_ns3_windows", "experiment": "s4", "protocol": "mptcp", "seed": 0, "order": 0,
             **_common(0), "config": {}, "subflows": [sf], "short_fct_mean_s": 0.02}]
    build_windows_dataset(_write(tmp_path / "w.jsonl", recs), tmp_path / "data")
    table = p1_ns3_windows.SCHEMA.read(tmp_path / "data", ("",))[""]
    p1_ns3_windows.SCHEMA.validate({"": table})
    key = {"engine": "ns3", "experiment": "s4", "protocol": "mptcp", "cc": "lia", "seed": 0, "conn_id": 0, "subflow": 1}
    sub = pd.DataFrame([{**key, "cwnd_mean_segments": float("nan"), "loss_events": float("nan"),
                         "segments_sent": float("nan"), "loss_event_rate": float("nan")}])
    assert with_ns3_windows(sub, tmp_path / "data")["cwnd_mean_segments"].tolist() == [20.0]


def test_ns3_windows_fill_the_tcp_background_rows_too(tmp_path):
    # P1's ns-3 runs all carry cc "lia" (datasets.p1.NS3_CC), the TCP-background ones too: their rows must match
    sf = {"conn_id": 3, "src": 1, "dst": 2, "mptcp": False, "subflow": 0, "remote": "core0", "duration_s": 40.0,
          "cwnd_mean_segments": 30.0, "loss_events": 2, "reductions": 2, "segments_sent": 900.0, "loss_event_rate": 0.002}
    recs = [{"campaign": "p1_ns3_windows", "experiment": "s4", "protocol": "tcp", "seed": 1, "order": 0, **_common(0),
             "config": {}, "subflows": [sf], "short_fct_mean_s": 0.02}]
    build_windows_dataset(_write(tmp_path / "w.jsonl", recs), tmp_path / "data")
    sub = pd.DataFrame([{"engine": "ns3", "experiment": "s4", "protocol": "tcp", "cc": "lia", "seed": 1, "conn_id": 3,
                         "subflow": 0, "cwnd_mean_segments": float("nan"), "loss_events": float("nan"),
                         "segments_sent": float("nan"), "loss_event_rate": float("nan")}])
    assert with_ns3_windows(sub, tmp_path / "data")["loss_events"].tolist() == [2]


def test_a_column_not_in_the_schema_is_refused_before_writing(tmp_path):
    recs = [{**p, **_common(p["order"])} for p in sndbuf_plan(1)]
    path = _write(tmp_path / "sndbuf.jsonl", recs)
    with pytest.raises(SchemaError, match=r"p2_sndbuf.parquet: .*not in the schema \['share2'\]"):
        CampaignDataset(p2_sndbuf.SCHEMA, SNDBUF_KEY, lambda r: ({"": pd.DataFrame({"wmem_factor": [0.5], "share2": [0.7]})},
                                                                 {}), "test")(path, tmp_path / "data")
    assert not list((tmp_path / "data").rglob("*.*"))  # nothing written
    with pytest.raises(SchemaError, match="wmem_factor holds str"):
        CampaignDataset(p2_sndbuf.SCHEMA, SNDBUF_KEY, lambda r: ({"": pd.DataFrame({"wmem_factor": ["half"]})}, {}),
                        "test")(path, tmp_path / "data")
    _write(path, [])
    with pytest.raises(ValueError, match="sndbuf.jsonl: no record of the p2 send-buffer sweep"):
        build_sndbuf_dataset(path, tmp_path / "data")
