"""P3's dataset: its tables, the constants campaign and paper share, and the migrations of its older tables.

:mod:`tcpmodels.experiments.p3` writes it, :mod:`tcpmodels.papers.p3_cubic_fairness` reads it. Older builds
lack columns added since; what an absent column (or a missing value in it) means is said once, here:

* kernel rows (:data:`KERNEL_DEFAULTS`, :func:`kernel_filled`): ``kind`` ``standard`` (kernel CUBIC: every
  sample before the proposal ran), ``cubic_cc_reading`` none, ``rate_bps``, ``buffer_bytes`` and
  ``measure_s`` the provenance config's, ``testbed`` ``reordering`` (every sample before 2026-11-28);
* ns-3 runs (:func:`ns3_filled`): ``rate_bps`` the provenance's ``ns3.rate_bps``, else
  :data:`LEGACY_NS3_RATE_BPS`; ``duration_s`` the provenance config's ``ns3_duration_s``;
* fluid rows (:func:`fluid_rate_bps`): ``rate_bps`` the total throughput over the utilisation.
"""

from __future__ import annotations

import math

import pandas as pd

from tcpmodels.datasets.schema import KERNEL_TESTBEDS, DatasetSchema, Table, columns

__all__ = ["SCHEMA", "KERNEL", "NS3", "FLUID", "REPEAT_SUFFIX", "TESTBEDS", "LEGACY_NS3_RATE_BPS",
           "KERNEL_DEFAULTS", "kernel_filled", "split_repeats", "ns3_filled", "fluid_rate_bps"]

#: the end of the ``campaign`` label of a kernel sample run once more because it lost packets outside the
#: bottleneck queue (:func:`tcpmodels.experiments.p3.kernel.cpu_loss_repeat_plan`)
REPEAT_SUFFIX = "_repeat"
#: the kernel testbeds a sample can have run on (:data:`tcpmodels.datasets.KERNEL_TESTBEDS`)
TESTBEDS = KERNEL_TESTBEDS
#: bottleneck rate of the ns-3 grid shipped before its table had a ``rate_bps`` column (2026-11-24: 96 runs,
#: every run's two flows together 94.0-96.4 Mbit/s of goodput, i.e. a 100 Mbit/s link). [bit/s]
LEGACY_NS3_RATE_BPS = 100e6
#: what a kernel column absent from an older table holds: a value, or ``("config", key)`` for the provenance
#: config's value
KERNEL_DEFAULTS = {"kind": "standard", "cubic_cc_reading": None, "rate_bps": ("config", "rate_bps"),
                   "buffer_bytes": ("config", "buffer_bytes"), "measure_s": ("config", "measure_s"),
                   "testbed": "reordering"}

#: ``p3_kernel.parquet``
KERNEL = Table(name="kernel", columns=columns("""
    rep                       int64
    reno_rtt_ms               float64
    cubic_rtt_ms              float64
    order                     int64
    reno_start_s              float64
    cubic_start_s             float64
    reno_ping_ms              float64
    cubic_ping_ms             float64
    load_avg_1m               float64
    wall_s                    float64
    started_utc               str
    error                     str
    reno_cc                   str
    cubic_cc                  str
    span_s                    float64
    reno_bps                  float64
    reno_window_sd_bps        float64
    reno_srtt_ms              float64
    reno_cwnd_segments        float64
    reno_wmax_segments        float64
    reno_retrans              int64
    cubic_bps                 float64
    cubic_window_sd_bps       float64
    cubic_srtt_ms             float64
    cubic_cwnd_segments       float64
    cubic_wmax_segments       float64
    cubic_retrans             int64
    n_windows                 int64
    jain_window_sd            float64
    jain                      float64
    total_bps                 float64
    cubic_share               float64
    cubic_k_s                 float64
    kind                      str
    cubic_cc_reading          str
    rate_bps                  float64
    buffer_bytes              int64
    measure_s                 float64
    source                    str
    queue_drops               float64
    cpu_drops                 float64
    cubic_k_observed_s        float64
    cubic_k_epochs            float64
    delay_element_drops       float64
    sender_timeouts           float64
    sender_loss_probes        float64
    sender_spurious_rtos      float64
    sender_dsack_recv         float64
    sender_reordering_events  float64
    receiver_drops            float64
    campaign                  str
    testbed                   str
    repeats_started_utc       str
    # where the host's CPUs spent the transfers, summed over the CPUs (records since the cpu_time_s field)
    cpu_steal_s               float64
    cpu_softirq_s             float64
    cpu_idle_s                float64
"""), optional=("cpu_steal_s", "cpu_softirq_s", "cpu_idle_s"), csv=True, csv_float_format="%.6g")

#: ``p3_ns3.parquet``
NS3 = Table(name="ns3", columns=columns("""
    run_id               str
    phase                str
    kind                 str
    x_exponent           float64
    seed                 int64
    reno_rtt_ms          float64
    cubic_rtt_ms         float64
    reno_start_s         float64
    cubic_start_s        float64
    reno_bps             float64
    cubic_bps            float64
    jain                 float64
    total_bps            float64
    cubic_share          float64
    reno_window_sd_bps   float64
    cubic_window_sd_bps  float64
    jain_window_sd       float64
    n_windows            int64
    reno_lost_packets    float64
    cubic_lost_packets   float64
    wall_s               float64
    date_utc             str
    ns3_version          str
    duration_s           float64
    warmup_s             float64
    rate_bps             float64
    buffer_bytes         float64
    source               str
    cache_key            str
"""), csv=True, csv_float_format="%.6g")

