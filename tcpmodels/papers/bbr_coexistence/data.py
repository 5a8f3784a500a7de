"""The shipped BBR dataset (``data/datasets/bbr_*``), read once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tcpmodels.datasets.bbr import SCHEMA

__all__ = ["BbrDataset", "load_dataset", "grid_runs"]


@dataclass(frozen=True, kw_only=True)
class BbrDataset:
    """The tables of :mod:`tcpmodels.experiments.bbr.dataset` and their provenance.

    Parameters
    ----------
    runs, flows, series, probertt : pandas.DataFrame
        ``bbr_runs``, ``bbr_flows``, ``bbr_series``, ``bbr_probertt``.
    provenance : dict
        ``bbr_provenance.json``.
    """

    runs: pd.DataFrame
    flows: pd.DataFrame
    series: pd.DataFrame
    probertt: pd.DataFrame
    provenance: dict


def load_dataset(data_dir: str | Path) -> BbrDataset:
    """Read the BBR dataset from ``<data_dir>/datasets`` (or ``data_dir`` itself).

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory.

    Returns
    -------
    BbrDataset

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that writes it.
    """
    f = SCHEMA.read(data_dir, ("runs", "flows", "series", "probertt"))
    return BbrDataset(runs=f["runs"], flows=f["flows"], series=f["series"], probertt=f["probertt"],
                      provenance=f["provenance"])


def grid_runs(dataset: BbrDataset, engine: str | None = None) -> pd.DataFrame:
    """The runs of the grid (not the pilot), optionally of one engine.

    Parameters
    ----------
    dataset : BbrDataset
    engine : {"kernel", "ns3"}, optional
        Keep this engine only.

    Returns
    -------
    pandas.DataFrame
        Rows of ``runs`` whose campaign is ``bbr_kernel`` or ``bbr_ns3``.
    """
    r = dataset.runs[dataset.runs["campaign"].isin(["bbr_kernel", "bbr_ns3"])]
    return r if engine is None else r[r["engine"] == engine]
