"""P2's send-buffer sweep at RTTs (150, 120) ms (issue 57, item 3): table, columns, schema version, the sweep's grid.

:mod:`tcpmodels.experiments.p2.sndbuf` writes ``p2_sndbuf.parquet`` (one row per transfer),
:mod:`tcpmodels.papers.p2_mptcp_prediction.sndbuf` reads it and judges its claims on the
:data:`JUDGED_SIZE_BYTES` transfers, between the smallest and the largest factor of :data:`WMEM_FACTORS`.
"""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE", "WMEM_FACTORS", "SIZES_BYTES", "JUDGED_SIZE_BYTES", "RTTS_MS"]

#: the client's ``tcp_wmem`` maximum, in BDPs of the 150 ms path
WMEM_FACTORS = (0.5, 1.0, 2.0, 4.0)
#: transfer sizes: the paper-equivalent 16 MiB (256 MB at 1 Gbit/s scaled by the rate) and 64 MiB [bytes]
SIZES_BYTES = (16 * 2**20, 64 * 2**20)
#: the size the claims are judged on: the paper-equivalent one [bytes]
JUDGED_SIZE_BYTES = SIZES_BYTES[0]
#: RTTs of path 1 and path 2 [ms]
RTTS_MS = (150.0, 120.0)

#: ``p2_sndbuf.parquet``
TABLE = Table(name="", columns=columns("""
    wmem_factor          float64  BDP of the 150 ms path
    wmem_max_bytes       int64
    rep                  int64
    order                int64
    rtt1_ms              float64
    rtt2_ms              float64
    cc                   str
    path_rate_bps        float64
    label                str
    size_bytes           int64
    share1               float64  fraction of the bytes on path 1 (150 ms)
    Bps                  float64  bytes/s
    error                str
    load_avg_1m          float64
    started_utc          str
    client_retrans_segs  int64
"""), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="p2_sndbuf", version=1, tables=(TABLE,),
                       command="python -m tcpmodels.experiments.p2.sndbuf dataset --records runs/p2/sndbuf.jsonl "
                               "--out data")
