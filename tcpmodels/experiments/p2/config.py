"""The scaled setting of the P2 campaign and the fields its records hold."""

from __future__ import annotations

from dataclasses import dataclass

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.campaign_config import CampaignConfig

__all__ = ["P2Config", "DEFAULT_CONFIG", "SAMPLE_FIELDS", "TRANSFER_FIELDS", "PAPER_PROBE_LABELS",
           "PAPER_PATH_PROBE_TOTALS", "FIG4_RTT_PAIRS_MS", "SCHEMA", "REPO", "KB", "MB", "SUBFLOW_CCS", "SAMPLE_KEY",
           "CONDITION_LIMITS"]


KB = 1024
MB = 1024 * 1024
REPO = REPO_ROOT

#: probe sizes of Tables 2 and 4 as printed, in order (all single MPTCP probes)
PAPER_PROBE_LABELS = ("64KB", "128KB", "256KB", "512KB", "2MB", "8MB", "32MB", "128MB")
#: per-path probe size of Table 3 (per path), keyed by the printed *total* over both paths
PAPER_PATH_PROBE_TOTALS = ("128KB", "256KB", "512KB")
#: RTT pairs (path 1, path 2) of Fig. 4 [ms]
FIG4_RTT_PAIRS_MS = ((150, 150), (150, 120), (120, 150))

#: congestion controls a campaign may give every socket (MPTCP subflows and TCP alike): ``cubic`` (the kernel's,
#: uncoupled per subflow: the shipped 256 samples), ``tm_lia`` / ``tm_olia`` (coupled, BPF,
#: :mod:`tcpmodels.testbed.kernel_cc`)
SUBFLOW_CCS = ("cubic", "tm_lia", "tm_olia")
#: fields that identify a sample in the records (a rerun skips keys already on file)
SAMPLE_KEY = ("campaign", "cc", "data_size_bytes", "path_rate_bps", "rep", "rtt1_ms", "rtt2_ms")
#: fields of every sample record (JSONL line of ``run``)
SAMPLE_FIELDS = ("campaign", "schema", "cc", "data_size_bytes", "path_rate_bps", "rep", "rtt1_ms", "rtt2_ms",
                 "order", "rtt_measured_ms", "load_avg", "lock_wait_s", "wall_s", "started_utc", "run_id",
                 "config_hash", "config", "transfers")
#: fields of every transfer inside a record (``subflow_cc``: the congestion control of each TCP socket to
#: the server port seen by ``ss`` in the client's namespace during the MPTCP data transfer, else None)
TRANSFER_FIELDS = ("name", "kind", "label", "size_bytes", "path", "mptcp", "rate_bps", "completion_s", "connect_s",
                   "bytes", "tx_bytes_p0", "tx_bytes_p1", "out_segs", "retrans_segs", "cc_effective", "subflow_cc",
                   "error")
#: the regime issue 17 asks of every sample: data / larger path's BDP >= 10, MPTCP data throughput /
#: the path rate > 1, share of the 64 KB MPTCP probe's bytes on subflow 2 < 0.05 [-]
CONDITION_LIMITS = {"data_over_bdp_min": 10.0, "mptcp_over_path_rate_min": 1.0, "probe_share2_max": 0.05}

SCHEMA = 2


