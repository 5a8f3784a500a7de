"""P1's CPU reading of the alternated runs (issue 57, item 1 follow-up): per-CPU softirq and idle from the shipped
records, rank correlations with the 70 KB mean FCT, and a paragraph whose lead follows the signs."""

import gzip
import json

import numpy as np
import pytest

from tcpmodels.papers.p1_datacenter_fct.cpu import cpu_correlations, cpu_paragraph, cpu_runs


def _write(data_dir, prefix, recs):
    (data_dir / "datasets").mkdir(parents=True, exist_ok=True)
    with gzip.open(data_dir / "datasets" / f"{prefix}_records.jsonl.gz", "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in recs)


def _records(sign: float):
    recs = []
    for seed in range(8):
        imb = seed / 8  # 0 .. 0.875
        for engine in ("kernel", "kernel_steered"):
            fct = 0.040 + sign * (-0.02 * imb if engine == "kernel_steered" else 0.0) + 0.001 * (seed % 3)
            cpu = {"cpu0": {"softirq": 30 * (1 + imb), "idle": 1.0}, "cpu1": {"softirq": 30 * (1 - imb), "idle": 10 * imb}}
            flows = [{"size_bytes": 70000, "fct_s": fct, "error": None}, {"size_bytes": 70000, "fct_s": fct, "error": None},
                     {"size_bytes": None, "fct_s": 45.0, "kind": "background"}]
            recs.append({"engine": engine, "protocol": "tcp", "seed": seed, "cpu_time_s": cpu, "flows": flows})
    return recs


def test_runs_correlations_and_a_lead_that_follows_the_sign(tmp_path):
    _write(tmp_path, "p1_abab_idle", _records(+1.0))
    runs = cpu_runs(tmp_path, "idle")
    assert len(runs) == 16 and runs["short_fct_ms"].between(20, 50).all()
    steered = runs[runs["engine"] == "kernel_steered"].sort_values("seed")
    assert np.allclose(steered["softirq_imbalance"], np.arange(8) / 8)
    assert np.allclose(steered["other_cpu_idle_s"], 10 * np.arange(8) / 8)
    c = cpu_correlations(runs)
    assert c.loc[("kernel_steered", "tcp"), "rho_softirq_imbalance"] == pytest.approx(-1.0)
    text = cpu_paragraph(tmp_path)
    assert "exploratory" in text and "idle session" in text and "loaded session" not in text
    assert "the opposite of the candidate named before" in text
    _write(tmp_path, "p1_abab", _records(-1.0))  # the other session with the opposite sign: no lead
    assert "The sessions disagree in sign: no lead." in cpu_paragraph(tmp_path)


def test_without_records_a_sentence_and_a_bad_session_a_clear_error(tmp_path):
    assert cpu_runs(tmp_path, "idle") is None
    assert "no shipped records" in cpu_paragraph(tmp_path)
    with pytest.raises(ValueError, match="session='busy'"):
        cpu_runs(tmp_path, "busy")
