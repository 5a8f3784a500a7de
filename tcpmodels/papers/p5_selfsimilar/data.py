"""P5's printed figures, its dataset and loader, and row selection by case, alpha and backbone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcpmodels.datasets.p5 import SCHEMA as P5_SCHEMA
from tcpmodels.datasets.p5_testbed import SCHEMA as TESTBED_SCHEMA

__all__ = ["CITATION", "BELLCORE_FULL_TRACE_H", "PAPER_FIGURES", "FIGURE_CASES", "P5Dataset", "load_dataset",
           "select_rows"]

CITATION = ("A. Ono, T. Nakashima, 'Self-similar トラフィックの重なりによるボトルネックパフォーマンスの評価', "
            "Kyushu Tokai University")

#: H that Leland et al. report for the full Bellcore traces ("around 0.8"; 0.7-0.9 over their traces)
BELLCORE_FULL_TRACE_H = 0.8

#: Figures 2-11: (figure, quantity, alpha, gateway rate [Mbit/s], what the paper says)
PAPER_FIGURES = (
    ("Fig. 2", "loss_s", 1.05, 5.0, "loss at S only with 32 clients, slightly, at the start; none with fewer"),
    ("Fig. 3", "loss_s", 1.65, 5.0, "loss at S from more than 16 clients; with 32 over 10 % for the first ~5 s"),
    ("Fig. 4", "loss_s", 1.65, 10.0, "loss at S higher than at 5 Mbit/s (self-clocking pushes more data), "
                                     "then falls; even with 8 clients; grows less than linearly with clients"),
    ("Fig. 5", "loss_g1", 1.65, 5.0, "no loss at G1 with 16 clients; with 32 it persists after 10 s; "
                                     "24 and 32 similar between 2 and 6 s"),
    ("Fig. 6", "thr_g1", 1.05, 5.0, "all flows end within 10 s; 24 clients finish before 16 "
                                    "(one or two huge files keep the 16-client run going)"),
    ("Fig. 7", "sessions", 1.05, 5.0, "more clients, more completed sessions"),
    ("Fig. 8", "thr_g1", 1.65, 5.0, "only 24 and 32 clients fill the link and are not finished at 20 s; "
                                    "16 clients oscillate at 14-18 s (a few huge files alone on the link)"),
    ("Fig. 9", "sessions", 1.65, 5.0, "24 clients complete more sessions in 20 s than 32 (32 still running); "
                                      "sessions last longer than with alpha 1.05"),
    ("Fig. 10", "thr_g1", 1.65, 10.0, "throughput falls to 0 within 20 s: every session done; oscillation "
                                      "after the link was full"),
    ("Fig. 11", "sessions", 1.65, 10.0, "32 clients now complete the most sessions; nearly all done by ~14 s"),
)

#: which run case each set of tables comes from
FIGURE_CASES = ("main", "alt_server_queue", "alt_arrival")


@dataclass(frozen=True, kw_only=True)
class P5Dataset:
    """The shipped P5 tables (see :func:`tcpmodels.experiments.p5.build_dataset` for their columns)."""

    runs: pd.DataFrame
    bins: pd.DataFrame
    flows: pd.DataFrame
    hurst: pd.DataFrame
    counts: pd.DataFrame
    provenance: dict = field(default_factory=dict)
    #: kernel testbed runs (:mod:`tcpmodels.experiments.p5.kernel`): H per alpha and estimator; empty if not shipped
    testbed_hurst: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: their packet-count series (alpha, t_s, packets)
    testbed_counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    testbed_provenance: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The tables and provenances by field name.

        Returns
        -------
        dict of str to object
            ``runs, bins, flows, hurst, counts, provenance, testbed_hurst, testbed_counts,
            testbed_provenance`` (the frames themselves, not copies).
        """
        return {"runs": self.runs, "bins": self.bins, "flows": self.flows, "hurst": self.hurst,
                "counts": self.counts, "provenance": self.provenance, "testbed_hurst": self.testbed_hurst,
                "testbed_counts": self.testbed_counts, "testbed_provenance": self.testbed_provenance}


def load_dataset(data_dir: str | Path = "data") -> P5Dataset:
    """Read ``p5_*.parquet`` and ``p5_provenance.json`` from ``data_dir`` or ``data_dir/datasets``.

    The kernel testbed part (``p5_testbed_hurst.parquet``, ``p5_testbed_counts.parquet``) is read
    when both files are present.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory, or its ``datasets`` directory itself.

    Returns
    -------
    P5Dataset
        The five ns-3 tables, their provenance, and the testbed part (empty frames without it).

    Raises
    ------
    FileNotFoundError
        If there is no ``p5_runs.parquet`` (build it with ``python -m tcpmodels.experiments.p5 dataset``).
    """
    parts = P5_SCHEMA.read(data_dir, ("runs", "bins", "flows", "hurst", "counts"))
    prov = parts.pop("provenance")
    try:  # the kernel testbed part is optional
        tb = TESTBED_SCHEMA.read(data_dir, ("hurst", "counts"))
    except FileNotFoundError:
        tb = None
    if tb is not None:
        parts.update(testbed_hurst=tb["hurst"], testbed_counts=tb["counts"], testbed_provenance=tb["provenance"])
    return P5Dataset(**parts, provenance=prov)


def select_rows(df: pd.DataFrame, *, case: str, alpha: float | None = None,
                backbone_mbps: float | None = None) -> pd.DataFrame:
    """The rows of one run case, optionally of one alpha and one backbone rate.

    Parameters
    ----------
    df : pandas.DataFrame
        A P5 table with ``case``, ``alpha`` and ``backbone_mbps`` columns (e.g. :attr:`P5Dataset.runs`).
    case : str
        Run case, e.g. one of :data:`FIGURE_CASES` or ``"long"``.
    alpha : float, optional
        Pareto shape of the file sizes (matched to floating-point tolerance). [-]
    backbone_mbps : float, optional
        Backbone link rate (matched to floating-point tolerance). [Mbit/s]

    Returns
    -------
    pandas.DataFrame
        The matching rows, index kept.
    """
    sel = df["case"] == case
    if alpha is not None:
        sel &= np.isclose(df["alpha"], alpha)
    if backbone_mbps is not None:
        sel &= np.isclose(df["backbone_mbps"], backbone_mbps)
    return df[sel]

