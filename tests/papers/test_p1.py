"""P1 paper module: statistics, tables in the paper's layout, verdicts that follow the data, shipped dataset."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.models.mptcp import lia_alpha
from tcpmodels.papers import p1_datacenter_fct as p1
from tcpmodels.stats import VERDICT_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data"
QUERY = (1000, 2000, 4000, 8000, 16000)
MESSAGE = (50_000, 100_000, 200_000, 500_000, 1_000_000)


def synthetic(*, mptcp_hurts=True, mptcp_helps_messages=True, seed=0, engines=("kernel", "ns3"),
              seeds=(0, 1, 2, 3)) -> p1.P1Dataset:
    """Flows with the paper's mechanism built in (or reversed).

    Section 4: FCT = loss-free part (same for both backgrounds) + a 200 ms timeout for
    lossy flows; MPTCP background makes 20 % of flows lossy instead of 5 %.
    Section 5: queries alike without background; with background +2 ms (TCP) / +4 ms
    (MPTCP); messages at 100 Mbit/s (TCP) or 130 Mbit/s plus a fixed 2 ms (MPTCP).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for eng in engines:
        for s in seeds:
            for proto in ("tcp", "mptcp"):
                n = 800
                p_loss = (0.20 if proto == "mptcp" else 0.05) if mptcp_hurts else (0.05 if proto == "mptcp" else 0.20)
                lossy = rng.random(n) < p_loss
                fct = rng.lognormal(np.log(0.012), 0.3, n) + lossy * (0.2 + rng.exponential(0.05, n))
                for i in range(n):
                    rows.append({"engine": eng, "experiment": "s4", "protocol": proto, "seed": s, "kind": "short",
                                 "size_bytes": 70_000, "fct_s": fct[i],
                                 "retransmitted_packets": int(lossy[i]) * 3 if eng == "kernel" else None,
                                 "lost_packets": int(lossy[i]) * 2 if eng == "ns3" else None,
                                 "timeout_gap_s": 0.21 if lossy[i] and eng == "kernel" else None,
                                 "pattern": (("Extreme delay" if fct[i] > 0.3 else "Delay with loss") if lossy[i]
                                             else ("Full window" if fct[i] <= 0.03 else "Intensive flow"))
                                 if eng == "kernel" else None,
                                 "fct_capture_s": fct[i] if eng == "kernel" else np.nan})
                for exp in ("s5_query_nobg", "s5_query_bg"):
                    extra = 0.0 if exp.endswith("nobg") else (0.004 if proto == "mptcp" and mptcp_hurts else 0.002)
                    for size in QUERY:
                        f = 0.001 + size * 8 / 100e6 + extra + rng.exponential(0.001, 300)
                        rows += [{"engine": eng, "experiment": exp, "protocol": proto, "seed": s, "kind": "query",
                                  "size_bytes": size, "fct_s": x} for x in f]
                for size in MESSAGE:
                    rate = 130e6 if (proto == "mptcp" and mptcp_helps_messages) else 100e6
                    base = size * 8 / rate + (0.002 if proto == "mptcp" else 0.0)
                    f = base + rng.exponential(0.002, 200)
                    rows += [{"engine": eng, "experiment": "s5_message_bg", "protocol": proto, "seed": s,
                              "kind": "message", "size_bytes": size, "fct_s": x} for x in f]
    flows = pd.DataFrame(rows)
    flows["pattern"] = flows["pattern"].astype("string")
    subflows = pd.DataFrame({"engine": "kernel", "experiment": "s4", "protocol": "mptcp", "seed": 0, "conn_id": 3,
                             "src": 1, "dst": 12, "mptcp": True, "subflow": [0, 1, 2, 3],
                             "remote": [f"10.{16 * c + 12}.0.1:5201" for c in range(4)],
                             "throughput_bps": [24e6, 23e6, 25e6, 22e6], "loss_event_rate": [1.6e-3, 1.6e-3, 1.3e-3, 2e-3],
                             "rtt_mean_s": [0.0097, 0.0099, 0.0098, 0.0096], "mss_bytes": 1448.0,
                             "cwnd_mean_segments": [23.0, 24.0, 27.0, 22.0]})
    prov = {"config": {"host_rate_bps": 100e6, "edge_agg_rate_bps": 200e6, "agg_core_rate_bps": 400e6,
                       "buffer_bytes": 100_000, "rtt_s": 0.5e-3, "cc": "reno", "delay_element": False,
                       "query_sizes_bytes": list(QUERY), "message_sizes_bytes": list(MESSAGE),
                       "query_mean_interarrival_s": 0.2, "message_mean_interarrival_s": 0.5},
            "kernel_base_rtt_ms": 0.11, "host": {"kernel": "6.x"},
            "engines": {e: {"runs": 16, "seeds": [0, 1], "wall_s_sum": 600.0, "elapsed_s": 900.0, "lock_wait_s_sum": 60.0,
                            "load_avg_1m": {"min": 1, "median": 2, "max": 3}, "first_run_utc": "a", "last_run_utc": "b",
                            "flow_errors": 0} for e in engines}}
    return p1.P1Dataset(flows=flows, subflows=subflows, tcpinfo=pd.DataFrame(), runs=pd.DataFrame(), provenance=prov)


