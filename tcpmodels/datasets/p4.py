"""P4's dataset (:mod:`tcpmodels.experiments.p4` writes it, :mod:`tcpmodels.papers.p4_lftcp` reads it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "KERNEL"]

#: ``p4_kernel.parquet``
KERNEL = Table(name="kernel", columns=columns("""
    rep                    int64
    rcvbuf_cap_bytes       int64
    rtt_ms                 float64
    order                  int64
    ping_rtt_ms            float64
    tcp_rmem               str
    load_avg_1m            float64
    wall_s                 float64
    started_utc            str
    cc_effective           str
    link_rate_bps          float64
    campaign               str
    testbed                str
    error                  str
    t_from_s               float64
    t_to_s                 float64
    span_s                 float64
    plateau_s              float64
    rate_bps               float64
    rate_endpoints_bps     float64
    snd_wnd_bytes          float64
    snd_wnd_min_bytes      float64
    snd_wnd_max_bytes      float64
    min_rtt_s              float64
    srtt_s                 float64
    cwnd_bytes             float64
    retrans_in_span        int64
    rwnd_limited_fraction  float64
    model_bps              float64
    ratio                  float64
    model_srtt_bps         float64
    ratio_srtt             float64
    cap_model_bps          float64
    adv_fraction_of_cap    float64
    rate_fraction_of_link  float64
"""))

#: the dataset
SCHEMA = DatasetSchema(prefix="p4", version=1, tables=(KERNEL,),
                       command="python -m tcpmodels.experiments.p4 dataset --records ... --out data/datasets")
