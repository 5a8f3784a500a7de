"""P3 at the paper's window sizes (issue 57, item 5): table, columns, schema version, the campaign's pairs and kinds.

:mod:`tcpmodels.experiments.p3.windows` writes ``p3_windows.parquet``: the P3 kernel table's columns
(:data:`tcpmodels.datasets.p3.KERNEL`, rows of :func:`tcpmodels.experiments.p3.kernel.kernel_frame`) and
``rtt_scale``, the factor every RTT was scaled by (1 at 1 Gbit/s, :data:`RTT_SCALE` at 400 Mbit/s);
:mod:`tcpmodels.papers.p3_cubic_fairness.windows` reads it and names each pair by its unscaled RTTs.
"""

from __future__ import annotations

from tcpmodels.datasets.p3 import KERNEL
from tcpmodels.datasets.schema import DatasetSchema, Table, columns

__all__ = ["SCHEMA", "TABLE", "PAIRS_MS", "KINDS", "RTT_SCALE"]

#: C3.1's pairs (Reno, CUBIC) [ms, unscaled], from the largest window down
PAIRS_MS = ((1.0, 64.0), (1.0, 16.0), (1.0, 4.0), (1.0, 1.0))
#: the kinds compared: kernel CUBIC and the proposal in the ``divide`` reading
KINDS = ("standard", "divide")
#: RTT (and buffer reference RTT) scale at 400 Mbit/s that gives the paper's windows: 1 Gbit/s / 400 Mbit/s
RTT_SCALE = 2.5

#: ``p3_windows.parquet``
TABLE = Table(name="", columns=tuple(c for c in KERNEL.columns if c.name != "source") + columns("""
    rtt_scale  float64  factor of every RTT
"""), optional=KERNEL.optional, compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="p3_windows", version=1, tables=(TABLE,),
                       command="python -m tcpmodels.experiments.p3.windows dataset --records runs/p3/windows.jsonl "
                               "--pilot data/datasets/p3_bottleneck_pilot_pinned_1g_1_64.json --out data")
