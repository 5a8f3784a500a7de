"""Ware et al. (IMC 2019), BBR against loss-based flows: the claims (stated before the runs) and, from the
dataset of :mod:`tcpmodels.experiments.bbr`, the model-versus-kernel-versus-ns-3 tables and verdicts.

``load_dataset(data_dir) -> BbrDataset``; ``tables(dataset) -> dict[str, DataFrame]``;
``claims(dataset) -> DataFrame`` (the columns of :data:`tcpmodels.stats.CLAIM_COLUMNS`).
"""

from tcpmodels.papers.bbr_coexistence.claims import PAPER_MEDIAN_ERROR, SPECS, spec
from tcpmodels.papers.bbr_coexistence.data import BbrDataset, grid_runs, load_dataset
from tcpmodels.papers.bbr_coexistence.plots import plot_pilot, plot_probe_rtt, plot_share_vs_buffer
from tcpmodels.papers.bbr_coexistence.tables import model_curve, paper_vs_ours, points, side_by_side, tables
from tcpmodels.papers.bbr_coexistence.verdicts import claims

__all__ = ["PAPER_MEDIAN_ERROR", "SPECS", "spec", "claims", "BbrDataset", "grid_runs", "load_dataset", "tables",
           "points", "side_by_side", "paper_vs_ours", "model_curve", "plot_share_vs_buffer", "plot_pilot",
           "plot_probe_rtt"]
