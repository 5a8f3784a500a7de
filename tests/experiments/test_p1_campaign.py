"""P1 campaign: the engine-neutral schedule, its translation to both engines, resumable records,
and one tiny real run on each engine (markers ``testbed`` and ``sim``)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from tcpmodels.experiments import p1
from tcpmodels.records import JsonlRecords

CFG = p1.DEFAULT_CONFIG


def test_section4_schedule_follows_the_paper():
    conns = p1.schedule(CFG, "s4", "mptcp", 0)
    bg = [c for c in conns if c["kind"] == "background"]
    short = [c for c in conns if c["kind"] == "short"]
    assert len(bg) == 5 and all(c["mptcp"] and c["size_bytes"] is None for c in bg)  # 33 % of 16 hosts
    assert len({c["src"] for c in bg}) == 5 and len({c["dst"] for c in bg}) == 5  # one-to-one partners
    assert all(c["src"] != c["dst"] for c in conns)
    senders = {c["src"] for c in short}
    assert senders == set(range(16)) - {c["src"] for c in bg}  # the other 11 hosts send short flows
    assert all(c["size_bytes"] == 70_000 and not c["mptcp"] for c in short)
    assert all(CFG.warmup_s <= c["start_s"] < CFG.warmup_s + CFG.duration_s4_s for c in short)
    # Poisson, mean 200 ms per host: 11 x 40 s / 0.2 s = 2200 expected; 5 standard deviations
    expected = 11 * CFG.duration_s4_s / 0.2
    assert CFG.duration_s4_s == 40.0 and abs(len(short) - expected) < 5 * np.sqrt(expected)
    gaps = np.diff(sorted(c["start_s"] for c in short if c["src"] == min(senders)))
    assert 0.15 < gaps.mean() < 0.25 and gaps.std() / gaps.mean() > 0.7  # exponential gaps have CV 1


def test_same_seed_gives_the_same_workload_for_both_protocols():
    a, b = p1.schedule(CFG, "s4", "tcp", 3), p1.schedule(CFG, "s4", "mptcp", 3)
    strip = [{k: v for k, v in c.items() if k != "mptcp"} for c in a]
    assert strip == [{k: v for k, v in c.items() if k != "mptcp"} for c in b]
    assert [c["mptcp"] for c in b if c["kind"] == "background"] == [True] * 5
    assert p1.schedule(CFG, "s4", "tcp", 4) != a
    planes = np.array([c["plane"] for c in a])
    assert set(planes) == {0, 1, 2, 3}  # per-flow ECMP over the four cores


def test_section5_schedules_are_partition_aggregate():
    q = p1.schedule(CFG, "s5_query_nobg", "tcp", 0)
    assert {c["kind"] for c in q} == {"query"}
    assert {c["src"] for c in q} <= set(p1.AGGREGATOR_HOSTS) and {c["dst"] for c in q} == set(p1.WORKER_HOSTS)
    assert {c["size_bytes"] for c in q} == set(CFG.query_sizes_bytes)
    qb = p1.schedule(CFG, "s5_query_bg", "mptcp", 0)
    bg = [c for c in qb if c["kind"] == "background"]
    assert len(bg) == 6 and {c["dst"] for c in bg} <= set(p1.WORKER_HOSTS)  # 50 % of the 12 workers
    assert all(c["mptcp"] for c in qb)  # Section 5: the protocol of every connection
    m = p1.schedule(CFG, "s5_message_bg", "tcp", 0)
    msgs = [c for c in m if c["kind"] == "message"]
    assert {c["size_bytes"] for c in msgs} == set(CFG.message_sizes_bytes)
    assert abs(len(msgs) - 12 * 20 / 0.5) < 5 * np.sqrt(480)


def test_plan_runs_whole_seeds_first():
    plan = p1.run_plan(CFG, "kernel")
    assert len(plan) == len(CFG.seeds) * 4 * 2
    assert {(s["experiment"], s["protocol"]) for s in plan[:8]} == {(e, p) for e in p1.EXPERIMENTS for p in p1.PROTOCOLS}
    assert {s["seed"] for s in plan[:8]} == {CFG.seeds[0]}
    with pytest.raises(ValueError, match="engine"):
        p1.run_plan(CFG, "dce")
    assert {s["cc"] for s in plan} == {"uncoupled"}


def test_plan_keys_runs_by_congestion_control():
    coupled = p1.run_plan(CFG, "kernel", ["tm_lia", "tm_olia"])
    # coupled controls bring MPTCP runs only: their TCP baseline is the uncoupled group's TCP run
    assert len(coupled) == len(CFG.seeds) * 4 * 2 and {s["protocol"] for s in coupled} == {"mptcp"}
    assert {s["cc"] for s in coupled} == {"tm_lia", "tm_olia"}
    every = p1.run_plan(CFG, "kernel", ["uncoupled", "tm_lia", "tm_olia"])
    keys = [tuple(s[k] for k in p1.KEY) for s in every]
    assert len(keys) == len(set(keys)) == len(CFG.seeds) * 4 * 4  # the cc keeps same-seed MPTCP runs apart
    assert {s["cc"] for s in p1.run_plan(CFG, "ns3")} == {"lia"}
    with pytest.raises(ValueError, match="ns-3 runs LIA"):
        p1.run_plan(CFG, "ns3", ["tm_lia"])
    with pytest.raises(ValueError, match="cc must be"):
        p1.run_plan(CFG, "kernel", ["cubic"])


def test_steered_testbed_labels_its_runs_apart_with_the_same_workload(tmp_path):
    steered = replace(CFG, keep_flow_order=True)
    plan = p1.run_plan(steered, "kernel", ["uncoupled", "tm_lia"])
    assert {s["engine"] for s in plan} == {"kernel_steered"} and p1.engine_label("kernel", True) == "kernel_steered"
    plain = p1.run_plan(CFG, "kernel", ["uncoupled", "tm_lia"])
    keys = {tuple(s[k] for k in p1.KEY) for s in plain}
    assert len(plan) == len(plain) and not keys & {tuple(s[k] for k in p1.KEY) for s in plan}
    # the testbed does not enter the schedule: a steered run repeats the unsteered run of its seed
    assert p1.schedule(steered, "s4", "mptcp", 3) == p1.schedule(CFG, "s4", "mptcp", 3)
    assert [p1.engine_family(e) for e in ("kernel", "kernel_steered", "ns3")] == ["kernel", "kernel", "ns3"]
    with pytest.raises(ValueError, match="ns-3 has none"):
        p1.run_plan(steered, "ns3")
    with pytest.raises(ValueError, match="engine must be one of"):
        p1.engine_family("dce")
    # a plan made for the other testbed is refused before any run (no testbed, no record)
    with pytest.raises(ValueError, match=r"labelled engine \['kernel'\].*keep_flow_order=True labels its runs "
                                         r"'kernel_steered'"):
        p1.run_campaign(tmp_path / "k.jsonl", steered, engine="kernel", plan=plain[:1], progress=False)
    assert not (tmp_path / "k.jsonl").exists()


def test_coupled_control_goes_on_mptcp_sockets_only():
    conns = p1.schedule(CFG, "s4", "mptcp", 0)
    flows = [f for fl in p1.kernel_flows(conns, CFG, cc="tm_lia").values() for f in fl]
    assert {f["cc"] for f in flows if f["mptcp"]} == {"tm_lia"}
    assert {f["cc"] for f in flows if not f["mptcp"]} == {CFG.cc}  # the 70 KB TCP flows keep Reno
    plain = [f for fl in p1.kernel_flows(conns, CFG).values() for f in fl]
    assert {f["cc"] for f in plain} == {CFG.cc}


def test_unloadable_control_stops_the_campaign_before_any_run(tmp_path, monkeypatch):
    from tcpmodels.testbed import kernel_cc

    monkeypatch.setattr(kernel_cc, "unavailable_reason", lambda **kw: "bpftool not found")
    plan = p1.run_plan(replace(CFG, seeds=(0,)), "kernel", ["tm_lia"])
    with pytest.raises(kernel_cc.KernelCcUnavailable, match="tm_lia requested.*bpftool not found"):
        p1.run_campaign(tmp_path / "k.jsonl", CFG, engine="kernel", plan=plan, progress=False)
    assert not (tmp_path / "k.jsonl").exists()
    assert p1.check_kernel_ccs(p1.run_plan(CFG, "kernel")) == []  # uncoupled needs no BPF


def test_kernel_flows_pin_single_path_connections_to_their_plane():
    conns = p1.schedule(CFG, "s4", "mptcp", 0)
    by_host = p1.kernel_flows(conns, CFG)
    flows = [f for fl in by_host.values() for f in fl]
    assert len(flows) == len(conns)
    for c in conns:
        f = next(f for f in by_host[c["src"]] if f["flow_id"] == c["conn_id"] + 1)
        assert f["direction"] == "upload" and f["cc"] == "reno"
        if c["mptcp"]:
            assert f["dst"] == p1.host_addr(c["dst"], 0) and f["bind"] is None and f["port"] == p1.BG_PORT
            assert f["duration_s"] == pytest.approx(c["end_s"]) and f["sample_interval_s"] > 0
        else:
            assert f["dst"] == p1.host_addr(c["dst"], c["plane"]) and f["bind"] == p1.host_addr(c["src"], c["plane"])
            assert f["port"] == p1.FLOW_PORT and f["size_bytes"] == 70_000
    assert p1.host_addr(5, 2) == "10.37.0.1"  # fat_tree(): 10.{16c + n}.0.1


def test_ns3_config_maps_the_schedule_onto_the_fat_tree():
    conns = p1.schedule(CFG, "s5_query_bg", "mptcp", 1)[:40]
    cfg = p1.ns3_config(conns, CFG, seed=1)
    assert len(cfg.connections) == 40
    for c, sc in zip(conns, cfg.connections):
        assert (sc.src, sc.dst, sc.size_bytes) == (c["src"], c["dst"], c["size_bytes"])
        assert sc.cores == (0, 1, 2, 3) and sc.coupled  # LIA over one subflow per core
    tcp = p1.ns3_config(p1.schedule(CFG, "s4", "tcp", 1)[:30], CFG, seed=1)
    assert all(len(sc.cores) == 1 and not sc.coupled for sc in tcp.connections)
    assert cfg.host_link.rate_bps == 100e6 and cfg.agg_core_link.rate_bps == 400e6
    assert cfg.host_link.queue_bytes == 100_000
    assert 12 * cfg.host_link.delay_s == pytest.approx(0.5e-3)  # 6 links each way between pods


@pytest.mark.parametrize("change, match", [
    (dict(host_rate_bps=0.0), r"host_rate_bps \[bit/s\]"),
    (dict(buffer_bytes=10), r"buffer_bytes \[bytes\]"),
    (dict(rtt_s=0.0), r"rtt_s \[s\]"),
    (dict(background_share_s4=1.5), r"background_share_s4 \[-\]"),
    (dict(query_sizes_bytes=()), r"query_sizes_bytes \[bytes\]"),
    (dict(experiments=("s6",)), "experiments"),
])
def test_config_rejects_bad_values_by_name(change, match):
    with pytest.raises(ValueError, match=match):
        replace(CFG, **change)


def test_schedule_rejects_unknown_names():
    with pytest.raises(ValueError, match="experiment"):
        p1.schedule(CFG, "s9", "tcp", 0)
    with pytest.raises(ValueError, match="protocol"):
        p1.schedule(CFG, "s4", "quic", 0)


def test_subflow_stats_from_tcp_info_samples():
    # two subflows, 1 s at 10 samples/s; subflow 1 halves its window twice
    samples = []
    for sub in (0, 1):
        cwnd = 20.0
        for i in range(11):
            if sub == 1 and i in (4, 8):
                cwnd /= 2
            samples.append({"t_s": i * 0.1, "subflow": sub, "remote": f"10.{16 * sub}.0.1:5201", "cwnd_segments": cwnd,
                            "ssthresh_segments": 2**31 - 1 if sub == 0 or i < 4 else 10.0, "srtt_s": 0.002,
                            "ca_state": 0, "bytes_acked": i * 100_000, "bytes_sent": i * 100_000, "bytes_retrans": 0,
                            "mss_bytes": 1000})
            cwnd += 1
    out = {r["subflow"]: r for r in p1.subflow_stats(samples)}
    assert out[0]["throughput_bps"] == pytest.approx(8e6)  # 1e6 bytes acknowledged in 1 s
    assert out[0]["loss_events"] == 0 and out[1]["loss_events"] >= 1
    assert out[1]["loss_event_rate"] == pytest.approx(out[1]["loss_events"] / 1000)
    assert out[0]["rtt_mean_s"] == pytest.approx(0.002)


def _fake_record(engine, experiment, protocol, seed, cc="uncoupled"):
    conns = p1.schedule(replace(CFG, duration_s4_s=1.0, duration_s5_s=1.0), experiment, protocol, seed)
    flows = [{**{k: c[k] for k in ("conn_id", "kind", "src", "dst", "start_s", "size_bytes", "mptcp", "plane")},
              "fct_s": 0.01, "bytes": c["size_bytes"], "rate_bps": 1e7, "connect_s": 1e-4, "mptcp_subflows": None,
              "error": None} for c in conns]
    return {"engine": engine, "experiment": experiment, "protocol": protocol, "cc": cc, "seed": seed, "schema": 2,
            "load_avg": [1.0, 1.0, 1.0], "wall_s": 10.0, "started_utc": f"2026-01-01T00:00:{seed:02d}+00:00",
            "config_hash": "x", "config": CFG.to_dict(), "n_connections": len(conns), "flows": flows, "subflows": [],
            "tcpinfo": [], "lock_wait_s": 0.0, "base_rtt_s": {"plane0": 1e-4}}


def test_dataset_from_records_has_flows_runs_and_provenance(tmp_path):
    path = tmp_path / "k.jsonl"
    rec = JsonlRecords(path, p1.KEY)
    for proto in ("tcp", "mptcp"):
        rec.append(_fake_record("kernel", "s4", proto, 0))
    prov = p1.build_dataset([path], tmp_path / "data", note="unit test")
    assert prov["engines"]["kernel"]["runs"] == 2 and prov["kernel_base_rtt_ms"] == pytest.approx(0.1)
    import pandas as pd

    flows = pd.read_parquet(tmp_path / "data" / "datasets" / "p1_flows.parquet")
    assert set(flows["protocol"]) == {"tcp", "mptcp"} and (flows["fct_s"] == 0.01).all()
    saved = json.loads((tmp_path / "data" / "datasets" / "p1_provenance.json").read_text())
    assert saved["config"]["buffer_bytes"] == 100_000 and saved["ns3_setting"]["status"] == "not run"


def test_dataset_keeps_steered_runs_apart_and_holds_them_to_the_kernel_workload(tmp_path):
    import pandas as pd

    data = tmp_path / "data"
    plain, steered = tmp_path / "plain.jsonl", tmp_path / "steered.jsonl"
    JsonlRecords(plain, p1.KEY).append(_fake_record("kernel", "s4", "tcp", 0))
    p1.build_dataset([plain], data)
    cfg = {**CFG.to_dict(), "keep_flow_order": True}
    JsonlRecords(steered, p1.KEY).append(_fake_record("kernel_steered", "s4", "tcp", 0) | {"config": cfg})
    prov = p1.build_dataset([steered], data)
    assert prov["merge"] == {"kept_runs": 1, "replaced_runs": 0, "new_runs": 1}
    assert prov["engines"]["kernel"]["runs"] == prov["engines"]["kernel_steered"]["runs"] == 1
    runs = pd.read_parquet(data / "datasets" / "p1_runs.parquet")
    assert sorted(runs["engine"]) == ["kernel", "kernel_steered"]
    # a steered run is paired with the unsteered run of its seed: another arrival window is refused
    other = tmp_path / "other.jsonl"
    JsonlRecords(other, p1.KEY).append(_fake_record("kernel_steered", "s4", "mptcp", 0)
                                       | {"config": {**cfg, "duration_s4_s": 45.0}})
    with pytest.raises(ValueError, match="duration_s4_s 40.0 there, 45.0 in the record"):
        p1.build_dataset([other], data)


@pytest.mark.testbed
def test_tiny_kernel_run_and_resume(testbed_available, tmp_path):
    cfg = replace(CFG, duration_s5_s=1.0, warmup_s=0.5, drain_s=0.5, seeds=(7,))
    plan = [{"engine": "kernel", "experiment": "s5_query_nobg", "protocol": "tcp", "cc": "uncoupled", "seed": 7}]
    path = tmp_path / "k.jsonl"
    assert p1.run_campaign(path, cfg, engine="kernel", plan=plan, progress=False, yield_s=0.0) == 1
    rec = JsonlRecords(path, p1.KEY).read()[0]
    assert rec["cc"] == "uncoupled" and rec["cc_map"] is None and {f["cc_effective"] for f in rec["flows"]} == {"reno"}
    assert rec["engine"] == "kernel" and rec["rps_cpus"] is None  # the unsteered testbed
    fct = np.array([f["fct_s"] for f in rec["flows"]], dtype=float)
    assert len(fct) == rec["n_connections"] > 20 and not any(f["error"] for f in rec["flows"])
    # 1-16 KB over an idle 100 Mbit/s fabric: a few round trips, well under the 200 ms minimum RTO
    assert np.all(fct > 0) and np.median(fct) < 0.05
    assert all(v is not None and v < 0.005 for v in rec["base_rtt_s"].values())
    # the hosts' TcpExt counters that moved, summed: the queries' handshakes and data were counted
    assert rec["tcp_ext"]["TCPOrigDataSent"] >= rec["n_connections"] and rec["tcp_ext"]["TW"] > 0
    assert p1.run_campaign(path, cfg, engine="kernel", plan=plan, progress=False) == 0  # resumed: nothing to do


@pytest.mark.testbed
def test_tiny_kernel_run_under_tm_lia_couples_the_subflows(testbed_available, tmp_path):
    from tcpmodels.testbed import kernel_cc

    reason = kernel_cc.unavailable_reason()
    if reason:
        pytest.skip(f"BPF congestion controls: {reason}")
    cfg = replace(CFG, duration_s5_s=2.0, warmup_s=1.0, drain_s=1.0, seeds=(7,))
    plan = [{"engine": "kernel", "experiment": "s5_query_bg", "protocol": "mptcp", "cc": "tm_lia", "seed": 7}]
    path = tmp_path / "k.jsonl"
    assert p1.run_campaign(path, cfg, engine="kernel", plan=plan, progress=False, yield_s=0.0) == 1
    rec = JsonlRecords(path, p1.KEY).read()[0]
    assert rec["cc"] == "tm_lia" and not any(f["error"] for f in rec["flows"])
    # every MPTCP socket reports tm_lia, and tm_lia's connection map held the background
    # connections with their four subflows (one per core) while the traffic ran
    assert {f["cc_effective"] for f in rec["flows"]} == {"tm_lia"}
    bg = [f for f in rec["flows"] if f["kind"] == "background"]
    assert rec["cc_map"]["connections_seen"] >= len(bg) > 0 and rec["cc_map"]["max_subflows"] == 4
    assert rec["git"]["commit"]


@pytest.mark.testbed
def test_tiny_steered_kernel_run_records_its_testbed(testbed_available, tmp_path):
    cfg = replace(CFG, duration_s5_s=1.0, warmup_s=0.5, drain_s=0.5, seeds=(7,), keep_flow_order=True)
    plan = p1.run_plan(replace(cfg, experiments=("s5_query_nobg",)), "kernel")[:1]
    path = tmp_path / "k.jsonl"
    assert p1.run_campaign(path, cfg, engine="kernel", plan=plan, progress=False, yield_s=0.0) == 1
    rec = JsonlRecords(path, p1.KEY).read()[0]
    assert rec["engine"] == "kernel_steered" and rec["config"]["keep_flow_order"] is True
    assert rec["rps_cpus"] and int(rec["rps_cpus"], 16) > 0 and not any(f["error"] for f in rec["flows"])


def test_ns3_result_rows_line_up_with_the_schedule():
    """Result columns as documented by :class:`tcpmodels.sim.config.FatTree` (apps, FlowMonitor flows)."""
    import pandas as pd

    conns = p1.schedule(replace(CFG, duration_s5_s=1.0), "s5_query_bg", "mptcp", 2)
    apps = pd.DataFrame([{"connection": i, "tag": f"{c['kind']}:{c['conn_id']}", "n_subflows": 4,
                          "fct_s": np.nan if c["size_bytes"] is None else 0.001 * (i + 1),
                          "rx_bytes": c["size_bytes"] or 10**7, "goodput_bps": 5e7,
                          **{f"rx_bytes_core{k}": 2.5e6 for k in range(4)}} for i, c in enumerate(conns)])
    apps = apps.iloc[::-1]  # order must not matter: rows are matched by tag
    fm = pd.DataFrame({"flow_index": [1, 1, 2], "direction": ["data", "ack", "data"], "lost_packets": [2, 5, 0]})
    rows, subflows = p1.ns3_rows(conns, apps, fm)
    assert [r["conn_id"] for r in rows] == [c["conn_id"] for c in conns]
    for i, (r, c) in enumerate(zip(rows, conns)):
        assert r["fct_s"] == (None if c["size_bytes"] is None else pytest.approx(0.001 * (i + 1)))
        assert r["error"] is None
    assert rows[1]["lost_packets"] == 2 and rows[2]["lost_packets"] == 0  # data direction only
    n_bg = sum(c["size_bytes"] is None for c in conns)
    assert len(subflows) == 4 * n_bg and subflows[0]["throughput_bps"] == pytest.approx(2.5e6 * 8 / conns[0]["end_s"])
    missing = p1.ns3_rows(conns[:1], apps.iloc[:0], fm)[0][0]
    assert missing["error"] == "no result row"


def test_dataset_keeps_the_shipped_runs_and_adds_the_coupled_ones(tmp_path):
    """Earlier stages' raw records are gone: a build merges with the tables on disk, never drops them."""
    import pandas as pd

    first = tmp_path / "first.jsonl"
    rec = JsonlRecords(first, p1.KEY)
    for proto in ("tcp", "mptcp"):
        rec.append(_fake_record("kernel", "s4", proto, 0))
    data = tmp_path / "data"
    p1.build_dataset([first], data, note="stage 0")
    # an older shipped table had no cc column: it must read as uncoupled
    runs_path = data / "datasets" / "p1_runs.parquet"
    pd.read_parquet(runs_path).drop(columns=["cc", "git_commit", "git_dirty"]).to_parquet(runs_path)
    flows_path = data / "datasets" / "p1_flows.parquet"
    pd.read_parquet(flows_path).drop(columns=["cc"]).to_parquet(flows_path)
    second = tmp_path / "second.jsonl"
    rec2 = JsonlRecords(second, p1.KEY)
    for cc in ("tm_lia", "tm_olia"):
        rec2.append(_fake_record("kernel", "s4", "mptcp", 0, cc=cc) | {"git": {"commit": "abc", "dirty": False}})
    prov = p1.build_dataset([second], data, note="stage 1")
    runs = pd.read_parquet(runs_path)
    assert sorted(zip(runs["protocol"], runs["cc"])) == [("mptcp", "tm_lia"), ("mptcp", "tm_olia"),
                                                          ("mptcp", "uncoupled"), ("tcp", "uncoupled")]
    assert prov["merge"] == {"kept_runs": 2, "replaced_runs": 0, "new_runs": 2}
    assert prov["by_cc"]["kernel"]["tm_lia"]["runs"] == 1 and prov["by_cc"]["kernel"]["uncoupled"]["runs"] == 2
    assert prov["earlier_builds"][-1]["note"] == "stage 0" and set(prov["this_build"]) == {"kernel/tm_lia",
                                                                                           "kernel/tm_olia"}
    flows = pd.read_parquet(flows_path)
    n_run = len(_fake_record("kernel", "s4", "mptcp", 0)["flows"])
    assert flows.groupby("cc").size().to_dict() == {"tm_lia": n_run, "tm_olia": n_run, "uncoupled": 2 * n_run}
    # a record that re-measures a shipped run replaces it (no duplicate rows)
    third = tmp_path / "third.jsonl"
    JsonlRecords(third, p1.KEY).append(_fake_record("kernel", "s4", "tcp", 0) | {"wall_s": 99.0})
    prov = p1.build_dataset([third], data)
    runs = pd.read_parquet(runs_path)
    assert prov["merge"] == {"kept_runs": 3, "replaced_runs": 1, "new_runs": 0} and len(runs) == 4
    assert runs.loc[runs["protocol"] == "tcp", "wall_s"].tolist() == [99.0]
    assert len(pd.read_parquet(flows_path)) == 4 * n_run
    # rebuilt wholly from records (no run kept), no earlier build's provenance describes the data any more
    prov = p1.build_dataset([first, second], data)
    assert prov["merge"]["kept_runs"] == 0 and prov["earlier_builds"] == []
    # a run drawn from another arrival window cannot be paired with the shipped ones: refused, nothing written
    other = tmp_path / "other.jsonl"
    rec = _fake_record("kernel", "s4", "mptcp", 1, cc="tm_lia")
    JsonlRecords(other, p1.KEY).append(rec | {"config": {**rec["config"], "duration_s4_s": 45.0}})
    with pytest.raises(ValueError, match="duration_s4_s 40.0 there, 45.0 in the record"):
        p1.build_dataset([other], data)
    assert len(pd.read_parquet(runs_path)) == 4
    # ... unless it replaces every run of its engine (a stage that reruns all of them with new settings)
    ns3 = tmp_path / "ns3.jsonl"
    JsonlRecords(ns3, p1.KEY).append(_fake_record("ns3", "s4", "tcp", 0, cc="lia"))
    p1.build_dataset([ns3], data)
    again = tmp_path / "ns3_again.jsonl"
    rec = _fake_record("ns3", "s4", "tcp", 0, cc="lia")
    JsonlRecords(again, p1.KEY).append(rec | {"config": {**rec["config"], "duration_s4_s": 45.0}})
    assert p1.build_dataset([again], data)["configs"]["ns3"]["duration_s4_s"] == 45.0


