"""P2's throughput-spread pilot (issue 57, item 4): table, columns, schema version.

:mod:`tcpmodels.experiments.p2.spread` writes ``p2_spread_pilot.parquet`` (one row per sample: a loss rate
and an RTT pair, the MPTCP data throughput) and ``p2_spread_pilot.json`` (the provenance, with the rule's
choice of loss rate under ``choice``).
"""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE"]

#: ``p2_spread_pilot.parquet``
TABLE = Table(name="", columns=columns("""
    loss_rate    float64  fraction of the packets, each direction of each path
    rtt1_ms      float64
    rtt2_ms      float64
    rate_bps     float64
    wall_s       float64
    started_utc  str
    load_avg_1m  float64
"""), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="p2_spread_pilot", version=1, tables=(TABLE,), provenance="p2_spread_pilot.json",
                       command="python -m tcpmodels.experiments.p2.spread choose --records runs/p2/spread_pilot.jsonl "
                               "--out data")
