"""Packet-count series of a P5 run and of the Bellcore trace, the input of the Hurst estimators."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.p5.config import BELLCORE_PATH, SERVER_ADDR

__all__ = ["packet_counts", "bellcore_counts"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    bin_s : float
        Bin width. [s]
""")


@_PARAMETERS.fill
def packet_counts(packets: pd.DataFrame, *, bin_s: float, duration_s: float, src_addr: str = SERVER_ADDR) -> np.ndarray:
    """Packets per bin sent by ``src_addr`` in a packet table (:func:`tcpmodels.traces.read_pcap`).

    Parameters
    ----------
    packets : pandas.DataFrame
        Packet table with ``timestamp_s`` and ``src_addr``.
    {bin_s}
    duration_s : float
        Series length; bins cover [0, duration_s). [s]
    src_addr : str
        Source address whose packets are counted (default: the caterpillar's server S).

    Returns
    -------
    numpy.ndarray
        ``int64`` counts. [packets]

    Raises
    ------
    ValueError
        If ``bin_s`` is not in (0, duration_s].
    """
    if not (bin_s > 0 and duration_s >= bin_s):
        raise ValueError(f"bin_s [s] must be in (0, duration_s = {duration_s}]; got {bin_s!r}")
    n = int(round(duration_s / bin_s))
    sel = (packets["src_addr"].astype(str) == src_addr).to_numpy()
    idx = np.floor(packets["timestamp_s"].to_numpy()[sel] / bin_s).astype(np.int64)
    idx = idx[(idx >= 0) & (idx < n)]
    return np.bincount(idx, minlength=n).astype(np.int64)


@_PARAMETERS.fill
def bellcore_counts(path: str | os.PathLike = BELLCORE_PATH, *, bin_s: float = 0.01) -> pd.DataFrame:
    """Packets and bytes per bin of the Bellcore BC-pAug89 excerpt (two columns: time [s], length [bytes]).

    Parameters
    ----------
    path : str or path-like
        The excerpt as text, one packet per line (default: :data:`BELLCORE_PATH`).
    {bin_s}

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start) [s], ``packets`` [packets], ``bytes`` [bytes]; the last partial bin dropped.

    Raises
    ------
    ValueError
        If ``bin_s`` is not positive or the file does not have two columns.
    FileNotFoundError
        If ``path`` does not exist (the message says what the file is and where it is expected).
    """
    if not (bin_s > 0):
        raise ValueError(f"bin_s [s] must be in (0, inf); got {bin_s!r}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"Bellcore excerpt not found: {path} (the Internet Traffic Archive's BC-pAug89, "
                                f"first 10,000 packets, as text: time [s], length [bytes]; the default is beside the "
                                f"clone, ../shared/data/bellcore)")
    raw = np.loadtxt(path)
    if raw.ndim != 2 or raw.shape[1] != 2:
        raise ValueError(f"{path}: expected two columns (time [s], length [bytes]); got shape {raw.shape}")
    t = raw[:, 0] - raw[0, 0]
    n = int(np.floor(t[-1] / bin_s))
    idx = np.floor(t / bin_s).astype(np.int64)
    keep = idx < n
    packets = np.bincount(idx[keep], minlength=n)
    size = np.bincount(idx[keep], weights=raw[keep, 1], minlength=n)
    return pd.DataFrame({"t_s": np.arange(n) * bin_s, "packets": packets.astype(np.int64), "bytes": size})
