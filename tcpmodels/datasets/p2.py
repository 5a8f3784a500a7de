"""P2's dataset (:mod:`tcpmodels.experiments.p2` writes it, :mod:`tcpmodels.papers.p2_mptcp_prediction` reads it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "SAMPLES", "FIG4"]

#: ``p2_samples.parquet``
SAMPLES = Table(name="samples", columns=columns("""
    cc                          str
    data_size_bytes             int64
    path_rate_bps               float64
    subflow_cc                  str
    n_subflows_seen             int64
    rep                         int64
    rtt1_ms                     float64
    rtt2_ms                     float64
    order                       int64
    rtt1_measured_ms            float64
    rtt2_measured_ms            float64
    load_avg_1m                 float64
    wall_s                      float64
    started_utc                 str
    n_errors                    int64
    path_probe_128KB_path1_Bps  float64
    path_probe_128KB_path2_Bps  float64
    path_probe_256KB_path1_Bps  float64
    path_probe_256KB_path2_Bps  float64
    path_probe_512KB_path1_Bps  float64
    path_probe_512KB_path2_Bps  float64
    mptcp_probe_64KB_Bps        float64
    mptcp_probe_64KB_share1     float64
    mptcp_probe_64KB_loss       float64
    mptcp_probe_128KB_Bps       float64
    mptcp_probe_128KB_share1    float64
    mptcp_probe_128KB_loss      float64
    mptcp_probe_256KB_Bps       float64
    mptcp_probe_256KB_share1    float64
    mptcp_probe_256KB_loss      float64
    mptcp_probe_512KB_Bps       float64
    mptcp_probe_512KB_share1    float64
    mptcp_probe_512KB_loss      float64
    mptcp_probe_2MB_Bps         float64
    mptcp_probe_2MB_share1      float64
    mptcp_probe_2MB_loss        float64
    mptcp_probe_8MB_Bps         float64
    mptcp_probe_8MB_share1      float64
    mptcp_probe_8MB_loss        float64
    mptcp_probe_32MB_Bps        float64
    mptcp_probe_32MB_share1     float64
    mptcp_probe_32MB_loss       float64
    mptcp_probe_128MB_Bps       float64
    mptcp_probe_128MB_share1    float64
    mptcp_probe_128MB_loss      float64
    mptcp_data_Bps              float64
    mptcp_data_share1           float64
    mptcp_data_loss             float64
    tcp_data_Bps                float64
    tcp_data_loss               float64
    data_over_bdp               float64
    mptcp_over_path_rate        float64
    mptcp_over_tcp_data         float64
    probe64_share2              float64
    conditions_hold             bool
"""))

#: ``p2_fig4.parquet``
FIG4 = Table(name="fig4", columns=columns("""
    cc             str
    path_rate_bps  float64
    rep            int64
    rtt1_ms        float64
    rtt2_ms        float64
    label          str
    size_bytes     int64
    share1         float64
    Bps            float64
    load_avg_1m    float64
"""))

#: the dataset
SCHEMA = DatasetSchema(prefix="p2", version=2, tables=(SAMPLES, FIG4,),
                       command="python -m tcpmodels.experiments.p2 dataset --records ... --out data/datasets")
