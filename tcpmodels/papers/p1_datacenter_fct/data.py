"""P1's printed values, its dataset and loader, the FCT summary, and helpers the tables share."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p1 import KERNEL_ENGINES, SCHEMA, SCHEMA1_CC, with_cc
from tcpmodels.papers.p1_datacenter_fct.windows import with_ns3_windows

__all__ = ["CITATION", "PAPER_TABLE1", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "ENGINE_LABELS", "PROTO_LABELS",
           "CONFIDENCE_LEVEL", "P1Dataset", "FctSummary", "load_dataset", "fct_summary", "ms", "ci_str", "engines_in",
           "measured", "CC_ORDER", "CC_LABELS", "DEFAULT_CC", "with_cc", "mptcp_ccs", "background_label", "backgrounds",
           "KERNEL_ENGINES", "TABLE_ENGINES", "CLAIM_ENGINES"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    engine : str
        ``"kernel"`` or ``"ns3"``.
""")


CITATION = ("H. Fujii, H. Tazaki, Y. Sekiya, 'データセンターネットワークにおけるフローサイズと MPTCP に関する研究' "
            "(flow size and MPTCP in a data-center network), IPSJ technical report")

#: Table 1 as printed: parameter -> value
PAPER_TABLE1 = {"hosts": "16", "MPTCP": "v0.86 (Linux out-of-tree, LIA)", "core-aggregation": "400 Mbit/s",
                "aggregation-edge": "200 Mbit/s", "edge-host": "100 Mbit/s", "RTT": "0.5 ms", "buffer": "100 KB"}
#: Table 2 as printed: background protocol -> (mean, standard deviation, 95th percentile) FCT of 70 KB flows [ms]
PAPER_TABLE2 = {"TCP": (78.4, 122.5, 266.7), "MPTCP": (91.0, 140.6, 510.5)}
#: Table 3 as printed: pattern -> (FCT, packet loss)
PAPER_TABLE3 = {"Full window": ("up to ~30 ms", "no"), "Intensive flow": ("~60 ms", "no"),
                "Delay with loss": ("200-300 ms", "yes"), "Extreme delay": ("over 300 ms", "yes")}
#: Table 4 as printed: traffic pattern -> metric
PAPER_TABLE4 = {"Query traffic": "flow completion time [s]", "Short message traffic": "flow completion time [s]"}
#: how the two engines are named in the tables
ENGINE_LABELS = {"kernel": "kernel (MPTCP v1: uncoupled Reno, tm_lia or tm_olia subflows)",
                 "kernel_steered": "kernel on the steered testbed (RPS steering: no reordering; the same runs)",
                 "ns3": "ns-3 (LIA-coupled NewReno subflows)"}
PROTO_LABELS = {"tcp": "TCP", "mptcp": "MPTCP"}
#: the MPTCP congestion controls a run can carry (column ``cc``), in table order
CC_ORDER = ("uncoupled", "tm_lia", "tm_olia", "lia")
CC_LABELS = {"uncoupled": "uncoupled Reno subflows (kernel)", "tm_lia": "LIA, BPF tm_lia (kernel)",
             "tm_olia": "OLIA, BPF tm_olia (kernel)", "lia": "LIA, ns3::TcpLia (ns-3)"}
#: each engine's control when a table has no ``cc`` column (the datasets of schema 1:
#: :data:`tcpmodels.datasets.p1.SCHEMA1_CC`)
DEFAULT_CC = SCHEMA1_CC
CONFIDENCE_LEVEL = 0.99
#: the engines of the tables and figures, in panel order
TABLE_ENGINES = ("kernel", "ns3")
#: the engines the claims judge, in the order of their rows: both kernel testbeds (17 seeds each), then ns-3
CLAIM_ENGINES = KERNEL_ENGINES + ("ns3",)


@dataclass(frozen=True)
class P1Dataset:
    """The P1 campaign's data (see :func:`tcpmodels.experiments.p1.build_dataset`).

    Attributes
    ----------
    flows : pandas.DataFrame
        One row per connection: ``engine, experiment, protocol, seed, kind, src, dst,
        size_bytes`` [bytes], ``fct_s`` [s], ``pattern``, ``retransmitted_packets`` (kernel
        captures), ``lost_packets`` (ns-3 FlowMonitor), ...
    subflows : pandas.DataFrame
        Background connections per subflow: ``throughput_bps`` [bit/s], ``rtt_mean_s`` [s],
        ``loss_event_rate`` [-], ``mss_bytes`` [bytes] (kernel, from TCP_INFO).
    tcpinfo : pandas.DataFrame
        TCP_INFO samples of one kernel background connection per run.
    runs : pandas.DataFrame
        One row per run: wall time, load average, lock wait.
    provenance : dict
    """

    flows: pd.DataFrame
    subflows: pd.DataFrame
    tcpinfo: pd.DataFrame
    runs: pd.DataFrame
    provenance: dict


