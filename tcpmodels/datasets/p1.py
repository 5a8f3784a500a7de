"""P1's dataset: its tables, the constants campaign and paper share, and the migration of schema 1.

:mod:`tcpmodels.experiments.p1` writes it, :mod:`tcpmodels.papers.p1_datacenter_fct` reads it. Schema 1 (the
first kernel and ns-3 stages) keyed runs without a congestion control: its tables and records have no ``cc``,
and every run of them used its engine's only control then (:data:`SCHEMA1_CC`: kernel ``uncoupled``, ns-3
``lia``); :func:`cc_of` and :func:`with_cc` say so in one place.
"""

from __future__ import annotations

import pandas as pd

from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "FLOWS", "SUBFLOWS", "TCPINFO", "RUNS", "KEY", "UNCOUPLED", "NS3_CC", "KERNEL_ENGINES",
           "SCHEMA1_CC", "RUN", "CONNECTION", "cc_of", "with_cc"]

#: the key of a run: runs of different congestion controls never mix (schema 1 had no ``cc``)
KEY = ("engine", "experiment", "protocol", "cc", "seed")
#: the kernel's MPTCP control that leaves each subflow to the kernel's own Reno (all schema-1 kernel runs)
UNCOUPLED = "uncoupled"
#: ns-3's MPTCP is always RFC 6356 LIA-coupled: every ns-3 run carries this ``cc``
NS3_CC = "lia"
#: the ``engine`` of a kernel run, by testbed: ``kernel`` without RPS steering (every kernel run up to
#: 2026-11-29), ``kernel_steered`` with it
KERNEL_ENGINES = ("kernel", "kernel_steered")
#: each engine's control in a schema-1 table or record (no ``cc``)
SCHEMA1_CC = {"kernel": UNCOUPLED, "kernel_steered": UNCOUPLED, "ns3": NS3_CC}


def cc_of(engine: str) -> str:
    """The congestion control of a schema-1 run (no ``cc`` recorded) of ``engine``: ns-3 ``lia``, else ``uncoupled``.

    Parameters
    ----------
    engine : str
        The run's ``engine``.

    Returns
    -------
    str
        :data:`NS3_CC` or :data:`UNCOUPLED`.
    """
    return NS3_CC if engine == "ns3" else UNCOUPLED


def with_cc(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a ``cc`` column: the MPTCP congestion control of each row's run.

    Schema-1 tables have none; their rows get their engine's only control then (:func:`cc_of`).

    Parameters
    ----------
    frame : pandas.DataFrame
        A table of the dataset (with ``engine`` when it has rows).

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when it has the column or no ``engine``, else a copy with it (pandas ``string``).
    """
    if "cc" in frame or "engine" not in frame:
        return frame
    return frame.assign(cc=frame["engine"].map(cc_of).astype("string"))


#: the run a row belongs to (:data:`KEY`)
RUN = columns("""
    engine      str
    experiment  str
    protocol    str
    cc          str
    seed        int64
""")
#: the connection a row belongs to: its run and its id in the run
CONNECTION = RUN + columns("conn_id int64")

#: ``p1_flows.parquet``
FLOWS = Table(name="flows", columns=CONNECTION + columns("""
    kind                   str
    src                    int64
    dst                    int64
    start_s                float64
    size_bytes             int64
    mptcp                  bool
    plane                  int64
    fct_s                  float64
    bytes                  float64
    rate_bps               float64
    connect_s              float64
    cc_effective           str
    mptcp_subflows         int64
    error                  str
    pattern                str
    fct_capture_s          float64
    retransmitted_packets  int64
    timeout_gap_s          float64
    lost_packets           int64
"""), compression_level=9)

#: ``p1_subflows.parquet``
SUBFLOWS = Table(name="subflows", columns=CONNECTION + columns("""
    src                 int64
    dst                 int64
    mptcp               bool
    subflow             int64
    remote              str
    duration_s          float64
    throughput_bps      float64
    rtt_mean_s          float64
    mss_bytes           float64
    cwnd_mean_segments  float64
    loss_events         float64
    segments_sent       float64
    loss_event_rate     float64
    retransmit_rate     float64
"""), csv=True)

#: ``p1_tcpinfo.parquet``
TCPINFO = Table(name="tcpinfo", columns=CONNECTION + columns("""
    t_s                float64
    subflow            float64
    remote             str
    cwnd_segments      int64
    ssthresh_segments  int64
    srtt_s             float64
    ca_state           int64
    bytes_acked        int64
    total_retrans      int64
"""))

#: ``p1_runs.parquet``
RUNS = Table(name="runs", columns=RUN + columns("""
    wall_s               float64
    setup_s              float64
    started_utc          str
    load_avg_1m          float64
    lock_wait_s          float64
    n_connections        int64
    n_errors             int64
    capture_drops        int64
    git_commit           str
    git_dirty            bool
    cc_map_connections   float64
    cc_map_max_subflows  float64
"""), csv=True)

#: the dataset
SCHEMA = DatasetSchema(prefix="p1", version=2, tables=(FLOWS, SUBFLOWS, TCPINFO, RUNS,),
                       command="python -m tcpmodels.experiments.p1 dataset")
