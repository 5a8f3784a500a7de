"""P5 on the kernel testbed (tcpmodels.experiments.p5.kernel): configuration checks, the dataset from run results, and one tiny real run."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.p5 import kernel as p5k
from tcpmodels.experiments.p5 import kernel_config as p5c
from tcpmodels.experiments.p5 import kernel_dataset as p5d
from tcpmodels.experiments.p5.__main__ import main
from tcpmodels.models.heavytail import hurst_from_alpha
from tcpmodels.models.hurst import estimate_all


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alphas": (1.05, 2.0)}, r"alphas \[-\] must each be in \(1, 2\)"),
        ({"alphas": ()}, r"alphas \[-\] must each be in \(1, 2\)"),
        ({"load": 1.0}, r"load \[-\] must be in \(0, 1\); got 1.0"),
        ({"rate_bps": 0.0}, "rate_bps must be > 0; got 0.0"),
        ({"duration_s": 4.0}, r"duration_s / bin_s must give >= 512 bins .* got 4.0 / 0.01 = 400"),
        ({"seeds": ()}, r"seeds must be integers >= 0; got \(\)"),
        ({"seeds": (0, -1)}, r"seeds must be integers >= 0; got \(0, -1\)"),
    ],
)
def test_bad_configs_are_refused_with_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        p5c.TestbedP5Config(**kwargs)


def test_arrival_rate_offers_the_stated_load():
    cfg = p5c.TestbedP5Config(rate_bps=10e6, mean_size_bytes=50_000, load=0.5)
    # 0.5 x 1.25 MB/s / 50 kB = 12.5 downloads per second
    assert cfg.arrival_rate_per_s == pytest.approx(12.5)
    assert cfg.to_dict()["arrival_rate_per_s"] == pytest.approx(12.5)


def _fake_result(runs, alpha: float, counts: np.ndarray, cfg: p5c.TestbedP5Config, seed: int | None = None) -> None:
    hurst = estimate_all(counts.astype(float)).reset_index()
    rec = {"alpha": alpha, **({} if seed is None else {"seed": seed}), "config": cfg.to_dict(), "started_utc": "2026-11-24T07:00:00+00:00",
           "finished_utc": "2026-11-24T07:03:30+00:00", "wall_s": 210.0, "n_flows_planned": 10, "planned_bytes": 1,
           "flows": {"n": 10, "errors": 0}, "capture": {"packets_captured": int(counts.sum())},
           "read_accounting": {"records_read": int(counts.sum())}, "packets_in_series": int(counts.sum()),
           "utilisation": 0.5, "load_avg_before": [0.1, 0.1, 0.1], "testbed_run_id": "tm000000",
           "hurst": hurst.to_dict(orient="records"), "predicted_hurst": float(hurst_from_alpha(alpha)),
           "host": {"kernel": "test"}}
    with (runs / "records.jsonl").open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
    np.save(runs / (f"alpha{alpha:.2f}_counts.npy" if not seed else f"alpha{alpha:.2f}_s{seed}_counts.npy"), counts)


def test_dataset_from_results_has_every_estimator_per_alpha_and_a_provenance(tmp_path):
    cfg = replace(p5c.DEFAULT_KERNEL_CONFIG, alphas=(1.2, 1.8), duration_s=20.48)
    runs = tmp_path / "runs"
    runs.mkdir()
    rng = np.random.default_rng(0)
    for a in cfg.alphas:
        _fake_result(runs, a, rng.poisson(5.0, 2048), cfg)
    prov = p5d.build_kernel_dataset(runs, tmp_path / "out", cfg, note="synthetic")
    h = pd.read_parquet(tmp_path / "out" / "p5_testbed_hurst.parquet")
    assert sorted(h["alpha"].unique()) == [1.2, 1.8]
    assert h.groupby("alpha")["method"].nunique().eq(6).all()
    assert np.allclose(h["predicted"], (3 - h["alpha"]) / 2)
    assert h["covers"].eq((h["ci95_low"] <= h["predicted"]) & (h["predicted"] <= h["ci95_high"])).all()
    # independent counts: the estimators find H near 0.5, so the alpha 1.8 prediction (0.6) is the nearer one
    assert abs(h["hurst"].median() - 0.5) < 0.1
    c = pd.read_parquet(tmp_path / "out" / "p5_testbed_counts.parquet")
    assert len(c) == 2 * 2048 and c["t_s"].max() == pytest.approx(2047 * 0.01)
    on_disk = json.loads((tmp_path / "out" / "p5_testbed_provenance.json").read_text())
    assert on_disk["note"] == "synthetic" and len(on_disk["runs"]) == len(prov["runs"]) == 2
    for key in ("command", "config", "git", "engine", "series", "host", "files"):
        assert key in on_disk, key


def test_dataset_without_results_says_how_to_make_them(tmp_path):
    with pytest.raises(ValueError, match=r"no p5 testbed results in .* \(run `python -m tcpmodels\.experiments\.p5 kernel`\)"):
        p5d.build_kernel_dataset(tmp_path, tmp_path / "out")


def test_cli_reports_a_bad_value_in_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["kernel-dataset", "--runs", "/nonexistent", "--out", "/nonexistent", "--alphas", "2.5"])
    assert info.value.code == 1
    assert capsys.readouterr().err.startswith("p5: alphas [-] must each be in (1, 2)")


def test_an_alpha_outside_the_campaign_is_refused_before_any_run(tmp_path):
    with pytest.raises(ValueError, match=r"alpha \[-\] must be one of config.alphas"):
        p5k.run_alpha(p5c.DEFAULT_KERNEL_CONFIG, 1.5, tmp_path / "runs")  # 1.5 is not a default alpha
    assert not (tmp_path / "runs").exists()


@pytest.mark.testbed
def test_tiny_kernel_run_counts_every_captured_packet(testbed_available, tmp_path):
    cfg = replace(p5c.DEFAULT_KERNEL_CONFIG, alphas=(1.5,), duration_s=6.0)
    rec = p5k.run_alpha(cfg, 1.5, tmp_path)
    assert rec["flows"]["n"] == rec["n_flows_planned"] > 30 and rec["flows"]["errors"] == 0
    assert rec["flows"]["bytes"] == rec["planned_bytes"]  # every download completed in full
    acct, cap = rec["read_accounting"], rec["capture"]
    # packets are accounted for: what tcpdump wrote is what the reader read and parsed, nothing skipped
    assert cap["packets_dropped_by_kernel"] == 0
    assert acct["records_read"] == cap["packets_captured"] == acct["tcp_parsed"] and not acct["skipped"]
    # the series holds the packets sent in the window; the rest are tails of downloads still running at 6 s
    assert 0.8 * cap["packets_captured"] <= rec["packets_in_series"] <= cap["packets_captured"]
    assert 0.1 < rec["utilisation"] < 0.95
    assert {h["method"] for h in rec["hurst"]} == {"aggvar", "dfa", "periodogram", "rs", "wavelet", "whittle"}
    assert (tmp_path / "alpha1.50_counts.npy").exists() and not (tmp_path / "alpha1.50.pcap").exists()
    assert np.load(tmp_path / "alpha1.50_counts.npy").sum() == rec["packets_in_series"]
    # the TcpExt counters that moved on the server and the client; the default testbed has no RPS mask
    assert rec["rps_cpus"] is None and set(rec["tcp_ext"]) == {"s", "c"}
    assert all(isinstance(v, int) for node in rec["tcp_ext"].values() for v in node.values())


def test_a_second_seed_is_added_to_the_shipped_runs_and_replaces_none(tmp_path):
    cfg = replace(p5c.DEFAULT_KERNEL_CONFIG, alphas=(1.2, 1.8), duration_s=20.48)
    first, second, out = tmp_path / "first", tmp_path / "second", tmp_path / "out"
    first.mkdir()
    second.mkdir()
    rng = np.random.default_rng(1)
    for a in cfg.alphas:  # the first campaign's records: no seed field
        _fake_result(first, a, rng.poisson(5.0, 2048), cfg)
    p5d.build_kernel_dataset(first, out, cfg)
    h0 = pd.read_parquet(out / "p5_testbed_hurst.parquet").drop(columns="seed")
    # the shipped tables of the first campaign had no seed column: strip it to rebuild from such a dataset
    h0.to_parquet(out / "p5_testbed_hurst.parquet", index=False)
    c0 = pd.read_parquet(out / "p5_testbed_counts.parquet")
    c0.drop(columns="seed").to_parquet(out / "p5_testbed_counts.parquet", index=False)
    assert p5d.shipped_kernel_keys(out) == {(1.2, 0), (1.8, 0)}
    # the first runs folder is gone; a second campaign runs seed 1 only, and alpha 1.2 seed 0 again
    _fake_result(second, 1.8, rng.poisson(5.0, 2048), cfg, seed=1)
    redo = rng.poisson(9.0, 2048)
    _fake_result(second, 1.2, redo, cfg, seed=0)
    prov = p5d.build_kernel_dataset(second, out, cfg)
    h = pd.read_parquet(out / "p5_testbed_hurst.parquet")
    assert sorted({(a, s) for a, s in zip(h["alpha"], h["seed"])}) == [(1.2, 0), (1.8, 0), (1.8, 1)]
    assert h.groupby(["alpha", "seed"])["method"].nunique().eq(6).all()
    kept = h[(h["alpha"] == 1.8) & (h["seed"] == 0)].drop(columns="seed").reset_index(drop=True)
    assert kept.equals(h0[h0["alpha"] == 1.8].reset_index(drop=True))  # the shipped row, unchanged
    c = pd.read_parquet(out / "p5_testbed_counts.parquet")
    assert c[(c["alpha"] == 1.2) & (c["seed"] == 0)]["packets"].tolist() == redo.tolist()  # the rerun replaced it
    assert c.groupby(["alpha", "seed"]).size().eq(2048).all() and len(c) == 3 * 2048
    assert prov["kept_from_shipped"]["runs"] == [[1.8, 0]]
    assert [(r["alpha"], r["seed"]) for r in prov["runs"]] == [(1.2, 0), (1.8, 0), (1.8, 1)]
    assert "from_dataset" in prov["runs"][1] and "from_dataset" not in prov["runs"][2]
    import gzip
    with gzip.open(out / "p5_testbed_records.jsonl.gz", "rt") as fh:  # first records + the new ones
        assert sorted((r["alpha"], r.get("seed", 0)) for r in map(json.loads, fh)) == [(1.2, 0), (1.8, 0), (1.8, 1)]


def test_campaign_skips_the_shipped_runs(tmp_path):
    cfg = replace(p5c.DEFAULT_KERNEL_CONFIG, alphas=(1.2, 1.8), seeds=(0, 1))
    assert p5k.run_kernel_campaign(tmp_path, cfg, progress=False, skip={(a, s) for a in (1.2, 1.8) for s in (0, 1)}) == 0
    assert not (tmp_path / "records.jsonl").exists()


def test_campaign_records_carry_the_commit_that_ran_them(tmp_path, monkeypatch):
    """Every record of a run names the code it ran from (``git``: commit and dirty flag), as the P2 records do."""
    from tcpmodels.records import git_state

    cfg = replace(p5c.DEFAULT_KERNEL_CONFIG, alphas=(1.2,), seeds=(0,))
    monkeypatch.setattr(p5k, "run_alpha", lambda config, alpha, runs_dir, seed=0: {"alpha": alpha, "seed": seed})
    run = p5k.run_samples
    monkeypatch.setattr(p5k, "run_samples", lambda *a, **kw: run(*a, **kw, lock_path=tmp_path / "lock"))
    assert p5k.run_kernel_campaign(tmp_path, cfg, progress=False) == 1
    (rec,) = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert rec["alpha"] == 1.2 and rec["git"] == git_state(REPO_ROOT) and set(rec["git"]) >= {"commit", "dirty"}


def test_kernel_records_skip_a_torn_line_as_every_campaign_does(tmp_path):
    from tcpmodels.experiments.p5.kernel_config import read_kernel_records

    (tmp_path / "records.jsonl").write_text('{"alpha": 1.2}\n{"alpha": 1.4, "se\n{"alpha": 1.6, "seed": 2}\n')
    assert read_kernel_records(tmp_path) == [{"seed": 0, "alpha": 1.2}, {"seed": 2, "alpha": 1.6}]
    assert read_kernel_records(tmp_path / "none") == []
