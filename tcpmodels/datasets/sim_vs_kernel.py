"""The sim-versus-kernel dataset (:mod:`tcpmodels.experiments.sim_vs_kernel` writes it, :mod:`tcpmodels.papers.sim_vs_kernel` reads it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE"]

#: ``sim_vs_kernel.parquet``
TABLE = Table(name="", columns=columns("""
    scenario        str
    engine          str
    rep             int64
    flow            int64
    cc              str
    rtt_ms          float64
    start_s         float64
    throughput_bps  float64
    share           float64
    lo_s            float64
    hi_s            float64
    wall_s          float64
    load_avg_1m     float64
    config_hash     str
"""), csv=True, csv_float_format="%.6g")

#: the dataset
SCHEMA = DatasetSchema(prefix="sim_vs_kernel", version=1, tables=(TABLE,),
                       command="python -m tcpmodels.experiments.sim_vs_kernel dataset")
