"""The pieces of a scenario: links, TCP socket defaults, applications and flow sizes, senders."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tcpmodels.sim.config.base import TCP_VARIANTS, coerce, positive

__all__ = ["Link", "TcpOptions", "BulkApp", "SizeDistribution", "PoissonFlows", "Sender", "app_from_dict"]


@dataclass(frozen=True, kw_only=True)
class Link:
    """A point-to-point link, the same in both directions.

    Parameters
    ----------
    rate_bps : float
        Line rate. [bit/s]
    delay_s : float
        One-way propagation delay. [s]
    queue_packets : int, optional
        Drop-tail queue limit of each end's device. [packets]
    queue_bytes : int, optional
        Drop-tail queue limit in bytes instead. [bytes] Give exactly one of
        the two; with neither the limit is 100 packets.
    jitter_s : float
        Upper bound of a uniform extra delay per packet, order preserving
        (:mod:`tcpmodels.sim.jitter`); breaks the phase locking of
        deterministic drop-tail runs. 0: a plain ``PointToPointChannel``. [s]

    Notes
    -----
    The queue is the device's ``DropTailQueue`` alone: the traffic-control
    layer's default ``pfifo_fast`` (1000 packets) that ns-3 would put in front
    of it is removed, so the configured limit is the real one.
    """

    rate_bps: float
    delay_s: float
    queue_packets: int | None = None
    queue_bytes: int | None = None
    # added after configs were hashed: left out of the stored form at its default, so older hashes still hold
    jitter_s: float = dataclasses.field(default=0.0, metadata={"omit_when_default": True})

    def __post_init__(self) -> None:
        positive("rate_bps", self.rate_bps, "bit/s")
        positive("delay_s", self.delay_s, "s", allow_zero=True)
        positive("jitter_s", self.jitter_s, "s", allow_zero=True)
        if self.queue_packets is not None and self.queue_bytes is not None:
            raise ValueError("give queue_packets or queue_bytes, not both")
        if self.queue_packets is not None and (not isinstance(self.queue_packets, int) or self.queue_packets < 1):
            raise ValueError(f"queue_packets [packets] must be an integer >= 1; got {self.queue_packets!r}")
        if self.queue_bytes is not None and (not isinstance(self.queue_bytes, int) or self.queue_bytes < 1600):
            raise ValueError(f"queue_bytes [bytes] must be an integer >= 1600 (one full packet); got {self.queue_bytes!r}")

    @property
    def queue_size_string(self) -> str:
        """The ns-3 ``QueueSize`` string: ``"100p"`` or ``"100000B"``."""
        if self.queue_bytes is not None:
            return f"{self.queue_bytes}B"
        return f"{self.queue_packets if self.queue_packets is not None else 100}p"


@dataclass(frozen=True, kw_only=True)
class TcpOptions:
    """TCP socket defaults for every node of a scenario.

    Parameters
    ----------
    mss_bytes : int
        Segment size (ns-3 ``TcpSocket::SegmentSize``). [bytes]
    sndbuf_bytes, rcvbuf_bytes : int
        Socket send and receive buffers. [bytes] The receive buffer caps the
        advertised window, so size it above the path's BDP plus queue.
    min_rto_s : float
        Lower bound of the retransmission timeout (Linux: 0.2). [s]
    conn_timeout_s : float
        SYN retransmission timeout (ns-3 default 3, Linux 1). [s]
    delayed_ack_count : int
        Segments per delayed ACK (``b`` in Mathis/PFTK). [segments] Default 1
        (ns-3's is 2): with 2, ns-3 flows that take an RTO while the queue is
        full get stuck cycling CA_LOSS -> CA_OPEN at cwnd = 1 segment (see
        "Known artifact: RTO lock-out" in :mod:`tcpmodels.sim`).
    sack : bool
        Selective acknowledgements on.
    initial_cwnd_segments : int
        Initial congestion window. [segments]
    recovery : str
        ns-3 recovery algorithm: ``"TcpPrrRecovery"`` (default; Linux uses PRR too)
        or ``"TcpClassicRecovery"``. See "Known artifact: RTO lock-out" in
        :mod:`tcpmodels.sim`.
    cubic_hystart : bool
        HyStart in ns-3's ``TcpCubic`` (``TcpCubicX`` has none; turn it off to compare them).
    """

    mss_bytes: int = 1448
    sndbuf_bytes: int = 4 * 1024 * 1024
    rcvbuf_bytes: int = 4 * 1024 * 1024
    min_rto_s: float = 0.2
    conn_timeout_s: float = 1.0
    delayed_ack_count: int = 1
    sack: bool = True
    initial_cwnd_segments: int = 10
    recovery: str = "TcpPrrRecovery"
    cubic_hystart: bool = True

    def __post_init__(self) -> None:
        for name in ("mss_bytes", "sndbuf_bytes", "rcvbuf_bytes", "delayed_ack_count", "initial_cwnd_segments"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
        if self.mss_bytes > 1460:
            raise ValueError(f"mss_bytes [bytes] must be in [1, 1460] for a 1500-byte MTU; got {self.mss_bytes}")
        positive("min_rto_s", self.min_rto_s, "s")
        positive("conn_timeout_s", self.conn_timeout_s, "s")
        if self.recovery not in ("TcpClassicRecovery", "TcpPrrRecovery"):
            raise ValueError(f"recovery must be 'TcpClassicRecovery' or 'TcpPrrRecovery'; got {self.recovery!r}")


@dataclass(frozen=True, kw_only=True)
class BulkApp:
    """A bulk transfer: one connection sending as fast as TCP allows.

    Parameters
    ----------
    start_s : float
        Connection start. [s]
    size_bytes : int, optional
        Bytes to send; ``None`` sends until ``stop_s`` or the end of the run. [bytes]
    stop_s : float, optional
        Stop sending at this time; ``None`` runs to the end. [s]
    """

    kind: ClassVar[str] = "bulk"
    start_s: float = 0.0
    size_bytes: int | None = None
    stop_s: float | None = None

    def __post_init__(self) -> None:
        positive("start_s", self.start_s, "s", allow_zero=True)
        if self.size_bytes is not None and (not isinstance(self.size_bytes, int) or self.size_bytes < 1):
            raise ValueError(f"size_bytes [bytes] must be an integer >= 1 or None; got {self.size_bytes!r}")
        if self.stop_s is not None and self.stop_s <= self.start_s:
            raise ValueError(f"stop_s [s] must be > start_s = {self.start_s}; got {self.stop_s}")


@dataclass(frozen=True, kw_only=True)
class SizeDistribution:
    """Flow sizes: ``fixed`` (``mean_bytes``), ``uniform`` (``low_bytes``..``high_bytes``)
    or ``pareto`` (``mean_bytes`` and shape ``alpha`` > 1; scale = mean (alpha-1)/alpha).

    Sizes are rounded up to whole bytes; a Pareto draw can be capped with ``max_bytes``.
    """

    kind: str = "fixed"
    mean_bytes: float | None = None
    low_bytes: float | None = None
    high_bytes: float | None = None
    alpha: float | None = None
    max_bytes: float | None = None

    def __post_init__(self) -> None:
        if self.kind == "fixed":
            positive("mean_bytes", self.mean_bytes, "bytes")
        elif self.kind == "uniform":
            positive("low_bytes", self.low_bytes, "bytes")
            positive("high_bytes", self.high_bytes, "bytes")
            if self.high_bytes < self.low_bytes:
                raise ValueError(f"high_bytes [bytes] must be >= low_bytes = {self.low_bytes}; got {self.high_bytes}")
        elif self.kind == "pareto":
            positive("mean_bytes", self.mean_bytes, "bytes")
            if self.alpha is None or not (self.alpha > 1):
                raise ValueError(f"alpha [-] must be in (1, inf) for a finite mean; got {self.alpha!r}")
        else:
            raise ValueError(f"kind must be 'fixed', 'uniform' or 'pareto'; got {self.kind!r}")
        if self.max_bytes is not None:
            positive("max_bytes", self.max_bytes, "bytes")

    def sample_bytes(self, rng: Any, n: int) -> list[int]:
        """Draw ``n`` sizes with the numpy ``Generator`` ``rng``. [bytes]

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the draws (unused for ``kind="fixed"``).
        n : int
            Number of sizes.

        Returns
        -------
        list of int
            ``n`` sizes, each rounded up to a whole byte, at least 1 and at most
            ``max_bytes`` when set. [bytes]
        """
        import numpy as np

        if self.kind == "fixed":
            x = np.full(n, float(self.mean_bytes))
        elif self.kind == "uniform":
            x = rng.uniform(self.low_bytes, self.high_bytes, n)
        else:
            scale = self.mean_bytes * (self.alpha - 1.0) / self.alpha
            x = scale * (1.0 + rng.pareto(self.alpha, n))  # classical Pareto, x >= scale
        if self.max_bytes is not None:
            x = np.minimum(x, self.max_bytes)
        return [max(1, int(math.ceil(v))) for v in x]


@dataclass(frozen=True, kw_only=True)
class PoissonFlows:
    """Flows arriving as a Poisson process, each a new connection of a drawn size.

    With ``max_flows`` this is also the ns-2 style "FTP" workload of P5 (a
    fixed number of files per client, Poisson connection arrivals).

    Parameters
    ----------
    mean_interarrival_s : float
        Mean time between flow starts. [s]
    size : SizeDistribution
        Flow sizes.
    start_s, stop_s : float
        No flow starts before ``start_s`` or after ``stop_s`` (``None``: end of run). [s]
    max_flows : int, optional
        At most this many flows.
    """

    kind: ClassVar[str] = "poisson"
    mean_interarrival_s: float
    size: SizeDistribution
    start_s: float = 0.0
    stop_s: float | None = None
    max_flows: int | None = None

    def __post_init__(self) -> None:
        positive("mean_interarrival_s", self.mean_interarrival_s, "s")
        positive("start_s", self.start_s, "s", allow_zero=True)
        coerce(self, size=SizeDistribution)
        if self.max_flows is not None and (not isinstance(self.max_flows, int) or self.max_flows < 1):
            raise ValueError(f"max_flows must be an integer >= 1 or None; got {self.max_flows!r}")


_APPS = {"bulk": BulkApp, "poisson": PoissonFlows}


def app_from_dict(d: dict) -> BulkApp | PoissonFlows:
    """The application a stored dict describes, chosen by its ``kind`` tag.

    Parameters
    ----------
    d : dict
        ``{"kind": "bulk" | "poisson", **fields}`` as :func:`~tcpmodels.sim.config.config_to_dict` writes it.

    Returns
    -------
    BulkApp or PoissonFlows
        The application (its ``__post_init__`` validates the fields).

    Raises
    ------
    ValueError
        If ``kind`` is missing or unknown.
    """
    d = dict(d)
    kind = d.pop("kind", None)
    if kind not in _APPS:
        raise ValueError(f"app kind must be one of {sorted(_APPS)}; got {kind!r}")
    return _APPS[kind](**d)


@dataclass(frozen=True, kw_only=True)
class Sender:
    """One sending host: its access link, congestion control and applications.

    Parameters
    ----------
    access : Link
        Link from this host to the left router.
    variant : str
        Congestion control of every connection this host opens
        (e.g. ``"TcpLinuxReno"``, ``"TcpCubic"``; see :data:`TCP_VARIANTS`).
    apps : tuple of BulkApp or PoissonFlows
        What the host sends, all to the receiver.
    cc_params : dict
        Attributes for a run-time compiled congestion control
        (:mod:`tcpmodels.sim.cc`), e.g. ``{"x_mode": "divide", "x_table": ...}``.
    """

    access: Link
    variant: str = "TcpLinuxReno"
    apps: tuple = (BulkApp(),)
    cc_params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        coerce(self, access=Link, apps=[app_from_dict])
        apps = self.apps
        v = self.variant.removeprefix("ns3::")
        if v not in TCP_VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(TCP_VARIANTS)}; got {self.variant!r}")
        object.__setattr__(self, "variant", v)
        if not apps:
            raise ValueError("a Sender needs at least one app")
        if self.cc_params:
            if v != "TcpCubicX":
                raise ValueError(f"cc_params apply only to variant 'TcpCubicX'; got variant {v!r}")
            from tcpmodels.sim.cc import check_cubic_x_params

            check_cubic_x_params(self.cc_params)
