"""``tcpmodels analyze --streaming``: the capture streamed to a dataset, flows on a local Dask cluster, flows.csv."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
from trace_fixtures import CAPTURES

from tcpmodels.analyze.capture import SUMMARY_COLUMNS
from tcpmodels.cli import main
from tcpmodels.traces import TraceWarning, flows, read_pcap


def test_streaming_analyze_writes_the_flow_table(tmp_path, capsys):
    cap = CAPTURES / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"
    code = main(["analyze", str(cap), "--streaming", "--output-dir", str(tmp_path), "--top", "3"])
    out = capsys.readouterr().out
    assert code == 0
    folder = tmp_path / "p5_bottleneck_main-a1.65-n32-b5-s0"  # the file name without .pcap.gz
    assert str(folder / "flows.csv") in out.splitlines()[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        table = read_pcap(cap)
        want = flows(table)
    got = pd.read_csv(folder / "flows.csv", index_col="flow_id")
    assert list(got.index) == list(want.index)
    for col in ("packets", "payload_bytes", "unique_payload_bytes", "retransmitted_packets", "duplicate_acks",
                "rtt_samples"):
        assert np.array_equal(got[col].to_numpy(), want[col].to_numpy()), col
    np.testing.assert_allclose(got["rtt_median_s"], want["rtt_median_s"], rtol=1e-12)
    acc = json.loads((folder / "accounting.json").read_text())
    assert acc["tcp_parsed"] == len(table) and acc["records_read"] == table.attrs["accounting"].records_read
    # the printed table: header line, then the largest flows first
    assert all(c in out for c in SUMMARY_COLUMNS)
    biggest = want["unique_payload_bytes"].max()
    assert f"{len(want)} flows" in out and str(biggest) in out
