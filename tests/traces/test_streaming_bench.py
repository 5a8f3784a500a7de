"""benchmarks/streaming.py: rows with new columns extend the results file's header; older rows stay readable."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "streaming.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_streaming", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_append_row_extends_the_header(tmp_path):
    bench = _module()
    path = tmp_path / "streaming.csv"
    bench.append_row(path, {"packets": 1, "peak_rss_gb": 0.5})
    bench.append_row(path, {"packets": 2, "peak_rss_gb": 0.6})
    bench.append_row(path, {"packets": 3, "peak_rss_gb": 0.7, "peak_rss_driver_gb": 0.3,
                            "peak_rss_workers_gb": "0.200;0.100"})
    bench.append_row(path, {"packets": 4, "peak_rss_gb": 0.8, "peak_rss_driver_gb": 0.4,
                            "peak_rss_workers_gb": "0.300"})
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["packets", "peak_rss_gb", "peak_rss_driver_gb", "peak_rss_workers_gb"]
    assert [r["packets"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[0]["peak_rss_driver_gb"] == "" and rows[1]["peak_rss_workers_gb"] == ""
    assert rows[2]["peak_rss_workers_gb"] == "0.200;0.100" and rows[3]["peak_rss_driver_gb"] == "0.4"


def test_gb_list_and_commit():
    bench = _module()
    assert bench._gb_list([2.5e9, 1e8]) == "2.500;0.100"
    assert bench._commit(str(SCRIPT.parents[1])).split("+")[0].isalnum()


def test_fitted_exponent():
    bench = _module()
    # time = 2e-6 s * packets^1.1 exactly: the fit gives back 1.1
    packets = [10**6, 3 * 10**6, 10**7]
    assert abs(bench.fit_exponent(packets, [2e-6 * p ** 1.1 for p in packets]) - 1.1) < 1e-9
    assert bench.fit_exponent([10**6, 10**6], [1.0, 1.1]) is None
