"""Fairness metrics of flows sharing a resource.

Used by the fluid bottleneck model (:mod:`tcpmodels.models.bottleneck`) and by
the campaigns that measure the same quantity on the kernel and in ns-3
(:mod:`tcpmodels.experiments.p3`), so that all three columns of a comparison
are computed by one function.
"""

from __future__ import annotations

import numpy as np

from tcpmodels._arrays import broadcast, check_range, wrap
from tcpmodels._typing import Numeric

__all__ = ["jain_index"]


def jain_index(rate_a_bps: Numeric, rate_b_bps: Numeric) -> Numeric:
    r"""Jain's fairness index of two throughputs. [-]

    Parameters
    ----------
    rate_a_bps, rate_b_bps : numeric
        Throughputs of the two flows (any one unit will do; bit/s by convention). [bit/s]

    Returns
    -------
    numeric
        1 for equal shares, 0.5 when one flow takes everything; NaN where both are 0.

    Notes
    -----
    .. math:: J = \frac{(a + b)^2}{2 (a^2 + b^2)}

    References
    ----------
    .. [1] R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination
       for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984.

    Examples
    --------
    >>> jain_index(50.0, 50.0), jain_index(100.0, 0.0)
    (1.0, 0.5)
    """
    args, kind = broadcast(rate_a_bps=rate_a_bps, rate_b_bps=rate_b_bps)
    a, b = args["rate_a_bps"], args["rate_b_bps"]
    check_range("rate_a_bps", a, unit="bit/s", low=0.0, high=np.inf, high_open=True)
    check_range("rate_b_bps", b, unit="bit/s", low=0.0, high=np.inf, high_open=True)
    # on the shares of the larger rate, so that no square overflows (rates of 1e308 bit/s included)
    top = np.maximum(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        x, y = a / np.where(top > 0, top, 1.0), b / np.where(top > 0, top, 1.0)
        out = np.where(top > 0, (x + y) ** 2 / (2.0 * (x * x + y * y)), np.nan)
    return wrap(out, kind)
