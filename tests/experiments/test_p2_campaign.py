"""P2 campaign: plan, configuration checks, resumable records (unit), and a tiny real-kernel run (testbed).

(Named ``test_p2_campaign.py``, not ``test_p2.py``: the test folders have no
``__init__.py``, so two ``test_p2.py`` modules would clash under pytest.)
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tcpmodels.experiments import p2
from tcpmodels.experiments.p2.kernel import SWEEP_KEY
from tcpmodels.records import JsonlRecords

KB = 1024


def test_plan_covers_the_grid_once_per_repetition_whole_repetitions_first():
    plan = p2.sample_plan(p2.DEFAULT_CONFIG)
    assert len(plan) == 16 * 16 * 2
    assert p2.DEFAULT_CONFIG.rtts_ms[0] == 120 and p2.DEFAULT_CONFIG.rtts_ms[-1] == 180
    first = [(s["rtt1_ms"], s["rtt2_ms"]) for s in plan[:256]]
    assert len(set(first)) == 256 and {s["rep"] for s in plan[:256]} == {0}
    assert [s["order"] for s in plan] == list(range(512))
    assert plan == p2.sample_plan(p2.DEFAULT_CONFIG)  # deterministic: resume sees the same order


def test_steps_hold_every_probe_of_tables_2_to_4_and_the_data_transfers():
    steps = p2.client_steps(p2.DEFAULT_CONFIG)
    names = [s["name"] for s in steps]
    assert names[:3] == ["path_probe_128KB", "path_probe_256KB", "path_probe_512KB"]
    assert [s["label"] for s in steps if s["kind"] == "mptcp_probe"] == list(p2.PAPER_PROBE_LABELS)
    assert names[-2:] == ["mptcp_data", "tcp_data"]
    for s in steps[:3]:  # two concurrent single-path TCP probes, one per path, bound to its address
        assert [(f["path"], f["bind"], f["mptcp"]) for f in s["flows"]] == [(0, "10.0.1.1", False),
                                                                            (1, "10.0.2.1", False)]
    assert all(f["direction"] == "upload" for s in steps for f in s["flows"])  # client -> server as in the paper
    sizes = p2.DEFAULT_CONFIG.mptcp_probe_sizes_bytes
    assert sizes[0] == 64 * KB and sizes[-1] == p2.DEFAULT_CONFIG.data_size_bytes // 2


def test_scaling_keeps_data_well_above_the_bdp():
    sc = p2.DEFAULT_CONFIG.scaling()
    assert sc["data_over_two_path_bdp"] > 4  # the paper's 256 MB over 2 x 1 Gbit/s x 150 ms is about 7
    assert sc["paper_data_over_two_path_bdp"] == pytest.approx(256 * 2**20 / 37.5e6)


@pytest.mark.parametrize("change, match", [
    (dict(mptcp_probe_sizes_bytes=(1, 2)), "mptcp_probe_sizes_bytes"),
    (dict(path_probe_sizes_bytes=(2, 1, 3)), "path_probe_sizes_bytes"),
    (dict(rate_bps=0.0), r"rate_bps \[bit/s\]"),
    (dict(rtts_ms=()), r"rtts_ms \[ms\]"),
    (dict(reps=0), "reps"),
    (dict(cc="reno"), "cc must be one of"),
])
def test_config_rejects_bad_values_by_name(change, match):
    with pytest.raises(ValueError, match=match):
        replace(p2.DEFAULT_CONFIG, **change)


def test_jsonl_records_skip_done_keys_and_survive_a_torn_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    rec = JsonlRecords(path, ("campaign", "rep", "rtt1_ms", "rtt2_ms"))
    rec.append({"campaign": "p2", "rep": 0, "rtt1_ms": 120.0, "rtt2_ms": 124.0, "x": 1})
    with path.open("a") as fh:
        fh.write('{"campaign": "p2", "rep": 0, "rtt1_ms": 1')  # killed mid-write
    assert rec.done_keys() == {("p2", 0, 120.0, 124.0)}
    rec.append({"campaign": "p2", "rep": 1, "rtt1_ms": 120.0, "rtt2_ms": 124.0})
    assert len(rec.read()) == 2 and rec.done_keys() == {("p2", 0, 120.0, 124.0), ("p2", 1, 120.0, 124.0)}
    assert rec.lines_skipped == 1  # the torn line, now mid-file: counted, not silently lost
    plan = [{"campaign": "p2", "rep": r, "rtt1_ms": 120.0, "rtt2_ms": 124.0, "order": r} for r in (2, 0, 3, 1)]
    assert [s["rep"] for s in rec.pending(plan)] == [2, 3]  # not yet recorded, in plan order
    with pytest.raises(KeyError, match="rtt2_ms"):
        rec.append({"campaign": "p2", "rep": 0, "rtt1_ms": 1.0})


def _fake_record(rep, r1, r2, rate_scale=1.0, config=p2.DEFAULT_CONFIG, mptcp_bps=None, probe_p1=None):
    transfers = []
    for step in p2.client_steps(config):
        for f in step["flows"]:
            rate = mptcp_bps if (mptcp_bps and step["kind"] == "mptcp_data") else 1e6 * rate_scale
            p1 = probe_p1 if (probe_p1 is not None and step["name"] == "mptcp_probe_64KB") else 100
            transfers.append({"name": step["name"], "kind": step["kind"], "label": step["label"],
                              "size_bytes": f["size_bytes"], "path": f["path"], "mptcp": f["mptcp"],
                              "rate_bps": rate, "completion_s": 1.0, "connect_s": 0.15,
                              "bytes": f["size_bytes"], "tx_bytes_p0": 900, "tx_bytes_p1": p1,
                              "out_segs": 1000, "retrans_segs": 5, "cc_effective": config.cc,
                              "subflow_cc": ([{"local": "10.0.1.1:1", "peer": "10.0.1.2:5201", "cc": config.cc,
                                               "mptcp_subflow": True},
                                              {"local": "10.0.2.1:2", "peer": "10.0.2.2:5201", "cc": config.cc,
                                               "mptcp_subflow": True}]
                                             if step.get("watch_subflows") else None),
                              "error": None})
    return {"campaign": "p2", "schema": 2, "cc": config.cc, "data_size_bytes": config.data_size_bytes,
            "path_rate_bps": config.rate_bps, "rep": rep, "rtt1_ms": r1, "rtt2_ms": r2, "order": 0,
            "rtt_measured_ms": [r1, r2], "load_avg": [1.0, 1.0, 1.0], "lock_wait_s": 0.0, "wall_s": 10.0,
            "started_utc": "2026-01-01T00:00:00+00:00", "run_id": "abcdef", "config_hash": config.hash(),
            "config": config.to_dict(), "transfers": transfers}


def test_samples_frame_columns_units_and_shares():
    df = p2.samples_frame([_fake_record(0, 120.0, 124.0), _fake_record(0, 128.0, 120.0, 2.0)])
    assert len(df) == 2
    assert df.loc[0, "mptcp_data_Bps"] == pytest.approx(1e6 / 8)  # bytes/s from bit/s
    assert df.loc[1, "tcp_data_Bps"] == pytest.approx(2e6 / 8)
    assert df.loc[0, "mptcp_probe_64KB_share1"] == pytest.approx(0.9)
    assert df.loc[0, "mptcp_data_loss"] == pytest.approx(0.005)
    assert {"path_probe_128KB_path1_Bps", "path_probe_128KB_path2_Bps"} <= set(df.columns)
    assert "path_probe_128KB_path1_share1" not in df.columns  # shares only for MPTCP transfers


def test_dataset_writes_parquet_and_provenance(tmp_path):
    records = tmp_path / "s.jsonl"
    rec = JsonlRecords(records, p2.SAMPLE_KEY)
    with_git = {**_fake_record(0, 120.0, 124.0), "git": {"commit": "c0ffee", "dirty": False}}
    for r in (with_git, _fake_record(0, 124.0, 120.0)):  # the second as written before records held a commit
        rec.append(r)
    prov = p2.build_dataset(records, None, tmp_path / "out")
    assert (tmp_path / "out" / "p2_samples.parquet").exists()
    stored = json.loads((tmp_path / "out" / "p2_provenance.json").read_text())
    assert stored["n_samples"] == 2 == prov["n_samples"] and len(stored["parts"]) == 1
    part = stored["parts"][0]
    assert part["n_planned"] == 512 and part["cc"] == "cubic"
    assert part["scaling"]["data_size_bytes"] == p2.DEFAULT_CONFIG.data_size_bytes
    assert "connect() returned" in part["throughput_definition"]
    assert part["conditions"]["n_samples"] == 2 and part["subflow_cc_seen"] == ["cubic"]
    assert part["records_git"] == ["c0ffee (dirty False)"] and part["records_without_git"] == 1
    with pytest.raises(ValueError, match="no sample records"):
        p2.build_dataset(tmp_path / "none.jsonl", None, tmp_path / "out2")


def test_samples_are_keyed_by_cc_and_data_size():
    lia = replace(p2.DEFAULT_CONFIG, cc="tm_lia", data_size_bytes=8 * 2**20)
    a, b = p2.sample_plan(p2.DEFAULT_CONFIG), p2.sample_plan(lia)
    assert set(p2.SAMPLE_KEY) <= set(a[0]) and b[0]["cc"] == "tm_lia" and b[0]["data_size_bytes"] == 8 * 2**20
    assert [(s["rtt1_ms"], s["rtt2_ms"]) for s in a] == [(s["rtt1_ms"], s["rtt2_ms"]) for s in b]  # same order
    assert {f["cc"] for s in p2.client_steps(lia) for f in s["flows"]} == {"tm_lia"}
    assert [s["name"] for s in p2.client_steps(lia) if s.get("watch_subflows")] == ["mptcp_data"]


def test_command_line_sets_cc_data_size_rate_and_grid():
    import argparse

    from tcpmodels.experiments.p2.__main__ import _setting, _setting_options

    ap = argparse.ArgumentParser()
    _setting_options(ap)
    cfg = _setting(p2.DEFAULT_CONFIG, ap.parse_args(["--cc", "tm_olia", "--data-size-bytes", "1000",
                                                     "--rate-bps", "3e7", "--rtts-ms", "120", "180"]))
    assert (cfg.cc, cfg.data_size_bytes, cfg.rate_bps, cfg.rtts_ms) == ("tm_olia", 1000, 3e7, (120.0, 180.0))
    assert len(p2.sample_plan(replace(cfg, reps=2))) == 8  # the pilot at the extreme pairs
    with pytest.raises(SystemExit):
        ap.parse_args(["--cc", "bbr"])


def test_conditions_are_computed_from_the_measured_values():
    cfg = replace(p2.DEFAULT_CONFIG, data_size_bytes=8 * 2**20, rate_bps=20e6)
    # MPTCP data at 30 Mbit/s over 20 Mbit/s paths; 64 KB probe: 100 of 1000 bytes on path 2
    df = p2.samples_frame([_fake_record(0, 150.0, 180.0, config=cfg, mptcp_bps=30e6),
                           _fake_record(0, 120.0, 120.0, config=cfg, mptcp_bps=15e6, probe_p1=10)])
    hi = df.set_index("rtt2_ms").loc[180.0]
    assert hi["data_over_bdp"] == pytest.approx(8 * 2**20 / (20e6 / 8 * 0.180))  # the larger RTT's BDP
    assert hi["mptcp_over_path_rate"] == pytest.approx(1.5) and hi["mptcp_over_tcp_data"] == pytest.approx(30)
    assert hi["probe64_share2"] == pytest.approx(0.1) and not hi["conditions_hold"]  # probe leaks 10 %
    lo = df.set_index("rtt2_ms").loc[120.0]
    assert lo["probe64_share2"] == pytest.approx(10 / 910) and not lo["conditions_hold"]  # MPTCP below a path
    assert hi["subflow_cc"] == "cubic" and hi["n_subflows_seen"] == 2
    summary = p2.conditions_summary(df)
    assert summary["mptcp_over_path_rate"]["n_met"] == 1 and summary["probe64_share2"]["n_met"] == 1
    assert summary["data_over_bdp"]["n_met"] == 2 and summary["n_all_met"] == 0


def test_dataset_keeps_the_shipped_rows_and_adds_a_cc_column(tmp_path):
    out = tmp_path / "out"
    old_records = tmp_path / "old.jsonl"
    rec = JsonlRecords(old_records, p2.SAMPLE_KEY)
    for r in (_fake_record(0, 120.0, 124.0), _fake_record(0, 124.0, 120.0)):
        rec.append(r)
    p2.build_dataset(old_records, None, out)
    # an old-style dataset: no cc / data size / rate columns, a provenance without parts
    old = __import__("pandas").read_parquet(out / "p2_samples.parquet")
    old.drop(columns=["cc", "data_size_bytes", "path_rate_bps"]).to_parquet(out / "p2_samples.parquet")
    prov = json.loads((out / "p2_provenance.json").read_text())
    (out / "p2_provenance.json").write_text(json.dumps({**prov["parts"][0], "note": "shipped"}))
    lia = replace(p2.DEFAULT_CONFIG, cc="tm_lia", data_size_bytes=8 * 2**20)
    new_records = tmp_path / "lia.jsonl"
    rec = JsonlRecords(new_records, p2.SAMPLE_KEY)
    for r in (_fake_record(0, 120.0, 124.0, config=lia), _fake_record(1, 120.0, 124.0, config=lia)):
        rec.append(r)
    prov = p2.build_dataset(new_records, None, out)
    df = __import__("pandas").read_parquet(out / "p2_samples.parquet")
    assert prov["n_samples_by_cc"] == {"cubic": 2, "tm_lia": 2} and len(df) == 4
    assert set(df.loc[df["cc"] == "cubic", "data_size_bytes"]) == {4 * 2**20}
    assert [(p["cc"], p["kept_from_earlier_dataset"]) for p in prov["parts"]] == [("cubic", True), ("tm_lia", False)]
    # rebuilding from the same records replaces the tm_lia rows, never duplicates them
    prov = p2.build_dataset(new_records, None, out)
    assert prov["n_samples_by_cc"] == {"cubic": 2, "tm_lia": 2}
    assert [p["cc"] for p in prov["parts"]] == ["cubic", "tm_lia"]


def test_ss_output_gives_each_subflows_congestion_control():
    from tcpmodels.experiments.p2.client import parse_ss_subflows

    text = ("ESTAB 0 0 10.0.1.1:40000 10.0.1.2:5201\n"
            "\t tm_lia wscale:7,7 rto:364 rtt:150.1/0.1 tcp-ulp-mptcp flags:Mec token:0000(id:0)/1(id:0)\n"
            "ESTAB 0 0 10.0.2.1:40001 10.0.2.2:5201\n"
            "\t tm_lia wscale:7,7 rto:400 tcp-ulp-mptcp flags:Jjecv token:0000(id:2)/1(id:2)\n"
            "ESTAB 0 0 10.0.1.1:40002 10.0.1.2:5201\n\t cubic wscale:7,7 rto:204\n")
    socks = parse_ss_subflows(text)
    assert [(s["local"], s["cc"], s["mptcp_subflow"]) for s in socks] == [
        ("10.0.1.1:40000", "tm_lia", True), ("10.0.2.1:40001", "tm_lia", True), ("10.0.1.1:40002", "cubic", False)]


# ------------------------------------------------------------------ real kernel
TINY = replace(p2.DEFAULT_CONFIG, rate_bps=20e6, buffer_bytes=100_000, data_size_bytes=512 * KB,
               mptcp_probe_sizes_bytes=(16 * KB, 32 * KB, 48 * KB, 64 * KB, 96 * KB, 128 * KB, 192 * KB, 256 * KB),
               path_probe_sizes_bytes=(16 * KB, 32 * KB, 64 * KB), rtts_ms=(20.0, 40.0), reps=1)



@pytest.mark.testbed
def test_tiny_campaign_records_documented_fields_and_resume_skips_done(testbed_available, tmp_path):
    records = tmp_path / "samples.jsonl"
    plan = p2.sample_plan(TINY)[:2]
    assert p2.run_campaign(records, TINY, plan=plan, limit=1, progress=False) == 1
    assert p2.run_campaign(records, TINY, plan=plan, progress=False) == 1  # only the one not yet done
    assert p2.run_campaign(records, TINY, plan=plan, progress=False) == 0  # nothing left
    recs = [json.loads(x) for x in records.read_text().splitlines()]
    assert len(recs) == 2 and {(r["rtt1_ms"], r["rtt2_ms"]) for r in recs} == {(s["rtt1_ms"], s["rtt2_ms"])
                                                                               for s in plan}
    for r in recs:
        assert set(p2.SAMPLE_FIELDS) <= set(r), set(p2.SAMPLE_FIELDS) - set(r)
        assert len(r["transfers"]) == 3 * 2 + 8 + 2
        for t in r["transfers"]:
            assert set(p2.TRANSFER_FIELDS) <= set(t)
            assert t["error"] is None, t
            assert t["bytes"] == t["size_bytes"] and t["rate_bps"] > 0
        # the configured RTTs are the ones measured (UDP echo through the delay element)
        for want, got in zip((r["rtt1_ms"], r["rtt2_ms"]), r["rtt_measured_ms"]):
            assert got == pytest.approx(want, abs=3.0)
        by = {(t["name"], t["path"]): t for t in r["transfers"]}
        # a single-path probe bound to path 2 leaves through path 2's interface only
        assert by[("path_probe_128KB", 1)]["tx_bytes_p1"] > 16 * KB
        # the 16 KB MPTCP probe is over before a second subflow carries data
        small, data = by[("mptcp_probe_64KB", None)], by[("mptcp_data", None)]
        assert small["tx_bytes_p0"] / (small["tx_bytes_p0"] + small["tx_bytes_p1"]) > 0.9
        assert data["tx_bytes_p1"] > 0.05 * data["size_bytes"]  # ... while the data transfer uses both paths
        assert r["load_avg"] and r["wall_s"] > 0
        # the TcpExt counters of both ends counted at least the data transfer's segments
        sent = sum(r["tcp_ext"][n].get("TCPOrigDataSent", 0) for n in ("s", "c"))
        assert set(r["tcp_ext"]) == {"s", "c"} and sent > data["size_bytes"] / 1500
        assert r["cc"] == "cubic" and data["cc_effective"] == "cubic"
        assert len(r["git"]["commit"] or "") in (0, 40)  # the code that ran (None outside a git checkout)


@pytest.mark.testbed
def test_tiny_sample_with_tm_lia_runs_every_subflow_under_it(testbed_available, tmp_path):
    from tcpmodels.testbed import kernel_cc

    problem = kernel_cc.unavailable_reason()
    if problem:
        pytest.skip(f"BPF congestion controls unavailable: {problem}")
    lia = replace(TINY, cc="tm_lia", data_size_bytes=1024 * KB)
    records = tmp_path / "lia.jsonl"
    plan = p2.sample_plan(replace(lia, rtts_ms=(40.0,)))
    assert p2.run_campaign(records, lia, plan=plan, progress=False) == 1
    (r,) = [json.loads(x) for x in records.read_text().splitlines()]
    assert r["cc"] == "tm_lia" and r["config"]["cc"] == "tm_lia"
    data = next(t for t in r["transfers"] if t["kind"] == "mptcp_data")
    assert data["error"] is None and data["cc_effective"] == "tm_lia"
    subflows = [s for s in data["subflow_cc"] if s["mptcp_subflow"]]
    # both subflows (one per path) were seen, and each ran tm_lia
    assert {s["local"].rsplit(":", 1)[0] for s in subflows} == {"10.0.1.1", "10.0.2.1"}, data["subflow_cc"]
    assert {s["cc"] for s in subflows} == {"tm_lia"}
    assert all(t["cc_effective"] == "tm_lia" for t in r["transfers"] if t["error"] is None)
    row = p2.samples_frame([r]).iloc[0]
    assert row["subflow_cc"] == "tm_lia" and row["n_subflows_seen"] == 2


def test_samples_at_two_path_rates_are_two_samples(tmp_path):
    slow = replace(p2.DEFAULT_CONFIG, cc="tm_lia", data_size_bytes=8 * 2**20, rate_bps=10e6)
    fast = replace(slow, rate_bps=20e6)
    records = tmp_path / "r.jsonl"
    rec = JsonlRecords(records, p2.SAMPLE_KEY)
    rec.append(_fake_record(0, 180.0, 180.0, config=slow))
    assert len(rec.pending(p2.sample_plan(fast))) == 512  # a pilot at 20 Mbit/s does not stand for 10 Mbit/s
    assert len(rec.pending(p2.sample_plan(slow))) == 511
    rec.append(_fake_record(0, 180.0, 180.0, config=fast))
    sweep = tmp_path / "sweep.jsonl"
    for cfg in (slow, fast):  # one Fig. 4 sample per rate; each part owns the sweep at its rate
        JsonlRecords(sweep, SWEEP_KEY).append({**_fake_record(0, 150.0, 120.0, config=cfg), "campaign": "p2_fig4",
                                               "rep": int(cfg.rate_bps // 10e6)})
    prov = p2.build_dataset(records, sweep, tmp_path / "out")
    assert prov["n_samples"] == 2 and sorted(p["config"]["rate_bps"] for p in prov["parts"]) == [10e6, 20e6]
    assert [p["n_fig4_records"] for p in prov["parts"]] == [1, 1]


def test_repetitions_run_with_different_reps_are_one_part(tmp_path):
    """Repetition 0 run with ``--reps 1`` and repetition 1 later with ``--reps 2``: the records carry two
    config hashes, but they are one setting, so one provenance part with both samples and 512 planned."""
    one = replace(p2.DEFAULT_CONFIG, cc="cubic", data_size_bytes=8 * 2**20, rate_bps=100e6, reps=1)
    two = replace(one, reps=2)
    assert one.hash() != two.hash()
    records = tmp_path / "r.jsonl"
    rec = JsonlRecords(records, p2.SAMPLE_KEY)
    rec.append(_fake_record(0, 180.0, 180.0, config=one))
    rec.append({**_fake_record(0, 180.0, 180.0, config=two), "rep": 1})
    prov = p2.build_dataset(records, None, tmp_path / "out")
    (part,) = prov["parts"]
    assert part["n_samples"] == 2 and part["n_planned"] == 512 and part["reps_present"] == [0, 1]
    assert part["config"]["reps"] == 2 and part["record_config_hashes"] == sorted([one.hash(), two.hash()])


def test_rebuilding_with_one_rates_sweep_keeps_the_other_rates_fig4_rows(tmp_path):
    """A kept dataset holds Fig. 4 rows of one cc at two path rates; a build with the sweep of one rate
    replaces that rate's rows and keeps the other's (the old merge keyed on cc alone and dropped them)."""
    import pandas as pd

    slow = replace(p2.DEFAULT_CONFIG, cc="cubic", data_size_bytes=8 * 2**20, rate_bps=20e6)
    fast = replace(slow, rate_bps=100e6)
    records, out = tmp_path / "r.jsonl", tmp_path / "out"
    rec = JsonlRecords(records, p2.SAMPLE_KEY)
    for cfg in (slow, fast):
        rec.append(_fake_record(0, 180.0, 180.0, config=cfg))

    def sweep_of(name, *cfgs):
        path = tmp_path / name
        for cfg in cfgs:
            JsonlRecords(path, SWEEP_KEY).append({**_fake_record(0, 150.0, 120.0, config=cfg),
                                                  "campaign": "p2_fig4", "rep": 0})
        return path

    p2.build_dataset(records, sweep_of("both.jsonl", slow, fast), out)
    before = pd.read_parquet(out / "p2_fig4.parquet")
    assert sorted(set(before["path_rate_bps"])) == [20e6, 100e6]
    p2.build_dataset(records, sweep_of("fast.jsonl", fast), out)
    after = pd.read_parquet(out / "p2_fig4.parquet")
    assert len(after) == len(before)
    for rate in (20e6, 100e6):
        assert (after["path_rate_bps"] == rate).sum() == (before["path_rate_bps"] == rate).sum() > 0


def test_sweep_sizes_option_sets_the_fig4_sizes_and_rejects_bad_ones(tmp_path, capsys, monkeypatch):
    """``sweep --sizes-bytes`` replaces the Fig. 4 sizes; sizes that do not increase fail with one line naming
    the field, before anything runs."""
    from tcpmodels.experiments.p2 import __main__ as cli

    seen = {}
    monkeypatch.setattr(cli, "run_sweep", lambda records, config, **kw: seen.setdefault("sizes", config.fig4_sizes_bytes)
                        and 0)
    assert cli.main(["sweep", "--records", str(tmp_path / "s.jsonl"), "--sizes-bytes", "65536", "268435456"]) == 0
    assert seen["sizes"] == (65536, 268435456)
    with pytest.raises(SystemExit) as exc:
        cli.main(["sweep", "--records", str(tmp_path / "s.jsonl"), "--sizes-bytes", "4096", "1024"])
    assert exc.value.code == 1 and "fig4_sizes_bytes [bytes] must be positive and increasing" in capsys.readouterr().err


def test_sweep_frame_carries_each_records_path_rate():
    """Fig. 4 rows name their path rate (two settings of one cc must not pool); a record written
    before records held it is the shipped 20 Mbit/s setting."""
    def sweep_rec(**extra):
        return {"cc": "cubic", "rep": 0, "rtt1_ms": 150.0, "rtt2_ms": 120.0, "load_avg": [0.5, 0.5, 0.5],
                "transfers": [{"label": "mptcp_64KB", "size_bytes": 65536, "rate_bps": 8e6}], **extra}
    df = p2.sweep_frame([sweep_rec(path_rate_bps=100e6), sweep_rec()])
    assert df["path_rate_bps"].tolist() == [100e6, 20e6]
    assert df["Bps"].tolist() == [1e6, 1e6]


def _captured_sweep(tmp_path, *, dirty=False):
    """A sweep record of (150, 120) ms with its two pcaps in ``tmp_path / 'caps'`` (a few fake bytes)."""
    caps = tmp_path / "caps"
    caps.mkdir(exist_ok=True)
    stats = []
    for iface in ("p0", "p1"):
        pcap = caps / f"p2_fig4_rtt150-120_s-{iface}.pcap"
        pcap.write_bytes(b"\xd4\xc3\xb2\xa1" + iface.encode() * 50)
        stats.append({"node": "s", "interface": iface, "path": f"/elsewhere/{pcap.name}", "snaplen_bytes": 128,
                      "packets_captured": 7, "packets_received_by_filter": 7, "packets_dropped_by_kernel": 0})
    rec = {"campaign": "p2_fig4", "cc": "cubic", "rep": 0, "rtt1_ms": 150.0, "rtt2_ms": 120.0,
           "path_rate_bps": 20e6, "run_id": "1", "load_avg": [0.1, 0.1, 0.1], "captures": stats,
           "git": {"commit": "c0ffee", "dirty": dirty},
           "transfers": [{"label": "mptcp_64KB", "size_bytes": 65536, "tx_bytes_p0": 90, "tx_bytes_p1": 10}]}
    records = tmp_path / "sweep.jsonl"
    JsonlRecords(records, SWEEP_KEY).append(rec)
    return records, caps


def test_ship_captures_gzips_reproducibly_with_a_note_the_notebook_reads(tmp_path):
    import gzip

    from tcpmodels.experiments.p2.ship import ship_sweep_captures

    records, caps = _captured_sweep(tmp_path)
    notes = ship_sweep_captures(records, caps, tmp_path / "out")
    assert [n.name for n in notes] == ["p2_fig4_rtt150-120_s-p0.json", "p2_fig4_rtt150-120_s-p1.json"]
    note = json.loads(notes[0].read_text())
    assert note["counter_shares"] == [{"size_bytes": 65536, "share1": 0.9}]
    assert note["git"] == {"commit": "c0ffee", "dirty": False} and note["tcpdump_stats"]["packets_captured"] == 7
    gz = tmp_path / "out" / note["capture"]
    assert gzip.decompress(gz.read_bytes()) == (caps / "p2_fig4_rtt150-120_s-p0.pcap").read_bytes()
    again = ship_sweep_captures(records, caps, tmp_path / "out2")
    assert json.loads(again[0].read_text())["sha256_gz"] == note["sha256_gz"]  # same pcap, same bytes


def test_ship_captures_refuses_dirty_code_missing_pcaps_and_records_without_captures(tmp_path):
    from tcpmodels.experiments.p2.ship import ship_sweep_captures

    records, caps = _captured_sweep(tmp_path, dirty=True)
    with pytest.raises(ValueError, match=r"\(150, 120\) ms ran from code .*expected a clean commit"):
        ship_sweep_captures(records, caps, tmp_path / "out")
    assert ship_sweep_captures(records, caps, tmp_path / "out", allow_dirty=True)
    (caps / "p2_fig4_rtt150-120_s-p1.pcap").unlink()
    with pytest.raises(FileNotFoundError, match="p2_fig4_rtt150-120_s-p1.pcap"):
        ship_sweep_captures(records, caps, tmp_path / "out", allow_dirty=True)
    bare = tmp_path / "bare.jsonl"
    JsonlRecords(bare, SWEEP_KEY).append({"campaign": "p2_fig4", "cc": "cubic", "rep": 0, "rtt1_ms": 150.0,
                                              "rtt2_ms": 120.0, "transfers": []})
    with pytest.raises(ValueError, match="no sweep record carries captures"):
        ship_sweep_captures(bare, caps, tmp_path / "out")
