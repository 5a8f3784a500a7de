"""BBR against loss-based flows (Ware et al., IMC 2019) on the kernel and in ns-3: pilot, grid, dataset.

``python -m tcpmodels.experiments.bbr pilot --records R`` runs the run-length pilot (1 BBR against
1 CUBIC flow, X = 4 and 16, 180 s each) on the kernel; ``kernel --records R [--reps K]`` the grid of
:data:`~tcpmodels.experiments.bbr.config.DEFAULT_GRID` (10 Mbit/s x 40 ms, Ware et al.'s Fig. 8 (a)
setting reduced to the budget); ``ns3 --records R`` the same grid with ns-3's ``TcpBbr``;
``dataset --kernel-records ... --ns3-records ... --pilot-records ... --out DIR`` writes
``bbr_runs.parquet`` (one row per run and engine, with the model's prediction), ``bbr_series.parquet``
(BBR's share in 5 s windows), ``bbr_probertt.parquet`` (ProbeRTT episodes) and ``bbr_provenance.json``.
Every command resumes: samples already in the records are skipped. The claims, stated before the
runs, are :mod:`tcpmodels.papers.bbr_coexistence.claims`.

The records ship as ``data/datasets/bbr_{kernel,ns3,pilot}_records`` (``python -m tcpmodels records ship
runs/bbr/kernel.jsonl data/datasets/bbr_kernel_records`` after a stage; ``python -m tcpmodels records cat
data/datasets/bbr_kernel_records > runs/bbr/kernel.jsonl`` to resume on a fresh machine), and the shipped
dataset is built from them::

    python -m tcpmodels.experiments.bbr dataset --out data/datasets \
        --kernel-records data/datasets/bbr_kernel_records --ns3-records data/datasets/bbr_ns3_records \
        --pilot-records data/datasets/bbr_pilot_records
"""

from tcpmodels.experiments.bbr.config import DEFAULT_CONFIG, DEFAULT_GRID, KEY, PILOT_CONFIG, BbrConfig, GridPoint

__all__ = ["DEFAULT_CONFIG", "DEFAULT_GRID", "KEY", "PILOT_CONFIG", "BbrConfig", "GridPoint"]