def load_dataset(data_dir: str | Path = "data") -> P1Dataset:
    """Read ``p1_*.parquet`` and ``p1_provenance.json`` from ``<data_dir>/datasets``.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory (or its ``datasets`` directory itself).

    Returns
    -------
    P1Dataset
        The four tables and the provenance (``{}`` without ``p1_provenance.json``).

    Raises
    ------
    FileNotFoundError
        If a ``p1_*.parquet`` file is missing (the message names the command that writes it).
    """
    parts = SCHEMA.read(data_dir, ("flows", "subflows", "tcpinfo", "runs"))
    for name in ("flows", "subflows", "tcpinfo", "runs"):
        parts[name] = with_cc(parts[name])
    # issue 57: ns-3's background windows and losses from the traced reruns (p1_ns3_windows.parquet), where measured
    parts["subflows"] = with_ns3_windows(parts["subflows"], data_dir)
    return P1Dataset(**parts)


@_PARAMETERS.fill
def mptcp_ccs(flows: pd.DataFrame, engine: str) -> list[str]:
    """The MPTCP congestion controls with runs of ``engine`` in ``flows``, in :data:`CC_ORDER`.

    Parameters
    ----------
    flows : pandas.DataFrame
        Flows (``engine``, ``protocol`` and, optionally, ``cc``).
    {engine}

    Returns
    -------
    list of str
        E.g. ``["uncoupled", "tm_lia", "tm_olia"]``.
    """
    f = with_cc(flows)
    present = set(f.loc[(f["engine"] == engine) & (f["protocol"] == "mptcp"), "cc"].dropna())
    return [c for c in CC_ORDER if c in present] + sorted(present - set(CC_ORDER))


def background_label(protocol: str, cc: str, engine: str) -> str:
    """How a run's background (or protocol) is named in the tables.

    Parameters
    ----------
    protocol : {"tcp", "mptcp"}
    cc : str
        The run's MPTCP congestion control.
    engine : str
        The engine; its own default control (:data:`DEFAULT_CC`) is plain "MPTCP".

    Returns
    -------
    str
        ``"TCP"``, ``"MPTCP"`` (the engine's default control) or ``"MPTCP tm_lia"`` / ``"MPTCP tm_olia"``.
    """
    if protocol == "tcp":
        return "TCP"
    return "MPTCP" if cc == DEFAULT_CC.get(engine) else f"MPTCP {cc}"


@_PARAMETERS.fill
def backgrounds(flows: pd.DataFrame, engine: str) -> list[tuple[str, str | None, pd.Series]]:
    """The run groups of one engine that the tables compare: TCP, then MPTCP per congestion control.

    TCP runs are one group whatever their ``cc`` (single-path sockets run Reno in every run).

    Parameters
    ----------
    flows : pandas.DataFrame
        Flows (``engine``, ``protocol``, optionally ``cc``).
    {engine}

    Returns
    -------
    list of (label, cc, mask)
        ``label`` (:func:`background_label`), ``cc`` (None for TCP) and the boolean row mask of ``flows``.
    """
    f = with_cc(flows)
    eng = f["engine"] == engine
    out = []
    tcp = eng & (f["protocol"] == "tcp")
    if tcp.any():
        out.append(("TCP", None, tcp))
    for cc in mptcp_ccs(f, engine):
        out.append((background_label("mptcp", cc, engine), cc, eng & (f["protocol"] == "mptcp") & (f["cc"] == cc)))
    return out


