"""Ware et al. (IMC 2019), BBR against loss-based flows: the claims (stated before the runs) and, from the
dataset of :mod:`tcpmodels.experiments.bbr`, the model-versus-kernel-versus-ns-3 tables and verdicts."""

from tcpmodels.papers.bbr_coexistence.claims import PAPER_MEDIAN_ERROR, SPECS, spec

__all__ = ["PAPER_MEDIAN_ERROR", "SPECS", "spec"]
