"""The fit campaign's dataset (:mod:`tcpmodels.fit.dataset` writes it, :mod:`tcpmodels.fit.report` reads it): tables, columns, schema version.

Every table starts with the run's key (:data:`RUN`); the flow and subflow tables share the estimates from the
capture (:data:`TRACE`), the two TCP_INFO tables the sampled fields (:data:`SAMPLES`, compact dtypes: 10 ms
samples, integer windows).
"""

from __future__ import annotations

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "FLOWS", "EPOCHS", "MPTCP_SUBFLOWS", "TCPINFO", "MPTCP_TCPINFO", "RUN", "TRACE", "SAMPLES"]

#: the run a row belongs to: kind (single path or MPTCP), congestion control, RTT, setting, repetition, name
RUN = columns("""
    kind     str
    cc       str
    rtt_ms   float64
    setting  str
    rep      int64
    name     str
""")
#: the estimates from a flow's (or subflow's) capture in its steady window, and the host's load then
TRACE = columns("""
    duration_s                  float64
    flow_id                     int64
    mss_bytes                   float64
    window_start_s              float64
    window_end_s                float64
    data_segments               int64
    retransmissions             int64
    loss_events                 int64
    timeouts                    int64
    loss_event_rate             float64
    retransmission_rate         float64
    rtt_mean_s                  float64
    rtt_median_s                float64
    rtt_min_s                   float64
    rtt_samples                 int64
    t0_s                        float64
    t0_observed                 int64
    t0_fallback_s               float64
    b                           float64
    w_max_segments              float64
    w_max_bytes                 float64
    flight_mean_segments        float64
    throughput_bps              float64
    tcpinfo_cwnd_mean_segments  float64
    tcpinfo_srtt_mean_s         float64
    load_avg_1min_before        float64
    lock_wait_s                 float64
    bytes_not_captured          int64
""")
#: TRACE columns the shipped tables (built before issue 49) lack; a rebuild writes them
_SINCE_ISSUE_49 = ("bytes_not_captured",)
#: one TCP_INFO sample
SAMPLES = columns("""
    t_s                float32
    cwnd_segments      int32
    ssthresh_segments  int32
    srtt_s             float32
    ca_state           int8
    total_retrans      int32
""")

#: ``fit_flows.parquet``
FLOWS = Table(name="flows", columns=RUN + TRACE + columns("""
    rate_bps                        float64
    capacity_bps                    float64
    loss_rate_set                   float64
    buffer_bytes                    int64
    bdp_bytes                       float64
    rmem_max_bytes                  float64
    tcpinfo_min_rtt_s               float64
    tcpinfo_total_retrans           int64
    tcpinfo_delivery_rate_mean_bps  float64
    epochs_detected                 int64
    kernel_timeouts                 int64
    kernel_recoveries               int64
    kernel_loss_probes              int64
    kernel_fast_retrans             int64
    kernel_retrans_segs             int64
    kernel_out_segs                 int64
    kernel_spurious_rtos            int64
    receiver_delayed_acks           int64
    random_drops_data               int64
    random_drop_rate_data           float64
    queue_drops                     int64
    load_avg_1min_after             float64
    wall_s                          float64
    packets_captured                int64
    cc_effective                    str
    started_utc                     str
"""), optional=_SINCE_ISSUE_49, csv=True, csv_float_format="%.6g")

#: ``fit_epochs.parquet``
EPOCHS = Table(name="epochs", columns=RUN + columns("""
    loss_s                  float64
    start_s                 float64
    end_s                   float64
    w_prior_segments        float64
    ssthresh_segments       float64
    beta_obs                float64
    cwnd_start_segments     float64
    min_cwnd_segments       float64
    after_timeout           bool
    reached_s               float64
    k_obs_s                 float64
    rtt_s                   float64
    n_samples               int64
    first_index             int64
    last_index              int64
    capture_w_max_segments  float64
"""), csv=True, csv_float_format="%.6g")

#: ``fit_mptcp_subflows.parquet``
MPTCP_SUBFLOWS = Table(name="mptcp_subflows", columns=RUN + TRACE + columns("""
    path                 int64
    interface            str
    path_rtt_ms          float64
    path_loss_rate_set   float64
    subflow              int64
    connection_rate_bps  float64
"""), optional=_SINCE_ISSUE_49, csv=True, csv_float_format="%.6g")

#: ``fit_tcpinfo.parquet``
TCPINFO = Table(name="tcpinfo", columns=SAMPLES + RUN)

#: ``fit_mptcp_tcpinfo.parquet``
MPTCP_TCPINFO = Table(name="mptcp_tcpinfo", columns=SAMPLES + columns("path int64") + RUN)

#: the dataset
SCHEMA = DatasetSchema(prefix="fit", version=1, tables=(FLOWS, EPOCHS, MPTCP_SUBFLOWS, TCPINFO, MPTCP_TCPINFO),
                       command="python -m tcpmodels.experiments.fit build")
