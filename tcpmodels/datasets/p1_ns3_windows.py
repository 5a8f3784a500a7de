"""ns-3's background subflow windows in P1's Section 4 (issue 57, item 2): table, columns, schema version, key.

:mod:`tcpmodels.experiments.p1.ns3_windows` writes ``p1_ns3_windows.parquet`` (one row per background
subflow of a traced ns-3 rerun of a shipped seed), :func:`tcpmodels.papers.p1_datacenter_fct.windows.with_ns3_windows`
fills the P1 subflow table's ns-3 rows from it, matched on :data:`KEY`. Its ``cc`` is that of every ns-3 run of
P1 (:data:`tcpmodels.datasets.p1.NS3_CC`), whatever the background's protocol.
"""

from __future__ import annotations

from tcpmodels.datasets.p1 import CONNECTION, SUBFLOWS
from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE", "KEY", "SAMPLE_INTERVAL_S", "MEASURED"]

#: a background subflow of a run: the P1 run key (:data:`tcpmodels.datasets.p1.KEY`), connection and subflow
KEY = ("engine", "experiment", "protocol", "cc", "seed", "conn_id", "subflow")
#: the kernel's TCP_INFO sampling interval of background transfers, at which the ns-3 trace is sampled. [s]
SAMPLE_INTERVAL_S = 0.1
#: the columns the reruns measure that the shipped ns-3 rows lack
MEASURED = ("cwnd_mean_segments", "loss_events", "segments_sent", "loss_event_rate")

#: ``p1_ns3_windows.parquet``: the P1 subflow table's columns it fills or matches on, and the ssthresh settings
TABLE = Table(name="", columns=CONNECTION + tuple(c for c in SUBFLOWS.columns if c.name in (
    "src", "dst", "mptcp", "subflow", "remote", "duration_s", "cwnd_mean_segments", "segments_sent", "loss_event_rate"))
    + columns("""
    loss_events  int64
    reductions   int64  ssthresh settings in the full trace
"""), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="p1_ns3_windows", version=1, tables=(TABLE,),
                       command="python -m tcpmodels.experiments.p1.ns3_windows dataset "
                               "--records runs/p1/ns3_windows.jsonl --out data")