@pytest.fixture(scope="module")
def synth():
    ds = synthetic()
    return ds, p1.tables(ds)


def test_fct_summary_matches_numpy_and_scipy():
    x = np.random.default_rng(1).lognormal(-4, 1, 4000)
    s = p1.fct_summary(x)
    assert s.n == 4000 and s.mean_s == pytest.approx(x.mean()) and s.std_s == pytest.approx(x.std(ddof=1))
    assert s.p95_s == pytest.approx(np.percentile(x, 95))
    assert s.mean_ci_s[0] < s.mean_s < s.mean_ci_s[1] and s.p95_ci_s[0] < s.p95_s < s.p95_ci_s[1]
    # 99 % t interval half-width: 2.577 sd / sqrt(n) for large n
    assert (s.mean_ci_s[1] - s.mean_ci_s[0]) / 2 == pytest.approx(2.5767 * x.std(ddof=1) / np.sqrt(4000), rel=1e-3)
    assert p1.fct_summary([np.nan, 0.01, 0.03]).n == 2  # unfinished flows dropped
    with pytest.raises(ValueError, match=r"confidence_level \[-\] must be in \(0, 1\); got 1"):
        p1.fct_summary(x, confidence_level=1)
    with pytest.raises(ValueError, match=r"fct_s \[s\] must be >= 0"):
        p1.fct_summary([-0.1, 0.2])


def test_p95_interval_covers_the_true_percentile():
    rng = np.random.default_rng(2)
    true = -np.log(0.05)  # 95th percentile of Exp(1)
    hits = sum(lo <= true <= hi for lo, hi in (p1.fct_summary(rng.exponential(1, 500)).p95_ci_s for _ in range(100)))
    assert hits >= 95  # nominal 99 %: expect ~99 of 100


def test_tables_have_the_papers_layout_and_printed_values(synth):
    _, t = synth
    t2 = t["table2"]
    assert list(t2["background"]) == ["TCP", "MPTCP"]
    assert t2[["paper_mean_ms", "paper_std_ms", "paper_p95_ms"]].to_numpy().tolist() == [[78.4, 122.5, 266.7],
                                                                                          [91.0, 140.6, 510.5]]
    assert (t2["kernel_n"] == 3200).all() and (t2["ns3_n"] == 3200).all()  # 4 seeds x 800 flows
    assert list(t["table3"]["pattern"]) == ["Full window", "Intensive flow", "Delay with loss", "Extreme delay",
                                         p1.LOSS_WITHOUT_TIMEOUT]
    assert t["table3"]["TCP_bg_count"].sum() == 3200
    assert list(t["table1"]["paper"])[-2:] == ["0.5 ms", "100 KB"]
    assert list(t["table4"]["traffic"]) == ["Query traffic", "Short message traffic"]
    f = t["figs8_10"]
    assert set(f["figure"]) == {"Fig. 8", "Fig. 9", "Fig. 10"} and len(f) == 2 * 2 * 3 * 5
    assert ((f["ci_low_ms"] < f["mean_ms"]) & (f["mean_ms"] < f["ci_high_ms"])).all()


