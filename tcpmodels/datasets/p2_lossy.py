"""P2 in a setting with the paper's throughput spread (issue 57, item 4): tables, schema version, the loss rule.

:mod:`tcpmodels.experiments.p2.lossy` writes ``p2_lossy_samples.parquet``: the samples of P2's campaign
(every probe, the MPTCP and the TCP data transfer of each RTT pair, the columns of
:data:`tcpmodels.datasets.p2.SAMPLES`) measured with random loss on both paths, at the loss rate the spread
pilot chose (:mod:`tcpmodels.datasets.p2_spread_pilot`, its provenance's ``choice``); the provenance holds the
loss rate, the config and the plan. :mod:`tcpmodels.papers.p2_mptcp_prediction.lossy` reads it and judges P2's
claims there, beside the shipped setting.
"""

from __future__ import annotations

from tcpmodels.datasets.p2 import SAMPLES
from tcpmodels.datasets.schema import DatasetSchema

__all__ = ["SCHEMA", "SAMPLES", "CAMPAIGN", "PLANNED_SAMPLES"]

#: the ``campaign`` field of the records (and the dataset's prefix)
CAMPAIGN = "p2_lossy"
#: samples the campaign plans: P2's 256 RTT pairs, the paper's 2 repetitions (``experiments.p2.lossy.lossy_plan``)
PLANNED_SAMPLES = 512

#: the dataset: P2's samples table under its own prefix
SCHEMA = DatasetSchema(prefix=CAMPAIGN, version=1, tables=(SAMPLES,),
                       command="python -m tcpmodels.experiments.p2.lossy dataset --records runs/p2/lossy.jsonl --out data")
