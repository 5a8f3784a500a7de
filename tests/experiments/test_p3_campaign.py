"""P3 campaign: plan, configuration checks, throughput from TCP_INFO samples, ns-3 configs, fluid grid (unit);
a tiny real-kernel sample (testbed) and a tiny ns-3 run of the modified CUBIC (sim).

(Named ``test_p3_campaign.py``: the test folders have no ``__init__.py``.)
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tcpmodels.experiments import p3
from tcpmodels.records import JsonlRecords
from tcpmodels.models.cubic import PowerLawX, x_power_law_params

CFG = p3.DEFAULT_CONFIG


def test_kernel_plan_covers_the_grid_whole_repetitions_first_kinds_of_a_pair_together_with_shared_offsets():
    plan = p3.kernel_plan(CFG)
    kinds = CFG.kernel_kinds
    assert kinds == ("standard", "multiply", "divide")
    n = len(kinds)
    assert len(plan) == 12 * n * CFG.reps
    grid = {(r, c) for r in (1.0, 4.0, 16.0) for c in (1.0, 4.0, 16.0, 64.0)}
    first = plan[:12 * n]
    assert {s["rep"] for s in first} == {0}
    assert {(s["kind"], s["reno_rtt_ms"], s["cubic_rtt_ms"]) for s in first} == {(k, *p) for k in kinds for p in grid}
    for j in range(12):  # each pair's kinds back to back, the order reversed every other pair
        block = first[n * j:n * (j + 1)]
        assert len({(s["reno_rtt_ms"], s["cubic_rtt_ms"]) for s in block}) == 1
        assert tuple(s["kind"] for s in block) == (kinds if j % 2 == 0 else kinds[::-1])
    # consecutive pairs share a kind at the seam: tm_cubic_x loads at most twice per pair
    loads = sum(1 for a, b in zip(plan, plan[1:]) if a["kind"] != b["kind"] and b["kind"] != "standard")
    assert loads <= 2 * 12 * CFG.reps
    assert [s["order"] for s in plan] == list(range(len(plan)))
    offs = np.array([[s["reno_start_s"], s["cubic_start_s"]] for s in plan])
    assert offs.min() >= 0 and offs.max() <= CFG.start_jitter_s and len(np.unique(offs)) > 40  # random, not fixed
    # the kinds of one repetition and pair share their start offsets (a matched set); other pairs do not
    by = {}
    for s in plan:
        by.setdefault((s["rep"], s["reno_rtt_ms"], s["cubic_rtt_ms"]), set()).add((s["reno_start_s"], s["cubic_start_s"]))
    assert all(len(v) == 1 for v in by.values()) and len({next(iter(v)) for v in by.values()}) == len(by)
    assert plan == p3.kernel_plan(CFG)  # deterministic: resume replays the same offsets
    one = p3.kernel_plan(replace(CFG, kernel_kinds=("divide",), reps=1))
    assert len(one) == 12 and {s["kind"] for s in one} == {"divide"}


def test_cpu_loss_separates_the_bottleneck_queue_from_other_drops():
    from tcpmodels.experiments.p3.pilot import cpu_loss

    before = {"ra:bn": {"qdisc_drops": 10, "rx_dropped": 0, "tx_dropped": 0},
              "s0:a0": {"qdisc_drops": 0, "rx_dropped": 1, "tx_dropped": 0}}
    after = {"ra:bn": {"qdisc_drops": 110, "rx_dropped": 0, "tx_dropped": 0},
             "s0:a0": {"qdisc_drops": 2, "rx_dropped": 4, "tx_dropped": None}}
    stats = {"a0": {"a_to_b": {"forwarded": 1000, "dropped_queue_full": 5, "dropped_socket": 7},
                    "b_to_a": {"forwarded": 500, "send_errors": 1}}}
    r = cpu_loss(before, after, stats)
    assert r["queue_drops"] == 100 and r["other_qdisc_drops"] == 2 and r["interface_drops"] == 3
    assert r["delay_element_drops"] == {"dropped_queue_full": 5, "dropped_socket": 7, "send_errors": 1,
                                        "dropped_oversize": 0}
    assert r["delay_element_forwarded"] == 1500 and r["cpu_drops"] == 2 + 3 + 13
    clean = cpu_loss(before, before, {"a0": {"a_to_b": {"forwarded": 3}}})
    assert clean["cpu_drops"] == 0 and clean["queue_drops"] == 0


def test_queue_drops_are_counted_once_in_old_and_new_records():
    """Records of 2026-11-24 summed the tbf's and its leaf's drop counters (twice each drop): halved;
    records with ``counting`` hold the root qdisc's count as is."""
    import gzip

    from tcpmodels.experiments.p3.kernel import DROPS_COUNTING, queue_drops_once

    assert queue_drops_once({"queue_drops": 6562}) == 3281
    assert queue_drops_once({"queue_drops": 3281, "counting": DROPS_COUNTING}) == 3281
    assert queue_drops_once({}) is None
    shipped = Path(__file__).resolve().parents[2] / "data" / "datasets" / "p3_kernel_x_records.jsonl.gz"
    if not shipped.exists():
        pytest.skip(f"no shipped records at {shipped}")
    recs = [json.loads(line) for line in gzip.open(shipped, "rt") if line.strip()]
    df = p3.kernel_frame(recs, CFG)
    old = [r["drops"]["queue_drops"] for r in recs]
    assert len(recs) == 9 and all(q % 2 == 0 for q in old)  # each drop counted on two qdiscs
    retrans = df["reno_retrans"] + df["cubic_retrans"]
    # every drop is retransmitted once (or more): the once-count never exceeds the retransmissions
    assert (df["queue_drops"] <= retrans).all() and (df["queue_drops"] >= 0.85 * retrans).all()
    assert sorted(df["queue_drops"] * 2) == sorted(old)


