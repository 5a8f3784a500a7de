"""P3's dataset, its loader, and the per-cell statistics the fairness tables show."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets.p3 import SCHEMA, TESTBEDS, fluid_rate_bps, kernel_filled, ns3_filled, split_repeats
from tcpmodels.papers.common import rerun_once_caught_up

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
        One row per kernel sample (:func:`tcpmodels.experiments.p3.kernel_frame`): ``kind`` (standard:
        kernel ``cubic``; multiply / divide: ``tm_cubic_x`` with that reading), ``rate_bps``,
        ``measure_s``, ``source``, ``reno_rtt_ms, cubic_rtt_ms, rep, reno_bps, cubic_bps, jain,
        jain_window_sd, n_windows, cubic_wmax_segments``, ...
    ns3 : pandas.DataFrame
        One row per ns-3 run: ``kind`` (standard / multiply / divide), ``x_exponent``, ``seed``, the same
        throughput columns.
    fluid : pandas.DataFrame
        Fluid model per pair, ``reading`` (none / multiply / divide), ``x_exponent``, ``loss_sharing``.
    provenance : dict
        ``p3_provenance.json``.
    kernel_testbed : {"reordering", "steered", "pinned"} or None
        The kernel testbed the tables and verdicts use (:func:`kernel_testbed`); None (default): the rule
        there. :func:`with_testbed` sets it.
    kernel_repeats : pandas.DataFrame
        Kernel samples run once more because they lost packets outside the bottleneck queue (``campaign``
        ending in :data:`tcpmodels.datasets.p3.REPEAT_SUFFIX`; ``repeats_started_utc`` names the sample repeated), the same
        columns as ``kernel``. Kept out of ``kernel``: the tables and verdicts rest on the plan's samples, and
        :func:`~.robustness.with_cpu_loss_repeated` puts the repeats in their place. Empty by default.
    """

    kernel: pd.DataFrame
    ns3: pd.DataFrame
    fluid: pd.DataFrame
    provenance: dict = field(default_factory=dict)
    kernel_testbed: str | None = None
    kernel_repeats: pd.DataFrame = field(default_factory=pd.DataFrame)


def load_dataset(data_dir: str | Path = "data") -> P3Dataset:
    """Read ``datasets/p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and the provenance.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory (or its ``datasets`` directory itself).

    Returns
    -------
    P3Dataset
        The three tables and the provenance (``{}`` without ``p3_provenance.json``); the kernel table's
        repeats (:data:`tcpmodels.datasets.p3.REPEAT_SUFFIX`) go to ``kernel_repeats``.

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that writes it.
    """
    parts = SCHEMA.read(data_dir, ("kernel", "ns3", "fluid"))
    parts["kernel"], repeats = split_repeats(parts["kernel"])
    return P3Dataset(**parts, kernel_repeats=repeats)


# ------------------------------------------------------------ kernel testbeds
#: the reruns, in the order :func:`kernel_testbed` prefers them
RERUNS = ("pinned", "steered")


def kernel_all_testbeds(ds: P3Dataset) -> pd.DataFrame:
    """Every kernel row, of both testbeds, with ``kind``, ``rate_bps``, ``measure_s`` and ``testbed`` filled.

    Older tables lack those columns: ``kind`` is then ``standard``, the rate and measured span the provenance
    config's, and ``testbed`` ``reordering`` (every sample before 2026-11-28).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    pandas.DataFrame
        ``ds.kernel`` with the four columns filled.
    """
    return kernel_filled(ds.kernel, ds.provenance.get("config", {}), ("kind", "rate_bps", "measure_s", "testbed"),
                         missing=math.nan)