@dataclass(frozen=True, kw_only=True)
class P2Config(CampaignConfig):
    """Scaled setting of the P2 campaign.

    Parameters
    ----------
    rate_bps : float
        Rate limit of each path, both directions (paper: 1000BASE-T). [bit/s]
    buffer_bytes : int
        Drop-tail buffer at each rate limiter. [bytes]
    data_size_bytes : int
        Data transfer size (paper: 256 MB). [bytes]
    mptcp_probe_sizes_bytes : tuple of int
        Single MPTCP probe sizes standing for :data:`PAPER_PROBE_LABELS`, in order. [bytes]
    path_probe_sizes_bytes : tuple of int
        Per-path TCP probe sizes (per path) for the totals of Table 3. [bytes]
    rtts_ms : tuple of float
        Grid of path RTTs, applied to each path (paper: 120 ... 180 step 4). [ms]
    reps : int
        Repetitions of every RTT pair (paper: 2).
    cc : str
        Congestion control of every socket, one of :data:`SUBFLOW_CCS` (MPTCP: of every subflow;
        ``tm_lia``/``tm_olia`` couple the subflows of a connection).
    sock_buf_max_bytes : int
        ``tcp_rmem``/``tcp_wmem`` maximum in both namespaces (paper: 200 MB). [bytes]
    seed : int
        Order of the samples (shuffled per repetition).
    """

    rate_bps: float = 20e6
    buffer_bytes: int = 375_000
    data_size_bytes: int = 4 * MB
    mptcp_probe_sizes_bytes: tuple[int, ...] = (64 * KB, 128 * KB, 256 * KB, 512 * KB, 768 * KB, 1 * MB,
                                                 3 * MB // 2, 2 * MB)
    path_probe_sizes_bytes: tuple[int, ...] = (64 * KB, 128 * KB, 256 * KB)
    rtts_ms: tuple[float, ...] = tuple(float(x) for x in range(120, 181, 4))
    reps: int = 2
    cc: str = "cubic"
    sock_buf_max_bytes: int = 200 * 1000 * 1000
    seed: int = 2
    fig4_sizes_bytes: tuple[int, ...] = (64 * KB, 128 * KB, 256 * KB, 512 * KB, 1 * MB, 2 * MB, 4 * MB)
    fig4_reps: int = 3

    def __post_init__(self):
        if len(self.mptcp_probe_sizes_bytes) != len(PAPER_PROBE_LABELS):
            raise ValueError(f"mptcp_probe_sizes_bytes must hold {len(PAPER_PROBE_LABELS)} sizes [bytes] "
                             f"(for {PAPER_PROBE_LABELS}); got {len(self.mptcp_probe_sizes_bytes)}")
        if len(self.path_probe_sizes_bytes) != len(PAPER_PATH_PROBE_TOTALS):
            raise ValueError(f"path_probe_sizes_bytes must hold {len(PAPER_PATH_PROBE_TOTALS)} sizes [bytes]; "
                             f"got {len(self.path_probe_sizes_bytes)}")
        for name in ("mptcp_probe_sizes_bytes", "path_probe_sizes_bytes", "fig4_sizes_bytes"):
            sizes = getattr(self, name)
            if any(s < 1 for s in sizes) or list(sizes) != sorted(sizes):
                raise ValueError(f"{name} [bytes] must be positive and increasing; got {sizes}")
        if not 1e5 <= self.rate_bps <= 1e10:
            raise ValueError(f"rate_bps [bit/s] must be in [1e5, 1e10]; got {self.rate_bps}")
        if not 1 <= self.data_size_bytes <= 2**34:
            raise ValueError(f"data_size_bytes [bytes] must be in [1, 2**34]; got {self.data_size_bytes}")
        if not self.rtts_ms or any(not 0 <= r <= 2000 for r in self.rtts_ms):
            raise ValueError(f"rtts_ms [ms] must be a non-empty list of values in [0, 2000]; got {self.rtts_ms}")
        if self.cc not in SUBFLOW_CCS:
            raise ValueError(f"cc must be one of {SUBFLOW_CCS}; got {self.cc!r}")
        if not 1 <= self.reps <= 10:
            raise ValueError(f"reps must be in [1, 10]; got {self.reps}")

    def scaling(self) -> dict:
        """How this setting relates to the paper's (Table 1): the numbers the report states.

        Returns
        -------
        dict
            Paper and scaled rate [bit/s] and data size [bytes], their ratio, the per-path
            BDP at 150 ms [bytes], data size over the two-path BDP (scaled and paper) [-], and
            the probe sizes [bytes] standing for the paper's labels.
        """
        bdp = self.rate_bps * 0.150 / 8
        return {
            "paper_rate_bps": 1e9, "rate_bps": self.rate_bps,
            "paper_data_size_bytes": 256 * MB, "data_size_bytes": self.data_size_bytes,
            "data_scale": self.data_size_bytes / (256 * MB),
            "bdp_per_path_at_150ms_bytes": bdp,
            "data_over_two_path_bdp": self.data_size_bytes / (2 * bdp),
            "paper_data_over_two_path_bdp": 256 * MB / (2 * 1e9 * 0.150 / 8),
            "mptcp_probe_sizes": dict(zip(PAPER_PROBE_LABELS, self.mptcp_probe_sizes_bytes)),
            "path_probe_sizes_per_path": dict(zip(PAPER_PATH_PROBE_TOTALS, self.path_probe_sizes_bytes)),
        }


DEFAULT_CONFIG = P2Config()