def test_kind_parameters_of_tm_cubic_x():
    from tcpmodels.experiments.p3.kernel import KIND_CC, kind_cc_params

    assert kind_cc_params("standard", CFG) is None and KIND_CC["standard"] == "cubic"
    assert kind_cc_params("divide", CFG) == {"reading": "divide", "x_exponent": CFG.x_exponent}
    assert KIND_CC["multiply"] == KIND_CC["divide"] == "tm_cubic_x"
    with pytest.raises(ValueError, match="kind must be one of"):
        kind_cc_params("none", CFG)


def test_buffer_and_scaling_state_what_the_scaled_rate_changes():
    assert CFG.rate_bps == 400e6 and CFG.buffer_bytes == round(400e6 * 0.016 / 8)  # one BDP at 16 ms
    sc = CFG.scaling()
    assert sc["rate_scale"] == pytest.approx(0.4)
    # same RTTs, 2.5x smaller windows -> K about 2.5^(1/3) smaller for a flow alone
    for row in sc["per_rtt"].values():
        assert row["paper_w_max_alone_segments"] / row["w_max_alone_segments"] == pytest.approx(2.5)
        assert row["paper_k_alone_s"] / row["k_alone_s"] == pytest.approx(2.5 ** (1 / 3))
        # the readings move K by x^(+-1/3), x(RTT) > 1 on the grid
        assert row["k_multiply_alone_s"] > row["k_alone_s"] > row["k_divide_alone_s"]
    # 10 epochs of the longest K (CUBIC 64 ms, reading multiply) set the measured span
    longest = sc["longest_k"]
    assert (longest["cubic_rtt_ms"], longest["kind"]) == (64.0, "multiply")
    assert longest["k_s"] == max(r[k] for r in sc["per_rtt"].values()
                                 for k in ("k_alone_s", "k_multiply_alone_s", "k_divide_alone_s"))
    assert 10 * longest["k_s"] <= sc["measure_s_for_10_epochs"] < 10 * longest["k_s"] + 5
    assert CFG.measure_s >= sc["measure_s_for_10_epochs"]
    only_std = replace(CFG, kernel_kinds=("standard",)).scaling()
    assert only_std["longest_k"]["kind"] == "standard" and only_std["longest_k"]["k_s"] < longest["k_s"]


