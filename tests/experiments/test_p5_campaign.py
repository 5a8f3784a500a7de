"""P5 campaign: plan and config checks (unit), and one tiny caterpillar run through the sweep, the cache
and the dataset builder (``sim``).

(Named ``test_p5_campaign.py``: the test folders have no ``__init__.py``, so it must not clash with
``tests/papers/test_p5.py``.)
"""

from __future__ import annotations

import importlib
import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments import p5
from tcpmodels.experiments.p5.plan import run_id
from tcpmodels.papers import p5_selfsimilar as paper
from tcpmodels.sweep import cache_key
from tcpmodels.traces import read_pcap


def test_plan_is_the_paper_grid_with_seed_0_first_and_deterministic():
    items = p5.plan(p5.DEFAULT_CONFIG)
    main = [i for i in items if i["case"] == "main"]
    cfg = p5.DEFAULT_CONFIG
    assert len(main) == 4 * 4 * 2 * len(cfg.seeds)
    assert {(i["alpha"], i["n_clients"], i["backbone_bps"]) for i in main} == {
        (a, n, b) for a in (1.05, 1.35, 1.65, 1.95) for n in (8, 16, 24, 32) for b in (5e6, 10e6)}
    # a campaign cut short has the 5 Mbit/s grid (the loss table), then one long run, then Figs. 4, 10, 11
    assert {(i["case"], i["seed"], i["backbone_bps"]) for i in items[:16]} == {("main", 0, 5e6)}
    assert items[16]["case"] == "long"
    assert [(i["case"], i["alpha"], i["backbone_bps"]) for i in items[17:21]] == [("main", 1.65, 10e6)] * 4
    assert p5.plan(p5.DEFAULT_CONFIG) == items  # the same keys on resume
    cat = items[0]["caterpillar"]
    assert cat["edge"] == {"rate_bps": 10e6, "delay_s": 0.015, "queue_packets": 3000, "queue_bytes": None}
    assert cat["backbone"]["queue_packets"] == 3000 and cat["variant"] == "TcpNewReno"
    assert cat["workload"]["max_flows"] == 50 and cat["workload"]["size"]["mean_bytes"] == 10_000
    assert cat["n_gateways"] == 6 and cat["n_articulation"] == 4 and cat["duration_s"] == 20.0
    altq = [i for i in items if i["case"] == "alt_server_queue"]
    assert altq and all(i["caterpillar"]["server_link"]["queue_packets"] == 50 for i in altq)
    long = [i for i in items if i["case"] == "long"]
    assert len(long) == 4 * len(cfg.long_seeds) and all(i["caterpillar"]["workload"]["max_flows"] is None for i in long)
    assert all(i["caterpillar"]["duration_s"] == 300.0 for i in long)


def test_further_altq_seeds_run_the_32_client_row_after_the_unchanged_plan():
    base = p5.plan(p5.DEFAULT_CONFIG)
    assert p5.DEFAULT_CONFIG.altq_seeds == (0,)
    assert {i["seed"] for i in base if i["case"] == "alt_server_queue"} == {0}  # 32 runs: every client count
    cfg = replace(p5.DEFAULT_CONFIG, altq_seeds=(0, 1, 2, 3))
    items = p5.plan(cfg)
    # the plan of the shipped runs is untouched (same items, same order, so the same cache keys); the further
    # seeds come last, a seed at a time: 32 clients, both gateway rates, every alpha of altq_alphas
    assert items[:len(base)] == base
    extra = items[len(base):]
    assert len(extra) == 3 * 8
    assert {i["case"] for i in extra} == {"alt_server_queue"} and {i["n_clients"] for i in extra} == {32}
    assert [i["seed"] for i in extra] == [1] * 8 + [2] * 8 + [3] * 8
    assert {(i["alpha"], i["backbone_bps"]) for i in extra if i["seed"] == 2} == {
        (a, b) for a in cfg.altq_alphas for b in (5e6, 10e6)}
    assert all(i["caterpillar"]["seed"] == i["seed"] and i["caterpillar"]["server_link"]["queue_packets"] == 50
               for i in extra)
    ids = [run_id(i) for i in extra]
    assert ids[:4] == [f"alt_server_queue-a{a:.2f}-n32-b5-s1" for a in (1.05, 1.35, 1.65, 1.95)]
    assert "alt_server_queue-a1.65-n32-b10-s3" in ids
    assert len(set(map(run_id, items))) == len(items)  # no id twice
    keys = {cache_key(i, p5.run_p5) for i in items}
    assert len(keys) == len(items)
    # the variant alone (what `run --cases alt_server_queue` plans): its 32 seed-0 runs, then the 24 more
    only = p5.plan(cfg, cases=("alt_server_queue",))
    assert len(only) == 32 + 24 and only[32:] == extra
    # another first seed takes seed 0's place: the whole grid at 1, the 32-client row at 5
    other = p5.plan(replace(cfg, altq_seeds=(1, 5)), cases=("alt_server_queue",))
    assert [(s, sum(i["seed"] == s for i in other)) for s in (1, 5)] == [(1, 32), (5, 8)]


