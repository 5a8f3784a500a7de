"""P3's dataset, its loader, and the per-cell statistics the fairness tables show."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.papers.common import read_frames

CITATION = ("T. Kozu, S. Yamaguchi, 'CUBIC TCP の輻輳ウィンドウ回復時間の制御による TCP 公平性の改善' "
            "(Improvement of TCP Fairness with Controlling Congestion Windows Size Recovery Time), FIT2013, L-033.")
#: readings of eq. (4) (see :func:`tcpmodels.models.cubic.kozu_k_s`)
READINGS = ("multiply", "divide")
#: the direction the paper states (Sec. 4) for the proposal against standard CUBIC, per Reno RTT and CUBIC RTT [ms]
PAPER_DIRECTION = {
    (1.0, 1.0): "fairer", (1.0, 4.0): "fairer", (1.0, 16.0): "fairer", (1.0, 64.0): "fairer",
    (4.0, 1.0): "fairer", (4.0, 4.0): "fairer", (4.0, 16.0): "fairer", (4.0, 64.0): "less fair",
    (16.0, 1.0): "less fair", (16.0, 4.0): "less fair", (16.0, 16.0): "less fair", (16.0, 64.0): "less fair",
}
_MIN_DELTA = 0.01


@dataclass(frozen=True, kw_only=True)
class P3Dataset:
    """The P3 campaign's data.

    Attributes
    ----------
    kernel : pandas.DataFrame
        One row per kernel sample (:func:`tcpmodels.experiments.p3.kernel_frame`): ``reno_rtt_ms,
        cubic_rtt_ms, rep, reno_bps, cubic_bps, jain, jain_window_sd, n_windows, cubic_wmax_segments``, ...
    ns3 : pandas.DataFrame
        One row per ns-3 run: ``kind`` (standard / multiply / divide), ``x_exponent``, ``seed``, the same
        throughput columns.
    fluid : pandas.DataFrame
        Fluid model per pair, ``reading`` (none / multiply / divide), ``x_exponent``, ``loss_sharing``.
    provenance : dict
        ``p3_provenance.json``.
    """

    kernel: pd.DataFrame
    ns3: pd.DataFrame
    fluid: pd.DataFrame
    provenance: dict = field(default_factory=dict)


def load_dataset(data_dir: str | Path = "data") -> P3Dataset:
    """Read ``datasets/p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and the provenance.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory (or its ``datasets`` directory itself).

    Returns
    -------
    P3Dataset
        The three tables and the provenance (``{}`` without ``p3_provenance.json``).

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that writes it.
    """
    parts = read_frames(data_dir, "p3", ("kernel", "ns3", "fluid"),
                        command="python -m tcpmodels.experiments.p3 dataset --records runs/p3/kernel.jsonl "
                                "--cache runs/p3/ns3_cache --out data/datasets")
    return P3Dataset(**parts)


# ------------------------------------------------------------ statistics
def cell_stats(df: pd.DataFrame | None, by: list[str]) -> pd.DataFrame:
    """Mean and spread per cell: ``reno_mbps``, ``cubic_mbps`` (mean, sd), ``jain`` (mean, sd, se), ``n``.

    ``jain_se`` is the between-run standard error with n >= 2 runs, else the
    within-run window spread (``spread_from`` says which; see the module docstring).

    Parameters
    ----------
    df : pandas.DataFrame or None
        Runs, one per row: ``reno_bps``, ``cubic_bps`` [bit/s], ``jain`` [-] and, when known,
        ``jain_window_sd`` and ``n_windows``; rows without ``jain`` are left out.
    by : list of str
        The columns that define a cell, e.g. ``["reno_rtt_ms", "cubic_rtt_ms"]``.

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``by``, ``n``, ``reno_mbps``, ``reno_mbps_sd``, ``cubic_mbps``,
        ``cubic_mbps_sd`` [Mbit/s], ``jain``, ``jain_sd``, ``jain_se`` [-] and ``spread_from``
        (``"runs"`` or ``"windows"``); empty with those columns for no runs.
    """
    if df is None or len(df) == 0:
        return pd.DataFrame(columns=[*by, "n", "reno_mbps", "reno_mbps_sd", "cubic_mbps", "cubic_mbps_sd", "jain",
                                     "jain_sd", "jain_se", "spread_from"])
    ok = df[df["jain"].notna()] if "jain" in df.columns else df
    ok = ok.assign(reno_mbps=ok["reno_bps"] / 1e6, cubic_mbps=ok["cubic_bps"] / 1e6)
    for c in ("jain_window_sd", "n_windows"):
        if c not in ok.columns:
            ok[c] = math.nan
    g = ok.groupby(by, sort=True)
    out = g.agg(n=("jain", "size"), reno_mbps=("reno_mbps", "mean"), reno_mbps_sd=("reno_mbps", "std"),
                cubic_mbps=("cubic_mbps", "mean"), cubic_mbps_sd=("cubic_mbps", "std"), jain=("jain", "mean"),
                jain_sd=("jain", "std"), window_sd=("jain_window_sd", "first"),
                n_windows=("n_windows", "first")).reset_index()
    many = out["n"] > 1
    out["jain_se"] = np.where(many, out["jain_sd"] / np.sqrt(out["n"].clip(lower=1)),
                              out["window_sd"] / np.sqrt(out["n_windows"].where(out["n_windows"] > 0)))
    out["spread_from"] = np.where(many, "runs", "windows")
    return out.drop(columns=["window_sd", "n_windows"])


def significant(delta: float, se_a: float, se_b: float) -> int:
    """+1 / -1 when ``delta`` is beyond the spread (``|delta| > 2 sqrt(se_a^2 + se_b^2)`` and >= 0.01), else 0.

    NaN standard errors count as 0 (only the 0.01 floor applies).

    Parameters
    ----------
    delta : float
        A difference of Jain's indices. [-]
    se_a, se_b : float
        Standard errors of the two indices. [-]

    Returns
    -------
    int
        The sign of ``delta`` when significant, else 0 (also for a NaN ``delta``).
    """
    if delta != delta:
        return 0
    se = math.sqrt(sum(x * x for x in (se_a, se_b) if x == x))
    return int(np.sign(delta)) if abs(delta) > max(2 * se, _MIN_DELTA) else 0


def run_spread_proxy(ds: P3Dataset) -> float:
    """Median over the kernel's RTT pairs of the between-repetition sd of Jain's index (NaN without repetitions). [-]

    Used as the floor of the standard error of ns-3 cells with fewer than three runs (see the module docstring).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``kernel`` runs).

    Returns
    -------
    float
        The median sd of Jain's index over the cells with at least two runs. [-]
    """
    k = cell_stats(ds.kernel, ["reno_rtt_ms", "cubic_rtt_ms"]) if len(ds.kernel) else pd.DataFrame()
    sd = k["jain_sd"].dropna() if len(k) else pd.Series(dtype=float)
    return float(sd.median()) if len(sd) else math.nan