@pytest.mark.parametrize("change, match", [
    (dict(rate_bps=0.0), r"rate_bps \[bit/s\]"),
    (dict(buffer_bdp_fraction=0.0), r"buffer_bdp_fraction \[-\]"),
    (dict(cubic_rtts_ms=()), r"cubic_rtts_ms \[ms\]"),
    (dict(reps=0), r"reps"),
    (dict(ns3_rate_bps=0.5e6), r"ns3_rate_bps \[bit/s\]"),
    (dict(kernel_kinds=("standard", "standard")), r"kernel_kinds"),
    (dict(kernel_kinds=("reno",)), r"kernel_kinds"),
    (dict(kernel_kinds=()), r"kernel_kinds"),
    (dict(ns3_warmup_s=30.0), r"ns3_warmup_s \[s\]"),
    (dict(x_exponent=0.5), r"x_exponent \[-\]"),
])
def test_config_rejects_bad_values_by_name(change, match):
    with pytest.raises(ValueError, match=match):
        replace(CFG, **change)


def test_x_power_law_default_goes_through_the_fig2_corners():
    x = PowerLawX(**x_power_law_params(-1 / 3))
    assert float(x(0.001)) == pytest.approx(10.0) and float(x(1.0)) == pytest.approx(1.0)
    assert float(PowerLawX(**x_power_law_params(-2 / 3))(0.001)) == pytest.approx(100.0)


def test_jain_index_bounds():
    assert p3.jain_index(30.0, 30.0) == 1.0 and p3.jain_index(10.0, 0.0) == 0.5
    assert p3.jain_index(75.0, 25.0) == pytest.approx(100**2 / (2 * (75**2 + 25**2)))
    assert math.isnan(p3.jain_index(0.0, 0.0))
    with pytest.raises(ValueError, match="bit/s"):
        p3.jain_index(-1.0, 1.0)


def _samples(rate_Bps, t_end_s, dt=0.1):
    t = np.arange(0, t_end_s + 1e-9, dt)
    return [{"t_s": float(x), "bytes_acked": int(rate_Bps * x)} for x in t]


def test_flow_samples_give_the_throughput_over_the_common_interval():
    # flow A at 5 MB/s starting at 100.0 s, flow B at 2 MB/s starting 0.4 s later; 10 s each
    s = p3.summarize_flow_samples([_samples(5e6, 10.0), _samples(2e6, 10.0)], [100.0, 100.4], warmup_s=2.0,
                                  window_s=2.0)
    assert s["t0_mono_s"] == pytest.approx(102.4)
    assert s["span_s"] == pytest.approx(10.0 - 2.4)  # later start + warm-up .. earlier end
    assert s["throughput_bps"] == pytest.approx([40e6, 16e6], rel=1e-6)
    assert len(s["window_throughput_bps"][0]) == 3 and np.allclose(s["window_throughput_bps"][1], 16e6)
    with pytest.raises(ValueError, match="window_s"):
        p3.summarize_flow_samples([_samples(5e6, 3.0), _samples(2e6, 3.0)], [0.0, 0.0], warmup_s=2.5, window_s=1.0)


