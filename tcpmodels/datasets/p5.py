"""P5's ns-3 dataset (:mod:`tcpmodels.experiments.p5` writes it, :mod:`tcpmodels.papers.p5_selfsimilar` reads it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "RUNS", "FLOWS", "BINS", "COUNTS", "HURST", "RUN", "ESTIMATE"]

#: the run a row belongs to: its id, the case, the flow-size tail index, clients, backbone rate and seed
RUN = columns("""
    run_id         str
    case           str
    alpha          float64
    n_clients      int64
    backbone_mbps  float64
    seed           int64
""")

#: one estimate of the Hurst parameter (:mod:`tcpmodels.models.hurst`): the method, the value with its
#: standard error (and how that was computed), the 95 % interval and the length of the series
ESTIMATE = columns("""
    method       str
    hurst        float64
    stderr       float64
    stderr_kind  str
    ci95_low     float64
    ci95_high    float64
    n            int64
""")

#: ``p5_runs.parquet``
RUNS = Table(name="runs", columns=RUN + columns("""
    duration_s       float64
    n_flows          int64
    n_completed      int64
    offered_bytes    float64
    rx_bytes         int64
    max_size_bytes   float64
    drop_pkts_s      int64
    drop_pkts_g1     int64
    loss_s           float64
    loss_g1          float64
    pcap_packets     int64
    run_wall_s       float64
    ns3_load_wall_s  float64
    ns3_version      str
    date_utc         str
"""))

#: ``p5_flows.parquet``
FLOWS = Table(name="flows", columns=columns("""
    client      int64
    start_s     float32
    size_bytes  float64
    rx_bytes    int64
    fct_s       float32
    completed   bool
    run_id      str
"""))

#: ``p5_bins.parquet``
BINS = Table(name="bins", columns=columns("""
    t_end_s        float64
    drop_pkts_s    int64
    drop_bytes_s   int64
    enq_bytes_s    int64
    loss_s         float32
    drop_pkts_g1   int64
    drop_bytes_g1  int64
    enq_bytes_g1   int64
    loss_g1        float32
    thr_g1_bps     float32
    completed      int64
""") + RUN)

#: ``p5_counts.parquet``
COUNTS = Table(name="counts", columns=columns("""
    run_id   str
    source   str
    alpha    float64
    t_s      float64
    packets  int64
"""))

#: ``p5_hurst.parquet``
HURST = Table(name="hurst", columns=ESTIMATE + RUN + columns("""
    source         str
    series_bin_s   float64
    predicted      float64
"""))

#: the dataset
SCHEMA = DatasetSchema(prefix="p5", version=1, tables=(RUNS, FLOWS, BINS, COUNTS, HURST,),
                       command="python -m tcpmodels.experiments.p5 dataset")
