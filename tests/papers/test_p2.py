"""P2 paper module: tables in the paper's layout, printed values present, verdicts computed from data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.papers import p2_mptcp_prediction as p2
from tcpmodels.stats import VERDICT_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data"
RTTS = np.arange(120.0, 181.0, 6.0)  # 11 x 11 grid, twice: 242 samples of 121 RTT pairs


def synthetic(*, share64=0.99, mptcp_follows_path1=False, seed=0) -> p2.P2Dataset:
    """A small data set with the paper's mechanism built in.

    TCP over path 1 and every single-path probe scale with 1/RTT of their path;
    the MPTCP data rate follows the *faster* path (min RTT) unless
    ``mptcp_follows_path1``; MPTCP probes below 1 MB see path 1 only.
    """
    rng = np.random.default_rng(seed)
    r1, r2 = (g.ravel() for g in np.meshgrid(RTTS, RTTS, indexing="ij"))
    r1, r2 = np.tile(r1, 2), np.tile(r2, 2)
    n = len(r1)

    def noisy(x, sd=0.03):
        return x * np.exp(rng.normal(0, sd, n))

    k = 2.0e5  # bytes/s at 1 s RTT scale
    df = pd.DataFrame({"rep": np.repeat([0, 1], n // 2), "rtt1_ms": r1, "rtt2_ms": r2, "order": rng.permutation(n),
                       "rtt1_measured_ms": r1, "rtt2_measured_ms": r2})
    for total, size in zip(("128KB", "256KB", "512KB"), (1.0, 1.3, 1.7)):
        df[f"path_probe_{total}_path1_Bps"] = noisy(size * k / (r1 / 1e3) / 10)
        df[f"path_probe_{total}_path2_Bps"] = noisy(size * k / (r2 / 1e3) / 10)
    fast = r1 if mptcp_follows_path1 else np.minimum(r1, r2)
    df["mptcp_data_Bps"] = noisy(3 * k / (fast / 1e3) / 2)
    df["tcp_data_Bps"] = noisy(k / (r1 / 1e3) * 1.1)
    for i, label in enumerate(("64KB", "128KB", "256KB", "512KB", "2MB", "8MB", "32MB", "128MB")):
        w = 0.0 if i < 4 else (i - 3) / 4  # probes up to 512 KB see path 1 only, larger ones both paths
        base = (1 - w) * (1.0 + 0.3 * i) * k / (r1 / 1e3) / 10 + w * 3 * k / (fast / 1e3) / 2
        df[f"mptcp_probe_{label}_Bps"] = noisy(base)
        df[f"mptcp_probe_{label}_share1"] = share64 if i == 0 else max(0.5, share64 - 0.05 * i)
    df["mptcp_data_share1"] = 0.5
    df["mptcp_data_loss"] = 0.001
    df["tcp_data_loss"] = 0.001
    fig4 = pd.DataFrame({"rep": 0, "rtt1_ms": 150.0, "rtt2_ms": 120.0, "label": ["64KB", "4MB"],
                         "size_bytes": [65536, 4 << 20], "share1": [share64, 0.5], "Bps": [1e5, 1e6]})
    prov = {"config": {"rate_bps": 20e6, "mptcp_probe_sizes_bytes": [65536, 131072, 262144, 524288, 786432,
                                                                     1048576, 1572864, 2097152]}}
    return p2.P2Dataset(samples=df, fig4=fig4, provenance=prov)


@pytest.fixture(scope="module")
def synth_tables():
    return p2.tables(synthetic(), quick=True)


def test_tables_have_the_papers_layout_and_printed_values(synth_tables):
    t = synth_tables
    assert list(t["table2"]["target"]) == ["MPTCP transfer", "TCP transfer"]
    assert list(t["table2"]["paper_rmse_KBps"]) == [6126.4, 3029.9]
    assert list(t["table3"]["total_probe_size"]) == ["128KB", "256KB", "512KB"]
    assert list(t["table3"]["paper_fraction_rpe"]) == [0.777, 0.775, 0.775]
    assert list(t["table4"]["probe_size"]) == ["128KB", "256KB", "512KB", "2MB", "8MB", "32MB", "128MB"]
    assert t["table4"]["paper_rmse_KBps"].iloc[-1] == 4724.1
    assert len(t["table5"]) == 7 and t["table5"]["n"].sum() == 242
    assert t["table5"].set_index("rtt_relation").loc["RTT1 = RTT2", "n"] == 22
    assert list(t["table6"]["training_share"]) == [0.75, 0.5, 0.25, 0.1, 0.05]
    assert list(t["spearman"]["paper_rho"]) == [0.87, 0.16]
    assert {"C", "epsilon", "gamma", "cv_rmse_KBps"} <= set(t["cv"].columns) and len(t["cv"]) == 4
    for name in ("table2", "table3", "table4", "table6"):
        ours = t[name][[c for c in t[name].columns if c.startswith("ours_")]].to_numpy(float)
        assert np.isfinite(ours).all(), name
    assert set(t["headline"].columns) >= {"quantity", "paper", "ours", "unit"}


def test_mechanism_in_synthetic_data_is_recovered(synth_tables):
    """MPTCP data follows the faster path: the path-1 probe predicts TCP well and MPTCP badly,
    per-path probes fix it, and the existing method fails when path 2 is the faster one."""
    t = synth_tables
    sp = t["spearman"].set_index("target")["ours_rho"]
    assert sp["TCP"] > 0.9 and sp["MPTCP"] < 0.8
    t5 = t["table5"].set_index("rtt_relation")
    assert t5.loc["RTT2/RTT1 > 1.2", "ours_existing"] > t5.loc["RTT1/RTT2 > 1.2", "ours_existing"] + 0.3
    assert (t["table3"]["ours_fraction_rpe"].to_numpy() > t["table4"]["ours_fraction_rpe"].to_numpy()[:3]).all()


def test_claims_are_judged_per_part_by_statistics(synth_tables):
    ds = synthetic()
    v = p2.claims(ds, synth_tables)
    assert tuple(v.columns) == VERDICT_COLUMNS
    assert sorted(set(v["claim"].str[:4])) == ["C2.1", "C2.2", "C2.3", "C2.4", "C2.5"]
    # 242 samples: two repetitions of 121 RTT pairs, the pair is the unit
    assert len(v) == 14 and (v["n_runs"] == 121).all() and v["why"].str.contains("unit: the RTT pair").all()
    assert not v["test"].str.startswith("old fixed-threshold rule").any()
    by = v.set_index("part")["verdict"]
    # the mechanism is built in: the 64 KB probe stays on path 1, MPTCP follows the faster path
    assert by["64 KB probe: no bytes on subflow 2"] == "supported"
    assert by["the data transfer moves bytes to path 2"] == "supported"
    assert by["Fraction of RPE lower for RTT1 >= RTT2"] == "supported"
    # the same campaign where MPTCP follows path 1 and small probes split evenly
    other = synthetic(share64=0.5, mptcp_follows_path1=True)
    c2 = p2.claims(other, p2.tables(other, quick=True)).set_index("part")["verdict"]
    assert c2["64 KB probe: no bytes on subflow 2"] == "contradicted"
    assert c2["Fraction of RPE lower for RTT1 >= RTT2"] == "contradicted"


def test_per_sample_hits_add_up_to_the_tables_fraction_of_rpe(synth_tables):
    """The claims average the same per-sample hits and errors the tables summarise."""
    from tcpmodels.papers.p2_mptcp_prediction.claims import _hit, _rmse

    e = p2.sample_errors(synthetic())
    t3 = synth_tables["table3"].set_index("total_probe_size")
    t4 = synth_tables["table4"].set_index("probe_size")
    assert _hit(e["y_mptcp"], e["p_prop_128KB"]).mean() == pytest.approx(t3.loc["128KB", "ours_fraction_rpe"])
    assert _hit(e["y_mptcp"], e["p_exist_128MB"]).mean() == pytest.approx(t4.loc["128MB", "ours_fraction_rpe"])
    assert _rmse(e["y_mptcp"], e["p_exist_256KB"]) / 8 / p2.KB_BYTES == pytest.approx(
        t4.loc["256KB", "ours_rmse_KBps"])


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="P2Dataset"):
        p2.tables(pd.DataFrame())
    ds = synthetic()
    with pytest.raises(ValueError, match="lacks columns"):
        p2.tables(p2.P2Dataset(samples=ds.samples.drop(columns=["tcp_data_Bps"])))
    with pytest.raises(ValueError, match="at least 10"):
        p2.tables(p2.P2Dataset(samples=ds.samples.head(5)))
    with pytest.raises(FileNotFoundError, match="p2_samples.parquet"):
        p2.load_dataset("/nonexistent")


def test_rtt_relation_bins():
    got = p2.rtt_relation([120, 120, 120, 150, 150, 150, 180], [180, 140, 124, 150, 140, 130, 120])
    assert list(got) == [r for r, _ in p2.RTT_RELATIONS]


@pytest.mark.skipif(not (DATA / "datasets" / "p2_samples.parquet").exists(), reason="shipped P2 dataset absent")
def test_shipped_dataset_gives_all_tables_and_verdicts():
    ds_all = p2.load_dataset(DATA)
    assert len(ds_all.samples) >= 150 and ds_all.provenance["n_samples"] == len(ds_all.samples)
    with pytest.raises(ValueError, match="mixes .* settings"):  # one SVR across settings is refused
        p2.tables(ds_all, quick=True)
    assert set(ds_all.settings["cc"]) == set(ds_all.ccs)
    for s in ds_all.settings.drop_duplicates(["cc", "path_rate_bps"]).itertuples():
        ds = ds_all.for_cc(s.cc, rate_bps=s.path_rate_bps)
        assert len(ds.samples) == s.n_samples
        t = p2.tables(ds, quick=True)
        c = p2.claims(ds, t)
        assert len(c) == 14 and set(c["claim"].str[:4]) == {"C2.1", "C2.2", "C2.3", "C2.4", "C2.5"}
        assert (c["n_runs"] == len(ds.samples.groupby(["rtt1_ms", "rtt2_ms"]))).all()  # the RTT pair is the unit
        assert t["table2"]["ours_rmse_KBps"].gt(0).all()
        assert t["fig4"].empty == (ds.provenance["n_fig4_records"] == 0), s  # a setting's own sweep, or none


def test_capture_shares_agree_with_the_campaigns_interface_counters():
    """Shipped captures of the Fig. 4 sweep at (150, 120) ms: payload shares per connection from packets
    match the byte-counter shares the campaign recorded for the same transfers (headers aside)."""
    import json

    cap = DATA / "captures"
    meta = json.loads((cap / "p2_fig4_rtt150-120_s-p0.json").read_text())
    shares = p2.capture_shares(cap / "p2_fig4_rtt150-120_s-p0.pcap.gz", cap / "p2_fig4_rtt150-120_s-p1.pcap.gz")
    counters = [c["share1"] for c in meta["counter_shares"]]
    assert len(shares) == len(counters) == 7
    assert shares["share1"].to_numpy() == pytest.approx(counters, abs=0.01)
    assert shares["share1"].iloc[0] == 1.0  # 64 KB: not one payload byte on path 2
    assert (shares["subflows_path2"] == 1).all()  # ... although the second subflow was set up
    sizes = [c["size_bytes"] for c in meta["counter_shares"]]
    total = shares["payload_path1_bytes"] + shares["payload_path2_bytes"]
    assert (total.to_numpy() >= sizes).all() and (total.to_numpy() < [1.05 * s + 3000 for s in sizes]).all()


def test_claims_spearman_is_scipys_bit_for_bit():
    import importlib
    import warnings

    from scipy.stats import spearmanr

    c = importlib.import_module("tcpmodels.papers.p2_mptcp_prediction.claims")
    rng = np.random.default_rng(1)
    for k in range(400):
        n = int(rng.integers(3, 60))
        x = rng.normal(size=n)
        y = x * rng.normal() + rng.normal(size=n)
        if k % 3 == 0:  # ties
            x, y = np.round(x, 1), np.round(y)
        if k % 7 == 0:  # many ties
            x = rng.integers(0, 3, n).astype(float)
        if k % 50 == 0:  # constant: scipy's nan (and its warning)
            y = np.ones(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, ours = spearmanr(x, y)[0], c._spearman(x, y)
        assert ours == ref or (np.isnan(ref) and np.isnan(ours)), (k, ours, ref)


def test_for_cc_picks_one_congestion_controls_samples_and_provenance_part():
    a, b = synthetic(), synthetic(seed=1)
    sa = a.samples.assign(cc="cubic", data_size_bytes=4 << 20, path_rate_bps=20e6)
    sb = b.samples.assign(cc="tm_lia", data_size_bytes=8 << 20, path_rate_bps=10e6)
    parts = [{"cc": "cubic", "data_size_bytes": 4 << 20, "n_samples": len(sa), "config": {"rate_bps": 20e6}},
             {"cc": "tm_lia", "data_size_bytes": 8 << 20, "n_samples": len(sb), "config": {"rate_bps": 10e6}}]
    both = p2.P2Dataset(samples=pd.concat([sa, sb], ignore_index=True),
                        fig4=pd.concat([a.fig4.assign(cc="cubic"), b.fig4.assign(cc="tm_lia")], ignore_index=True),
                        provenance={"parts": parts, "host": {"kernel": "k"}})
    assert both.ccs == ["cubic", "tm_lia"]
    lia = both.for_cc("tm_lia")
    assert set(lia.samples["cc"]) == {"tm_lia"} and len(lia.samples) == len(sb) and set(lia.fig4["cc"]) == {"tm_lia"}
    assert lia.provenance["config"]["rate_bps"] == 10e6 and lia.provenance["host"] == {"kernel": "k"}
    assert lia.samples["mptcp_data_Bps"].tolist() == sb["mptcp_data_Bps"].tolist()
    assert synthetic().ccs == ["cubic"]  # no cc column: the samples shipped before it
    with pytest.raises(ValueError, match="tm_olia"):
        both.for_cc("tm_olia")


def test_for_cc_picks_a_setting_by_path_rate_and_breaks_ties_by_the_faster_one():
    """Two uncoupled settings of equal size (the 20 Mbit/s samples and the contrast at the tm_lia
    setting): the default is the faster one, ``rate_bps`` picks either, Fig. 4 rows follow the rate."""
    a, b = synthetic(), synthetic(seed=1)
    slow = a.samples.assign(cc="cubic", data_size_bytes=4 << 20, path_rate_bps=20e6)
    fast = b.samples.assign(cc="cubic", data_size_bytes=64 << 20, path_rate_bps=100e6)
    parts = [{"cc": "cubic", "data_size_bytes": 4 << 20, "n_samples": len(slow), "config": {"rate_bps": 20e6}},
             {"cc": "cubic", "data_size_bytes": 64 << 20, "n_samples": len(fast), "config": {"rate_bps": 100e6}}]
    ds = p2.P2Dataset(samples=pd.concat([slow, fast], ignore_index=True),
                      fig4=a.fig4.assign(cc="cubic", path_rate_bps=20e6), provenance={"parts": parts})
    assert ds.settings[["path_rate_bps", "n_samples"]].values.tolist() == [[20e6, len(slow)], [100e6, len(fast)]]
    assert len(slow) == len(fast)
    default = ds.for_cc("cubic")
    assert set(default.samples["path_rate_bps"]) == {100e6} and len(default.fig4) == 0
    assert default.provenance["data_size_bytes"] == 64 << 20
    twenty = ds.for_cc("cubic", rate_bps=20e6)
    assert set(twenty.samples["data_size_bytes"]) == {4 << 20} and len(twenty.fig4) == len(a.fig4)
    with pytest.raises(ValueError, match=r"rate_bps=1e\+07: cubic was measured at path rates"):
        ds.for_cc("cubic", rate_bps=10e6)
    assert p2.P2Dataset(samples=slow).settings.empty


def test_conditions_table_counts_the_samples_meeting_each_condition():
    s = synthetic().samples.iloc[:4].assign(cc="tm_lia", data_size_bytes=8 << 20, path_rate_bps=10e6,
                                            data_over_bdp=[20.0, 20.0, 9.0, 20.0],
                                            mptcp_over_path_rate=[1.2, 0.9, 1.3, 1.1],
                                            mptcp_over_tcp_data=1.5, probe64_share2=[0.01, 0.01, 0.01, 0.2],
                                            conditions_hold=[True, False, False, False], subflow_cc="tm_lia")
    limits = {"data_over_bdp_min": 10.0, "mptcp_over_path_rate_min": 1.0, "probe_share2_max": 0.05}
    t = p2.conditions_table(p2.P2Dataset(samples=s, provenance={"condition_limits": limits})).iloc[0]
    assert t["n"] == 4 and t["share_all_ok"] == 0.25 and t["share_data_over_bdp_ok"] == 0.75
    assert t["share_mptcp_over_path_rate_ok"] == 0.75 and t["share_probe64_share2_ok"] == 0.75
    assert t["subflow_cc_seen"] == "tm_lia" and t["data_size_MiB"] == 8
    with pytest.raises(ValueError, match="no regime conditions"):
        p2.conditions_table(synthetic())


def test_fig4_against_the_papers_share_reads_the_sweep_and_the_nearest_data_transfers(synth_tables):
    """Fig. 4 at (150, 120) ms: the sweep's smallest and largest shares, the data transfers of the grid's
    nearest pairs (the grid has no 150 ms), and the distance to the paper's 33.9 %, in the table and the note."""
    t = synth_tables["fig4_vs_paper"].set_index(["rtt1_ms", "rtt2_ms"])
    row = t.loc[(150.0, 120.0)]
    assert (row["share1_smallest"], row["share1_largest"], row["largest_bytes"]) == (0.99, 0.5, 4 << 20)
    assert row["data_pairs_ms"] == [(150.0, 120.0)]  # the synthetic 6 ms grid has 150 ms
    assert row["data_share1"] == 0.5 and row["data_n"] == 2
    assert row["largest_minus_paper"] == pytest.approx(0.5 - 0.339)
    note = p2.fig4_note(synth_tables["fig4_vs_paper"])
    assert "from 99.0% at 64 KiB to 50.0% at 4 MiB" in note and "16.1 points above it" in note
    coarse = synthetic().samples.query("rtt1_ms != 150")  # a grid without 150 ms: its nearest pairs stand in
    near = p2.fig4_against_paper(synth_tables["fig4"], coarse).iloc[0]
    assert near["data_pairs_ms"] == [(144.0, 120.0), (156.0, 120.0)] and near["data_n"] == 4
    assert p2.fig4_note(p2.fig4_against_paper(synth_tables["fig4"].iloc[:0], coarse)) == "No Fig. 4 sweep in the dataset."