def _fake_kernel_record(rep, reno, cubic, reno_Bps=6e6, cubic_Bps=3e6, kind="standard"):
    flows = []
    for cc, rate, ssth in (("reno", reno_Bps, 50), ("cubic", cubic_Bps, 70)):
        smp = [{**x, "cwnd_segments": 80, "ssthresh_segments": ssth, "srtt_s": reno / 1e3, "min_rtt_s": reno / 1e3,
                "total_retrans": 10, "ca_state": 0} for x in _samples(rate, 36.0)]
        flows.append({"cc_effective": cc, "start_mono_s": 10.0, "samples": smp, "error": None})
    return {"campaign": "p3_kernel", "rep": rep, "kind": kind, "reno_rtt_ms": reno, "cubic_rtt_ms": cubic, "order": 0,
            "reno_start_s": 0.0, "cubic_start_s": 0.0, "ping_rtt_ms": [reno, cubic], "load_avg": [1.0, 1.0, 1.0],
            "wall_s": 40.0, "started_utc": "2026-01-01T00:00:00+00:00", "lock_wait_s": 0.0, "flows": flows}


def test_kernel_frame_throughput_jain_and_wmax_from_ssthresh():
    cfg30 = replace(CFG, measure_s=30.0)  # the records carry no setting: the config's applies
    df = p3.kernel_frame([_fake_kernel_record(0, 1.0, 64.0), _fake_kernel_record(1, 1.0, 64.0, 4.5e6, 4.5e6)], cfg30)
    r = df.iloc[0]
    assert r["reno_bps"] == pytest.approx(48e6) and r["cubic_bps"] == pytest.approx(24e6)
    assert r["span_s"] == pytest.approx(30.0) and r["measure_s"] == 30.0 and r["rate_bps"] == CFG.rate_bps
    assert r["jain"] == pytest.approx(72**2 / (2 * (48**2 + 24**2)))
    assert r["reno_wmax_segments"] == pytest.approx(100.0) and r["cubic_wmax_segments"] == pytest.approx(100.0)
    assert r["cubic_k_s"] == pytest.approx((100 * 0.3 / 0.4) ** (1 / 3))
    assert df.iloc[1]["jain"] == pytest.approx(1.0)


def test_dataset_writes_parquet_and_provenance(tmp_path):
    records = tmp_path / "k.jsonl"
    rec = JsonlRecords(records, p3.KERNEL_KEY)
    for r in (_fake_kernel_record(0, 1.0, 4.0), _fake_kernel_record(0, 4.0, 4.0)):
        rec.append(r)
    tiny = replace(CFG, reno_rtts_ms=(16.0,), cubic_rtts_ms=(64.0,), slider_exponents=())
    prov = p3.build_dataset(records, None, tmp_path / "out", tiny, fluid=False)
    stored = json.loads((tmp_path / "out" / "p3_provenance.json").read_text())
    assert stored["kernel"]["n_samples"] == 2 == prov["kernel"]["n_samples"]
    assert stored["config"]["buffer_bytes"] == tiny.buffer_bytes and "load_avg_at_write" in stored
    assert stored["files"] == ["p3_kernel.parquet", "p3_kernel.csv"] and "fluid" not in stored
    with pytest.raises(ValueError, match="no kernel records"):
        p3.build_dataset(tmp_path / "none.jsonl", None, tmp_path / "out2", tiny, fluid=False)
    # a rebuild without kernel records keeps the kernel table and carries its provenance over, marked
    kernel_before = (tmp_path / "out" / "p3_kernel.parquet").read_bytes()
    again = p3.build_dataset(None, None, tmp_path / "out", tiny, fluid=False, note="ns-3 part only")
    assert (tmp_path / "out" / "p3_kernel.parquet").read_bytes() == kernel_before
    assert again["kernel"]["n_samples"] == 2 and again["kernel"]["carried_over_from_build_utc"] == stored["written_utc"]
    assert again["files"] == ["p3_kernel.parquet", "p3_kernel.csv"] and again["note"] == "ns-3 part only"
    twice = p3.build_dataset(None, None, tmp_path / "out", tiny, fluid=False)  # still names the build that ran them
    assert twice["kernel"]["carried_over_from_build_utc"] == stored["written_utc"]
    # nothing to carry over in an empty folder
    assert "kernel" not in p3.build_dataset(None, None, tmp_path / "out3", tiny, fluid=False)


