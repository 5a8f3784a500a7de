"""The BBR coexistence dataset (:mod:`tcpmodels.experiments.bbr` writes it, :mod:`tcpmodels.papers.bbr_coexistence` reads it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "RUNS", "FLOWS", "SERIES", "PROBERTT"]

#: the grid point of a run, first in every table
_POINT = """
    engine      str
    campaign    str
    rep         int64
    competitor  str
    n_loss      int64
    queue_bdp   float64  BDP
    n_bbr       int64
"""

#: ``bbr_runs.parquet``
RUNS = Table(name="runs", columns=columns(_POINT + """
    group                     str
    buffer_packets            int64
    order                     int64
    rate_bps                  float64
    base_rtt_s                float64
    packet_bytes              int64
    warmup_s                  float64
    measure_s                 float64
    ping_rtt_ms               float64
    queue_drops               float64  packets
    cpu_drops                 float64  packets
    load_avg_1m               float64
    wall_s                    float64
    started_utc               str
    share_bbr                 float64  fraction of the bytes delivered
    utilization               float64  fraction of the link rate
    model_loss_share          float64  fraction of the bytes delivered
    model_share_bbr           float64  fraction of the bytes delivered
    probe_rtt_episodes        int64
    probe_rtt_mean_s          float64
    model_probe_rtt_s         float64
    queue_delay_s             float64
    standing_queue_bdp        float64  BDP
    model_standing_queue_bdp  float64  BDP
    model_error               float64  fraction of the bytes delivered
    seed                      float64
"""), compression="snappy")

#: ``bbr_flows.parquet``
FLOWS = Table(name="flows", columns=columns(_POINT + """
    flow            int64
    role            str
    cc              str
    throughput_bps  float64
"""), compression="snappy")

#: ``bbr_series.parquet``
SERIES = Table(name="series", columns=columns(_POINT + """
    t_end_s            float64
    share              float64  fraction of the bytes delivered
    share_since_start  float64  fraction of the bytes delivered
"""), compression="snappy")

#: ``bbr_probertt.parquet``
PROBERTT = Table(name="probertt", columns=columns(_POINT + """
    flow        int64
    duration_s  float64
"""), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="bbr", version=1, tables=(RUNS, FLOWS, SERIES, PROBERTT),
                       command="python -m tcpmodels.experiments.bbr dataset --out data/datasets ...")
