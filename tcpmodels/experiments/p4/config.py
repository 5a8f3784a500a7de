"""The scaled setting of the P4 campaign: a grid of receive-buffer caps and RTTs on one link."""

from __future__ import annotations

from dataclasses import dataclass

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.campaign_config import CampaignConfig

__all__ = ["P4Config", "DEFAULT_CONFIG", "SCHEMA", "REPO", "KIB"]

REPO = REPO_ROOT
KIB = 1024
SCHEMA = 1


@dataclass(frozen=True, kw_only=True)
class P4Config(CampaignConfig):
    """Scaled setting of the P4 campaign (window-limited rate on the real kernel).

    Parameters
    ----------
    rcvbuf_caps_bytes : tuple of int
        Receive-buffer caps: the maximum of the receiver's ``net.ipv4.tcp_rmem``
        (its namespace's), one grid axis. The window Linux advertises is a part
        of it (``tcp_win_from_space``); the campaign measures that part. [bytes]
    rtts_ms : tuple of float
        Round-trip propagation delays of the link (delay element), the other
        axis; 296 ms is the press release's path. [ms]
    max_cap_rate_bps : float
        A (cap, RTT) cell is run only if ``cap * 8 / RTT`` (an upper bound of the
        window-limited rate: the advertised window is below the cap) is at most
        this: what one shared machine carries through the user-space delay element. [bit/s]
    link_rate_bps : float
        Rate limiter (tbf) of the link, each direction: well above every cell's
        window-limited rate so the window, not the link, limits. [bit/s]
    reps : int
        Independent repetitions of every cell (a fresh connection each).
    warmup_rtts, warmup_min_s : float
        Time discarded after the connection starts: ``max(warmup_min_s, warmup_rtts * RTT)``,
        and at least until the advertised window has reached its plateau (see
        :func:`tcpmodels.experiments.p4.kernel.summarize_window_limited`). [RTTs], [s]
    measure_rtts, measure_min_s : float
        Measured span after the warm-up: ``max(measure_min_s, measure_rtts * RTT)``. [RTTs], [s]
    sample_interval_s : float
        TCP_INFO sampling interval on the sender. [s]
    sndbuf_max_bytes : int
        Sender's ``tcp_wmem`` maximum: far above every window so the send buffer never limits. [bytes]
    seed : int
        Shuffles the order of cells within each repetition.
    keep_flow_order : bool
        RPS steering on the testbed (:class:`tcpmodels.testbed.Testbed` ``keep_flow_order``), so that it does not
        reorder the flow's packets. False: the testbed the 75 shipped samples ran on (until 2026-11-28); True: the
        steered rerun (``p4 kernel --keep-flow-order``), its samples labelled ``p4_kernel_steered``.
    """

    rcvbuf_caps_bytes: tuple = (64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB, 1024 * KIB, 2048 * KIB, 4096 * KIB)
    rtts_ms: tuple = (18.5, 37.0, 74.0, 148.0, 296.0)
    max_cap_rate_bps: float = 120e6
    link_rate_bps: float = 400e6
    reps: int = 3
    warmup_rtts: float = 15.0
    warmup_min_s: float = 3.0
    measure_rtts: float = 20.0
    measure_min_s: float = 4.0
    sample_interval_s: float = 0.1
    sndbuf_max_bytes: int = 32 * 1024 * KIB
    seed: int = 4
    keep_flow_order: bool = False

    def __post_init__(self):
        if not self.rcvbuf_caps_bytes or any(not 4096 < c <= 256 * 1024 * KIB for c in self.rcvbuf_caps_bytes):
            raise ValueError(f"rcvbuf_caps_bytes [bytes] must be values in (4096, 2^28]; got {self.rcvbuf_caps_bytes}")
        if not self.rtts_ms or any(not 1.0 <= r <= 1000.0 for r in self.rtts_ms):
            raise ValueError(f"rtts_ms [ms] must be values in [1, 1000]; got {self.rtts_ms}")
        if not 1e6 <= self.link_rate_bps <= 10e9:
            raise ValueError(f"link_rate_bps [bit/s] must be in [1e6, 1e10]; got {self.link_rate_bps}")
        if not 0 < self.max_cap_rate_bps < self.link_rate_bps:
            raise ValueError(f"max_cap_rate_bps [bit/s] must be in (0, link_rate_bps={self.link_rate_bps}); "
                             f"got {self.max_cap_rate_bps}")
        if not 1 <= self.reps <= 50:
            raise ValueError(f"reps [-] must be in [1, 50]; got {self.reps}")
        for name in ("warmup_rtts", "warmup_min_s", "measure_rtts", "measure_min_s", "sample_interval_s"):
            if not 0 < getattr(self, name) <= 600:
                raise ValueError(f"{name} must be in (0, 600]; got {getattr(self, name)}")
        if not self.cells:
            raise ValueError("no (cap, RTT) cell has cap * 8 / RTT <= max_cap_rate_bps: raise it or add caps/RTTs")

    @property
    def cells(self) -> list[tuple[int, float]]:
        """(receive-buffer cap [bytes], RTT [ms]) pairs run: those with ``cap * 8 / RTT <= max_cap_rate_bps``."""
        return [(int(c), float(r)) for r in self.rtts_ms for c in self.rcvbuf_caps_bytes
                if c * 8 / (r * 1e-3) <= self.max_cap_rate_bps]

    def spans_s(self, rtt_ms: float) -> tuple[float, float]:
        """Warm-up discarded and span measured at a round-trip time: each its floor or its round trips, the longer.

        Parameters
        ----------
        rtt_ms : float
            Round-trip time of the cell. [ms]

        Returns
        -------
        tuple of float
            ``(max(warmup_min_s, warmup_rtts * RTT), max(measure_min_s, measure_rtts * RTT))``. [s]
        """
        return (max(self.warmup_min_s, self.warmup_rtts * rtt_ms * 1e-3),
                max(self.measure_min_s, self.measure_rtts * rtt_ms * 1e-3))

    def derived_fields(self) -> dict:
        """The cells run, which :meth:`to_dict` adds to the fields (a JSON-able setting).

        Returns
        -------
        dict
            ``cells`` as ``[cap [bytes], RTT [ms]]`` pairs.
        """
        return {"cells": [list(c) for c in self.cells]}

    def scaling(self) -> dict:
        """How this grid relates to the press release's path (100 Gbit/s, 296 ms, 1 GiB window).

        Returns
        -------
        dict
            The release's and our link rate [bit/s], RTT [s] and largest window [bytes], the ratio of
            the windows, the largest cell's cap / RTT [bit/s], and a note.
        """
        return {"paper_link_rate_bps": 100e9, "paper_rtt_s": 0.296, "paper_window_bytes": 65535 * 2**14,
                "link_rate_bps": self.link_rate_bps, "largest_cap_bytes": max(self.rcvbuf_caps_bytes),
                "window_scale": max(self.rcvbuf_caps_bytes) / (65535 * 2**14),
                "largest_cap_rate_bps": max(c * 8 / (r * 1e-3) for c, r in self.cells),
                "note": "same RTTs as the release (up to 296 ms), windows 256 to 2^14 times smaller, so rates "
                        "are kbit/s to ~100 Mbit/s instead of 29 Gbit/s: the relation rate = window / RTT is "
                        "what is tested, not the release's absolute numbers"}


DEFAULT_CONFIG = P4Config()