def test_dataset_provenance_states_each_engines_rate(tmp_path):
    """Kernel rate from its rows, ns-3 rate from its section (a carried table of the grid shipped before the
    rate field: 100 Mbit/s), the fluid model's rates from its rows (or, in an old table, its capacity)."""
    import pandas as pd

    records = tmp_path / "k.jsonl"
    JsonlRecords(records, p3.KERNEL_KEY).append(_fake_kernel_record(0, 1.0, 4.0))
    tiny = replace(CFG, reno_rtts_ms=(1.0,), cubic_rtts_ms=(4.0,), slider_exponents=())
    out = tmp_path / "out"
    out.mkdir()
    fluid = pd.DataFrame({"rate_bps": [100e6, 400e6, None], "reno_bps": [50e6, 200e6, 30e6],
                          "cubic_bps": [50e6, 200e6, 10e6], "utilization": [1.0, 1.0, 0.2],
                          "loss_sharing": "proportional", "duration_s": 30.0, "warmup_s": 5.0})
    fluid.to_parquet(tmp_path / "fluid.parquet")
    pd.DataFrame({"phase": ["main0"], "jain": [0.9]}).to_parquet(out / "p3_ns3.parquet")  # no rate column
    (out / "p3_provenance.json").write_text(json.dumps({"written_utc": "x", "ns3": {"n_runs": 1}}))
    prov = p3.build_dataset(records, None, out, tiny, fluid_path=tmp_path / "fluid.parquet")
    assert prov["engine_rates_bps"]["kernel"] == [tiny.rate_bps]
    assert prov["ns3"]["rate_bps"] == 100e6 == prov["engine_rates_bps"]["ns3"]
    assert prov["fluid"]["rates_bps"] == [100e6, 200e6, 400e6] == prov["engine_rates_bps"]["fluid"]
    assert prov["config"]["ns3_rate_bps"] == tiny.ns3_rate_bps and prov["scaling"]["ns3_rate_bps"] == 100e6


def test_dataset_keeps_shipped_kernel_rows_without_records_and_adds_kind(tmp_path):
    import pandas as pd

    tiny = replace(CFG, reno_rtts_ms=(16.0,), cubic_rtts_ms=(64.0,), slider_exponents=())
    out = tmp_path / "out"
    # a shipped table of the first campaign: no kind column, its raw records gone, its setting in the provenance
    old = p3.kernel_frame([_fake_kernel_record(0, 1.0, 4.0), _fake_kernel_record(1, 1.0, 4.0)], tiny)
    old = old.drop(columns=["kind", "cubic_cc_reading", "rate_bps", "buffer_bytes", "measure_s"])
    old["started_utc"] = ["2026-11-22T06:00:00+00:00", "2026-11-22T06:01:00+00:00"]
    out.mkdir()
    old.to_parquet(out / "p3_kernel.parquet")
    pd.DataFrame({"kind": ["standard"], "jain": [0.9]}).to_parquet(out / "p3_ns3.parquet")
    (out / "p3_provenance.json").write_text(json.dumps({"written_utc": "B0", "kernel": {"n_samples": 2},
                                                        "ns3": {"n_runs": 1}, "run_notes": "kept",
                                                        "config": {"rate_bps": 100e6, "measure_s": 30.0,
                                                                   "buffer_bytes": 200000}}))
    records = tmp_path / "k.jsonl"
    rec = JsonlRecords(records, p3.KERNEL_KEY)
    for kind in ("standard", "divide"):
        r = _fake_kernel_record(0, 1.0, 4.0, kind=kind)
        rec.append({**r, "started_utc": f"2026-11-24T22:0{len(kind) % 9}:00+00:00", "rate_bps": 200e6,
                    "measure_s": 30.0, "cubic_cc_params": {"reading": "divide"} if kind == "divide" else None})
    prov = p3.build_dataset(records, None, out, tiny, fluid=False)
    kf = pd.read_parquet(out / "p3_kernel.parquet")
    assert len(kf) == 4 and prov["kernel"]["n_samples"] == 4 and prov["kernel"]["n_samples_carried"] == 2
    carried = kf[kf["source"] != "records"]
    assert set(carried["source"]) == {"carried from B0"} and set(carried["kind"]) == {"standard"}
    assert set(carried["rate_bps"]) == {100e6}
    new = kf[kf["source"] == "records"].set_index("kind")
    assert set(new.index) == {"standard", "divide"} and set(new["rate_bps"]) == {200e6}
    assert new.loc["divide", "cubic_cc_reading"] == "divide"
    assert prov["kernel"]["carried_from"] == {"n_samples": 2}
    # without a cache the shipped ns-3 table and its provenance stay (its raw runs are gone too)
    # (its rate stated: the grid shipped before the rate field ran at 100 Mbit/s)
    assert prov["ns3"] == {"n_runs": 1, "carried_over_from_build_utc": "B0", "rate_bps": 100e6}
    assert "p3_ns3.parquet" in prov["files"]
    assert prov["run_notes"] == "kept"
    # a rebuild from the same records does not duplicate them; the carried rows stay, still naming their build
    again = p3.build_dataset(records, None, out, tiny, fluid=False)
    kf2 = pd.read_parquet(out / "p3_kernel.parquet")
    assert len(kf2) == 4 and again["kernel"]["carried_from"] == {"n_samples": 2}
    assert sorted(kf2["source"]) == sorted(kf["source"])


