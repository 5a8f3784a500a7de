"""The setting of the BBR coexistence campaign: path, grid of (competitor, M, X, N), run length, plan."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcpmodels import congestion
from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets import REPO_ROOT
from tcpmodels.models.bbr import queue_packets_for_bdp, rate_pps

__all__ = ["w2_points", "prioritized", "REPO", "SCHEMA", "KEY", "GridPoint", "DEFAULT_GRID", "PILOT_GRID", "BbrConfig", "DEFAULT_CONFIG",
           "PILOT_CONFIG", "buffer_packets", "kernel_plan", "flows_of"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    queue_bdp : float
        X. [-]
""")

REPO = REPO_ROOT
#: version of the records' layout
SCHEMA = 1
#: the fields that identify a sample (:class:`tcpmodels.records.JsonlRecords`)
KEY = ("campaign", "rep", "competitor", "n_loss", "queue_bdp", "n_bbr")


@dataclass(frozen=True, kw_only=True)
class GridPoint:
    """One setting of the grid.

    Parameters
    ----------
    group : str
        Which question it serves: ``vs_cubic``, ``vs_reno`` (claim W1), ``many_cubic`` (W2), ``alone`` (W4).
    competitor : {"cubic", "reno", "none"}
        The loss-based congestion control (its registry name), or none.
    n_loss : int
        M, number of loss-based flows (0 with ``"none"``). [-]
    queue_bdp : float
        X, bottleneck buffer in BDPs. [-]
    n_bbr : int
        N, number of BBR flows. [-]
    """

    group: str
    competitor: str
    n_loss: int
    queue_bdp: float
    n_bbr: int

    def __post_init__(self) -> None:
        if self.competitor not in ("cubic", "reno", "none"):
            raise ValueError(f"competitor must be cubic, reno or none; got {self.competitor!r}")
        if (self.competitor == "none") != (self.n_loss == 0):
            raise ValueError(f"n_loss must be 0 exactly when competitor is none; got {self.competitor}, {self.n_loss}")
        if self.n_bbr < 1 or self.queue_bdp <= 0:
            raise ValueError(f"n_bbr must be >= 1 and queue_bdp > 0; got {self.n_bbr}, {self.queue_bdp}")


def _grid() -> tuple[GridPoint, ...]:
    pts = [GridPoint(group="vs_cubic", competitor="cubic", n_loss=1, queue_bdp=x, n_bbr=n)
           for x in (1, 2, 4, 8, 16) for n in (1, 2, 4)]
    pts += [GridPoint(group="vs_reno", competitor="reno", n_loss=1, queue_bdp=x, n_bbr=1) for x in (2, 8, 16)]
    pts += [GridPoint(group="many_cubic", competitor="cubic", n_loss=m, queue_bdp=x, n_bbr=1)
            for x in (4, 16) for m in (2, 4)]
    pts += [GridPoint(group="alone", competitor="none", n_loss=0, queue_bdp=8, n_bbr=n) for n in (2, 4)]
    return tuple(pts)


#: the grid (Ware et al.'s Fig. 8 (a) setting reduced to the 2-hour budget: X up to 16, N up to 4, the
#: Reno row at N = 1; M = 2 and 4 CUBIC flows at X = 4 and 16; N = 2 and 4 BBR flows alone at X = 8)
DEFAULT_GRID = _grid()
#: the run-length pilot: 1 BBR flow against 1 CUBIC flow, a shallow and a deep buffer
PILOT_GRID = (GridPoint(group="pilot", competitor="cubic", n_loss=1, queue_bdp=4, n_bbr=1),
              GridPoint(group="pilot", competitor="cubic", n_loss=1, queue_bdp=16, n_bbr=1))


@dataclass(frozen=True, kw_only=True)
class BbrConfig:
    """The campaign's setting.

    Parameters
    ----------
    campaign : str
        Label in the records (``bbr_kernel``, ``bbr_pilot``).
    rate_bps : float
        Bottleneck rate c. [bit/s]
    base_rtt_s : float
        Base RTT l (the sender's access link delay element). [s]
    packet_bytes : int
        Packet size on the wire for c in packets/s and the buffer in packets. [bytes]
    warmup_rtts : float
        Time left out after the flows start, in round trips at a full buffer, ``l (1 + X)``: the pilot
        (2026-12-06, 1 BBR against 1 CUBIC, 180 s) saw BBR's share settle after about 25 s at X = 4
        and 80 s at X = 16, both about 120 such round trips. [-]
    measure_s : float
        The measurement window after the warm-up: 60 s holds six ProbeRTT periods. [s]
    start_jitter_s : float
        Each flow starts at a uniform offset in [0, start_jitter_s). [s]
    sample_interval_s : float
        TCP_INFO sampling period of every flow. [s]
    reps : int
        Repetitions of the grid.
    seed : int
        Seed of the order and the start offsets.
    grid : tuple of GridPoint
        The settings.
    """

    campaign: str = "bbr_kernel"
    rate_bps: float = 10e6
    base_rtt_s: float = 0.040
    packet_bytes: int = 1500
    warmup_rtts: float = 120.0
    measure_s: float = 60.0
    start_jitter_s: float = 0.5
    sample_interval_s: float = 0.02
    reps: int = 2
    seed: int = 0
    grid: tuple[GridPoint, ...] = field(default=DEFAULT_GRID)

    @property
    def rate_pps(self) -> float:
        """c, the bottleneck rate in packets per second. [packets/s]"""
        return float(rate_pps(self.rate_bps, self.packet_bytes))

    @property
    def bdp_packets(self) -> float:
        """c l, the bandwidth-delay product. [packets]"""
        return self.rate_pps * self.base_rtt_s

    @_PARAMETERS.fill
    def warmup_s(self, queue_bdp: float) -> float:
        """The warm-up of a run with a buffer of X BDPs: ``warmup_rtts`` round trips of ``l (1 + X)``. [s]

        Parameters
        ----------
        {queue_bdp}

        Returns
        -------
        float
            The warm-up, rounded to 0.1 s. [s]
        """
        return round(self.warmup_rtts * self.base_rtt_s * (1.0 + float(queue_bdp)), 1)

    @_PARAMETERS.fill
    def duration_s(self, queue_bdp: float) -> float:
        """How long every flow of a run with a buffer of X BDPs sends: warm-up, window, start jitter. [s]

        Parameters
        ----------
        {queue_bdp}

        Returns
        -------
        float
            [s]
        """
        return self.warmup_s(queue_bdp) + self.measure_s + self.start_jitter_s


