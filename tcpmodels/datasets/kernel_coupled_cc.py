"""The tm_* congestion controls against the kernel's (:mod:`tcpmodels.experiments.kernel_coupled_cc` writes it): tables, columns, schema version."""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE", "CWND"]

#: ``kernel_coupled_cc.parquet``
TABLE = Table(name="", columns=columns("""
    experiment                       str
    variant                          str
    rep                              int64
    rate_bps                         float64
    retransmits                      float64
    cc_effective                     str
    commit                           str
    reading                          str
    k_observed_s                     float64
    k_model_s                        float64
    k_ratio                          float64
    k_epochs                         str
    k_cycles                         float64
    seed                             float64
    tcp_rate_bps                     float64
    ratio_mptcp_tcp                  float64
    subflows                         float64
    incr_kernel                      float64
    incr_model                       float64
    incr_rel_error                   float64
    incr_rel_error_of_terms          float64
    olia_alpha_model                 float64
    cwnd_segments                    str
    srtt_s                           str
    ell_segments                     str
    loss_events                      str
    delivered_at_last_loss_segments  str
    setting                          str
    token                            float64
    acks                             float64
    age_s                            float64
    alpha_kernel                     float64
    alpha_model                      float64
    alpha_rel_error                  float64
    share_less_lossy                 float64
    slot                             float64
    seq                              float64
    consistent                       bool
    snapshot_method                  str
    rto_events                       str
    delivered_segments               str
    smaller_loss_events              float64
    smaller_rto_events               float64
    larger_loss_events               float64
    larger_rto_events                float64
"""), compression="snappy")

#: ``kernel_coupled_cc_cwnd.parquet``
CWND = Table(name="cwnd", columns=columns("""
    variant        str
    t_s            float64
    subflow        str
    cwnd_segments  int64
    srtt_s         float64
"""), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="kernel_coupled_cc", version=1, tables=(TABLE, CWND,),
                       command="python -m tcpmodels.experiments.kernel_coupled_cc dataset", provenance="kernel_coupled_cc.json")
