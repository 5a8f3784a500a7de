"""P5's kernel dataset (:mod:`tcpmodels.experiments.p5.kernel` writes it, :mod:`tcpmodels.papers.p5_selfsimilar` reads it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.p5 import ESTIMATE
from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "HURST", "COUNTS"]

#: ``p5_testbed_hurst.parquet``
HURST = Table(name="hurst", columns=columns("""
    alpha  float64
    seed   int64
""") + ESTIMATE + columns("""
    predicted  float64
    covers     bool
"""), compression="snappy")

#: ``p5_testbed_counts.parquet``
COUNTS = Table(name="counts", columns=columns("""
    alpha    float64
    seed     int64
    t_s      float64
    packets  int32
"""))

#: the dataset
SCHEMA = DatasetSchema(prefix="p5_testbed", version=1, tables=(HURST, COUNTS,),
                       command="python -m tcpmodels.experiments.p5 testbed")
