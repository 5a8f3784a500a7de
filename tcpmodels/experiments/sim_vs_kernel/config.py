"""The scenarios both engines run: the setting, its named variants, a stored setting read back."""

from __future__ import annotations

from dataclasses import dataclass

from tcpmodels import congestion
from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.campaign_config import CampaignConfig

__all__ = ["SvkConfig", "DEFAULT_CONFIG", "SCENARIOS", "NS3_VARIANT", "KEY", "SCHEMA", "REPO", "config_from_record"]





REPO = REPO_ROOT
SCHEMA = 1
#: ns-3 congestion control standing for each kernel one (:mod:`tcpmodels.congestion`)
NS3_VARIANT = {name: congestion.by_kernel_name(name).ns3_type_id for name in ("reno", "cubic")}
KEY = ("campaign", "engine", "rep")


@dataclass(frozen=True, kw_only=True)
class SvkConfig(CampaignConfig):
    """The dumbbell both engines run, and the agreement criterion.

    Parameters
    ----------
    name : str
        Scenario name (a dataset may hold several; see :data:`SCENARIOS`).
    rate_bps : float
        Bottleneck rate. [bit/s]
    buffer_bytes : int
        Drop-tail buffer at the bottleneck. [bytes]
    rtts_ms : tuple of float
        Round-trip propagation delay of each sender's path. [ms]
    ccs : tuple of str
        Kernel congestion control of each sender (``reno`` or ``cubic``; ns-3 runs :data:`NS3_VARIANT`).
    duration_s : float
        Transfer time after the latest possible start; every flow ends at ``start_jitter_s + duration_s``. [s]
    warmup_s : float
        Discarded after the latest actual start. [s]
    start_jitter_s : float
        Each flow starts at a uniform random offset in ``[0, start_jitter_s]``. [s]
    reps : int
        Repetitions per engine.
    sample_interval_s : float
        TCP_INFO sampling interval on the kernel senders. [s]
    rwnd_bytes : int
        Receive buffer maximum (kernel ``tcp_rmem``, ns-3 ``RcvBufSize``); senders get four times it. [bytes]
    tolerance_share : float
        Largest accepted difference of a flow's mean share of the bottleneck rate between the engines. [-]
    tolerance_utilisation : float
        Largest accepted difference of the mean aggregate utilisation between the engines. [-]
    seed : int
        Start offsets.
    ns3_jitter_packets : float
        ns-3 only: every access link delays each packet by an extra uniform
        ``[0, ns3_jitter_packets x one 1500-byte packet time at rate_bps]``,
        order preserving (:mod:`tcpmodels.sim.jitter`). Without it ns-3's exact
        timing phase-locks the drop-tail bottleneck (measured: Reno x 3 at
        10/20/40 ms gave 11.3 / 32.0 / 5.0 Mbit/s against the kernel's
        25.0 / 12.2 / 10.6; a tenth of a packet time still locked, one to four
        agreed). 0: exact delays, the phase-locked simulator. [-]
    """

    name: str = "reno_cubic_reno"
    rate_bps: float = 50e6
    buffer_bytes: int = 125_000
    rtts_ms: tuple = (10.0, 20.0, 40.0)
    ccs: tuple = ("reno", "cubic", "reno")
    duration_s: float = 25.0
    warmup_s: float = 5.0
    start_jitter_s: float = 1.0
    reps: int = 4
    sample_interval_s: float = 0.1
    rwnd_bytes: int = 4 * 1024 * 1024
    tolerance_share: float = 0.10
    tolerance_utilisation: float = 0.05
    seed: int = 0
    ns3_jitter_packets: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rtts_ms", tuple(float(x) for x in self.rtts_ms))
        object.__setattr__(self, "ccs", tuple(self.ccs))
        if not 1e5 <= self.rate_bps <= 1e9:
            raise ValueError(f"rate_bps [bit/s] must be in [1e5, 1e9]; got {self.rate_bps}")
        if not (isinstance(self.buffer_bytes, int) and self.buffer_bytes >= 3000):
            raise ValueError(f"buffer_bytes [bytes] must be an integer >= 3000; got {self.buffer_bytes!r}")
        if not 1 <= len(self.rtts_ms) <= 8:
            raise ValueError(f"rtts_ms must hold 1 to 8 values [ms]; got {len(self.rtts_ms)}")
        for r in self.rtts_ms:
            if not 0.1 <= r <= 1000:
                raise ValueError(f"rtts_ms entries [ms] must be in [0.1, 1000]; got {r}")
        if len(self.ccs) != len(self.rtts_ms):
            raise ValueError(f"ccs needs one entry per sender ({len(self.rtts_ms)}); got {len(self.ccs)}")
        for c in self.ccs:
            if c not in NS3_VARIANT:
                raise ValueError(f"ccs entries must be one of {sorted(NS3_VARIANT)}; got {c!r}")
        if not self.duration_s > self.warmup_s + 1.0:
            raise ValueError(f"duration_s [s] must exceed warmup_s + 1 = {self.warmup_s + 1.0}; got {self.duration_s}")
        if not self.warmup_s >= 0:
            raise ValueError(f"warmup_s [s] must be >= 0; got {self.warmup_s}")
        if not 0 <= self.start_jitter_s <= 10:
            raise ValueError(f"start_jitter_s [s] must be in [0, 10]; got {self.start_jitter_s}")
        if not 0 <= self.ns3_jitter_packets <= 100:
            raise ValueError(f"ns3_jitter_packets [-] must be in [0, 100]; got {self.ns3_jitter_packets}")
        if not (isinstance(self.reps, int) and self.reps >= 1):
            raise ValueError(f"reps must be an integer >= 1; got {self.reps!r}")
        if not 0.01 <= self.sample_interval_s <= 1.0:
            raise ValueError(f"sample_interval_s [s] must be in [0.01, 1]; got {self.sample_interval_s}")
        for name in ("tolerance_share", "tolerance_utilisation"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ValueError(f"{name} [-] must be in (0, 1); got {v}")

    @property
    def end_s(self) -> float:
        """End of every flow, from the common time origin. [s]"""
        return self.start_jitter_s + self.duration_s

    def derived_fields(self) -> dict:
        """``rtts_ms`` and ``ccs`` as lists, the form records and provenance store (:func:`config_from_record`
        reads it back); :meth:`to_dict` writes them in the fields' places.

        Returns
        -------
        dict
            ``rtts_ms`` [ms] and ``ccs`` as lists.
        """
        return {"rtts_ms": list(self.rtts_ms), "ccs": list(self.ccs)}


DEFAULT_CONFIG = SvkConfig()
#: The scenarios of the dataset: the mixed one; all-Reno, which separates the engines' common ground
#: (links, queues, Reno, RTT unfairness) from their CUBIC implementations; and all-Reno with one RTT
#: nudged by half a packet time (run on ns-3 only: a drop-tail phase-effect probe).
SCENARIOS = {
    "reno_cubic_reno": DEFAULT_CONFIG,
    "reno_reno_reno": SvkConfig(name="reno_reno_reno", ccs=("reno", "reno", "reno"), reps=3, seed=1),
    # ns-3 only, exact delays (no jitter): the phase-locked simulator, and the same with the 20 ms sender's RTT
    # 0.12 ms longer (half a 1500-byte packet time at 50 Mbit/s), to show that phase, not window, picks the winner
    "reno_reno_reno_locked": SvkConfig(name="reno_reno_reno_locked", ccs=("reno", "reno", "reno"), reps=3, seed=1,
                                       ns3_jitter_packets=0.0),
    "reno_reno_reno_nudged": SvkConfig(name="reno_reno_reno_nudged", ccs=("reno", "reno", "reno"),
                                       rtts_ms=(10.0, 20.12, 40.0), reps=3, seed=1, ns3_jitter_packets=0.0),
}


def config_from_record(d: dict) -> SvkConfig:
    """The :class:`SvkConfig` stored in a record or a provenance (``to_dict`` form).

    Parameters
    ----------
    d : dict
        :meth:`SvkConfig.to_dict` output (lists become tuples again).

    Returns
    -------
    SvkConfig
        The configuration, equal to the one stored.

    Raises
    ------
    ValueError
        If a stored value fails the checks of :class:`SvkConfig`.
    """
    return SvkConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