#: ``p3_fluid.parquet``
FLUID = Table(name="fluid", columns=columns("""
    rate_bps             float64
    buffer_bytes         int64
    reno_rtt_ms          float64
    cubic_rtt_ms         float64
    reading              str
    x_exponent           float64
    loss_sharing         str
    reno_bps             float64
    cubic_bps            float64
    jain                 float64
    cubic_share          float64
    utilization          float64
    reno_loss_events     int64
    cubic_loss_events    int64
    mean_queue_delay_ms  float64
    cubic_wmax_segments  float64
    reno_wmax_segments   float64
    x                    float64
    cubic_k_s            float64
    duration_s           float64
    warmup_s             float64
    dt_s                 float64
"""))

#: the dataset
SCHEMA = DatasetSchema(prefix="p3", version=1, tables=(KERNEL, NS3, FLUID),
                       command="python -m tcpmodels.experiments.p3 dataset --records runs/p3/kernel_x.jsonl --fluid runs/p3/fluid.parquet --out data/datasets")


def kernel_filled(kernel: pd.DataFrame, config: dict, names: tuple[str, ...], *,
                  missing: object = None) -> pd.DataFrame:
    """Kernel rows with the columns ``names`` present and filled as :data:`KERNEL_DEFAULTS` says.

    A column absent from ``kernel`` is added with its default; a column present has its missing values
    replaced by the default (unless the default is None).

    Parameters
    ----------
    kernel : pandas.DataFrame
        Rows of ``p3_kernel.parquet`` of any version.
    config : dict
        The provenance's ``config`` (the campaign setting of the build the rows come from).
    names : tuple of str
        Columns to fill, keys of :data:`KERNEL_DEFAULTS`.
    missing : object
        The value of a config key the config lacks (None, or NaN where the caller computes with it).

    Returns
    -------
    pandas.DataFrame
        A copy with the columns filled.

    Raises
    ------
    KeyError
        For a name :data:`KERNEL_DEFAULTS` does not know.
    """
    out = kernel.copy()
    for name in names:
        default = KERNEL_DEFAULTS[name]
        if isinstance(default, tuple):
            default = config.get(default[1], missing)
        if name not in out.columns:
            out[name] = default
        elif default is not None:
            out[name] = out[name].fillna(default)
    return out


def split_repeats(kernel: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The plan's kernel samples and the repeats (``campaign`` ending in :data:`REPEAT_SUFFIX`), apart.

    Parameters
    ----------
    kernel : pandas.DataFrame
        Rows of ``p3_kernel.parquet`` (tables without ``campaign`` hold no repeat).

    Returns
    -------
    tuple of DataFrame
        ``(plan, repeats)``, each with a fresh index.
    """
    repeat = (kernel["campaign"].fillna("").str.endswith(REPEAT_SUFFIX) if "campaign" in kernel.columns
              else pd.Series(False, index=kernel.index))
    return kernel[~repeat].reset_index(drop=True), kernel[repeat].reset_index(drop=True)


def ns3_filled(ns3: pd.DataFrame, provenance: dict) -> pd.DataFrame:
    """ns-3 runs with ``rate_bps`` and ``duration_s`` in every row.

    ``rate_bps``: the table's, else the provenance's ``ns3.rate_bps`` (one number), else
    :data:`LEGACY_NS3_RATE_BPS`; ``duration_s`` (the simulated time of the run's setting): the table's, else the
    provenance config's ``ns3_duration_s``, else NaN (one unnamed setting).

    Parameters
    ----------
    ns3 : pandas.DataFrame
        Rows of ``p3_ns3.parquet`` of any version.
    provenance : dict
        ``p3_provenance.json`` (``{}``: the legacy rate and no duration).

    Returns
    -------
    pandas.DataFrame
        ``ns3`` with ``rate_bps`` [bit/s] and ``duration_s`` [s] filled.
    """
    prov = provenance.get("ns3", {}).get("rate_bps")
    fill = float(prov) if isinstance(prov, (int, float)) else LEGACY_NS3_RATE_BPS
    dur = float(provenance.get("config", {}).get("ns3_duration_s", math.nan))
    n = ns3.assign(rate_bps=ns3["rate_bps"].fillna(fill) if "rate_bps" in ns3.columns else fill)
    return n.assign(duration_s=n["duration_s"].fillna(dur) if "duration_s" in n.columns else dur)


def fluid_rate_bps(fluid: pd.DataFrame, provenance: dict) -> pd.Series:
    """The bottleneck rate of each fluid-model row.

    Its ``rate_bps``; for rows of tables written before that column, the model's capacity (total throughput
    over the utilisation, rounded to 1 bit/s), or without ``utilization`` (the fluid model then ran at the
    campaign's one rate) the provenance config's ``rate_bps``.

    Parameters
    ----------
    fluid : pandas.DataFrame
        Rows of ``p3_fluid.parquet`` of any version.
    provenance : dict
        ``p3_provenance.json``.

    Returns
    -------
    pandas.Series
        One rate per row. [bit/s]
    """
    if "utilization" in fluid:
        inferred = ((fluid["reno_bps"] + fluid["cubic_bps"]) / fluid["utilization"]).round()
    else:
        inferred = pd.Series(float(provenance.get("config", {}).get("rate_bps", math.nan)), index=fluid.index)
    return fluid["rate_bps"].fillna(inferred) if "rate_bps" in fluid else inferred
