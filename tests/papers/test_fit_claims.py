"""The fit notebook's claims (tcpmodels.fit.report.claims): columns, and verdicts that follow the data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.fit import report
from tcpmodels.stats import VERDICT_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data"


def _flows(c: float, n: int = 20, seed: int = 0) -> pd.DataFrame:
    """Reno runs in congestion avoidance whose throughput is Mathis with constant ``c`` (5 % noise)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(1e-3, 1e-2, n)
    rtt = rng.uniform(0.02, 0.2, n)
    rate = 1448 * 8 / rtt * c / np.sqrt(p) * rng.lognormal(0, 0.05, n)
    return pd.DataFrame({"cc": "reno", "regime": "congestion avoidance", "loss_events": 10, "loss_event_rate": p,
                         "rtt_mean_s": rtt, "mss_bytes": 1448.0, "throughput_bps": rate,
                         "mathis_bps": 1448 * 8 / rtt * math.sqrt(1.5) / np.sqrt(p)})


def test_per_segment_constant_is_supported_and_delayed_ack_contradicted():
    good = report.claims({}, {"flows": _flows(1.22)})
    assert tuple(good.columns) == VERDICT_COLUMNS and (good["verdict"] == "supported").all()
    delayed = report.claims({}, {"flows": _flows(0.87)})
    assert delayed["verdict"].tolist() == ["contradicted", "contradicted", "contradicted"]
    assert (good["n_runs"] == 20).all()


def test_shipped_fit_dataset_is_judged():
    d = report.load(DATA)
    v = report.claims(d, report.tables(d))
    assert len(v) == 3 and set(v["verdict"]) <= {"supported", "contradicted", "inconclusive"}