def test_ns3_plan_phases_share_offsets_across_kinds_and_configs_match():
    main0 = p3.ns3_plan(CFG, ("main0",))
    assert len(main0) == 3 * 12 and {r["kind"] for r in main0} == set(p3.NS3_KINDS)
    by_pair = {}
    for r in main0:
        by_pair.setdefault((r["reno_rtt_ms"], r["cubic_rtt_ms"]), set()).add((r["reno_start_s"], r["cubic_start_s"]))
    assert all(len(v) == 1 for v in by_pair.values())  # the kinds of one seed start alike
    slider = p3.ns3_plan(CFG, ("slider0",))
    assert len(slider) == 2 * 12 and {r["x_exponent"] for r in slider} == {CFG.slider_exponents[0]}
    assert p3.ns3_plan(CFG, ("main1",))[0]["seed"] == CFG.ns3_seeds[1]
    with pytest.raises(ValueError, match="phases"):
        p3.ns3_plan(CFG, ("bogus",))
    run = next(r for r in main0 if r["kind"] == "divide" and r["cubic_rtt_ms"] == 64.0 and r["reno_rtt_ms"] == 4.0)
    cfg = p3.ns3_config(CFG, run)
    assert [s.variant for s in cfg.senders] == ["TcpLinuxReno", "TcpCubicX"]
    assert [s.access.delay_s for s in cfg.senders] == pytest.approx([0.002, 0.032])
    assert cfg.senders[1].cc_params["reading"] == "divide"
    assert cfg.senders[1].cc_params["x_power_law"]["x1"] == pytest.approx(10.0)
    # ns-3 at its own rate (default: the shipped grid's 100 Mbit/s, one BDP at 16 ms), jitter in its packet times
    assert CFG.ns3_rate_bps == 100e6 and CFG.ns3_buffer_bytes == 200_000 and CFG.rate_bps == 400e6
    assert cfg.bottleneck.rate_bps == CFG.ns3_rate_bps and cfg.bottleneck.queue_bytes == CFG.ns3_buffer_bytes
    assert cfg.senders[0].access.jitter_s == pytest.approx(CFG.ns3_jitter_packets * 12000 / 100e6)
    fast = p3.ns3_config(replace(CFG, ns3_rate_bps=400e6), run)
    assert fast.bottleneck.rate_bps == 400e6 and fast.bottleneck.queue_bytes == 800_000
    assert cfg.tcp.cubic_hystart is False and cfg.tcp.rcvbuf_bytes == CFG.rwnd_bytes
    std = p3.ns3_config(CFG, next(r for r in main0 if r["kind"] == "standard"))
    assert std.senders[1].variant == "TcpCubic" and not std.senders[1].cc_params


