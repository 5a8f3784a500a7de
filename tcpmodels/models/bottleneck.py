r"""One Reno and one CUBIC flow sharing a drop-tail bottleneck: a deterministic fluid model.

Used as the explanatory third column of paper P3 (RTT fairness of CUBIC
against Reno): :func:`reno_cubic_bottleneck` returns a :class:`BottleneckShare`.
The per-flow window rules come from :mod:`tcpmodels.models.window_dynamics`.

Units: windows in segments, times in seconds, rates in bit/s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from tcpmodels._arrays import check_flag, check_scalar
from tcpmodels.models.cubic import BETA_CUBIC, C_CUBIC, PowerLawX, kozu_k_factor
from tcpmodels.models.fairness import jain_index
from tcpmodels.models.window_dynamics import MAX_MSS_BYTES, MAX_RTT_S, CubicFlow, FluidFlow, RenoFlow

__all__ = ["BottleneckShare", "reno_cubic_bottleneck", "MAX_CAPACITY_BPS", "MAX_BUFFER_BYTES"]

#: Fastest bottleneck the model accepts: a petabit per second, far above any link (the fastest
#: Ethernet is 1.6 Tbit/s); beyond about 1e300 the windows overflow floats. [bit/s]
MAX_CAPACITY_BPS = 1e15
#: Largest bottleneck buffer the model accepts: a petabyte. [bytes]
MAX_BUFFER_BYTES = 1e15

# --------------------------------------------------------------------------------------
# Reno and CUBIC sharing a drop-tail bottleneck
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class BottleneckShare:
    """Result of :func:`reno_cubic_bottleneck`: average throughputs after warm-up.

    Attributes
    ----------
    reno_throughput_bps, cubic_throughput_bps : float
        Average delivered rate of each flow over [warmup_s, duration_s]. [bit/s]
    total_throughput_bps : float
        Their sum. [bit/s]
    utilization : float
        total / capacity. [-]
    cubic_share : float
        cubic / total. [-]
    jain_index : float
        Jain's fairness index of the two throughputs, 0.5 (one flow takes all) .. 1. [-]
    reno_loss_events, cubic_loss_events : int
        Window reductions of each flow after warm-up. [-]
    mean_queue_delay_s : float
        Time-average queueing delay after warm-up. [s]
    params : dict
        The inputs, for provenance.
    trace : pandas.DataFrame
        Sampled time series: ``t_s``, ``reno_cwnd_segments``, ``cubic_cwnd_segments``,
        ``queue_segments``, ``reno_rate_bps``, ``cubic_rate_bps``, ``loss`` (a loss event
        since the previous sample).
    """

    reno_throughput_bps: float
    cubic_throughput_bps: float
    total_throughput_bps: float
    utilization: float
    cubic_share: float
    jain_index: float
    reno_loss_events: int
    cubic_loss_events: int
    mean_queue_delay_s: float
    params: dict = field(default_factory=dict)
    trace: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The scalar results and ``params`` as a plain dict (the trace is left out).

        Returns
        -------
        dict
            One key per scalar field (units as in the field names), plus ``params`` (a copy).
        """
        d = {k: v for k, v in asdict(self).items() if k != "trace"}
        d["params"] = dict(self.params)
        return d


