"""The BBR coexistence campaign: plan, flows, metrics on constructed series, records -> rows, ns-3 scenario,
and one short sample on the real kernel (marker ``testbed``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tcpmodels.experiments.bbr import metrics
from tcpmodels.experiments.bbr.config import (
    DEFAULT_CONFIG,
    KEY,
    PILOT_CONFIG,
    GridPoint,
    buffer_packets,
    flows_of,
    kernel_plan,
)
from tcpmodels.experiments.bbr.dataset import merge_episodes, run_rows
from tcpmodels.experiments.bbr.ns3 import ns3_plan, ns3_scenario
from tcpmodels.models.bbr import rate_pps, ware_bbr_share
from tcpmodels.records.series import pack_series


def test_plan_covers_the_grid_once_per_rep_grouped_by_buffer():
    plan = kernel_plan(DEFAULT_CONFIG)
    assert len(plan) == DEFAULT_CONFIG.reps * len(DEFAULT_CONFIG.grid) == 48
    keys = {tuple(s[k] for k in KEY) for s in plan}
    assert len(keys) == len(plan)
    for rep in range(DEFAULT_CONFIG.reps):
        xs = [s["queue_bdp"] for s in plan if s["rep"] == rep]
        changes = sum(a != b for a, b in zip(xs, xs[1:]))
        assert changes == len(set(xs)) - 1          # one block per buffer: the testbed is rebuilt 4 times
    assert {s["buffer_packets"] for s in plan} == {33, 67, 133, 267, 533}   # X * 33.3 packets
    s = next(s for s in plan if s["queue_bdp"] == 16)
    assert s["warmup_s"] == pytest.approx(120 * 0.040 * 17) and len(s["start_s"]) == s["n_bbr"] + s["n_loss"]
    assert kernel_plan(DEFAULT_CONFIG) == plan                 # the seed fixes order and offsets
    assert [s["seed"] for s in ns3_plan(DEFAULT_CONFIG)][:3] == [1, 2, 3]


def test_flows_are_named_by_the_registry():
    assert flows_of({"n_bbr": 2, "competitor": "reno", "n_loss": 1}) == [("bbr", "bbr")] * 2 + [("loss", "reno")]
    assert flows_of({"n_bbr": 1, "competitor": "none", "n_loss": 0}) == [("bbr", "bbr")]
    with pytest.raises(ValueError, match="n_loss must be 0 exactly when competitor is none"):
        GridPoint(group="x", competitor="none", n_loss=1, queue_bdp=1, n_bbr=1)
    assert buffer_packets(DEFAULT_CONFIG, 0.01) == 2


def _flow(role, rate_Bps, t_end=100.0, dt=0.02, start=0.0, cwnd=None, srtt=0.05):
    t = np.arange(dt, t_end, dt)
    cw = np.full(t.size, 50) if cwnd is None else cwnd(t)
    samples = [{"t_s": round(float(x), 6), "bytes_acked": int(rate_Bps * x), "cwnd_segments": int(c),
                "srtt_s": srtt, "min_rtt_s": 0.04, "total_retrans": 0} for x, c in zip(t, cw)]
    return {"role": role, "cc_effective": "bbr" if role == "bbr" else "cubic", "start_offset_s": start, "bytes": 0,
            "samples": pack_series(samples, microsecond_fields=("t_s", "srtt_s", "min_rtt_s"),
                                   delta_fields=("t_s", "bytes_acked", "total_retrans"))}


def test_share_and_series_from_constructed_flows():
    flows = [_flow("bbr", 300_000), _flow("loss", 100_000)]
    assert metrics.bbr_share(flows, 20, 80) == pytest.approx(0.75, abs=1e-3)
    ser = metrics.share_series(flows, 20.0, 5.0)
    assert [s["t_end_s"] for s in ser] == [5.0, 10.0, 15.0, 20.0]
    assert all(s["share"] == pytest.approx(0.75, abs=2e-3) for s in ser)
    # a flow that starts 10 s late delivers nothing before it starts
    late = [_flow("bbr", 100_000, start=10.0), _flow("loss", 100_000)]
    assert metrics.bbr_share(late, 0, 10) == pytest.approx(0.0, abs=1e-3)


def test_probe_rtt_episodes_and_queue():
    def low(t):
        return np.where((t % 10 > 3.0) & (t % 10 < 3.3), 4, 60)  # 0.3 s at 4 packets every 10 s

    f = _flow("bbr", 1000, t_end=40, cwnd=low)
    ep = metrics.probe_rtt_episodes_s(f, 0, 40, 0.02)
    assert len(ep) == 4 and all(d == pytest.approx(0.3, abs=0.021) for d in ep)
    assert metrics.standing_queue_s([f], 0, 40, 0.04) == pytest.approx(0.01)
    assert merge_episodes([[1.0, 1.05], [1.1, 1.3], [5.0, 5.2]]) == [[1.0, 1.3], [5.0, 5.2]]


def test_run_rows_puts_the_model_beside_the_measurement():
    rec = {"campaign": "bbr_kernel", "rep": 0, "group": "vs_cubic", "competitor": "cubic", "n_loss": 1,
           "queue_bdp": 4.0, "n_bbr": 1, "order": 0, "buffer_packets": 133, "ping_rtt_ms": 40.0,
           "drops": {"queue_drops": 10, "cpu_drops": 0}, "load_avg": [1.0, 1.0, 1.0], "wall_s": 90.0,
           "started_utc": "2026-12-06T08:00:00Z",
           "config": {"rate_bps": 10e6, "base_rtt_s": 0.04, "packet_bytes": 1500, "warmup_s": 20.0,
                      "measure_s": 60.0, "sample_interval_s": 0.02},
           "flows": [_flow("bbr", 600_000), _flow("loss", 600_000)]}
    run, flows, series, episodes = run_rows(rec, "kernel")
    c = rate_pps(10e6)
    assert run["model_share_bbr"] == pytest.approx(ware_bbr_share(c, 0.04, 133, 1))
    assert run["share_bbr"] == pytest.approx(0.5, abs=1e-3)
    assert run["model_error"] == pytest.approx(0.5 - run["model_share_bbr"], abs=1e-3)
    assert run["utilization"] == pytest.approx(1200_000 * 8 / 10e6, rel=1e-3)
    assert run["model_probe_rtt_s"] == pytest.approx(133 / c + 0.24)
    assert len(flows) == 2 and len(series) == 16 and episodes == []


def test_ns3_scenario_takes_the_registry_variants():
    s = next(p for p in ns3_plan(DEFAULT_CONFIG) if p["group"] == "many_cubic" and p["n_loss"] == 4)
    scen = ns3_scenario(DEFAULT_CONFIG, s)
    assert [x.variant for x in scen.senders] == ["TcpBbr", "TcpCubic"]
    assert [len(x.apps) for x in scen.senders] == [1, 4]
    assert scen.bottleneck.queue_packets == s["buffer_packets"] and scen.trace_cwnd
    assert scen.duration_s == pytest.approx(s["warmup_s"] + 60 + 0.5)
    assert PILOT_CONFIG.warmup_s(16) == 0.0


@pytest.mark.testbed
@pytest.mark.usefixtures("testbed_available")
def test_one_short_sample_on_the_kernel(tmp_path):
    from tcpmodels.experiments.bbr.kernel import run_kernel_campaign
    from tcpmodels.records import JsonlRecords

    cfg = replace(DEFAULT_CONFIG, campaign="bbr_test", warmup_rtts=10.0, measure_s=3.0, reps=1,
                  grid=(GridPoint(group="vs_cubic", competitor="cubic", n_loss=1, queue_bdp=2, n_bbr=1),))
    assert run_kernel_campaign(tmp_path / "r.jsonl", cfg, progress=False) == 1
    (rec,) = JsonlRecords(tmp_path / "r.jsonl", KEY).read()
    assert [f["cc_effective"] for f in rec["flows"]] == ["bbr", "cubic"]
    run, *_ = run_rows(rec, "kernel")
    assert 0.0 < run["share_bbr"] < 1.0 and run["utilization"] > 0.8
    assert run_kernel_campaign(tmp_path / "r.jsonl", cfg, progress=False) == 0     # resumes: nothing left
