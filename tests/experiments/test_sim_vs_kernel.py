"""ns-3 versus the kernel testbed on one dumbbell: plan, ns-3 config, throughput summaries, agreement,
dataset (unit); one short sample on each engine (testbed + sim).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments import sim_vs_kernel as svk
from tcpmodels.records import JsonlRecords

CFG = svk.DEFAULT_CONFIG


def test_plan_gives_both_engines_the_same_offsets_and_is_deterministic():
    p = svk.plan(CFG)
    assert len(p) == 2 * CFG.reps
    assert [s["engine"] for s in p[:2]] == ["kernel", "ns3"]
    for rep in range(CFG.reps):
        k, n = [s for s in p if s["rep"] == rep]
        assert k["starts_s"] == n["starts_s"]
        assert all(0 <= x <= CFG.start_jitter_s for x in k["starts_s"])
    assert len({tuple(s["starts_s"]) for s in p}) == CFG.reps  # a new draw per repetition
    assert p == svk.plan(CFG)
    assert [s["engine"] for s in svk.plan(CFG, ("ns3",))] == ["ns3"] * CFG.reps
    with pytest.raises(ValueError, match="engines entries must be 'kernel' or 'ns3'; got 'sim'"):
        svk.plan(CFG, ("sim",))


def test_ns3_config_is_the_kernel_dumbbell():
    sample = svk.plan(CFG)[1]
    d = svk.ns3_config(CFG, sample)
    assert [s.variant for s in d.senders] == ["TcpLinuxReno", "TcpCubic", "TcpLinuxReno"]
    # round-trip propagation delay of sender i: its access link both ways (bottleneck delay 0)
    rtts = [2 * (s.access.delay_s + d.bottleneck.delay_s + d.receiver_access.delay_s) for s in d.senders]
    assert rtts == pytest.approx([r * 1e-3 for r in CFG.rtts_ms], abs=5e-5)
    assert d.bottleneck.rate_bps == CFG.rate_bps and d.bottleneck.queue_bytes == CFG.buffer_bytes
    assert [s.apps[0].start_s for s in d.senders] == sample["starts_s"]
    assert d.duration_s == CFG.start_jitter_s + CFG.duration_s
    assert d.tcp.rcvbuf_bytes == CFG.rwnd_bytes


def test_scenarios_differ_only_where_they_say():
    mixed, reno, locked, nudged = (svk.SCENARIOS[k] for k in ("reno_cubic_reno", "reno_reno_reno",
                                                              "reno_reno_reno_locked", "reno_reno_reno_nudged"))
    assert mixed == CFG and mixed.ccs == ("reno", "cubic", "reno")
    assert replace(reno, name=mixed.name, ccs=mixed.ccs, reps=mixed.reps, seed=mixed.seed) == mixed
    assert reno.ns3_jitter_packets == 1.0 and locked.ns3_jitter_packets == nudged.ns3_jitter_packets == 0.0
    assert replace(locked, name=reno.name, ns3_jitter_packets=reno.ns3_jitter_packets) == reno
    assert replace(nudged, name=locked.name, rtts_ms=locked.rtts_ms) == locked
    half_packet_ms = 1500 * 8 / mixed.rate_bps / 2 * 1e3
    assert np.subtract(nudged.rtts_ms, reno.rtts_ms) == pytest.approx([0.0, half_packet_ms, 0.0])
    assert len({c.hash() for c in svk.SCENARIOS.values()}) == 4


def test_ns3_access_links_carry_the_jitter_and_the_bottleneck_none():
    sample = svk.plan(CFG, ("ns3",))[0]
    packet_s = 1500 * 8 / CFG.rate_bps  # 0.24 ms at 50 Mbit/s
    d = svk.ns3_config(CFG, sample)
    assert [s.access.jitter_s for s in d.senders] == pytest.approx([packet_s] * 3)
    assert d.bottleneck.jitter_s == 0.0
    locked = svk.ns3_config(svk.SCENARIOS["reno_reno_reno_locked"], sample)
    assert all(s.access.jitter_s == 0.0 for s in locked.senders)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rate_bps": 1e10}, r"rate_bps \[bit/s\] must be in \[1e5, 1e9\]"),
        ({"ns3_jitter_packets": -1.0}, r"ns3_jitter_packets \[-\] must be in \[0, 100\]; got -1.0"),
        ({"ccs": ("reno", "bbr", "reno")}, r"ccs entries must be one of \['cubic', 'reno'\]; got 'bbr'"),
        ({"ccs": ("reno",)}, r"ccs needs one entry per sender \(3\); got 1"),
        ({"rtts_ms": (10.0, 0.0, 40.0)}, r"rtts_ms entries \[ms\] must be in \[0.1, 1000\]; got 0.0"),
        ({"duration_s": 5.0}, r"duration_s \[s\] must exceed warmup_s \+ 1 = 6.0; got 5.0"),
        ({"tolerance_share": 0.0}, r"tolerance_share \[-\] must be in \(0, 1\); got 0.0"),
    ],
)
def test_config_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        replace(CFG, **kwargs)


def test_summarize_flows_interpolates_cumulative_bytes():
    t = np.arange(0.0, 10.01, 0.1)
    series = [(t, 1e6 * t), (t + 0.05, 2e6 * t)]  # 8 and 16 Mbit/s
    got = svk.summarize_flows(series, lo_s=2.0, hi_s=9.0)
    assert got == pytest.approx([8e6, 16e6])
    with pytest.raises(ValueError, match=r"flow 1: samples \[0.050, 10.050\] s do not cover \[0.000, 5.000\] s"):
        svk.summarize_flows(series, lo_s=0.0, hi_s=5.0)
    with pytest.raises(ValueError, match=r"hi_s \[s\] must be > lo_s = 3.0; got 3.0"):
        svk.summarize_flows(series, lo_s=3.0, hi_s=3.0)


def _records(ns3_shift_bps=(0.0, 0.0, 0.0), reps=3, seed=0):
    rng = np.random.default_rng(seed)
    base = np.array([20e6, 18e6, 9e6])
    recs = []
    for s in svk.plan(replace(CFG, reps=reps)):
        tp = base + rng.normal(0, 0.5e6, 3) + (np.array(ns3_shift_bps) if s["engine"] == "ns3" else 0.0)
        recs.append({**s, "config": replace(CFG, reps=reps).to_dict(), "config_hash": replace(CFG, reps=reps).hash(),
                     "throughput_bps": tp.tolist(), "interval_s": [6.0, 26.0], "wall_s": 30.0,
                     "load_avg": [3.0, 3.0, 3.0], "started_utc": f"2026-01-01T00:00:{len(recs):02d}+00:00",
                     "ping_rtt_ms": [10.1, 20.1, 40.1], "cc_effective": ["reno", "cubic", "reno"],
                     "variants": ["TcpLinuxReno", "TcpCubic", "TcpLinuxReno"], "ns3_version": "3.44"})
    return recs


def test_agreement_sets_each_difference_beside_its_tolerance():
    frame = svk.flow_frame(_records())
    assert len(frame) == 2 * 3 * 3 and set(frame["engine"]) == {"kernel", "ns3"}
    table = svk.agreement(frame, CFG)
    assert table["flow"].tolist() == ["0", "1", "2", "total"]
    assert (table[["kernel_n", "ns3_n"]] == 3).all().all()
    assert table.loc[3, "kernel_mbps"] == pytest.approx(table.loc[:2, "kernel_mbps"].sum())
    assert table["tolerance"].tolist() == [CFG.tolerance_share] * 3 + [CFG.tolerance_utilisation]
    assert "agrees" not in table  # judged by tcpmodels.papers.sim_vs_kernel.claims (ClaimSpec), not here
    # ns-3 gives flow 2 seven Mbit/s (0.14 of 50 Mbit/s) more and flow 0 as much less
    bad = svk.agreement(svk.flow_frame(_records(ns3_shift_bps=(-7e6, 0.0, 7e6))), CFG)
    assert (bad["diff_share"].abs() > bad["tolerance"]).tolist() == [True, False, True, False]
    only_kernel = svk.agreement(svk.flow_frame([r for r in _records() if r["engine"] == "kernel"]), CFG)
    assert only_kernel["diff_share"].isna().all()


def test_dataset_and_provenance_from_records_of_two_scenarios(tmp_path):
    reno = svk.SCENARIOS["reno_reno_reno"]
    paths = {"mixed": tmp_path / "mixed.jsonl", "reno": tmp_path / "reno.jsonl"}
    for r in _records():
        JsonlRecords(paths["mixed"], ("campaign", "engine", "rep")).append(r)
    for r in _records(seed=1):
        r = {**r, "config": reno.to_dict(), "config_hash": reno.hash()}
        JsonlRecords(paths["reno"], ("campaign", "engine", "rep")).append(r)
    prov = svk.build_dataset([paths["mixed"], paths["reno"]], tmp_path / "out")
    df = pd.read_parquet(tmp_path / "out" / "sim_vs_kernel.parquet")
    assert len(df) == 36 and (tmp_path / "out" / "sim_vs_kernel.csv").exists()
    assert df.groupby("scenario").size().to_dict() == {"reno_cubic_reno": 18, "reno_reno_reno": 18}
    assert set(df.loc[df["scenario"] == "reno_reno_reno", "cc"]) == {"reno"}
    on_disk = json.loads((tmp_path / "out" / "sim_vs_kernel_provenance.json").read_text())
    for key in ("command", "scenarios", "tools", "host", "git", "load_avg_at_write", "ns3_version", "wall_s_sum"):
        assert key in on_disk, key
    assert set(prov["scenarios"]) == set(on_disk["scenarios"]) == {"reno_cubic_reno", "reno_reno_reno"}
    mixed = on_disk["scenarios"]["reno_cubic_reno"]
    assert mixed["engines"]["kernel"]["n_samples"] == 3 and "verdict" not in mixed
    assert max(abs(r["diff_share"]) for r in mixed["agreement"]) < CFG.tolerance_share
    assert mixed["kernel_ping_rtt_ms_median"] == [10.1, 20.1, 40.1]
    # the notebook's reader: data_dir/datasets/...
    (tmp_path / "data").mkdir()
    (tmp_path / "out").rename(tmp_path / "data" / "datasets")
    frame, configs, prov2 = svk.load_dataset(tmp_path / "data")
    assert configs["reno_reno_reno"] == reno and len(frame) == 36 and prov2["scenarios"].keys() == configs.keys()
    with pytest.raises(ValueError, match="frame must hold only scenario 'reno_cubic_reno'"):
        svk.agreement(frame, CFG)
    store = JsonlRecords(paths["mixed"], ("campaign", "engine", "rep"))
    store.append({**_records()[0], "config_hash": "different", "rep": 9})
    with pytest.raises(ValueError, match="records of several configs"):
        svk.build_dataset([paths["mixed"]], tmp_path / "out2")


# --------------------------------------------------------- both engines, short
SHORT = replace(CFG, duration_s=5.0, warmup_s=2.0, reps=1, start_jitter_s=0.3)


@pytest.mark.testbed
@pytest.mark.sim
def test_one_short_sample_on_each_engine_fills_the_bottleneck_and_resumes(testbed_available, tmp_path):
    from tcpmodels.sim import _ns3

    if not _ns3.available():
        pytest.skip("ns-3 is not installed (pip install -e '.[sim]')")
    records = tmp_path / "r.jsonl"
    assert svk.run_campaign(records, SHORT, progress=False, ns3_dir=tmp_path / "ns3") == 2
    assert (tmp_path / "ns3" / SHORT.hash()[:12] / "rep0").is_dir()  # one folder per scenario
    assert svk.run_campaign(records, SHORT, progress=False) == 0  # resumed: nothing left
    recs = {r["engine"]: r for r in JsonlRecords(records, ("campaign", "engine", "rep")).read()}
    k, n = recs["kernel"], recs["ns3"]
    assert k["cc_effective"] == ["reno", "cubic", "reno"]  # read back from the kernel sockets
    assert n["variants"] == ["TcpLinuxReno", "TcpCubic", "TcpLinuxReno"]
    for want_ms, got_ms in zip(SHORT.rtts_ms, k["ping_rtt_ms"]):
        assert got_ms == pytest.approx(want_ms, abs=2.0)
    for r in (k, n):
        lo, hi = r["interval_s"]
        assert hi - lo > 2.0
        tp = np.array(r["throughput_bps"])
        # three flows through one 50 Mbit/s bottleneck carry most of it, never more, and none is locked
        # out (0.6: below the lowest of 22 kernel runs of this sample, 0.745; a wrong rate is far off)
        assert 0.6 * SHORT.rate_bps < tp.sum() < 1.02 * SHORT.rate_bps, (r["engine"], tp)
        assert (tp > 0.03 * SHORT.rate_bps).all(), (r["engine"], tp)
    # The comparison is complete for one repetition. Whether the engines agree is not asked of a 3 s
    # window: its kernel utilisation ranged 0.745-0.958 over 12 runs (0.825-0.957 over 10 steered),
    # against ns-3's 0.992, so the 0.05 criterion, stated for the means of 20 s windows over
    # repetitions, failed in most of them; the shipped campaign (0.957 against 0.965) is judged by
    # test_shipped_dataset_agrees_with_jitter_and_shows_the_locking_without.
    table = svk.agreement(svk.flow_frame(list(recs.values())), SHORT)
    assert table["flow"].tolist() == ["0", "1", "2", "total"]
    assert (table[["kernel_n", "ns3_n"]] == 1).all().all() and table["diff_share"].notna().all()
    assert table.loc[3, "kernel_mbps"] == pytest.approx(sum(k["throughput_bps"]) / 1e6)
    assert table.loc[3, "ns3_mbps"] == pytest.approx(sum(n["throughput_bps"]) / 1e6)
    assert math.isfinite(table["diff_share"].abs().max())


def test_shipped_dataset_agrees_with_jitter_and_shows_the_locking_without():
    """The shipped runs: with one packet time of jitter both scenarios agree with the kernel; exact delays do not."""
    from pathlib import Path

    frame, configs, prov = svk.load_dataset(Path(__file__).resolve().parents[2] / "data")
    assert set(configs) == {"reno_cubic_reno", "reno_reno_reno", "reno_reno_reno_locked", "reno_reno_reno_nudged"}
    for name in ("reno_cubic_reno", "reno_reno_reno"):
        assert configs[name].ns3_jitter_packets == 1.0
        table = pd.DataFrame(prov["scenarios"][name]["agreement"])  # the campaign's record (its old rule held)
        assert (table["diff_share"].abs() <= table["tolerance"]).all(), table
    kernel = frame[(frame["scenario"] == "reno_reno_reno") & (frame["engine"] == "kernel")]
    locked = frame[(frame["scenario"] == "reno_reno_reno_locked") & (frame["engine"] == "ns3")]
    k = kernel.groupby("flow")["throughput_bps"].mean()
    lk = locked.groupby("flow")["throughput_bps"].mean()
    assert k.is_monotonic_decreasing  # the kernel: Reno's share falls with RTT
    assert lk[1] > lk[0] and abs(lk[1] - k[1]) / configs["reno_reno_reno"].rate_bps > 0.2  # locked ns-3: it does not


def test_an_ns3_repetition_run_again_writes_into_a_fresh_folder(tmp_path, monkeypatch):
    """The ns-3 tables of a repetition are never overwritten: a second run goes to ``rep0.1`` (issue 56)."""
    from tcpmodels.experiments.sim_vs_kernel import runs

    written = []

    def fake_ns3_sample(config, sample, out_dir):
        out_dir.mkdir(parents=True)
        (out_dir / "flows.parquet").write_text("tables")
        written.append(out_dir)
        return {}

    monkeypatch.setattr(runs, "run_ns3_sample", fake_ns3_sample)
    sample = svk.plan(CFG, ("ns3",))[0]
    for records in ("a.jsonl", "b.jsonl"):  # two campaigns sharing ns3_dir
        assert svk.run_campaign(tmp_path / records, CFG, engines=("ns3",), samples=[sample], progress=False,
                                ns3_dir=tmp_path / "ns3") == 1
    rep = tmp_path / "ns3" / CFG.hash()[:12] / f"rep{sample['rep']}"
    assert written == [rep, rep.with_name(rep.name + ".1")]
    assert runs.fresh_folder(tmp_path / "absent") == tmp_path / "absent"
    (tmp_path / "empty").mkdir()
    assert runs.fresh_folder(tmp_path / "empty") == tmp_path / "empty"
