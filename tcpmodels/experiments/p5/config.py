"""The setting of the P5 campaign: the caterpillar, the workload and the grid of cases."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.campaign_config import CampaignConfig

__all__ = ["P5Config", "DEFAULT_CONFIG", "CASES", "REPO", "BELLCORE_PATH", "SERVER_ADDR"]





REPO = REPO_ROOT
CASES = ("main", "long", "alt_server_queue", "alt_arrival")
#: The Bellcore excerpt, beside the clone (``../shared``) as the shared docs are.
BELLCORE_PATH = REPO.parent / "shared" / "data" / "bellcore" / "BC-pAug89-small.TL"
SERVER_ADDR = "10.0.0.1"  # first /30 of the caterpillar: S is its .1


@dataclass(frozen=True, kw_only=True)
class P5Config(CampaignConfig):
    """Parameters of the P5 campaign (the paper's values unless the docstring says otherwise).

    Parameters
    ----------
    alphas : tuple of float
        Pareto shapes of the file sizes. [-]
    n_clients : tuple of int
        Active clients.
    backbone_rates_bps : tuple of float
        Gateway-gateway (and bottleneck) rates. [bit/s]
    seeds : tuple of int
        Seeds of the main grid.
    mean_size_bytes : float
        Mean file size. [bytes]
    flows_per_client : int
        Files per client.
    mean_interarrival_s : float
        Mean time between a client's download starts (our choice). [s]
    alt_interarrival_s : float
        The alternative arrival spacing (case ``alt_arrival``). [s]
    alt_server_queue_packets : int
        S -> G1 queue of case ``alt_server_queue``. [packets]
    edge_rate_bps, edge_delay_s, gateway_delay_s : float
        Access links [bit/s], [s]; gateway-link delay (our choice) [s].
    queue_packets : int
        Every queue. [packets]
    duration_s : float
        Simulated time. [s]
    bin_s : float
        Sampling step of queues and sinks. [s]
    hurst_bin_s : float
        Bin of the packet-count series for the Hurst estimators. [s]
    long_duration_s, long_interarrival_s, long_backbone_bps : float
        Case ``long``: simulated time [s], per-client mean interarrival [s], gateway rate [bit/s].
    long_n_clients : int
        Case ``long``: active clients.
    long_bin_s : float
        Case ``long``: sampling step of queues and sinks (the Hurst series comes from the pcap). [s]
    long_seeds : tuple of int
        Case ``long``: seeds.
    alt_alphas : tuple of float
        Shapes of case ``alt_arrival`` (seed 0 only). [-]
    altq_alphas : tuple of float
        Shapes of case ``alt_server_queue``: every alpha, so that C5.2 (c)
        (G1 loses only after S has lost) is judged at each shape. [-]
    altq_seeds : tuple of int
        Seeds of case ``alt_server_queue``: the first runs every client count and rate, each
        further seed only the 32-client runs (every rate and shape; see
        :func:`~tcpmodels.experiments.p5.plan.plan`). The default ``(0,)`` is the plan the
        first campaigns ran.
    """

    alphas: tuple = (1.05, 1.35, 1.65, 1.95)
    n_clients: tuple = (8, 16, 24, 32)
    backbone_rates_bps: tuple = (5e6, 10e6)
    seeds: tuple = (0, 1, 2)
    mean_size_bytes: float = 10_000.0
    flows_per_client: int = 50
    mean_interarrival_s: float = 0.2
    alt_interarrival_s: float = 0.4
    alt_server_queue_packets: int = 50
    edge_rate_bps: float = 10e6
    edge_delay_s: float = 0.015
    gateway_delay_s: float = 0.015
    queue_packets: int = 3000
    duration_s: float = 20.0
    bin_s: float = 0.1
    hurst_bin_s: float = 0.01
    long_duration_s: float = 300.0
    long_interarrival_s: float = 1.0
    long_backbone_bps: float = 10e6
    long_n_clients: int = 32
    long_bin_s: float = 1.0
    long_seeds: tuple = (0, 1, 2)
    alt_alphas: tuple = (1.05, 1.65)
    altq_alphas: tuple = (1.05, 1.35, 1.65, 1.95)
    altq_seeds: tuple = (0,)

    def __post_init__(self) -> None:
        for a in self.alphas:
            if not (isinstance(a, (int, float)) and 1.0 < a < 2.0):
                raise ValueError(f"alphas [-] must lie in (1, 2); got {a!r}")
        for n in (*self.n_clients, self.long_n_clients):
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"n_clients must be integers >= 1; got {n!r}")
        for name in ("mean_size_bytes", "mean_interarrival_s", "alt_interarrival_s", "edge_rate_bps",
                     "duration_s", "bin_s", "hurst_bin_s", "long_duration_s", "long_interarrival_s",
                     "long_backbone_bps"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0 and np.isfinite(v)):
                unit = "bytes" if "bytes" in name else "bit/s" if "bps" in name else "s"
                raise ValueError(f"{name} [{unit}] must be in (0, inf); got {v!r}")
        q = self.altq_seeds
        if not q or len(set(q)) != len(q) or not all(isinstance(x, int) and x >= 0 for x in q):
            raise ValueError(f"altq_seeds must be distinct integers >= 0, at least one; got {q!r}")
        for r in self.backbone_rates_bps:
            if not (isinstance(r, (int, float)) and r > 0):
                raise ValueError(f"backbone_rates_bps [bit/s] must be in (0, inf); got {r!r}")
        if self.hurst_bin_s > self.duration_s / 256:
            raise ValueError(f"hurst_bin_s [s] must be <= duration_s / 256 = {self.duration_s / 256:g}; "
                             f"got {self.hurst_bin_s!r}")

DEFAULT_CONFIG = P5Config()