def reno_cubic_bottleneck(
    *,
    capacity_bps: float,
    buffer_bytes: float,
    reno_rtt_s: float,
    cubic_rtt_s: float,
    mss_bytes: float = 1500.0,
    duration_s: float = 30.0,
    warmup_s: float = 5.0,
    max_window_bytes: float | None = None,
    c: float = C_CUBIC,
    beta_cubic: float = BETA_CUBIC,
    x_reading: str = "none",
    x_of_rtt: Callable[[Any], Any] | None = None,
    fast_convergence: bool = True,
    loss_sharing: str = "synchronized",
    dt_s: float | None = None,
    trace_interval_s: float = 0.01,
) -> BottleneckShare:
    r"""One Reno and one CUBIC flow sharing a drop-tail bottleneck: a deterministic discrete-time fluid model.

    Parameters
    ----------
    capacity_bps : float
        Bottleneck rate, in [1, :data:`MAX_CAPACITY_BPS`]. [bit/s]
    buffer_bytes : float
        Drop-tail buffer at the bottleneck, in [0, :data:`MAX_BUFFER_BYTES`]. [bytes]
    reno_rtt_s, cubic_rtt_s : float
        Base (propagation) round-trip time of each flow, without queueing. [s]
    mss_bytes : float
        Packet size used to convert windows to bytes. [bytes]
    duration_s : float
        Simulated time. [s]
    warmup_s : float
        Start of the averaging window (slow start and first losses excluded). [s]
    max_window_bytes : float, optional
        Receive-window cap on both flows (P3 used 10 MB). [bytes]
    c, beta_cubic : float
        CUBIC constants. [segments/s^3], [-]
    x_reading : {"none", "multiply", "divide"}
        Kozu–Yamaguchi modification of the CUBIC flow's K (see :func:`kozu_k_s`),
        x evaluated at the CUBIC flow's base RTT.
    x_of_rtt : callable, optional
        x(RTT); default :class:`PowerLawX` ``()``.
    fast_convergence : bool
        CUBIC fast convergence (RFC 9438 Sec. 4.7).
    loss_sharing : {"synchronized", "proportional"}
        Which flows see a loss when the buffer overflows (see Notes).
    dt_s : float, optional
        Time step; default a tenth of the smaller base RTT. [s]
    trace_interval_s : float
        Sampling interval of the returned trace. [s]

    Returns
    -------
    BottleneckShare

    Notes
    -----
    State: each flow's window ``w_i`` [segments] and the queue ``q`` [segments]. Per step dt:

    * RTT_i = base RTT_i + q / C (C in segments/s); sending rate ``x_i = w_i / RTT_i``;
    * ``q += (sum x_i - C) dt``, clipped to [0, B];
    * throughput: while the queue is non-empty the link serves C, split in proportion
      to the arrival rates (fluid FIFO); otherwise each flow gets x_i;
    * windows follow the per-ACK rules integrated over dt/RTT_i ACK rounds
      (Reno +1 per RTT; CUBIC per RFC 9438 with the Reno-friendly floor,
      see :func:`cubic_window_trajectory`); both start in slow start at 10 segments;
    * when the queue is full and arrivals exceed C the excess is dropped.
      ``loss_sharing="synchronized"``: **every** flow takes a loss at each overflow
      (synchronised drop-tail losses, the assumption of Lakshman & Madhow).
      ``"proportional"``: the dropped fluid is charged to the flows in proportion to
      their arrival rates, and a flow reduces its window once a whole packet of its
      own has been dropped (equal per-packet loss probability, Mathis-style: a small
      flow often escapes an overflow). Either way at most one window reduction per flow
      per RTT_i (one fast recovery per window of data); no timeouts, no HyStart, no
      delayed ACKs.

    Under synchronised losses two Reno flows share in the ratio (RTT_2/RTT_1)^2,
    the classic RTT unfairness, and a flow with a small share is hit as often as a
    large one, which penalises it hard; proportional losses are milder. The model is an
    explanation aid, not a replacement for the testbed: it has no packet-level
    burstiness, so who loses at an overflow is idealised — compare both settings.

    References
    ----------
    .. [1] RFC 9438, Sec. 4; RFC 5681, Sec. 3.
    .. [2] T. V. Lakshman, U. Madhow, "The performance of TCP/IP for networks with high
       bandwidth-delay products and random loss", IEEE/ACM ToN 5(3), 1997.
    .. [3] V. Misra, W.-B. Gong, D. Towsley, "Fluid-based analysis of a network of AQM
       routers supporting TCP flows", SIGCOMM 2000 (the fluid queue).
    """
    cap_bps = check_scalar("capacity_bps", capacity_bps, "bit/s", low=1.0, high=MAX_CAPACITY_BPS)
    buf = check_scalar("buffer_bytes", buffer_bytes, "bytes", low=0.0, high=MAX_BUFFER_BYTES)
    r_reno = check_scalar("reno_rtt_s", reno_rtt_s, "s", low=0.0, low_open=True, high=MAX_RTT_S)
    r_cubic = check_scalar("cubic_rtt_s", cubic_rtt_s, "s", low=0.0, low_open=True, high=MAX_RTT_S)
    mss = check_scalar("mss_bytes", mss_bytes, "bytes", low=0.0, low_open=True, high=MAX_MSS_BYTES)
    dur = check_scalar("duration_s", duration_s, "s", low=0.0, low_open=True)
    warm = check_scalar("warmup_s", warmup_s, "s", low=0.0, high=dur, high_open=True)
    c_ = check_scalar("c", c, "segments/s^3", low=0.0, low_open=True, high=math.inf, high_open=True)
    beta = check_scalar("beta_cubic", beta_cubic, "-", low=0.0, high=1.0, low_open=True, high_open=True)
    fast_convergence = check_flag("fast_convergence", fast_convergence)
    tr_int = check_scalar("trace_interval_s", trace_interval_s, "s", low=0.0, low_open=True, high=dur)
    dt = min(r_reno, r_cubic) / 10.0 if dt_s is None else check_scalar(
        "dt_s", dt_s, "s", low=0.0, low_open=True, high=min(r_reno, r_cubic))  # the fluid rules step within an RTT
    if dur / dt > 5_000_000:
        raise ValueError(f"duration_s / dt_s must be at most 5e6 steps; got {dur / dt:.3g} (raise dt_s or shorten duration_s)")
    max_w = math.inf if max_window_bytes is None else check_scalar(
        "max_window_bytes", max_window_bytes, "bytes", low=2 * mss, high=math.inf, high_open=True) / mss
    k_factor = kozu_k_factor(r_cubic, x_reading, x_of_rtt)
    if loss_sharing not in ("synchronized", "proportional"):
        raise ValueError(f"loss_sharing must be 'synchronized' or 'proportional'; got {loss_sharing!r}")
    proportional = loss_sharing == "proportional"

    cap = cap_bps / (8.0 * mss)  # segments/s
    b_seg = buf / mss
    flows: list[FluidFlow] = [
        RenoFlow(10.0, math.inf, max_w),
        CubicFlow(10.0, math.inf, max_w, c=c_, beta=beta, k_factor=k_factor, fast_convergence=fast_convergence),
    ]
    base = (r_reno, r_cubic)
    q = 0.0
    n = int(math.floor(dur / dt + 1e-9))
    i_warm = int(math.ceil(warm / dt - 1e-9))
    sample_every = max(1, int(round(tr_int / dt)))
    delivered = [0.0, 0.0]
    losses_at_warm = [0, 0]
    q_integral = 0.0
    trace: list[tuple[float, float, float, float, float, float, bool]] = []
    lost_since_sample = False
    dropped = [0.0, 0.0]  # packets of each flow dropped since its last window reduction
    for i in range(n):
        t = i * dt
        if i == i_warm:
            losses_at_warm = [f.losses for f in flows]
        qdelay = q / cap
        rtt0 = base[0] + qdelay
        rtt1 = base[1] + qdelay
        x0 = flows[0].cwnd / rtt0
        x1 = flows[1].cwnd / rtt1
        arr = x0 + x1
        q_new = q + (arr - cap) * dt
        if q > 0.0 or arr > cap:
            share = cap / arr if arr > 0 else 0.0
            d0, d1 = x0 * share, x1 * share
            if q_new < 0.0:  # queue drains within the step: served rate is below C for part of it
                served = (q + arr * dt) / dt
                d0, d1 = x0 * served / arr, x1 * served / arr
        else:
            d0, d1 = x0, x1
        if i >= i_warm:
            delivered[0] += d0 * dt
            delivered[1] += d1 * dt
            q_integral += qdelay * dt
        overflow = q_new > b_seg and arr > cap
        q = min(max(q_new, 0.0), b_seg)
        flows[0].advance(t, dt, rtt0)
        flows[1].advance(t, dt, rtt1)
        if overflow:
            t_next = t + dt
            excess = q_new - b_seg
            for j, (f, rtt, x) in enumerate(((flows[0], rtt0, x0), (flows[1], rtt1, x1))):
                if t_next - f.last_loss_t < rtt:
                    continue  # still recovering from the previous reduction: same window of data
                if proportional:
                    dropped[j] += excess * x / arr
                    if dropped[j] < 1.0:
                        continue
                dropped[j] = 0.0
                f.on_loss(t_next)
                lost_since_sample = True
        if i % sample_every == 0:
            trace.append((t, flows[0].cwnd, flows[1].cwnd, q, x0 * 8 * mss, x1 * 8 * mss, lost_since_sample))
            lost_since_sample = False

    span = (n - i_warm) * dt
    reno_bps = delivered[0] / span * 8.0 * mss
    cubic_bps = delivered[1] / span * 8.0 * mss
    total = reno_bps + cubic_bps
    jain = jain_index(reno_bps, cubic_bps)
    params = dict(
        capacity_bps=cap_bps,
        buffer_bytes=buf,
        reno_rtt_s=r_reno,
        cubic_rtt_s=r_cubic,
        mss_bytes=mss,
        duration_s=dur,
        warmup_s=warm,
        max_window_bytes=None if max_window_bytes is None else float(max_window_bytes),
        c=c_,
        beta_cubic=beta,
        x_reading=x_reading,
        x_of_rtt=repr(x_of_rtt if x_of_rtt is not None else PowerLawX()) if x_reading != "none" else None,
        fast_convergence=bool(fast_convergence),
        loss_sharing=loss_sharing,
        dt_s=dt,
    )
    return BottleneckShare(
        reno_throughput_bps=reno_bps,
        cubic_throughput_bps=cubic_bps,
        total_throughput_bps=total,
        utilization=total / cap_bps,
        cubic_share=cubic_bps / total if total > 0 else math.nan,
        jain_index=jain,
        reno_loss_events=flows[0].losses - losses_at_warm[0],
        cubic_loss_events=flows[1].losses - losses_at_warm[1],
        mean_queue_delay_s=q_integral / span,
        params=params,
        trace=pd.DataFrame(
            trace,
            columns=["t_s", "reno_cwnd_segments", "cubic_cwnd_segments", "queue_segments", "reno_rate_bps", "cubic_rate_bps", "loss"],
        ),
    )