def test_table2_numbers_are_the_flows_statistics(synth):
    ds, t = synth
    g = ds.flows[(ds.flows["engine"] == "kernel") & (ds.flows["experiment"] == "s4") & (ds.flows["protocol"] == "mptcp")]
    row = t["table2"].set_index("background").loc["MPTCP"]
    assert row["kernel_mean_ms"] == pytest.approx(g["fct_s"].mean() * 1e3)
    assert row["kernel_p95_ms"] == pytest.approx(np.percentile(g["fct_s"], 95) * 1e3)


def test_fig7_reads_loss_shares(synth):
    _, t = synth
    loss = t["fig7_loss"].set_index(["engine", "background"])
    assert loss.loc[("kernel", "MPTCP"), "lossy_share"] == pytest.approx(0.2, abs=0.03)
    assert loss.loc[("ns3", "TCP"), "lossy_share"] == pytest.approx(0.05, abs=0.02)
    assert loss.loc[("kernel", "TCP"), "ks_p_lossfree"] > 0.001  # loss-free parts drawn from one distribution


def _v(v, claim, part):
    row = v[v["claim"].str.startswith(claim) & v["part"].str.startswith(part)]
    assert len(row) == 1, (claim, part)
    return row["verdict"].iloc[0]


def test_claims_supported_when_the_mechanism_is_present(synth):
    ds, t = synth
    v = p1.claims(ds, t)
    assert tuple(v.columns) == VERDICT_COLUMNS and len(v) == 22  # 11 parts per engine
    tagged = p1.claims_with_cc(v)
    assert set(zip(tagged["engine"], tagged["cc"])) == {("kernel", "uncoupled"), ("ns3", "lia")}
    assert (v["n_runs"] >= 4).all()  # four seeds: the run, not the flow, is the unit
    assert not (v["verdict"] == "contradicted").any(), v[["claim", "part", "why"]].to_string()
    for eng in ("kernel", "ns3"):
        tag = f"{eng}, {'uncoupled' if eng == 'kernel' else 'lia'}"
        assert _v(v, f"C1.1 [{tag}]", "(c)") == "supported"
        assert _v(v, f"C1.2 [{tag}]", "(a)") == "supported"
        assert _v(v, f"C1.3 [{tag}]", "mean") == "supported"
        assert _v(v, f"Fig. 7 [{tag}]", "(a)") == "supported"


def test_claims_contradicted_when_the_mechanism_is_reversed():
    ds = synthetic(mptcp_hurts=False, mptcp_helps_messages=False, seed=3)
    v = p1.claims(ds, p1.tables(ds))
    assert _v(v, "C1.3 [kernel, uncoupled]", "mean") == "contradicted"
    assert _v(v, "C1.2 [ns3, lia]", "(a)") == "contradicted"
    assert _v(v, "Fig. 7 [kernel, uncoupled]", "(a)") == "contradicted"


def _with_coupled(ds, relieves: bool):
    """The kernel data plus tm_lia MPTCP runs: a copy of the uncoupled MPTCP runs where (``relieves``) the 70 KB
    flows see the TCP background's loss share and FCTs, or (not ``relieves``) exactly the uncoupled ones."""
    f = ds.flows.assign(cc=ds.flows["engine"].map({"kernel": "uncoupled", "ns3": "lia"}))
    k = f[f["engine"] == "kernel"]
    src = k[k["protocol"] == ("tcp" if relieves else "mptcp")]
    lia = src.assign(protocol="mptcp", cc="tm_lia")
    return p1.P1Dataset(flows=pd.concat([f, lia], ignore_index=True), subflows=ds.subflows, tcpinfo=ds.tcpinfo,
                        runs=ds.runs, provenance=ds.provenance)


