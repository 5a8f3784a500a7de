r"""Bandwidth-delay product and the window limits of TCP.

How many bytes must be in flight to fill a link, the largest window TCP can
advertise with each window-scale shift (RFC 7323), the rate ceiling that window
sets at a given RTT, and a sizing table over link rates and RTTs.

All scalar functions take floats, numpy arrays or pandas Series, broadcast
them, return the same kind, raise ``ValueError`` naming parameter, unit, value
and valid range for out-of-domain input, and let NaN through.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from tcpmodels._arrays import broadcast, check_range, finite_result, wrap
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric
from tcpmodels.models.throughput import window_limited_throughput_bps

__all__ = [
    "WINDOW_FIELD_MAX_BYTES",
    "WSCALE_SHIFT_MAX",
    "bdp_bytes",
    "window_needed_bytes",
    "max_window_bytes",
    "max_window_ceiling_bps",
    "min_wscale_shift",
    "sizing_table",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt_s : numeric
        Round-trip time, >= 0. [s]
    rate_bps : numeric
        Target rate, >= 0. [bit/s]
""")

#: Largest value of TCP's 16-bit window field (RFC 9293 Sec. 3.1). [bytes]
WINDOW_FIELD_MAX_BYTES = 65_535
#: Largest window-scale shift count (RFC 7323 Sec. 2.3: a larger value is treated as 14). [-]
WSCALE_SHIFT_MAX = 14


@_PARAMETERS.fill
@finite_result
def bdp_bytes(rate_bps: Numeric, rtt_s: Numeric) -> Numeric:
    r"""Bandwidth-delay product: the bytes in flight that keep a link busy.

    Parameters
    ----------
    rate_bps : numeric
        Link (or target) rate, >= 0. [bit/s]
    {rtt_s}

    Returns
    -------
    numeric
        ``rate * RTT / 8``. [bytes]

    Notes
    -----
    .. math:: BDP = \frac{R \cdot RTT}{8}

    References
    ----------
    .. [1] RFC 7323, "TCP Extensions for High Performance", Sec. 1.1.
    .. [2] RFC 6349, "Framework for TCP Throughput Testing", Sec. 3.3.1.

    Examples
    --------
    >>> round(bdp_bytes(100e9, 0.296) / 1e9, 6)
    3.7
    """
    args, kind = broadcast(rate_bps=rate_bps, rtt_s=rtt_s)
    check_range("rate_bps", args["rate_bps"], unit="bit/s", low=0)
    check_range("rtt_s", args["rtt_s"], unit="s", low=0)
    return wrap(args["rate_bps"] * args["rtt_s"] / 8.0, kind)


@_PARAMETERS.fill
@finite_result
def window_needed_bytes(rate_bps: Numeric, rtt_s: Numeric) -> Numeric:
    """Window (bytes in flight) a single connection needs to sustain ``rate_bps``.

    The same number as :func:`bdp_bytes`, named for the question it answers:
    a window-limited sender moves one window per RTT, so reaching ``rate_bps``
    needs a window of at least ``rate * RTT / 8``.

    Parameters
    ----------
    {rate_bps, rtt_s}

    Returns
    -------
    numeric
        Required window. [bytes]

    References
    ----------
    .. [1] RFC 6349, Sec. 3.3.1 ("minimum required TCP RWND" = BDP).

    Examples
    --------
    >>> round(window_needed_bytes(73e9, 0.296) / 1e9, 3)
    2.701
    """
    return bdp_bytes(rate_bps, rtt_s)


def _check_shift(wscale_shift) -> tuple[np.ndarray, object]:
    args, kind = broadcast(wscale_shift=wscale_shift)
    shift = args["wscale_shift"]
    check_range("wscale_shift", shift, unit="-", low=0, high=WSCALE_SHIFT_MAX)
    finite = shift[~np.isnan(shift)]
    fractional = finite[finite != np.round(finite)]
    if fractional.size:
        raise ValueError(
            f"wscale_shift [-] must be an integer in [0, {WSCALE_SHIFT_MAX}]; got {fractional[0]:g}"
        )
    return shift, kind


def max_window_bytes(wscale_shift: Numeric) -> Numeric:
    r"""Largest window TCP can advertise with a given window-scale shift.

    Parameters
    ----------
    wscale_shift : numeric
        Window-scale shift count from the SYN's option, an integer in [0, 14]. [-]

    Returns
    -------
    numeric
        ``65535 * 2**shift``: 65,535 B without scaling, 1,073,725,440 B
        (2^30 - 2^14, just under 1 GiB) at the maximum shift 14. [bytes]

    Raises
    ------
    ValueError
        If a shift is negative, above 14 (RFC 7323 Sec. 2.3 caps it so that the
        window stays below 2^30, a quarter of the sequence space) or not an integer.

    References
    ----------
    .. [1] RFC 7323, "TCP Extensions for High Performance", Sec. 2.2-2.3.

    Examples
    --------
    >>> max_window_bytes(14)
    1073725440.0
    """
    shift, kind = _check_shift(wscale_shift)
    return wrap(WINDOW_FIELD_MAX_BYTES * np.exp2(shift), kind)


