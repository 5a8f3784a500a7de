"""The tm_* congestion controls' ns-3 counterparts (:mod:`tcpmodels.experiments.kernel_coupled_cc` writes it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE"]

#: ``kernel_coupled_cc_ns3.parquet``
TABLE = Table(name="", columns=columns("""
    experiment       str
    variant          str
    rep              int64
    seed             int64
    rate_bps         float64
    tcp_rate_bps     float64
    ratio_mptcp_tcp  float64
"""), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="kernel_coupled_cc_ns3", version=1, tables=(TABLE,),
                       command="python -m tcpmodels.experiments.kernel_coupled_cc ns3", provenance="kernel_coupled_cc_ns3.json")