def test_verdicts_per_congestion_control_and_the_coupling_question(synth):
    ds, _ = synth
    good = _with_coupled(ds, relieves=True)
    t = p1.tables(good)
    v = p1.claims(good, t)
    tagged = p1.claims_with_cc(v)
    assert set(zip(tagged["engine"], tagged["cc"])) == {("kernel", "uncoupled"), ("kernel", "tm_lia"), ("ns3", "lia"),
                                                         ("kernel", "tm_lia vs uncoupled")}
    matrix = p1.verdicts_by_cc(v)
    assert list(matrix.columns) == ["kernel / uncoupled", "kernel / tm_lia", "ns3 / lia"] and len(matrix) == 11
    assert matrix.loc[("C1.3", "mean higher with MPTCP background"), "kernel / tm_lia"].startswith("contradicted")
    # the uncoupled verdicts do not move when another control's runs are added
    base = p1.claims(ds, p1.tables(ds))
    assert _v(v, "C1.3 [kernel, uncoupled]", "mean") == _v(base, "C1.3 [kernel, uncoupled]", "mean") == "supported"
    # tm_lia runs built to behave like TCP: no MPTCP penalty, and coupling relieves the short flows
    assert _v(v, "C1.3 [kernel, tm_lia]", "mean") == "contradicted"
    assert _v(v, "Coupling [kernel, tm_lia", "mean") == "supported"
    assert _v(v, "Coupling [kernel, tm_lia", "fewer flows") == "supported"
    assert list(t["table2"]["background"]) == ["TCP", "MPTCP", "MPTCP tm_lia"]
    assert set(t["fig7_loss"]["cc"]) == {"-", "uncoupled", "tm_lia", "lia"}
    same = _with_coupled(ds, relieves=False)
    w = p1.claims(same, p1.tables(same))
    assert _v(w, "Coupling [kernel, tm_lia", "mean") == "contradicted"  # identical runs: no 10 % relief



def _with_steered(ds, factor: float, seed: int = 5):
    """The kernel runs repeated on the steered testbed: each run's FCTs times ``factor`` and a per-run noise of 1 %."""
    rng = np.random.default_rng(seed)
    k = ds.flows[ds.flows["engine"] == "kernel"]
    noise = {key: float(np.exp(rng.normal(0.0, 0.01))) for key in k.groupby(["experiment", "protocol", "seed"]).groups}
    scale = [noise[key] * factor for key in zip(k["experiment"], k["protocol"], k["seed"])]
    steered = k.assign(engine="kernel_steered", fct_s=k["fct_s"] * np.array(scale))
    return p1.P1Dataset(flows=pd.concat([ds.flows, steered], ignore_index=True), subflows=ds.subflows,
                        tcpinfo=ds.tcpinfo, runs=ds.runs, provenance=ds.provenance)


