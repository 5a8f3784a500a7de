"""Issue 11 campaign (tcpmodels.experiments.fit): the grid (unit) and a tiny real-kernel run with build (testbed)."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from tcpmodels.experiments.fit import KEY_FIELDS, SETTINGS, FitRun, grid, main, run_campaign


def test_full_grid_is_the_documented_sweep():
    runs = grid("full")
    keys = [r.key() for r in runs]
    assert len(keys) == len(set(keys)) == 102
    single = [r for r in runs if r.kind == "single"]
    assert {r.cc for r in single} == {"reno", "cubic"}
    assert {r.rtt_ms for r in single} == {5.0, 20.0, 50.0, 100.0, 200.0}
    assert {r.setting for r in single} == set(SETTINGS)
    assert min(r.rtt_ms for r in single if r.setting == "rwnd") == 50.0
    assert {r.rtt_ms for r in single if r.setting == "r5"} == {20.0, 100.0} and runs[-1].setting == "r5"
    assert {r.rep for r in single} == {0, 1}
    # repetition 0 of every cell comes first, so a partial campaign covers the whole grid once
    first_rep1 = next(i for i, r in enumerate(runs) if r.rep == 1)
    assert all(r.rep == 0 for r in runs[:first_rep1]) and first_rep1 == 48
    assert [r.cc for r in runs if r.kind == "mptcp"] == ["reno", "cubic"]
    # buffers: a fraction of the BDP but never fewer than 8 full frames
    r = FitRun(kind="single", cc="reno", rtt_ms=5.0, setting="buf", rep=0, duration_s=1.0)
    assert r.bdp_bytes == 12_500 and r.buffer_bytes() == 8 * 1514
    r = FitRun(kind="single", cc="reno", rtt_ms=100.0, setting="r2", rep=0, duration_s=1.0)
    assert r.buffer_bytes() == 250_000
    total_s = sum(r.duration_s for r in runs)
    assert total_s < 25 * 60  # the testbed budget
    with pytest.raises(ValueError, match="grid must be"):
        grid("huge")



@pytest.mark.testbed
def test_tiny_campaign_records_resumes_and_builds(testbed_available, tmp_path):
    out = tmp_path / "runs"
    new = run_campaign(out, which="tiny", progress=False)
    assert len(new) == 2 and not any(r.get("error") for r in new)
    for rec in new:
        assert all(k in rec for k in KEY_FIELDS)
        assert rec["flow"]["cc_effective"] == rec["cc"]  # TCP_CONGESTION took effect (the default is bbr)
        assert len(rec["tcp_info_samples"]) > 100  # 3 s at 10 ms
        assert len(rec["load_avg_before"]) == 3 and rec["lock_wait_s"] >= 0
        assert (out / rec["captures"][0]["path"]).stat().st_size > 10_000
    # the r0.5 run's delay element dropped about 0.5 % of the data frames
    lossy = next(r for r in new if r["setting"] == "r0.5")
    ab = lossy["delay_elements"]["pa"]["a_to_b"]
    assert 0 < ab["dropped_loss"] < 0.02 * ab["received"]
    assert run_campaign(out, which="tiny", progress=False) == []  # resume: nothing left to do
    data = tmp_path / "data"
    assert main(["build", "--out-dir", str(out), "--data-dir", str(data), "--ship", new[0]["name"]]) == 0
    flows = pd.read_parquet(data / "datasets" / "fit_flows.parquet")
    assert len(flows) == 2
    for _, row in flows.iterrows():
        assert 0 < row["loss_events"] <= row["retransmissions"]
        # capture-side loss events agree with the kernel's recovery count (the slow-start one is outside the window)
        assert abs(row["kernel_recoveries"] + row["kernel_timeouts"] - 1 - row["loss_events"]) <= 2
        assert row["throughput_bps"] < 20e6 * 1448 / 1514 * 1.02
        assert row["rtt_min_s"] >= row["rtt_ms"] * 1e-3
    prov = json.loads((data / "datasets" / "fit_provenance.json").read_text())
    assert prov["runs_recorded"] == 2 and not prov["runs_failed"] and prov["captures_shipped"]
    raw = data / "datasets" / "fit_records.jsonl.gz"  # the raw records ship, every line, as they were written
    assert gzip.decompress(raw.read_bytes()) == (out / "records.jsonl").read_bytes()
    assert prov["files"][raw.name]["rows"] == 2
    note = json.loads((data / "captures" / (prov["captures_shipped"][0].removesuffix(".pcap.gz") + ".json")).read_text())
    assert note["git"] == json.loads((out / "campaign.json").read_text())["git"]  # the code that ran