@pytest.mark.testbed
def test_tiny_swapped_variant_runs_with_its_sysctls_in_every_host(testbed_available, tmp_path, monkeypatch):
    from tcpmodels.datasets.p1_swaps import KEY
    from tcpmodels.experiments.p1.arms import run_arms
    from tcpmodels.experiments.p1.kernel import KernelSession
    from tcpmodels.experiments.p1.swaps import TESTBED_ARMS

    cfg = replace(CFG, duration_s4_s=2.0, warmup_s=0.5, drain_s=0.5, seeds=(7,))
    plan = [{"campaign": "p1_swaps", "engine": "kernel_norack", "experiment": "s4", "protocol": "tcp",
             "cc": "uncoupled", "seed": 7, "arm_position": 0, "order": 0}]
    path, seen, run = tmp_path / "swaps.jsonl", {}, KernelSession.run

    def spy(self, *a, **k):  # what the hosts' namespaces hold when the run's traffic starts
        seen.update({n: self.tb.exec(n, ["sysctl", "-n", "net.ipv4.tcp_recovery"]).stdout.strip()
                     for n in ("h0", "h15")})
        return run(self, *a, **k)

    monkeypatch.setattr(KernelSession, "run", spy)
    args = dict(key=KEY, desc="p1 swaps", seeds=(7,), config=cfg, progress=False)
    assert run_arms(path, plan, TESTBED_ARMS, **args) == 1
    rec = JsonlRecords(path, KEY).read()[0]
    assert rec["host_sysctls"] == [["net.ipv4.tcp_recovery", "0"], ["net.ipv4.tcp_early_retrans", "0"]]
    assert seen == {"h0": "0", "h15": "0"} and rec["flows"] and not any(f["error"] for f in rec["flows"])
    with pytest.raises(KeyError, match="kernel_fast"):
        run_arms(path, [dict(plan[0], engine="kernel_fast")], TESTBED_ARMS, **args)