def kernel_testbed(ds: P3Dataset) -> str:
    """The kernel testbed whose samples the tables and verdicts use.

    ``ds.kernel_testbed`` if set (:func:`with_testbed`); else the first rerun of :data:`RERUNS` (``pinned``,
    then ``steered``) whose samples have caught up with the unsteered ones: at the rerun's most common setting
    (``rate_bps``, ``measure_s``), at least as many rerun as unsteered samples in every cell (kind, Reno RTT,
    CUBIC RTT) that has unsteered ones; else ``reordering``. So a rerun takes over the verdicts only when it
    rests on as many runs as the results it replaces, and until then they are compared in :func:`testbed_comparison`.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    str
        One of :data:`TESTBEDS`.
    """
    if ds.kernel_testbed is not None:
        if ds.kernel_testbed not in TESTBEDS:
            raise ValueError(f"kernel_testbed must be one of {TESTBEDS}; got {ds.kernel_testbed!r}")
        return ds.kernel_testbed
    k = kernel_all_testbeds(ds)
    for rerun in RERUNS:
        st = k[k["testbed"] == rerun]
        if len(st) == 0:
            continue
        rate, meas = st.groupby(["rate_bps", "measure_s"]).size().sort_values(kind="stable").index[-1]
        at = k[np.isclose(k["rate_bps"], rate) & np.isclose(k["measure_s"], meas)]
        if rerun_once_caught_up(at, ["kind", "reno_rtt_ms", "cubic_rtt_ms"], rerun) == rerun:
            return rerun
    return "reordering"


def with_testbed(ds: P3Dataset, testbed: str | None) -> P3Dataset:
    """The same data with the kernel tables and verdicts on ``testbed`` (None: :func:`kernel_testbed`'s rule).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.
    testbed : {"reordering", "steered", "pinned"} or None
        The kernel testbed.

    Returns
    -------
    P3Dataset
        A copy; the data are shared.

    Raises
    ------
    ValueError
        For any other testbed.
    """
    if testbed is not None and testbed not in TESTBEDS:
        raise ValueError(f"testbed must be one of {TESTBEDS} or None; got {testbed!r}")
    return replace(ds, kernel_testbed=testbed)


# ------------------------------------------------------------ kernel settings
def _kernel_with_setting(ds: P3Dataset) -> pd.DataFrame:
    """The kernel rows of the testbed in use (:func:`kernel_testbed`) with ``kind``, ``rate_bps``,
    ``measure_s`` and ``testbed`` filled."""
    k = kernel_all_testbeds(ds)
    return k[k["testbed"] == kernel_testbed(ds)]


def kernel_settings(ds: P3Dataset) -> pd.DataFrame:
    """The kernel settings present: samples per (``rate_bps``, ``measure_s``, ``kind``).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    pandas.DataFrame
        Columns ``rate_bps`` [bit/s], ``measure_s`` [s], ``kind`` and ``n`` (samples); empty without kernel rows.
    """
    k = _kernel_with_setting(ds)
    if len(k) == 0:
        return pd.DataFrame(columns=["rate_bps", "measure_s", "kind", "n"])
    return k.groupby(["rate_bps", "measure_s", "kind"]).size().rename("n").reset_index()


def proposal_setting(ds: P3Dataset) -> tuple[float, float] | None:
    """The kernel setting ``(rate_bps, measure_s)`` the proposal ran at (the one with most ``tm_cubic_x`` samples).

    Without proposal samples: the setting with most samples. The kernel columns of the tables
    (standard and both readings) come from this setting only, so the kinds compare like with like.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    tuple of float or None
        ``(rate_bps [bit/s], measure_s [s])``; None without kernel rows.
    """
    st = kernel_settings(ds)
    if len(st) == 0:
        return None
    prop = st[st["kind"] != "standard"]
    use = prop if len(prop) else st
    best = use.groupby(["rate_bps", "measure_s"])["n"].sum().sort_values(kind="stable").index[-1]
    return float(best[0]), float(best[1])


def kernel_runs(ds: P3Dataset, kind: str, setting: tuple[float, float] | None | str = "proposal") -> pd.DataFrame:
    """Kernel rows of one kind at one setting.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.
    kind : {"standard", "multiply", "divide"}
        The CUBIC variant.
    setting : tuple of float, None or str
        ``(rate_bps, measure_s)``; ``"proposal"`` (default): :func:`proposal_setting`;
        ``"most"``: the setting with most samples of ``kind`` (a tie goes to the higher rate, then the
        longer measured span); None: every setting.

    Returns
    -------
    pandas.DataFrame
        The rows (with ``kind``, ``rate_bps`` and ``measure_s`` filled).
    """
    k = _kernel_with_setting(ds)
    if len(k) == 0:
        return k
    k = k[k["kind"] == kind]
    if setting == "proposal":
        setting = proposal_setting(ds)
    elif setting == "most":
        counts = k.groupby(["rate_bps", "measure_s"]).size().sort_values(kind="stable")
        setting = (float(counts.index[-1][0]), float(counts.index[-1][1])) if len(counts) else None
    if setting is None:
        return k
    return k[np.isclose(k["rate_bps"], setting[0]) & np.isclose(k["measure_s"], setting[1])]


