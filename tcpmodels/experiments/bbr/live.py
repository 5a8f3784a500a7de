"""One short BBR-against-CUBIC run on the kernel, for the bufferbloat lecture (root only)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd

from tcpmodels.experiments.bbr.config import DEFAULT_CONFIG, KEY, GridPoint
from tcpmodels.experiments.bbr.dataset import run_rows
from tcpmodels.experiments.bbr.kernel import run_kernel_campaign

__all__ = ["live_run"]


def live_run(queue_bdp: float, n_bbr: int, *, competitor: str = "cubic", warmup_s: float = 10.0,
             measure_s: float = 20.0, rate_bps: float = 10e6, base_rtt_s: float = 0.040) -> pd.DataFrame:
    """Run N ``bbr`` flows against one flow of ``competitor`` once on the testbed; return its row.

    About ``warmup_s + measure_s`` seconds plus the testbed's set-up, under the host lock. Too short
    for a deep buffer to settle (the campaign waits 120 round trips at a full buffer): a
    classroom illustration, not a measurement of the claims.

    Parameters
    ----------
    queue_bdp : float
        X, the bottleneck buffer in BDPs, in (0, 64]. [-]
    n_bbr : int
        N, 1 to 16. [-]
    competitor : {"cubic", "reno"}
        The loss-based flow's congestion control.
    warmup_s, measure_s : float
        Left-out start and measurement window. [s]
    rate_bps : float
        Bottleneck rate. [bit/s]
    base_rtt_s : float
        Base RTT. [s]

    Returns
    -------
    pandas.DataFrame
        One row of :func:`tcpmodels.experiments.bbr.dataset.run_rows` (``share_bbr``, ``model_share_bbr``,
        ``queue_delay_s``, ...), ``source`` = ``"live run"``.

    Raises
    ------
    ValueError
        If ``queue_bdp`` or ``n_bbr`` is out of range.
    tcpmodels.testbed.PrivilegeError
        Without root.
    """
    from tcpmodels.records import JsonlRecords

    if not 0 < queue_bdp <= 64:
        raise ValueError(f"queue_bdp [-] must be in (0, 64]; got {queue_bdp}")
    if not 1 <= int(n_bbr) <= 16 or int(n_bbr) != n_bbr:
        raise ValueError(f"n_bbr [-] must be a whole number in [1, 16]; got {n_bbr}")
    point = GridPoint(group="live", competitor=competitor, n_loss=1, queue_bdp=float(queue_bdp), n_bbr=int(n_bbr))
    warmup_rtts = warmup_s / (base_rtt_s * (1 + float(queue_bdp)))
    cfg = replace(DEFAULT_CONFIG, campaign="bbr_live", rate_bps=rate_bps, base_rtt_s=base_rtt_s,
                  warmup_rtts=warmup_rtts, measure_s=measure_s, reps=1, grid=(point,))
    with tempfile.TemporaryDirectory(prefix="tm-bbr-live-") as tmp:
        path = Path(tmp) / "live.jsonl"
        run_kernel_campaign(path, cfg, progress=False)
        (rec,) = JsonlRecords(path, KEY).read()
    row, *_ = run_rows(rec, "kernel")
    return pd.DataFrame([{**row, "source": "live run"}])
