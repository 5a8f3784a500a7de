"""P3 by the fluid model of a shared bottleneck (:func:`tcpmodels.models.bottleneck.reno_cubic_bottleneck`)."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import pandas as pd

from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, P3Config
from tcpmodels.models.cubic import x_power_law_params

__all__ = ["fluid_frame"]


# ------------------------------------------------------------------- fluid
def fluid_frame(config: P3Config = DEFAULT_CONFIG, *, exponents: Sequence[float] | None = None,
                loss_sharings: Sequence[str] = ("proportional",), rates_bps: Sequence[float] | None = None,
                duration_s: float = 30.0, warmup_s: float = 5.0, steps_per_rtt: float = 5.0,
                progress: bool = False) -> pd.DataFrame:
    """The fluid model (:func:`~tcpmodels.models.bottleneck.reno_cubic_bottleneck`) over the grid.

    One row per (bottleneck rate, pair, reading ``none``/``multiply``/``divide``, x exponent,
    loss sharing): both throughputs, Jain's index, losses, mean queueing delay,
    and the K of the CUBIC flow at the model's mean W_max before a loss (the
    K values that drive each case; :func:`~tcpmodels.models.cubic.kozu_k_s`).
    By default the model runs at each engine's rate (``config.engine_rates_bps``: the
    kernel's ``rate_bps`` and the ns-3 grid's ``ns3_rate_bps``), each with the buffer the
    campaign uses at that rate (:meth:`P3Config.buffer_bytes_at`), so each engine is compared
    with the model at its own rate.

    Parameters
    ----------
    config : P3Config
        Rates, buffer rule, MSS, receive window and the RTT pairs.
    exponents : sequence of float, optional
        Exponents of x(RTT) for the ``multiply`` and ``divide`` readings; default
        ``config.x_exponent`` and ``config.slider_exponents``. [-]
    loss_sharings : sequence of str
        ``loss_sharing`` modes of the model, each run for every case.
    rates_bps : sequence of float, optional
        Bottleneck rates; default the distinct values of ``config.engine_rates_bps``. [bit/s]
    duration_s : float
        Simulated time of each case. [s]
    warmup_s : float
        Discarded start of each case. [s]
    steps_per_rtt : float
        Time steps per the smaller RTT of the pair (``dt_s`` = RTT / steps). [-]
    progress : bool
        tqdm bar on stderr.

    Returns
    -------
    pandas.DataFrame
        ``rate_bps`` [bit/s], ``buffer_bytes`` [bytes], ``reno_rtt_ms``, ``cubic_rtt_ms`` [ms],
        ``reading``, ``x_exponent``, ``loss_sharing``,
        ``reno_bps``, ``cubic_bps`` [bit/s], ``jain``, ``cubic_share``, ``utilization`` [-],
        loss events, ``mean_queue_delay_ms`` [ms], ``cubic_wmax_segments``,
        ``reno_wmax_segments`` [segments], ``x`` [-], ``cubic_k_s`` [s], ``duration_s``,
        ``warmup_s``, ``dt_s`` [s].
    """
    import numpy as np
    from tqdm import tqdm

    from tcpmodels.models.bottleneck import reno_cubic_bottleneck
    from tcpmodels.models.cubic import PowerLawX, kozu_k_s, kozu_x

    exponents = (config.x_exponent, *config.slider_exponents) if exponents is None else tuple(exponents)
    combos = [("none", 0.0)] + [(rd, e) for e in exponents for rd in ("multiply", "divide")]
    rates = sorted(set(config.engine_rates_bps.values())) if rates_bps is None else [float(r) for r in rates_bps]
    jobs = [(rate, pair, rd, e, ls) for rate in rates for pair in config.pairs_ms for rd, e in combos
            for ls in loss_sharings]
    rows = []
    for rate, (reno, cubic), rd, expo, ls in tqdm(jobs, desc="p3 fluid", disable=not progress, file=sys.stderr):
        xfn = PowerLawX(**x_power_law_params(expo)) if rd != "none" else None
        res = reno_cubic_bottleneck(capacity_bps=rate, buffer_bytes=config.buffer_bytes_at(rate),
                                    reno_rtt_s=reno * 1e-3, cubic_rtt_s=cubic * 1e-3, mss_bytes=config.mss_bytes + 52,
                                    duration_s=duration_s, warmup_s=warmup_s, max_window_bytes=config.rwnd_bytes,
                                    x_reading=rd, x_of_rtt=xfn, loss_sharing=ls,
                                    dt_s=min(reno, cubic) * 1e-3 / steps_per_rtt)
        tr = res.trace
        tr = tr[tr["t_s"] >= warmup_s]
        # window just before each loss sample: the previous sample's window
        prev = tr["cubic_cwnd_segments"].shift(1)
        drops = tr["cubic_cwnd_segments"] < 0.95 * prev
        w_max = float(prev[drops].mean()) if drops.any() else float(tr["cubic_cwnd_segments"].max())
        prev_r = tr["reno_cwnd_segments"].shift(1)
        drops_r = tr["reno_cwnd_segments"] < 0.95 * prev_r
        rows.append({"rate_bps": rate, "buffer_bytes": config.buffer_bytes_at(rate),
                     "reno_rtt_ms": reno, "cubic_rtt_ms": cubic, "reading": rd, "x_exponent": expo,
                     "loss_sharing": ls, "reno_bps": res.reno_throughput_bps, "cubic_bps": res.cubic_throughput_bps,
                     "jain": res.jain_index, "cubic_share": res.cubic_share, "utilization": res.utilization,
                     "reno_loss_events": res.reno_loss_events, "cubic_loss_events": res.cubic_loss_events,
                     "mean_queue_delay_ms": res.mean_queue_delay_s * 1e3,
                     "cubic_wmax_segments": w_max,
                     "reno_wmax_segments": float(prev_r[drops_r].mean()) if drops_r.any() else math.nan,
                     "x": float(kozu_x(cubic * 1e-3, xfn)) if xfn else 1.0,
                     "cubic_k_s": float(kozu_k_s(w_max, cubic * 1e-3, reading=rd, x_of_rtt=xfn))
                     if np.isfinite(w_max) else math.nan,
                     "duration_s": duration_s, "warmup_s": warmup_s,
                     "dt_s": min(reno, cubic) * 1e-3 / steps_per_rtt})
    return pd.DataFrame(rows)