# ------------------------------------------------------------ engine rates
def ns3_runs(ds: P3Dataset) -> pd.DataFrame:
    """The ns-3 runs with ``rate_bps`` and ``duration_s`` filled.

    ``rate_bps``: the table's column, else the provenance's ``ns3.rate_bps``, else
    :data:`tcpmodels.datasets.p3.LEGACY_NS3_RATE_BPS`; ``duration_s`` (the simulated time of the run's setting): the column, else the
    provenance's ``config.ns3_duration_s``, else NaN (one unnamed setting).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    pandas.DataFrame
        ``ds.ns3`` with ``rate_bps`` [bit/s] and ``duration_s`` [s] in every row.
    """
    return ns3_filled(ds.ns3, ds.provenance)


def _complete_seeds(runs: pd.DataFrame, expo: float) -> pd.Series:
    """Per RTT pair: seeds with a run of every kind (standard and both readings at ``expo``)."""
    main = runs[(runs["kind"] == "standard") | np.isclose(runs["x_exponent"], expo)]
    kinds = main.groupby(["reno_rtt_ms", "cubic_rtt_ms", "seed"])["kind"].nunique()
    return (kinds == 1 + len(READINGS)).groupby(level=["reno_rtt_ms", "cubic_rtt_ms"]).sum()


def ns3_settings(ds: P3Dataset) -> pd.DataFrame:
    """The ns-3 settings present at the ns-3 rate (:func:`ns3_rate_bps`) and the one the tables use.

    A setting is a simulated duration (``short``: 20 s, 2-3 CUBIC epochs of the longest K; ``long``:
    10 epochs of the longest K at the ns-3 rate, ``tcpmodels.experiments.p3.ns3_setting``). The tables
    and claims read **one** setting, so no statistic mixes run lengths: the one whose RTT pairs are
    all covered best, i.e. with the largest number of complete seeds (a run of standard CUBIC and of
    both readings at the campaign's exponent: one paired unit of the claims) in its least-covered
    pair of the grid (the pairs of every setting); at a tie the longer one, whose runs each span
    more CUBIC epochs. The shipped short grid has 2 complete seeds in every pair (its third seed was
    never run), so the long setting replaces it once it has 2 complete seeds in every pair, and
    until then the short grid stays.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``ns3`` runs and the provenance's ``x_exponent``).

    Returns
    -------
    pandas.DataFrame
        One row per setting: ``duration_s`` [s] (NaN for a table without durations), ``n_runs``,
        ``n_pairs``, ``min_complete_seeds`` (over the grid's pairs), ``max_complete_seeds`` and
        ``used`` (bool); empty without runs.
    """
    cols = ["duration_s", "n_runs", "n_pairs", "min_complete_seeds", "max_complete_seeds", "used"]
    n = ns3_runs(ds)
    if len(n) == 0:
        return pd.DataFrame(columns=cols)
    n = n[np.isclose(n["rate_bps"], ns3_rate_bps(ds))]
    expo = ds.provenance.get("config", {}).get("x_exponent", -1 / 3)
    grid = sorted({(float(a), float(b)) for a, b in zip(n["reno_rtt_ms"], n["cubic_rtt_ms"])})
    rows = []
    for dur, g in n.groupby(n["duration_s"].fillna(-1.0), sort=True):
        per_pair = _complete_seeds(g, expo).reindex(pd.MultiIndex.from_tuples(grid), fill_value=0)
        rows.append({"duration_s": math.nan if dur < 0 else float(dur), "n_runs": len(g),
                     "n_pairs": int(g.groupby(["reno_rtt_ms", "cubic_rtt_ms"]).ngroups),
                     "min_complete_seeds": int(per_pair.min()), "max_complete_seeds": int(per_pair.max())})
    out = pd.DataFrame(rows)
    best = out.assign(d=out["duration_s"].fillna(-1.0)).sort_values(["min_complete_seeds", "d"], kind="stable")
    return out.assign(used=out.index == best.index[-1])[cols]