# ------------------------------------------------------------------ statistics
@dataclass(frozen=True, kw_only=True)
class FctSummary:
    """Mean, standard deviation and 95th percentile of a set of FCTs, with confidence intervals.

    Attributes
    ----------
    n : int
        Completed flows.
    mean_s, std_s, p95_s : float
        Sample mean, standard deviation (ddof = 1) and 95th percentile (linear interpolation). [s]
    mean_ci_s, p95_ci_s : tuple of float
        Confidence intervals at ``confidence_level``: Student's t for the mean, the
        order-statistic interval for the 95th percentile. [s]
    confidence_level : float
    """

    n: int
    mean_s: float
    std_s: float
    p95_s: float
    mean_ci_s: tuple[float, float]
    p95_ci_s: tuple[float, float]
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict.

        Returns
        -------
        dict of str to object
            ``n, mean_s, std_s, p95_s, mean_ci_s, p95_ci_s, confidence_level`` (times in [s]).
        """
        return asdict(self)


def fct_summary(fct_s: npt.ArrayLike, *, confidence_level: float = CONFIDENCE_LEVEL) -> FctSummary:
    """Summarise flow completion times. [s]

    Parameters
    ----------
    fct_s : array_like
        Completion times; NaN (flows that did not finish) are dropped. [s]
    confidence_level : float
        Of both intervals, in (0, 1). [-]

    Returns
    -------
    FctSummary
        ``n`` 0 and NaN statistics when no time is finite; a NaN interval where it is undefined
        (the mean's for fewer than 2 flows or equal times; the 95th percentile's when
        :func:`scipy.stats.quantile_test` cannot give one).

    Raises
    ------
    ValueError
        If ``confidence_level`` is not in (0, 1) or a time is negative.

    Examples
    --------
    >>> s = fct_summary([0.01, 0.02, 0.03, 0.04], confidence_level=0.9)
    >>> round(s.mean_s, 3), s.n
    (0.025, 4)
    """
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level [-] must be in (0, 1); got {confidence_level}")
    x = np.asarray(fct_s, dtype=float)
    x = x[np.isfinite(x)]
    if np.any(x < 0):
        raise ValueError(f"fct_s [s] must be >= 0; got minimum {x.min()}")
    n = len(x)
    nan2 = (math.nan, math.nan)
    if n == 0:
        return FctSummary(n=0, mean_s=math.nan, std_s=math.nan, p95_s=math.nan, mean_ci_s=nan2, p95_ci_s=nan2,
                          confidence_level=confidence_level)
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else math.nan
    if n > 1 and std > 0:
        ci = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level)  # scipy's t interval of the mean
        mean_ci = (float(ci.low), float(ci.high))
    else:
        mean_ci = nan2
    p95 = float(np.percentile(x, 95))
    try:
        ci = stats.quantile_test(x, q=p95, p=0.95).confidence_interval(confidence_level=confidence_level)
        p95_ci = (float(ci.low), float(ci.high))
    except ValueError:
        p95_ci = nan2
    return FctSummary(n=n, mean_s=mean, std_s=std, p95_s=p95, mean_ci_s=mean_ci, p95_ci_s=p95_ci,
                      confidence_level=confidence_level)


def ms(x: float | None) -> float:
    """A time in seconds as milliseconds, NaN for None or a non-finite value.

    Parameters
    ----------
    x : float or None
        A time. [s]

    Returns
    -------
    float
        ``x * 1000``, or NaN. [ms]
    """
    return x * 1e3 if x is not None and np.isfinite(x) else math.nan


def ci_str(ci: tuple[float, float]) -> str:
    """A confidence interval in seconds printed in milliseconds, ``"[12.3, 45.6]"``.

    Parameters
    ----------
    ci : tuple of float
        ``(low, high)``. [s]

    Returns
    -------
    str
        Both ends in ms with one decimal, or ``"n/a"`` when either is not finite.
    """
    return "n/a" if not np.all(np.isfinite(ci)) else f"[{ci[0] * 1e3:.1f}, {ci[1] * 1e3:.1f}]"


def engines_in(flows: pd.DataFrame, among: tuple[str, ...] = TABLE_ENGINES) -> list[str]:
    """The engines of ``among`` present in ``flows``, in the order of ``among``.

    Parameters
    ----------
    flows : pandas.DataFrame
        Flows with an ``engine`` column (:attr:`P1Dataset.flows` or a selection of it).
    among : tuple of str
        The engines looked for: :data:`TABLE_ENGINES` (the tables and figures: ``kernel``, ``ns3``;
        the steered testbed is compared in :mod:`~tcpmodels.papers.p1_datacenter_fct.testbeds`) or
        :data:`CLAIM_ENGINES` (the claims: both kernel testbeds, then ns-3).

    Returns
    -------
    list of str
        A sublist of ``among``.
    """
    present = set(flows["engine"])
    return [e for e in among if e in present]


def measured(flows: pd.DataFrame, experiment: str, kind: str) -> pd.DataFrame:
    """The flows of one experiment and kind.

    Parameters
    ----------
    flows : pandas.DataFrame
        :attr:`P1Dataset.flows`.
    experiment : str
        Experiment id, e.g. ``"s4"`` (Section 4, 70 KB flows beside background) or ``"s5_query_bg"``.
    kind : str
        Flow kind, e.g. ``"short"``, ``"background"``, ``"query"``, ``"message"``.

    Returns
    -------
    pandas.DataFrame
        The matching rows, index kept.
    """
    return flows[(flows["experiment"] == experiment) & (flows["kind"] == kind)]