@finite_result
def max_window_ceiling_bps(wscale_shift: Numeric, rtt_s: Numeric) -> Numeric:
    """Rate ceiling of one TCP connection whose window is the largest advertisable.

    ``window_limited_throughput_bps(max_window_bytes(wscale_shift), rtt_s)``.

    Parameters
    ----------
    wscale_shift : numeric
        Window-scale shift, integer in [0, 14]. [-]
    rtt_s : numeric
        Round-trip time, > 0. [s]

    Returns
    -------
    numeric
        Ceiling rate. [bit/s]

    References
    ----------
    .. [1] RFC 7323, Sec. 1.1 and 2.3.

    Examples
    --------
    >>> round(max_window_ceiling_bps(14, 0.296) / 1e9, 2)
    29.02
    """
    _check_shift(wscale_shift)
    args, kind = broadcast(wscale_shift=wscale_shift, rtt_s=rtt_s)
    window = WINDOW_FIELD_MAX_BYTES * np.exp2(args["wscale_shift"])
    return wrap(window_limited_throughput_bps(window, args["rtt_s"]), kind)


@_PARAMETERS.fill
@finite_result
def min_wscale_shift(rate_bps: Numeric, rtt_s: Numeric) -> Numeric:
    r"""Smallest window-scale shift whose largest window covers ``rate * RTT``.

    Parameters
    ----------
    {rate_bps, rtt_s}

    Returns
    -------
    numeric
        The integer ``s >= 0`` with ``65535 * 2**(s-1) < BDP <= 65535 * 2**s``
        (0 when the BDP fits in 65,535 B). It is **not** capped at 14: a value
        of 15 or more means that no standard TCP window can carry the rate at
        this RTT (compare with :data:`WSCALE_SHIFT_MAX`). [-]

    Notes
    -----
    .. math:: s = \max\left(0, \left\lceil \log_2 \frac{BDP}{65535} \right\rceil\right)

    computed with an exact integer-power correction so that a BDP of exactly
    ``65535 * 2**s`` gives ``s``.

    References
    ----------
    .. [1] RFC 7323, Sec. 2.2-2.3.

    Examples
    --------
    >>> min_wscale_shift(100e9, 0.296)
    16.0
    """
    args, kind = broadcast(rate_bps=rate_bps, rtt_s=rtt_s)
    need = bdp_bytes(args["rate_bps"], args["rtt_s"])
    need = np.asarray(need, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.ceil(np.log2(need / WINDOW_FIELD_MAX_BYTES))
    shift = np.where(np.isfinite(shift), np.maximum(shift, 0.0), np.where(need == 0, 0.0, shift))
    # Correct a possible off-by-one of the floating-point logarithm.
    shift = np.where(WINDOW_FIELD_MAX_BYTES * np.exp2(shift) < need, shift + 1.0, shift)
    shift = np.where(
        (shift > 0) & (WINDOW_FIELD_MAX_BYTES * np.exp2(shift - 1.0) >= need), shift - 1.0, shift
    )
    return wrap(shift, kind)


def sizing_table(
    rates_bps: Iterable[float],
    rtts_s: Iterable[float],
    *,
    wscale_shift: int = WSCALE_SHIFT_MAX,
) -> pd.DataFrame:
    """Window sizing for every combination of link rate and RTT.

    Parameters
    ----------
    rates_bps : iterable of float
        Link rates. [bit/s]
    rtts_s : iterable of float
        Round-trip times, > 0. [s]
    wscale_shift : int, default 14
        Window-scale shift the endpoints negotiate; the ceiling uses the largest
        window it allows. [-]

    Returns
    -------
    pandas.DataFrame
        One row per (rate, RTT), rates outer, with columns

        - ``rate_bps``, ``rtt_s``: the inputs;
        - ``bdp_bytes``: bytes in flight needed to fill the link;
        - ``min_wscale_shift``: smallest shift whose largest window covers the
          BDP (may exceed 14, see :func:`min_wscale_shift`);
        - ``wscale_sufficient``: whether that shift is <= 14, i.e. standard TCP
          can fill the link at all;
        - ``max_window_bytes``: largest window with ``wscale_shift``;
        - ``ceiling_bps``: ``max_window_bytes / RTT``;
        - ``achievable_fraction``: ``min(1, ceiling / rate)``, share of the
          link rate one connection can use;
        - ``window_limited``: whether the ceiling is below the link rate.

    Examples
    --------
    >>> t = sizing_table([100e9], [0.296])
    >>> round(float(t.achievable_fraction.iloc[0]), 3)
    0.29
    """
    rates = np.asarray(list(rates_bps), dtype=float)
    rtts = np.asarray(list(rtts_s), dtype=float)
    check_range("rates_bps", rates, unit="bit/s", low=0, low_open=True)
    check_range("rtts_s", rtts, unit="s", low=0, low_open=True)
    rate_grid, rtt_grid = (g.ravel() for g in np.meshgrid(rates, rtts, indexing="ij"))
    window = max_window_bytes(float(wscale_shift))
    ceiling = max_window_ceiling_bps(float(wscale_shift), rtt_grid)
    shift_needed = min_wscale_shift(rate_grid, rtt_grid)
    return pd.DataFrame(
        {
            "rate_bps": rate_grid,
            "rtt_s": rtt_grid,
            "bdp_bytes": bdp_bytes(rate_grid, rtt_grid),
            "min_wscale_shift": shift_needed,
            "wscale_sufficient": shift_needed <= WSCALE_SHIFT_MAX,
            "max_window_bytes": np.full(rate_grid.shape, window),
            "ceiling_bps": ceiling,
            "achievable_fraction": np.minimum(1.0, ceiling / rate_grid),
            "window_limited": ceiling < rate_grid,
        }
    )