def test_steered_testbed_runs_are_compared_pair_by_pair_and_judged_in_the_claims_as_their_own_engine(synth):
    ds, t = synth
    same = _with_steered(ds, 1.0)
    assert len(p1.testbed_pairs(same.flows)) == 4 * 4 * 2  # seeds x experiments x backgrounds
    # the tables are those of the unsteered kernel and ns-3, whatever else the dataset holds
    assert list(p1.tables(same)["table2"]["background"]) == list(t["table2"]["background"])
    # the claims judge both testbeds: the unsteered and ns-3 rows are those of the dataset without steered runs ...
    v = p1.claims(same, p1.tables(same))
    engine = p1.claims_with_cc(v)["engine"]
    assert list(dict.fromkeys(engine)) == ["kernel", "kernel_steered", "ns3"]
    pd.testing.assert_frame_equal(v[engine != "kernel_steered"].reset_index(drop=True), p1.claims(ds, t))
    # ... and the steered rows are the steered runs judged alone, named for their testbed
    alone = p1.claims(same, {"flows": same.flows[same.flows["engine"] == "kernel_steered"].assign(engine="kernel")})
    expected = alone.assign(claim=alone["claim"].str.replace("[kernel, ", "[kernel_steered, ", regex=False),
                            family="P1 kernel_steered")  # the same Holm family size: one engine's parts
    pd.testing.assert_frame_equal(v[engine == "kernel_steered"].reset_index(drop=True), expected)
    eff = p1.testbed_effect(same.flows)
    assert tuple(eff.columns) == VERDICT_COLUMNS and len(eff) == 2 * (3 + 3) and (eff["n_runs"] == 4).all()
    assert (eff["verdict"] == "supported").all(), eff[["claim", "part", "why"]].to_string()
    both = p1.verdicts_by_testbed(same)
    assert len(both) == 11 and not both["moved"].any() and (both["n_runs"] >= 4).all()
    # the unsteered side is the claims on the same seeds; the kernel runs alone give the same verdicts
    kernel = p1.claims_with_cc(p1.claims(ds, {"flows": ds.flows[ds.flows["engine"] == "kernel"]}))
    assert list(both["unsteered"]) == list(kernel.loc[kernel["claim_id"] != "Coupling", "verdict"])
    # a seed whose runs shared the host with other work on either testbed is left out of the pairs
    runs = pd.DataFrame([{"engine": e, "seed": sd, "experiment": "s4", "protocol": "tcp", "cc": "uncoupled",
                          "load_avg_1m": 8.0 if (e, sd) == ("kernel", 3) else 1.0}
                         for e in ("kernel", "kernel_steered") for sd in range(4)])
    assert p1.testbed_pairs(same.flows, runs)["seed"].unique().tolist() == [0, 1, 2]
    idle = p1.testbed_effect(same.flows, runs)
    assert (idle["n_runs"] == 3).all() and idle["why"].str.contains(r"seeds left out.*\[3\]").all()
    slower = p1.testbed_effect(_with_steered(ds, 1.3).flows)
    fct = slower[slower["part"] != "share of flows with loss"]
    assert (fct["verdict"] == "contradicted").all() and np.allclose(fct["effect"], np.log(1.3), atol=0.02)
    assert p1.testbed_effect(ds.flows).empty and p1.verdicts_by_testbed(ds).empty  # no steered runs: nothing to pair


def test_missing_engine_runs_give_parts_not_testable_here():
    ds = synthetic(engines=("kernel",))
    flows = ds.flows[ds.flows["experiment"] == "s4"]
    short = p1.P1Dataset(flows=flows, subflows=ds.subflows, tcpinfo=ds.tcpinfo, runs=ds.runs, provenance=ds.provenance)
    v = p1.claims(short, p1.tables(short))
    missing = v[v["test"] == "not testable with this data"]
    assert len(missing) == 2 and (missing["verdict"] == "not testable here").all()  # C1.1, C1.2 without Section 5 runs
    assert missing["why"].str.contains("missing").all()


def test_table3_counts_only_timeouts_as_the_papers_loss():
    flows = pd.DataFrame({"pattern": ["Full window", "Delay with loss", "Delay with loss", "Extreme delay", None],
                          "retransmitted_packets": [0, 2, 3, 1, 0], "timeout_gap_s": [None, None, 0.21, 0.22, None]})
    got = p1.paper_patterns(flows).tolist()
    assert got[:4] == ["Full window", p1.LOSS_WITHOUT_TIMEOUT, "Delay with loss", "Extreme delay"]
    assert pd.isna(got[4])


def test_lia_allocation_is_rfc6356(synth):
    ds, t = synth
    lia = t["lia"]
    sub = lia.drop(index="total")
    assert len(sub) == 4 and lia.attrs["conn_id"] == 3
    # RFC 6356 goal 2: LIA takes no more than the best single path would
    assert lia.loc["total", "lia_rate_bps"] <= lia.loc["total", "best_single_path_rate_bps"] * (1 + 1e-9)
    assert lia.loc["total", "lia_alpha"] == pytest.approx(
        float(lia_alpha(sub["lia_window_segments"].to_numpy(float), sub["rtt_mean_s"].to_numpy(float))), rel=1e-6)
    assert (sub["lia_over_uncoupled"] < 1).all()  # four similar paths: each gets well under a TCP share