DEFAULT_CONFIG = BbrConfig()
#: the pilot: 180 s per run, one repetition, to see where the share settles
PILOT_CONFIG = BbrConfig(campaign="bbr_pilot", warmup_rtts=0.0, measure_s=180.0, reps=1, grid=PILOT_GRID)


@_PARAMETERS.fill
def buffer_packets(config: BbrConfig, queue_bdp: float) -> int:
    """The bottleneck buffer of X BDPs, rounded to whole packets (at least 2). [packets]

    Parameters
    ----------
    config : BbrConfig
        Rate, base RTT and packet size.
    {queue_bdp}

    Returns
    -------
    int
        The drop-tail limit in packets.
    """
    return max(2, int(round(float(queue_packets_for_bdp(queue_bdp, config.rate_pps, config.base_rtt_s)))))


def flows_of(point: dict) -> list[tuple[str, str]]:
    """The flows of a sample: ``(role, kernel congestion control)``, BBR flows first.

    Parameters
    ----------
    point : dict
        A plan entry (``competitor``, ``n_loss``, ``n_bbr``).

    Returns
    -------
    list of tuple
        ``("bbr", "bbr")`` N times, then ``("loss", <competitor's kernel name>)`` M times; the names
        come from :mod:`tcpmodels.congestion`.
    """
    bbr = congestion.get("bbr").kernel_name
    out = [("bbr", bbr)] * int(point["n_bbr"])
    if point["competitor"] != "none":
        out += [("loss", congestion.get(point["competitor"]).kernel_name)] * int(point["n_loss"])
    return out


def kernel_plan(config: BbrConfig) -> list[dict]:
    """Every kernel sample in run order: repetition 0 of the whole grid, then 1, ...

    Within a repetition the buffers (X) come in a shuffled order and the points of one X together
    (the testbed is rebuilt only when the buffer changes), each point with its flows' start offsets.

    Parameters
    ----------
    config : BbrConfig
        The grid, ``reps``, ``seed`` and ``start_jitter_s``.

    Returns
    -------
    list of dict
        One per sample: the :data:`KEY` fields, ``group``, ``order``, ``buffer_packets``,
        ``warmup_s`` and ``measure_s`` [s], and ``start_s`` (one offset per flow, BBR flows first). [s]
    """
    rng = np.random.default_rng(config.seed)
    plan = []
    xs = sorted({p.queue_bdp for p in config.grid})
    for rep in range(config.reps):
        for xi in rng.permutation(len(xs)):
            pts = [p for p in config.grid if p.queue_bdp == xs[int(xi)]]
            for pi in rng.permutation(len(pts)):
                p = pts[int(pi)]
                n_flows = p.n_bbr + p.n_loss
                starts = rng.uniform(0.0, config.start_jitter_s, n_flows) if config.start_jitter_s > 0 \
                    else np.zeros(n_flows)
                plan.append({"campaign": config.campaign, "rep": rep, "group": p.group, "competitor": p.competitor,
                             "n_loss": p.n_loss, "queue_bdp": float(p.queue_bdp), "n_bbr": p.n_bbr,
                             "order": len(plan), "buffer_packets": buffer_packets(config, p.queue_bdp),
                             "warmup_s": config.warmup_s(p.queue_bdp), "measure_s": config.measure_s,
                             "start_s": [round(float(s), 4) for s in starts]})
    return plan


def w2_points(sample: dict) -> bool:
    """Whether a plan entry serves claim W2: 1 BBR flow against M CUBIC flows at a buffer where M varies.

    Parameters
    ----------
    sample : dict
        A plan entry.

    Returns
    -------
    bool
        True for the ``many_cubic`` points and the ``vs_cubic`` points with N = 1 at their buffers.
    """
    xs = {p.queue_bdp for p in DEFAULT_GRID if p.group == "many_cubic"}
    return sample["group"] == "many_cubic" or (sample["group"] == "vs_cubic" and sample["n_bbr"] == 1
                                                and sample["queue_bdp"] in xs)


def prioritized(plan: list[dict]) -> list[dict]:
    """The plan reordered for a campaign that may stop early: repetition 0 of every point, then the
    further repetitions of the points whose claims are judged per run (W2's and BBR alone, W4), then the rest.

    Keys, offsets and seeds are those of the plan (only the order changes), so a campaign begun in one
    order resumes in the other.

    Parameters
    ----------
    plan : list of dict
        :func:`kernel_plan`'s entries.

    Returns
    -------
    list of dict
        The same entries, reordered (stable within each tier).
    """
    def tier(s: dict) -> int:
        if s["rep"] == 0:
            return 0
        return 1 if w2_points(s) or s["group"] == "alone" else 2

    return sorted(plan, key=lambda s: (tier(s), s["rep"], s["order"]))
