"""The limitation diagnosis's labelled runs (:mod:`tcpmodels.experiments.limits` writes them): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "INTERVALS", "FLOWS"]

#: ``limits_intervals.parquet``
INTERVALS = Table(name="intervals", columns=columns("""
    interval           int64
    start_s            float64
    end_s              float64
    network_s          float64
    rwnd_s             float64
    sndbuf_s           float64
    idle_s             float64
    app_limited_share  float64
    blocked_share      float64
    delivery_rate_bps  float64
    kernel             str
    kernel_chrono      str
    flow_id            int64
    limit              str
    reason             str
    position           str
    active_share       float64
    idle_share         float64
    window_share       float64
    flight_bytes       float64
    window_bytes       float64
    rate_bps           float64
    capacity_bps       float64
    rtt_s              float64
    rtt_min_s          float64
    retransmissions    int64
    agree              bool
    scenario           str
    seed               int64
    split              str
    point              str
    flow               int64
"""))

#: ``limits_flows.parquet``
FLOWS = Table(name="flows", columns=columns("""
    scenario               str
    seed                   int64
    split                  str
    point                  str
    flow                   int64
    expected_class         str
    truth_congestion       str
    bytes                  int64
    duration_s             float64
    slow_start_s           float64
    samples                int64
    rtt_min_s              float64
    rtt_max_s              float64
    cov                    float64
    norm_diff              float64
    congestion             str
    reason                 str
    share_opportunity      float64
    share_receiver_window  float64
    share_send_buffer      float64
    share_application      float64
    share_congestion       float64
    share_bandwidth        float64
    share_undecided        float64
    limit                  str
    sentence               str
    model                  str
    mathis_meaningful      bool
    position               str
"""))

#: the dataset
SCHEMA = DatasetSchema(prefix="limits", version=1, tables=(INTERVALS, FLOWS,),
                       command="python -m tcpmodels.experiments.limits dataset")