def test_altq_seeds_reach_the_plan_from_the_command_line(monkeypatch, tmp_path):
    cli = importlib.import_module("tcpmodels.experiments.p5.__main__")
    seen = {}

    def fake_run(config, **kw):
        seen["run"] = (config, kw)
        return {"n_items": 0}

    def fake_dataset(config, **kw):
        seen["dataset"] = (config, kw)
        return {"n_runs": 0, "n_runs_from_cache": 0, "runs_by_case": {}, "campaign_wall_s": 0.0,
                "kept_from_shipped": {"n_runs": 0}, "missing_runs": []}

    monkeypatch.setattr(cli, "run_campaign", fake_run)
    monkeypatch.setattr(cli, "build_dataset", fake_dataset)
    pd.DataFrame({"run_id": ["alt_server_queue-a1.65-n32-b5-s0"]}).to_parquet(tmp_path / "p5_runs.parquet")
    assert cli.main(["run", "--cases", "alt_server_queue", "--altq-seeds", "0,1,2,3", "--skip-shipped",
                     "--out", str(tmp_path), "--cache", str(tmp_path / "cache"), "--no-progress"]) == 0
    config, kw = seen["run"]
    assert config.altq_seeds == (0, 1, 2, 3) and config.seeds == p5.DEFAULT_CONFIG.seeds
    assert kw["cases"] == ("alt_server_queue",) and kw["skip"] == {"alt_server_queue-a1.65-n32-b5-s0"}
    assert cli.main(["dataset", "--altq-seeds", "0,2", "--cache", str(tmp_path / "cache"),
                     "--out", str(tmp_path / "out")]) == 0
    assert seen["dataset"][0].altq_seeds == (0, 2)
    assert cli.main(["dataset", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out")]) == 0
    assert seen["dataset"][0] == p5.DEFAULT_CONFIG  # without the option: the default plan


@pytest.mark.parametrize("change, match", [
    (dict(alphas=(0.9,)), r"alphas \[-\]"),
    (dict(n_clients=(0,)), "n_clients"),
    (dict(mean_interarrival_s=0.0), r"mean_interarrival_s \[s\]"),
    (dict(backbone_rates_bps=(-1.0,)), r"backbone_rates_bps \[bit/s\]"),
    (dict(hurst_bin_s=1.0), r"hurst_bin_s \[s\]"),
    (dict(altq_seeds=()), "altq_seeds"),
    (dict(altq_seeds=(0, 0)), "altq_seeds"),
    (dict(altq_seeds=(-1,)), "altq_seeds"),
])
def test_config_rejects_bad_values_by_name(change, match):
    with pytest.raises(ValueError, match=match):
        replace(p5.DEFAULT_CONFIG, **change)


def test_packet_counts_bins_only_the_server_direction():
    pk = pd.DataFrame({"timestamp_s": [0.001, 0.004, 0.012, 0.015, 0.029, 0.5],
                       "src_addr": ["10.0.0.1", "10.0.0.9", "10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.1"]})
    c = p5.packet_counts(pk, bin_s=0.01, duration_s=0.03)
    assert c.tolist() == [1, 2, 1]  # the ACK from 10.0.0.9 and the packet after the end are not counted
    with pytest.raises(ValueError, match=r"bin_s \[s\]"):
        p5.packet_counts(pk, bin_s=0.0, duration_s=1.0)


def test_bellcore_counts_keep_every_packet_of_the_whole_bins(tmp_path):
    path = tmp_path / "trace.TL"
    path.write_text("0.0 64\n0.004 1518\n0.011 100\n0.025 64\n0.031 200\n")
    c = p5.bellcore_counts(path, bin_s=0.01)
    assert c["packets"].tolist() == [2, 1, 1]  # the last, partial bin [0.03, 0.031] is dropped
    assert c["bytes"].tolist() == [1582, 100, 64]
    (tmp_path / "bad.TL").write_text("1 2 3\n4 5 6\n")
    with pytest.raises(ValueError, match="two columns"):
        p5.bellcore_counts(tmp_path / "bad.TL")
    with pytest.raises(FileNotFoundError, match=r"Bellcore excerpt not found: .*none\.TL \(the Internet Traffic Archive"):
        p5.bellcore_counts(tmp_path / "none.TL")


@pytest.mark.sim
# another campaign's Dask dashboard on the default port: distributed warns and leaves its probe socket open
@pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning")
@pytest.mark.filterwarnings("ignore:Exception ignored in.*socket:pytest.PytestUnraisableExceptionWarning")
def test_tiny_campaign_runs_caches_and_builds_a_consistent_dataset(tmp_path):
    # One 5 s caterpillar run, 8 clients opening 20 downloads each at 20 per second, a 10-packet queue at S
    # and a 10 Mbit/s bottleneck: the slow-start bursts out of S must overflow its queue.
    cfg = replace(p5.DEFAULT_CONFIG, alphas=(1.65,), altq_alphas=(1.65,), n_clients=(8,),
                  backbone_rates_bps=(10e6,), seeds=(0,), duration_s=5.0, flows_per_client=20,
                  mean_interarrival_s=0.05, alt_server_queue_packets=10, long_seeds=())
    cache = tmp_path / "cache"
    first = p5.run_campaign(cfg, cases=("alt_server_queue",), cache_dir=cache, processes=False,
                             progress=False)
    assert (first["n_run"], first["n_failed"]) == (1, 0)
    again = p5.run_campaign(cfg, cases=("alt_server_queue",), cache_dir=cache, processes=False, progress=False)
    assert (again["n_run"], again["n_cached"]) == (0, 1)  # resumed from the cache, nothing re-simulated
    skipped = p5.run_campaign(cfg, cases=("alt_server_queue",), cache_dir=cache, processes=False, progress=False,
                              skip={"alt_server_queue-a1.65-n8-b10-s0"})
    assert (skipped["n_items"], skipped["n_skipped"]) == (0, 1)  # a shipped run is not planned again
    assert len((tmp_path / "campaign_log.jsonl").read_text().splitlines()) == 3

    out = tmp_path / "datasets"
    rid = "alt_server_queue-a1.65-n8-b10-s0"
    prov = p5.build_dataset(cfg, cache_dir=cache, out_dir=out, capture_run=rid, capture_dir=tmp_path / "captures")
    assert prov["n_runs"] == 1 and prov["runs_by_case"] == {"alt_server_queue": 1}
    assert "main-a1.65-n8-b10-s0" in prov["missing_runs"]  # what was not run is listed, not invented
    assert json.loads((out / "p5_provenance.json").read_text())["kernel"]
    ds = paper.load_dataset(out)
    run = ds.runs.iloc[0]
    b, f = ds.bins, ds.flows
    assert len(b) == 50 and np.allclose(np.diff(b["t_end_s"]), 0.1)
    assert run["drop_pkts_s"] > 0 and 0 < run["loss_s"] < 1
    assert b["drop_pkts_s"].sum() == run["drop_pkts_s"]
    # every completed download received its whole file; completions per bin add up to the completed flows
    assert (f.loc[f["completed"], "rx_bytes"] == f.loc[f["completed"], "size_bytes"]).all()
    assert b["completed"].sum() == f["completed"].sum() == run["n_completed"]
    # the pcap's G1 -> G2 bytes cover every delivered payload byte and never beat the link over 1 s
    sent_bytes = (b["thr_g1_bps"] * 0.1 / 8).sum()
    assert f["rx_bytes"].sum() <= sent_bytes <= 1.1 * b["enq_bytes_g1"].sum()
    assert (b["thr_g1_bps"].rolling(10).mean().dropna() <= 10e6 * 1.01).all()
    # the shipped capture is the run's bottleneck pcap: its packets from S are the run's G1 -> G2 packets
    packets = read_pcap(tmp_path / "captures" / f"p5_bottleneck_{rid}.pcap.gz")
    down = packets[packets["src_addr"].astype(str) == p5.SERVER_ADDR]
    assert len(down) == run["pcap_packets"] > 0
    assert down["wire_bytes"].sum() == pytest.approx(sent_bytes)
    h = ds.hurst[ds.hurst["source"] == "ns-3"]
    assert set(h["method"]) == {"whittle", "wavelet", "periodogram", "dfa", "rs", "aggvar"}
    assert np.allclose(h["predicted"], (3 - 1.65) / 2)
    assert (h["ci95_low"] < h["hurst"]).all() and (h["hurst"] < h["ci95_high"]).all()
    # a rebuild after the cache is gone keeps every row; the run record is shipped gzipped
    import gzip
    import shutil
    with gzip.open(out / "p5_records.jsonl.gz", "rt") as fh:
        recs = [json.loads(x) for x in fh]
    assert [r["run_id"] for r in recs] == [rid] and recs[0]["record"]["run_wall_s"] == run["run_wall_s"]
    shutil.rmtree(cache)
    again = p5.build_dataset(cfg, cache_dir=cache, out_dir=out, capture_dir=None)
    assert (again["n_runs"], again["n_runs_from_cache"], again["kept_from_shipped"]["run_ids"]) == (1, 0, [rid])
    ds2 = paper.load_dataset(out)
    assert ds2.runs.equals(ds.runs) and ds2.bins.equals(ds.bins) and ds2.flows.equals(ds.flows)
    with gzip.open(out / "p5_records.jsonl.gz", "rt") as fh:
        assert [json.loads(x)["run_id"] for x in fh] == [rid]


def _tables(ids, tag):
    """Tiny P5 tables for runs ``ids``; ``tag`` marks which side a row came from."""
    return {"runs": pd.DataFrame({"run_id": ids, "src": tag}),
            "bins": pd.DataFrame({"run_id": [r for r in ids for _ in range(2)], "t_end_s": [0.1, 0.2] * len(ids),
                                  "src": tag}),
            "hurst": pd.DataFrame({"run_id": [*ids, "bellcore"], "hurst": 0.8, "src": tag})}


def test_merge_keeps_shipped_runs_the_cache_lacks_and_takes_the_rest_from_the_cache():
    shipped = _tables(["main-a1.05-n8-b5-s0", "main-a1.35-n8-b5-s0"], "shipped")
    shipped["counts"] = pd.DataFrame({"run_id": ["long-a1.05-n32-b10-s0"], "packets": [3]})
    new = _tables(["main-a1.35-n8-b5-s0", "main-a1.35-n8-b10-s0"], "new")
    merged, kept = p5.merge_tables(shipped, new)
    assert kept == ["main-a1.05-n8-b5-s0"]
    src = merged["runs"].set_index("run_id")["src"].to_dict()
    assert src == {"main-a1.05-n8-b5-s0": "shipped", "main-a1.35-n8-b5-s0": "new", "main-a1.35-n8-b10-s0": "new"}
    # per-bin rows follow their run; a run in both sides is not doubled; the Bellcore rows are the new ones
    assert merged["bins"].groupby("run_id")["src"].agg(lambda s: "/".join(s)).to_dict() == {
        "main-a1.05-n8-b5-s0": "shipped/shipped", "main-a1.35-n8-b5-s0": "new/new", "main-a1.35-n8-b10-s0": "new/new"}
    assert merged["hurst"].loc[merged["hurst"]["run_id"] == "bellcore", "src"].tolist() == ["new"]
    assert merged["counts"].equals(shipped["counts"])  # a table only the shipped side has survives
    with pytest.raises(ValueError, match="run_id"):
        p5.merge_tables({"runs": pd.DataFrame({"x": [1]})}, new)


def test_dataset_from_an_empty_cache_keeps_the_shipped_dataset(tmp_path):
    out = tmp_path / "datasets"
    out.mkdir()
    from tcpmodels.datasets.p5 import SCHEMA

    shipped = _tables(["main-a1.05-n8-b5-s0"], "shipped")
    shipped["runs"] = shipped["runs"].assign(case="main", run_wall_s=60.0, ns3_load_wall_s=9.0, ns3_version="3.44",
                                               date_utc="2026-11-22")
    # the dataset's columns (the writer checks them), those the tiny tables lack empty
    shipped = {name: df.drop(columns="src").reindex(columns=SCHEMA.table(name).column_names)
               for name, df in shipped.items()}
    for name, df in shipped.items():
        df.to_parquet(out / f"p5_{name}.parquet", index=False)
    (out / "p5_provenance.json").write_text(json.dumps({"git_commit": "abc", "git_dirty": True, "n_runs": 1}))
    assert p5.shipped_run_ids(out) == {"main-a1.05-n8-b5-s0"}
    with pytest.warns(UserWarning, match=r"Bellcore excerpt not found: .*none\.TL .*\(the shipped bellcore rows are kept\)"):
        prov = p5.build_dataset(p5.DEFAULT_CONFIG, cache_dir=tmp_path / "empty", out_dir=out,
                                bellcore_path=tmp_path / "none.TL", capture_dir=None)
    assert (prov["n_runs"], prov["n_runs_from_cache"]) == (1, 0)
    assert prov["kept_from_shipped"]["run_ids"] == ["main-a1.05-n8-b5-s0"]
    assert prov["kept_from_shipped"]["previous"]["git_commit"] == "abc"
    assert "main-a1.05-n8-b5-s0" not in prov["missing_runs"] and "main-a1.35-n8-b5-s0" in prov["missing_runs"]
    for name, df in shipped.items():
        assert pd.read_parquet(out / f"p5_{name}.parquet").equals(df), name
    with pytest.raises(ValueError, match="no cached P5 runs"):
        p5.build_dataset(p5.DEFAULT_CONFIG, cache_dir=tmp_path / "empty", out_dir=out, merge=False,
                         bellcore_path=tmp_path / "none.TL", capture_dir=None)