def test_fluid_grid_readings_move_k_in_opposite_directions():
    tiny = replace(CFG, reno_rtts_ms=(1.0,), cubic_rtts_ms=(4.0,), slider_exponents=(), rate_bps=40e6,
                   ns3_rate_bps=20e6)
    both = p3.fluid_frame(tiny, loss_sharings=("proportional",), duration_s=8.0, warmup_s=2.0)
    # the model at each engine's rate, with the buffer the campaign uses at that rate
    assert sorted(set(both["rate_bps"])) == [20e6, 40e6] and len(both) == 6
    assert (both["buffer_bytes"] == both["rate_bps"] * 0.016 / 8).all()
    assert ((both["reno_bps"] + both["cubic_bps"]) <= both["rate_bps"] * 1.001).all()
    df = both[both["rate_bps"] == 40e6]
    assert sorted(df["reading"]) == ["divide", "multiply", "none"]
    x = df.loc[df["reading"] == "multiply", "x"].iloc[0]
    assert x == pytest.approx(10 * 4 ** (-1 / 3))
    # for the same W_max the readings scale K by x^(+1/3) and x^(-1/3)
    k = df.set_index("reading")["cubic_k_s"] / (df.set_index("reading")["cubic_wmax_segments"] * 0.3 / 0.4) ** (1 / 3)
    assert k["multiply"] == pytest.approx(x ** (1 / 3)) and k["divide"] == pytest.approx(x ** (-1 / 3))


# ------------------------------------------------------------------ real kernel
TINY = replace(CFG, rate_bps=20e6, buffer_bdp_fraction=1.0, buffer_ref_rtt_s=0.016, warmup_s=1.0, measure_s=3.0,
               window_s=1.0, reps=1, start_jitter_s=0.2)



@pytest.mark.testbed
def test_tiny_kernel_sample_runs_reno_against_cubic_and_resume_skips_it(testbed_available, tmp_path):
    records = tmp_path / "k.jsonl"
    plan = [{"campaign": "p3_kernel", "rep": 0, "kind": "standard", "reno_rtt_ms": 2.0, "cubic_rtt_ms": 8.0,
             "order": 0, "reno_start_s": 0.0, "cubic_start_s": 0.1}]
    assert p3.run_kernel_campaign(records, TINY, plan=plan, progress=False, yield_s=0.0) == 1
    assert p3.run_kernel_campaign(records, TINY, plan=plan, progress=False, yield_s=0.0) == 0  # resumed: done
    recs = JsonlRecords(records, p3.KERNEL_KEY).read()
    r = recs[0]
    # the kernel really ran reno on one socket and cubic on the other (read back with TCP_CONGESTION)
    assert [f["cc_effective"] for f in r["flows"]] == ["reno", "cubic"]
    assert all(f.get("error") is None for f in r["flows"])
    for want, got in zip((2.0, 8.0), r["ping_rtt_ms"]):
        assert got == pytest.approx(want, abs=1.5)
    df = p3.kernel_frame(recs, TINY)
    row = df.iloc[0]
    assert row["span_s"] == pytest.approx(3.0, abs=0.05)
    # both flows through one 20 Mbit/s bottleneck: together they fill most of it and never exceed it
    assert 0.6 * 20e6 < row["total_bps"] < 1.02 * 20e6
    assert row["reno_bps"] > 0.05 * 20e6 and row["cubic_bps"] > 0.05 * 20e6
    assert 0.5 <= row["jain"] <= 1.0
    assert row["kind"] == "standard" and r["cubic_cc_params"] is None
    # drops counted once (root qdisc), each retransmitted: never more drops than retransmissions
    assert r["drops"]["counting"] == "root qdisc" and r["drops"]["other_qdisc_drops"] == 0
    assert row["queue_drops"] == r["drops"]["queue_drops"] <= row["reno_retrans"] + row["cubic_retrans"]