def test_rpe_headroom_is_what_a_predictor_without_probe_leaves():
    # nine pairs at 100 and one at 130: the mean (103) is within 10 % of the nine, not of the tenth
    y = np.array([100.0] * 9 + [130.0])
    assert p2.rpe_headroom(y, np.arange(10)) == pytest.approx(0.1)
    # a pair's repetitions are averaged first: the mean 107.5 hits pairs 0 and 1, and pair 2 once in two (1/2)
    assert p2.rpe_headroom(np.array([100.0, 100.0, 100.0, 130.0]), np.array([0, 1, 2, 2])) == pytest.approx(1 / 6)


def test_fraction_of_rpe_parts_are_not_testable_where_a_predictor_without_probe_already_saturates(synth_tables):
    """Decided from the data throughputs alone: a spread-out campaign keeps the five Fraction-of-RPE parts
    testable; the same campaign with the MPTCP throughput within 1 % of its mean makes them all not testable."""
    ds = synthetic()
    rpe_parts = lambda v: v[v["part"].str.contains("Fraction of RPE") & ~v["claim"].str.startswith("C2.5")]  # noqa: E731
    spread = rpe_parts(p2.claims(ds, synth_tables))
    assert len(spread) == 5 and not (spread["verdict"] == "not testable here").any()
    flat = ds.samples.copy()
    flat["mptcp_data_Bps"] = 1e6 * np.exp(np.random.default_rng(3).normal(0, 0.01, len(flat)))
    sat = p2.P2Dataset(samples=flat, fig4=ds.fig4, provenance=ds.provenance)
    v = rpe_parts(p2.claims(sat, p2.tables(sat, quick=True)))
    assert (v["verdict"] == "not testable here").all() and len(v) == 5
    assert v["why"].str.contains("not testable here: this setting allows at most 0 ").all()
    assert v["runs_needed"].isna().all() and v["pvalue_holm"].isna().all()