@pytest.mark.skipif(not (DATA / "datasets" / "p1_flows.parquet").exists(), reason="P1 dataset not built")
def test_shipped_dataset_is_complete_enough():
    ds = p1.load_dataset(DATA)
    t2, detail = p1.table2(ds)
    k = detail[detail["engine"] == "kernel"].set_index("background")
    # TCP, uncoupled MPTCP and the coupled controls run so far
    assert {"TCP", "MPTCP"} <= set(k.index) <= {"TCP", "MPTCP", "MPTCP tm_lia", "MPTCP tm_olia"}
    assert (k["n_flows"] >= 1000).all()  # enough for a 95th percentile
    assert "cc" in ds.flows and set(ds.flows["cc"]) <= {"uncoupled", "tm_lia", "tm_olia", "lia"}
    # the shipped runs were kept (32 TCP / uncoupled at seeds 0-3) and seeds are only ever added
    unc = ds.provenance["by_cc"]["kernel"]["uncoupled"]
    assert unc["runs"] >= 32 and {0, 1, 2, 3} <= set(unc["seeds"])
    assert k["n_unfinished"].sum() == 0
    prov = ds.provenance
    for key in ("engines", "config", "host", "git", "tools", "kernel_setting"):
        assert key in prov
    assert prov["engines"]["kernel"]["wall_s_sum"] > 0 and "load_avg_1m" in prov["engines"]["kernel"]
    assert (DATA / "captures" / "p1_s4_sample.pcap.gz").exists()
    live = p1.classify_capture(DATA / "captures" / "p1_s4_sample.pcap.gz", link_rate_bps=100e6)
    assert len(live) > 10 and set(live["pattern"].dropna()) <= set(p1.PAPER_TABLE3) | {"Incomplete"}
    assert set(live["paper_pattern"].dropna()) <= set(p1.PAPER_TABLE3) | {p1.LOSS_WITHOUT_TIMEOUT}
    free = live[live["retransmitted_packets"] == 0]
    assert set(free["pattern"]) <= {"Full window", "Intensive flow"} and free["ack_burst_share"].between(0, 1).all()
    cmp = p1.split_comparison(live)
    assert cmp["flows"].sum() == len(free) and {"pattern", "pattern_fct_rule"} <= set(cmp.columns)
    assert p1.table3(ds)["classified_by"].str.len().gt(10).all()


def test_coupling_answer_has_the_ns3_lia_paragraph_with_its_numbers(synth):
    """The answer's ns-3 paragraph: the 70 KB flows' mean FCT beside TCP / MPTCP background and the share with a
    lost packet, from the flow table of the ns-3 seeds, and ns-3's C1.3 verdicts beside the kernel tm_lia column."""
    ds, _ = synth
    good = _with_coupled(ds, relieves=True)
    t = p1.tables(good)
    v = p1.claims(good, t)
    text = p1.coupling_answer(v, t["flows"], good.subflows)
    para = next(p for p in text.split("\n\n") if p.startswith("**ns-3, LIA**"))
    f = good.flows
    s4 = f[(f["engine"] == "ns3") & (f["experiment"] == "s4") & (f["kind"] == "short")]
    for proto in ("tcp", "mptcp"):
        g = s4[s4["protocol"] == proto]
        assert f"{g['fct_s'].mean() * 1e3:.1f} ms" in para
        assert f"{(g['lost_packets'] > 0).mean():.1%}" in para
    assert "seeds 0, 1, 2, 3" in para and "C1.3: mean higher with MPTCP background: **" in para
    assert "The kernel's tm_lia" in para


def test_coupling_answer_ends_with_the_steered_testbeds_verdicts_when_it_has_runs(synth):
    """The steered kernel testbed's coupling and C1.3 mean verdicts close the answer (its own rows of the claims);
    the paragraphs before it stay those of the unsteered testbed; coupling_claims judges only a kernel testbed."""
    ds, _ = synth
    good = _with_coupled(ds, relieves=True)
    t = p1.tables(good)
    before = p1.coupling_answer(p1.claims(good, t), t["flows"], good.subflows)
    assert "steered testbed" not in before
    k = good.flows[good.flows["engine"] == "kernel"]
    both = p1.P1Dataset(flows=pd.concat([good.flows, k.assign(engine="kernel_steered")], ignore_index=True),
                        subflows=good.subflows, tcpinfo=good.tcpinfo, runs=good.runs, provenance=good.provenance)
    tb = p1.tables(both)
    v = p1.claims(both, tb)
    text = p1.coupling_answer(v, tb["flows"], both.subflows)
    assert text.startswith(before)  # the unsteered paragraphs unchanged
    last = text.split("\n\n")[-1]
    tagged = p1.claims_with_cc(v)
    st = tagged[(tagged["engine"] == "kernel_steered") & tagged["part"].str.startswith("mean")]
    assert last.startswith("**On the steered testbed**") and len(st) == 3  # coupling tm_lia, C1.3 uncoupled and tm_lia
    for r in st.itertuples():
        assert f"**{r.verdict}** (mean FCT {r.effect:+.3f} as a log ratio, {r.n_runs} seeds" in last
    with pytest.raises(ValueError, match="kernel testbed.*'ns3'"):
        p1.coupling_claims(both.flows, "ns3")