@pytest.mark.testbed
def test_tiny_kernel_sample_runs_cubic_side_under_tm_cubic_x_divide(testbed_available, tmp_path):
    from tcpmodels.testbed import kernel_cc

    reason = kernel_cc.unavailable_reason()
    if reason:
        pytest.skip(reason)
    if "tm_cubic_x" in kernel_cc.available_congestion_controls():
        pytest.skip("tm_cubic_x is registered by another run; not replacing it")
    records = tmp_path / "k.jsonl"
    plan = [{"campaign": "p3_kernel", "rep": 0, "kind": kind, "reno_rtt_ms": 2.0, "cubic_rtt_ms": 8.0, "order": i,
             "reno_start_s": 0.0, "cubic_start_s": 0.1} for i, kind in enumerate(("divide", "standard"))]
    assert p3.run_kernel_campaign(records, TINY, plan=plan, progress=False, yield_s=0.0) == 2
    recs = {r["kind"]: r for r in JsonlRecords(records, p3.KERNEL_KEY).read()}
    d, s = recs["divide"], recs["standard"]
    # the CUBIC socket ran tm_cubic_x (TCP_CONGESTION read back) while it was registered with reading=divide
    assert [f["cc_effective"] for f in d["flows"]] == ["reno", "tm_cubic_x"]
    assert d["cubic_cc_params"]["reading"] == "divide"
    assert d["cubic_cc_params"]["x_exponent"] == pytest.approx(TINY.x_exponent)
    assert all(f.get("error") is None for f in d["flows"])
    # the next block (standard) unloaded it and ran the kernel's own cubic; nothing left registered
    assert [f["cc_effective"] for f in s["flows"]] == ["reno", "cubic"] and s["cubic_cc_params"] is None
    assert "tm_cubic_x" not in kernel_cc.available_congestion_controls()
    df = p3.kernel_frame(list(recs.values()), TINY)
    assert list(df["kind"]) == ["divide", "standard"] and list(df["cubic_cc_reading"].fillna("-")) == ["divide", "-"]
    row = df.iloc[0]
    assert 0.6 * 20e6 < row["total_bps"] < 1.02 * 20e6 and row["cubic_bps"] > 0.05 * 20e6


# ------------------------------------------------------------------------ ns-3
@pytest.mark.sim
def test_tiny_ns3_run_of_the_modified_cubic_shares_the_bottleneck(tmp_path):
    tiny = replace(CFG, ns3_rate_bps=10e6, ns3_duration_s=3.0, ns3_warmup_s=1.0, window_s=1.0)
    plan = [{"phase": "main0", "kind": "divide", "x_exponent": -1 / 3, "seed": 0, "reno_rtt_ms": 4.0,
             "cubic_rtt_ms": 16.0, "reno_start_s": 0.0, "cubic_start_s": 0.05}]
    from distributed import Client, LocalCluster

    # a dashboard on a free port: 8787 may be taken by another sweep on the host (a warning, i.e. an error here)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        df = p3.run_ns3(tmp_path / "cache", tiny, plan=plan, progress=False, on_failure="raise", client=client)
    assert len(df) == 1
    r = df.iloc[0]
    assert 0.5 * 10e6 < r["total_bps"] <= 1.01 * 10e6  # ns-3 at its own rate, not the kernel's 400 Mbit/s
    assert r["rate_bps"] == 10e6 and r["buffer_bytes"] == tiny.ns3_buffer_bytes
    assert r["reno_bps"] > 0 and r["cubic_bps"] > 0 and r["n_windows"] == 2
    assert r["ns3_version"] and r["wall_s"] > 0
    again = p3.ns3_frame(tmp_path / "cache", tiny, plan=plan)  # read back from the cache, not rerun
    assert again.iloc[0]["cubic_bps"] == r["cubic_bps"]