@pytest.mark.testbed
def test_tiny_ack_every_arm_sends_a_packet_per_segment_and_acknowledges_each(testbed_available, tmp_path,
                                                                             monkeypatch):
    """The ACK swap takes (issue 57 item 2, :mod:`tcpmodels.experiments.p1.delack`): ``quickack 1`` on the hosts'
    routes, TSO off on their links, and about one ACK per data segment where the shipped testbed's offloads leave
    a fraction of one."""
    from tcpmodels.datasets.p1_delack import KEY
    from tcpmodels.experiments.p1.arms import run_arms
    from tcpmodels.experiments.p1.delack import TESTBED_ARMS
    from tcpmodels.experiments.p1.kernel import KernelSession

    cfg = replace(CFG, duration_s4_s=3.0, warmup_s=1.0, drain_s=0.5, seeds=(3,))
    plan = [{"campaign": "p1_delack", "engine": arm, "experiment": "s4", "protocol": "tcp", "cc": "uncoupled",
             "seed": 3, "arm_position": i, "order": i} for i, arm in enumerate(("kernel", "kernel_ack_every"))]
    path, seen, run = tmp_path / "delack.jsonl", {}, KernelSession.run

    def spy(self, *a, **k):  # the hosts' routes and offloads when the run's traffic starts
        seen[self.ack_every_segment] = (self.tb.exec("h0", ["ip", "route", "show"]).stdout,
                                        self.tb.exec("h0", ["ethtool", "-k", "hl0"]).stdout)
        return run(self, *a, **k)

    monkeypatch.setattr(KernelSession, "run", spy)
    assert run_arms(path, plan, TESTBED_ARMS, key=KEY, desc="p1 delack", seeds=(3,), config=cfg, progress=False) == 2
    recs = {r["engine"]: r for r in JsonlRecords(path, KEY).read()}
    via = [ln for ln in seen[True][0].splitlines() if " via " in ln]
    assert via and all("quickack 1" in ln for ln in via) and "quickack" not in seen[False][0]
    assert "tcp-segmentation-offload: off" in seen[True][1] and "tcp-segmentation-offload: on" in seen[False][1]
    assert recs["kernel_ack_every"]["ack_every_segment"] is True and recs["kernel"]["ack_every_segment"] is False
    acks = {arm: (r["tcp_ext"].get("TCPPureAcks", 0) + r["tcp_ext"].get("TCPHPAcks", 0))
            / r["tcp_ext"]["TCPOrigDataSent"] for arm, r in recs.items()}
    print(f"ACKs received per data segment sent: {acks}")
    assert acks["kernel_ack_every"] > max(0.7, 2 * acks["kernel"]), acks  # below 1: SACK ACKs are compressed