def test_load_sensitivity_finds_fct_that_follows_the_load():
    """Runs whose query FCT grows with the host's load: a positive rank correlation, higher FCT above the median
    load, the median load of each background; a dataset without run loads gives the empty table."""
    ds = synthetic(engines=("kernel",), seeds=tuple(range(8)))
    rng = np.random.default_rng(3)
    runs = ds.flows[["engine", "experiment", "protocol", "seed"]].drop_duplicates().reset_index(drop=True)
    runs["load_avg_1m"] = rng.uniform(0.2, 10, len(runs))
    f = ds.flows.merge(runs, on=["engine", "experiment", "protocol", "seed"])
    nobg = f["experiment"] == "s5_query_nobg"
    f.loc[nobg, "fct_s"] += 0.0005 * f.loc[nobg, "load_avg_1m"]  # scheduling latency: 0.5 ms per unit of load
    loaded = p1.P1Dataset(flows=f.drop(columns="load_avg_1m"), subflows=ds.subflows, tcpinfo=ds.tcpinfo,
                          runs=runs, provenance=ds.provenance)
    t = p1.load_sensitivity(loaded).set_index("experiment")
    assert set(t.index) == {"s4", "s5_query_nobg", "s5_query_bg", "s5_message_bg"} and (t["runs"] == 16).all()
    q = t.loc["s5_query_nobg"]
    assert q["spearman_rho"] > 0.8 and q["p_value"] < 0.01 and q["fct_ms_high_load"] > q["fct_ms_low_load"] + 1  # ~2.4 ms expected
    assert abs(t.loc["s5_message_bg", "spearman_rho"]) < 0.6  # no load built in there
    tcp_med = runs[(runs["experiment"] == "s4") & (runs["protocol"] == "tcp")]["load_avg_1m"].median()
    assert f"TCP {tcp_med:.1f}" in t.loc["s4", "load_by_background"]
    assert p1.load_sensitivity(ds).empty and "spearman_rho" in p1.load_sensitivity(ds).columns


def test_answer_box_names_the_engines_that_disagree():
    """The kernel's MPTCP background slows the 70 KB flows, ns-3's speeds them up: the answer box (computed from
    the verdicts, at most three sentences) gives C1.3's outcome on one and names the other as disagreeing."""
    kernel, ns3 = synthetic(engines=("kernel",)), synthetic(engines=("ns3",), mptcp_hurts=False, seed=1)
    ds = p1.P1Dataset(flows=pd.concat([kernel.flows, ns3.flows], ignore_index=True), subflows=kernel.subflows,
                      tcpinfo=kernel.tcpinfo, runs=kernel.runs, provenance=kernel.provenance)
    v = p1.claims(ds, p1.tables(ds))
    mean = v[v["part"] == "mean higher with MPTCP background"].set_index("family")["verdict"]
    assert mean.to_dict() == {"P1 kernel": "supported", "P1 ns3": "contradicted"}
    from tcpmodels.papers.display import answer_box

    sentences = p1.answer(v)
    assert 1 <= len(sentences) <= 3 and str(answer_box(sentences)).startswith(sentences[0])
    assert sentences[0].endswith("is supported on kernel uncoupled.")
    assert sentences[1].startswith("The engines that disagree: contradicted on ns3 lia")
    assert p1.headline(v).sum() == 2  # C1.3's mean on each engine (no coupling rows without coupled controls)
