"""P3's dataset and its loader, the citation, and the paper's stated directions.

Which runs a table uses is :mod:`~tcpmodels.papers.p3_cubic_fairness.runs`; the statistics per cell,
:mod:`~tcpmodels.papers.p3_cubic_fairness.cells`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p3 import SCHEMA, split_repeats

CITATION = ("T. Kozu, S. Yamaguchi, 'CUBIC TCP の輻輳ウィンドウ回復時間の制御による TCP 公平性の改善' "
            "(Improvement of TCP Fairness with Controlling Congestion Windows Size Recovery Time), FIT2013, L-033.")
#: Parameters of the P3 modules' docstrings, written once: each module fills its docstrings from these.
PARAMETERS = SharedEntries("""
    ds : P3Dataset
        The campaign's data.
    exponent : float, optional
        x(RTT) exponent of the proposal's results; default the campaign's
        (:func:`~tcpmodels.papers.p3_cubic_fairness.runs.campaign_exponent`). [-]
""")
#: readings of eq. (4) (see :func:`tcpmodels.models.cubic.kozu_k_s`)
READINGS = ("multiply", "divide")
#: the direction the paper states (Sec. 4) for the proposal against standard CUBIC, per Reno RTT and CUBIC RTT [ms]
PAPER_DIRECTION = {
    (1.0, 1.0): "fairer", (1.0, 4.0): "fairer", (1.0, 16.0): "fairer", (1.0, 64.0): "fairer",
    (4.0, 1.0): "fairer", (4.0, 4.0): "fairer", (4.0, 16.0): "fairer", (4.0, 64.0): "less fair",
    (16.0, 1.0): "less fair", (16.0, 4.0): "less fair", (16.0, 16.0): "less fair", (16.0, 64.0): "less fair",
}


@dataclass(frozen=True, kw_only=True)
class P3Dataset:
    """The P3 campaign's data.

    Attributes
    ----------
    kernel : pandas.DataFrame
        One row per kernel sample (:func:`tcpmodels.experiments.p3.kernel_frame`): ``kind`` (standard:
        kernel ``cubic``; multiply / divide: ``tm_cubic_x`` with that reading), ``rate_bps``,
        ``measure_s``, ``source``, ``reno_rtt_ms, cubic_rtt_ms, rep, reno_bps, cubic_bps, jain,
        jain_window_sd, n_windows, cubic_wmax_segments``, ...
    ns3 : pandas.DataFrame
        One row per ns-3 run: ``kind`` (standard / multiply / divide), ``x_exponent``, ``seed``, the same
        throughput columns.
    fluid : pandas.DataFrame
        Fluid model per pair, ``reading`` (none / multiply / divide), ``x_exponent``, ``loss_sharing``.
    provenance : dict
        ``p3_provenance.json``.
    kernel_testbed : {"reordering", "steered", "pinned"} or None
        The kernel testbed the tables and verdicts use (:func:`kernel_testbed`); None (default): the rule
        there. :func:`with_testbed` sets it.
    kernel_repeats : pandas.DataFrame
        Kernel samples run once more because they lost packets outside the bottleneck queue (``campaign``
        ending in :data:`tcpmodels.datasets.p3.REPEAT_SUFFIX`; ``repeats_started_utc`` names the sample repeated), the same
        columns as ``kernel``. Kept out of ``kernel``: the tables and verdicts rest on the plan's samples, and
        :func:`~.robustness.with_cpu_loss_repeated` puts the repeats in their place. Empty by default.
    """

    kernel: pd.DataFrame
    ns3: pd.DataFrame
    fluid: pd.DataFrame
    provenance: dict = field(default_factory=dict)
    kernel_testbed: str | None = None
    kernel_repeats: pd.DataFrame = field(default_factory=pd.DataFrame)


def load_dataset(data_dir: str | Path = "data") -> P3Dataset:
    """Read ``datasets/p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and the provenance.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory (or its ``datasets`` directory itself).

    Returns
    -------
    P3Dataset
        The three tables and the provenance (``{}`` without ``p3_provenance.json``); the kernel table's
        repeats (:data:`tcpmodels.datasets.p3.REPEAT_SUFFIX`) go to ``kernel_repeats``.

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that writes it.
    """
    parts = SCHEMA.read(data_dir, ("kernel", "ns3", "fluid"))
    parts["kernel"], repeats = split_repeats(parts["kernel"])
    return P3Dataset(**parts, kernel_repeats=repeats)


