"""sim_vs_kernel claims: one row per flow and the aggregate, judged by TOST over runs with the stated tolerances."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.papers import sim_vs_kernel as view
from tcpmodels.stats import VERDICT_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data" / "datasets"


def synthetic(ns3_shift: float, *, reps: int = 4, sd: float = 0.005, seed: int = 0):
    """Two engines, three flows with shares 0.5 / 0.3 / 0.15; ns-3's flow 1 moved by ``ns3_shift``."""
    rng = np.random.default_rng(seed)
    rows = []
    for engine in ("kernel", "ns3"):
        for rep in range(reps):
            for flow, (cc, rtt, share) in enumerate((("reno", 10.0, 0.5), ("cubic", 20.0, 0.3), ("reno", 40.0, 0.15))):
                s = share + (ns3_shift if engine == "ns3" and flow == 1 else 0.0) + rng.normal(0, sd)
                rows.append({"scenario": "a", "engine": engine, "rep": rep, "flow": flow, "cc": cc, "rtt_ms": rtt,
                             "throughput_bps": s * 50e6, "share": s})
    rows.append({"scenario": "ns3_only", "engine": "ns3", "rep": 0, "flow": 0, "cc": "reno", "rtt_ms": 10.0,
                 "throughput_bps": 25e6, "share": 0.5})
    prov = {"scenarios": {"a": {"config": {"rate_bps": 50e6, "tolerance_share": 0.1, "tolerance_utilisation": 0.05},
                                "criterion": "within 0.1", "verdict": {"holds": True, "why": "x"}},
                          "ns3_only": {"config": {}}}}
    return pd.DataFrame(rows), prov


def test_agreement_within_the_tolerance_is_supported_and_a_shift_beyond_it_contradicted():
    frame, prov = synthetic(0.0)
    c = view.claims(frame, prov)
    assert tuple(c.columns) == VERDICT_COLUMNS and len(c) == 4  # three flows and the aggregate; ns3_only skipped
    assert list(c["part"]) == ["flow 0 (reno, 10 ms)", "flow 1 (cubic, 20 ms)", "flow 2 (reno, 40 ms)",
                               "aggregate utilisation"]
    assert (c["verdict"] == "supported").all() and (c["n_runs"] == 8).all()
    far = view.claims(*synthetic(0.2)).set_index("part")["verdict"]
    assert far["flow 1 (cubic, 20 ms)"] == "contradicted" and far["flow 0 (reno, 10 ms)"] == "supported"
    edge = view.claims(*synthetic(0.09, sd=0.03)).set_index("part")
    assert edge.loc["flow 1 (cubic, 20 ms)", "verdict"] == "inconclusive"
    assert edge.loc["flow 1 (cubic, 20 ms)", "runs_needed"] > 4


@pytest.mark.skipif(not (DATA / "sim_vs_kernel.parquet").exists(), reason="shipped sim_vs_kernel dataset absent")
def test_shipped_dataset_gives_a_claims_table():
    frame = pd.read_parquet(DATA / "sim_vs_kernel.parquet")
    prov = json.loads((DATA / "sim_vs_kernel_provenance.json").read_text())
    c = view.claims(frame, prov)
    both = view.compared_scenarios(frame)
    assert len(both) >= 1 and len(c) == sum(frame[frame.scenario == s]["flow"].nunique() + 1 for s in both)
    assert c["why"].str.startswith("unit: the run").all()