def ns3_duration_s(ds: P3Dataset) -> float:
    """Simulated duration of the ns-3 setting the tables use (:func:`ns3_settings`); NaN without durations. [s]

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    float
        The duration. [s]
    """
    st = ns3_settings(ds)
    return float(st.loc[st["used"], "duration_s"].iloc[0]) if len(st) else math.nan


def ns3_rate_bps(ds: P3Dataset) -> float:
    """The rate of the ns-3 grid the tables use: the one with most runs (NaN without runs). [bit/s]

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    float
        The bottleneck rate. [bit/s]
    """
    n = ns3_runs(ds)
    if len(n) == 0:
        return math.nan
    counts = n.groupby("rate_bps").size().sort_values(kind="stable")
    return float(counts.index[-1])


def kernel_rate_bps(ds: P3Dataset) -> float:
    """The kernel rate of the tables' kernel columns (:func:`proposal_setting`), else the provenance's. [bit/s]

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    float
        The bottleneck rate. [bit/s]
    """
    setting = proposal_setting(ds)
    if setting:
        return setting[0]
    prov = ds.provenance
    return float(prov.get("config", {}).get("rate_bps", prov.get("scaling", {}).get("rate_bps", math.nan)))


def _fluid_with_rate(ds: P3Dataset) -> pd.DataFrame:
    """Fluid rows with proportional losses and ``rate_bps`` filled (see :func:`fluid_at`)."""
    fl = ds.fluid
    if len(fl) == 0:
        return fl.assign(rate_bps=pd.Series(dtype=float))
    fl = fl[fl["loss_sharing"] == "proportional"] if "loss_sharing" in fl else fl
    return fl.assign(rate_bps=fluid_rate_bps(fl, ds.provenance))


def fluid_rates_bps(ds: P3Dataset) -> list[float]:
    """The bottleneck rates the fluid model was run at, sorted (see :func:`fluid_at`). [bit/s]

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.

    Returns
    -------
    list of float
        The distinct rates. [bit/s]
    """
    return sorted({float(r) for r in _fluid_with_rate(ds)["rate_bps"].dropna()})


def fluid_at(ds: P3Dataset, rate_bps: float) -> pd.DataFrame:
    """Fluid-model rows (proportional losses) at one bottleneck rate.

    A row's rate is its ``rate_bps``, or in tables written before that column, the model's
    capacity: total throughput over utilisation (else the provenance's ``config.rate_bps``).
    Where rates are not stated at all (a row's rate unknown, or ``rate_bps`` NaN: data that
    predate the rates), rows of unknown rate match any rate and an unknown rate matches a
    table of at most one known rate; the tables then show the unknown rate as NaN.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.
    rate_bps : float
        The rate of the engine the model is compared with. [bit/s]

    Returns
    -------
    pandas.DataFrame
        The rows at that rate (within 0.1 %), with ``rate_bps`` filled; empty (same columns) if the
        model was not run at that rate.
    """
    fl = _fluid_with_rate(ds)
    if len(fl) == 0:
        return fl
    unknown = fl["rate_bps"].isna()
    if rate_bps != rate_bps:
        return fl if fl.loc[~unknown, "rate_bps"].nunique() <= 1 else fl[unknown]
    return fl[unknown | np.isclose(fl["rate_bps"], rate_bps, rtol=1e-3)]


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

    From the ``standard`` samples of the setting with most of them (:func:`kernel_runs`).

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
    runs = kernel_runs(ds, "standard", "most")
    k = cell_stats(runs, ["reno_rtt_ms", "cubic_rtt_ms"]) if len(runs) else pd.DataFrame()
    sd = k["jain_sd"].dropna() if len(k) else pd.Series(dtype=float)
    return float(sd.median()) if len(sd) else math.nan
