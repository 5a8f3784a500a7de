"""The kernel's label of every interval, the diagnosis lined up with it, and the claims judged on the test seeds.

Ground truth (:func:`kernel_intervals`): the sender's ``TCP_INFO`` samples (every 10 ms) cut into
intervals of ``interval_s`` (100 ms). In each, the kernel's chrono counters give the time the
connection was limited by the receiver's window (``tcpi_rwnd_limited``), by the send buffer
(``tcpi_sndbuf_limited``), busy otherwise (``tcpi_busy_time`` minus both: the congestion window,
i.e. the network) and not busy at all (nothing outstanding or queued: the application). On this
kernel the send-buffer counter never moved in the pilot (SO_SNDBUF 8 to 240 kB; ``ss`` showed
``wmem_queued`` above ``sk_sndbuf``: the always-on GSO skbs overshoot it), so the busy time is
refined with the delivery-rate sampler's ``app_limited`` bit, which the kernel sets when the
sender has less than a segment queued and the window is not full: the share of 10 ms samples
carrying it moves that part of the network time to ``send_buffer`` when the application spent at
least half of the interval blocked in ``send()`` (the buffer was full), else to ``application``.
The label is the largest of the four.

The diagnosis's classes map onto the kernel's four: ``opportunity``, ``congestion`` and
``bandwidth`` are the network (the kernel cannot tell them apart; the scenarios' design does,
:data:`tcpmodels.experiments.limits.campaign.SCENARIOS`), and ``opportunity`` also matches
``application`` (a transfer that ran out of data is both).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries
from tcpmodels.stats import INCONCLUSIVE

__all__ = ["KERNEL_CLASSES", "INTERVAL_S", "KERNEL_SCORED_SCENARIOS", "CLAIMED_SHARE", "CLAIM_SPECS", "kernel_intervals",
           "kernel_class_of", "agrees", "match_intervals", "tune_signature", "claims", "confusion", "design_table",
           "load_dataset", "agreement_table", "signature_table", "plot_confusion"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    intervals : pandas.DataFrame
        ``limits_intervals.parquet``.
    split : {"test", "test2", "tuning"}
    flows : pandas.DataFrame
        ``limits_flows.parquet``.
""")

#: the kernel's four labels
KERNEL_CLASSES = ("network", "receiver_window", "send_buffer", "application")
#: interval of the scoring [s]: the diagnosis and the kernel's counters are both cut into these
INTERVAL_S = 0.1
#: share of an interval the application must spend blocked in send() for an app-limited busy time to be the buffer's
BLOCKED_SHARE = 0.5
#: a last interval shorter than this is dropped (a flow of 60 ms still has one) [s]
MIN_LAST_S = 0.02

_DIAGNOSIS_TO_KERNEL = {"opportunity": "network", "congestion": "network", "bandwidth": "network",
                        "receiver_window": "receiver_window", "send_buffer": "send_buffer",
                        "application": "application", "undecided": "undecided"}


def kernel_class_of(limit: str) -> str:
    """The kernel's label a diagnosis class corresponds to.

    Parameters
    ----------
    limit : str
        A class of :data:`tcpmodels.traces.limits.CLASSES`.

    Returns
    -------
    str
        One of :data:`KERNEL_CLASSES`, or ``"undecided"``.
    """
    return _DIAGNOSIS_TO_KERNEL[limit]


def agrees(limit: pd.Series, kernel: pd.Series) -> pd.Series:
    """Where a diagnosis class matches the kernel's label.

    Parameters
    ----------
    limit : pandas.Series
        Diagnosis classes.
    kernel : pandas.Series
        The kernel's labels (:data:`KERNEL_CLASSES`), aligned with ``limit``.

    Returns
    -------
    pandas.Series
        Bool: the class maps to the label (:func:`kernel_class_of`), or it is ``opportunity`` and the label
        ``application`` (a transfer that ran out of data is both).
    """
    mapped = limit.map(_DIAGNOSIS_TO_KERNEL)
    return (mapped == kernel) | ((limit == "opportunity") & (kernel == "application"))


def kernel_intervals(samples: pd.DataFrame, *, interval_s: float = INTERVAL_S, origin_s: float | None = None
                     ) -> pd.DataFrame:
    """The kernel's label of each interval of one flow, from its ``TCP_INFO`` samples.

    Parameters
    ----------
    samples : pandas.DataFrame
        :func:`tcpmodels.experiments.limits.endpoint.parse_tcp_info_chrono` records of one flow with
        ``t_unix_s``, ``app_in_send_s`` and ``app_written_bytes``, in time order.
    interval_s : float
        Interval length [s].
    origin_s : float, optional
        Start of interval 0 [s, Unix time]; default the first sample.

    Returns
    -------
    pandas.DataFrame
        One row per interval with a sample at both ends: ``interval``, ``start_s``, ``end_s`` [s],
        ``network_s``, ``rwnd_s``, ``sndbuf_s``, ``idle_s`` (the chrono counters' split) [s],
        ``app_limited_share`` (of the samples in it) [-], ``blocked_share`` (of the interval and
        its two neighbours the application spent in ``send()``) [-], ``delivery_rate_bps`` [bit/s], ``kernel`` (one of
        :data:`KERNEL_CLASSES`) and ``kernel_chrono`` (the label from the counters alone).
    """
    if not interval_s > 0:
        raise ValueError(f"interval_s [s] must be > 0; got {interval_s!r}")
    s = samples.sort_values("t_unix_s", kind="stable").reset_index(drop=True)
    t = s["t_unix_s"].to_numpy()
    origin = t[0] if origin_s is None else float(origin_s)
    edges = origin + interval_s * np.arange(int(np.floor((t[-1] - origin) / interval_s)) + 1)
    edges = edges[edges >= t[0]]
    if t[-1] - (edges[-1] if len(edges) else t[0]) >= MIN_LAST_S:  # the last, partial interval (short flows)
        edges = np.append(edges if len(edges) else [t[0]], t[-1])
    if len(edges) < 2:
        return pd.DataFrame(columns=["interval", "start_s", "end_s", "network_s", "rwnd_s", "sndbuf_s", "idle_s",
                                     "app_limited_share", "blocked_share", "delivery_rate_bps", "kernel",
                                     "kernel_chrono"])

    def at(col: str) -> np.ndarray:  # counter values at the edges (linear between samples)
        return np.interp(edges, t, s[col].to_numpy(float))

    d = {c: np.diff(at(c)) for c in ("busy_s", "rwnd_limited_s", "sndbuf_limited_s", "app_in_send_s")}
    width = np.diff(edges)
    busy = np.clip(d["busy_s"], 0, width)
    rwnd = np.clip(d["rwnd_limited_s"], 0, busy)
    sndbuf = np.clip(d["sndbuf_limited_s"], 0, busy - rwnd)
    network = busy - rwnd - sndbuf
    idle = width - busy
    k = np.searchsorted(edges, t, side="right") - 1
    ok = (k >= 0) & (k < len(width))
    app_share = pd.Series(s["app_limited"].to_numpy(float)[ok]).groupby(k[ok]).mean().reindex(
        np.arange(len(width))).fillna(0.0).to_numpy()
    rate = pd.Series(s["delivery_rate_bps"].to_numpy(float)[ok]).groupby(k[ok]).median().reindex(
        np.arange(len(width))).to_numpy()
    # a send() call's time is counted when it returns (a blocked call of 64 kB spans intervals at a few Mbit/s):
    # the share blocked is taken over the interval and its neighbours (300 ms)
    in_send = pd.Series(d["app_in_send_s"]).rolling(3, center=True, min_periods=1).sum().to_numpy()
    spans = pd.Series(width).rolling(3, center=True, min_periods=1).sum().to_numpy()
    blocked = np.clip(in_send / spans, 0, 1)
    chrono = np.stack([network, rwnd, sndbuf, idle], axis=1)
    sender_limited = network * app_share
    to_buffer = blocked >= BLOCKED_SHARE
    refined = np.stack([network - sender_limited, rwnd, sndbuf + np.where(to_buffer, sender_limited, 0.0),
                        idle + np.where(to_buffer, 0.0, sender_limited)], axis=1)
    names = np.array(KERNEL_CLASSES, dtype=object)
    first = int(np.round((edges[0] - origin) / interval_s))
    return pd.DataFrame({"interval": first + np.arange(len(width)), "start_s": edges[:-1], "end_s": edges[1:],
                         "network_s": network, "rwnd_s": rwnd, "sndbuf_s": sndbuf, "idle_s": idle,
                         "app_limited_share": app_share, "blocked_share": blocked, "delivery_rate_bps": rate,
                         "kernel": names[refined.argmax(axis=1)], "kernel_chrono": names[chrono.argmax(axis=1)]})


def match_intervals(kernel: pd.DataFrame, diagnosis: pd.DataFrame) -> pd.DataFrame:
    """Each kernel interval with the diagnosis interval that holds its midpoint (both of one flow).

    Parameters
    ----------
    kernel : pandas.DataFrame
        :func:`kernel_intervals` of the flow.
    diagnosis : pandas.DataFrame
        :func:`tcpmodels.traces.limits.limit_intervals` of the same flow (its own interval length).

    Returns
    -------
    pandas.DataFrame
        The kernel's columns, the diagnosis's (``limit``, ``reason``, ``position``, evidence) and
        ``agree`` (:func:`agrees`); kernel intervals no diagnosis interval covers are left out.
    """
    iv = diagnosis.sort_values("start_s", kind="stable").reset_index(drop=True)
    mid = ((kernel["start_s"] + kernel["end_s"]) / 2).to_numpy()
    j = np.searchsorted(iv["start_s"].to_numpy(), mid, side="right") - 1
    ok = (j >= 0) & (mid < iv["end_s"].to_numpy()[np.clip(j, 0, None)]) if len(iv) else np.zeros(len(mid), bool)
    right = iv.iloc[j[ok]].drop(columns=["interval", "start_s", "end_s"]).reset_index(drop=True)
    out = pd.concat([kernel[ok].reset_index(drop=True), right], axis=1)
    out["agree"] = agrees(out["limit"], out["kernel"])
    return out


def tune_signature(features: pd.DataFrame) -> dict:
    """The normalised max-min threshold of Sundaresan et al.'s signature that best separates the tuning flows.

    Parameters
    ----------
    features : pandas.DataFrame
        :func:`tcpmodels.traces.limits.congestion_signature` rows of the *tuning* runs with ``truth``
        (``"self-induced"`` or ``"external"``); rows without ``norm_diff`` are ignored.

    Returns
    -------
    dict
        ``norm_diff`` (the midpoint of the widest gap among the thresholds of highest accuracy),
        ``accuracy`` on the tuning flows [-], ``n`` flows, ``self_min`` and ``external_max`` [-].
    """
    f = features.dropna(subset=["norm_diff"])
    if not len(f) or set(f["truth"]) - {"self-induced", "external"}:
        raise ValueError("features must hold tuning flows with norm_diff and truth 'self-induced' or 'external'")
    v = np.sort(f["norm_diff"].to_numpy())
    cuts = np.concatenate([[v[0] - 1e-9], (v[1:] + v[:-1]) / 2, [v[-1] + 1e-9]])
    is_self = (f["truth"] == "self-induced").to_numpy()
    acc = np.array([np.mean((f["norm_diff"].to_numpy() >= c) == is_self) for c in cuts])
    best = cuts[acc == acc.max()]
    return {"norm_diff": float(np.median(best)), "accuracy": float(acc.max()), "n": int(len(f)),
            "self_min": float(f.loc[is_self, "norm_diff"].min()) if is_self.any() else np.nan,
            "external_max": float(f.loc[~is_self, "norm_diff"].max()) if (~is_self).any() else np.nan}


#: scenarios whose intervals score the kernel's classes: ``short`` is left out (transfers of 2-4 RTTs, where the
#: kernel's counters are dominated by the first write and the first rate samples, which it flags app-limited;
#: opportunity-limited is a property of the whole transfer, judged by the design in :func:`design_table`)
KERNEL_SCORED_SCENARIOS = ("rwnd", "sndbuf", "app", "self", "cross", "loss")
#: the bound both claims state
CLAIMED_SHARE = 0.90


def _spec(claim: str, part: str, paper_says: str, quantity: str):
    from tcpmodels.stats import ClaimSpec

    return ClaimSpec(claim=claim, part=part, paper_says=paper_says, quantity=quantity, direction=1,
                     smallest_effect=1e-3,
                     effect_source="the claim is a bound, not an effect: any share above 90 % supports it, one "
                                   "below contradicts it (0.1 percentage point, the resolution that matters)")


#: the claims, stated before the test seeds were scored (issue 52): one part per kernel class and capture point
CLAIM_SPECS = {
    **{("kernel", point, k): _spec(
        "L1 The capture alone tells the kernel's limit of each 100 ms interval",
        f"{k} intervals, captured at the {point}",
        ">= 90 % of the intervals the kernel labels this class are classified so (issue 52; at the sender)",
        f"share of the test runs' {k} intervals classified as the kernel says, minus 0.90 [-]")
       for point in ("sender", "receiver") for k in KERNEL_CLASSES},
    **{("signature", point): _spec(
        "L2 Self-induced and external congestion told apart by the slow-start RTT (Sundaresan et al. 2017)",
        f"self and cross runs, captured at the {point}",
        "up to 90 % accuracy in controlled experiments (Sundaresan et al., IMC 2017, Sec. 4); issue 52: >= 90 %",
        "share of the test runs' flows whose signature names the scenario's congestion (undecided counts as "
        "wrong), minus 0.90 [-]")
       for point in ("sender", "receiver")},
}


@_PARAMETERS.fill
def claims(intervals: pd.DataFrame, flows: pd.DataFrame, *, split: str = "test") -> pd.DataFrame:
    """The claims table (:func:`tcpmodels.stats.claims_table`) on one split of the dataset.

    Each part is a cluster bootstrap over runs (a run's intervals or flows are resampled together: they
    are not independent) of the share that agrees, minus 0.90: supported when its 95 % interval lies
    above 0, contradicted when below.

    Parameters
    ----------
    intervals : pandas.DataFrame
        ``limits_intervals.parquet`` (:func:`tcpmodels.experiments.limits.dataset.build_dataset`).
    {flows}
    split : {"test", "test2", "tuning"}
        Which runs to judge (``test2``: the second held-out set, :data:`~tcpmodels.experiments.limits.campaign.TEST2_SEEDS`).

    Returns
    -------
    pandas.DataFrame
        One row per :data:`CLAIM_SPECS` entry.
    """
    from tcpmodels.stats import bootstrap_statistic, claims_table, not_testable

    if split not in ("test", "test2", "tuning"):
        raise ValueError(f"split must be 'test', 'test2' or 'tuning'; got {split!r}")
    iv = intervals[(intervals["split"] == split) & intervals["scenario"].isin(KERNEL_SCORED_SCENARIOS)]
    fl = flows[(flows["split"] == split) & flows["scenario"].isin(("self", "cross"))]
    out = []

    def share(agree):
        return float(np.mean(agree)) - CLAIMED_SHARE

    for key, spec in CLAIM_SPECS.items():
        if key[0] == "kernel":
            sel = iv[(iv["point"] == key[1]) & (iv["kernel"] == key[2])]
            agree = sel["agree"].to_numpy(float)
            clusters = (sel["scenario"] + "_s" + sel["seed"].astype(str)).to_numpy()
            what = f"{int(agree.sum())} of {len(agree)} {key[2]} intervals agree"
        else:
            sel = fl[fl["point"] == key[1]]
            agree = (sel["congestion"] == sel["truth_congestion"]).to_numpy(float)
            clusters = (sel["scenario"] + "_s" + sel["seed"].astype(str)).to_numpy()
            what = (f"{int(agree.sum())} of {len(agree)} flows right "
                    f"({int((sel['congestion'] == 'undecided').sum())} undecided)")
        runs = len(set(clusters))
        if runs < 3:
            out.append(not_testable(spec, we_measured=what, why=f"{runs} run(s) hold such intervals; the bootstrap "
                                                                "over runs needs 3", n_runs=runs))
            continue
        v = bootstrap_statistic(spec, [agree], share, unit="run", clusters=clusters,
                                we_measured=f"{what}: share {agree.mean():.3f} over {runs} runs")
        out.append(_runs_at_observed_share(v))
    return claims_table(out)


def _runs_at_observed_share(v):
    """An inconclusive bound's ``runs_needed`` at the share observed, not at the 0.1-point resolution.

    The smallest effect of these claims only makes the verdict a plain comparison with 90 %; planned on it the
    power analysis asks for 10^5 runs. The runs that would separate the observed share from 90 % with 80 %
    power, from the bootstrap's per-run spread: ``((1.96 + 0.84) * sd_run / |share - 0.90|)^2``.
    """
    import dataclasses
    import math

    if v.verdict != INCONCLUSIVE or not (v.n_runs > 0 and np.isfinite(v.effect) and v.effect != 0):
        return v
    sd_run = (v.ci_high - v.ci_low) / (2 * 1.96) * math.sqrt(v.n_runs)
    needed = float(math.ceil(((1.96 + 0.84) * sd_run / abs(v.effect)) ** 2))
    return dataclasses.replace(v, runs_needed=needed, why=v.why + (
        f"; {needed:.0f} runs would separate the observed share from 90 % (80 % power, the per-run spread "
        "implied by the bootstrap)"))


@_PARAMETERS.fill
def confusion(intervals: pd.DataFrame, *, split: str = "test", point: str = "sender") -> pd.DataFrame:
    """Intervals by the kernel's label (rows) and the diagnosis (columns), one split and capture point.

    Parameters
    ----------
    {intervals, split}
    point : {"sender", "receiver"}

    Returns
    -------
    pandas.DataFrame
        Counts; rows :data:`KERNEL_CLASSES`, columns the diagnosis classes
        (:data:`tcpmodels.traces.limits.CLASSES`), and ``agree`` (share per row).
    """
    from tcpmodels.traces.limits import CLASSES

    iv = intervals[(intervals["split"] == split) & (intervals["point"] == point)
                   & intervals["scenario"].isin(KERNEL_SCORED_SCENARIOS)]
    tab = pd.crosstab(iv["kernel"], iv["limit"]).reindex(index=list(KERNEL_CLASSES), columns=list(CLASSES),
                                                         fill_value=0)
    tab["agree"] = iv.groupby("kernel")["agree"].mean().reindex(tab.index)
    return tab


@_PARAMETERS.fill
def design_table(intervals: pd.DataFrame, flows: pd.DataFrame, *, split: str = "test") -> pd.DataFrame:
    """Share of each scenario's time the diagnosis gives each class (the design's view, which the kernel lacks).

    Parameters
    ----------
    {intervals}
    flows : pandas.DataFrame
        ``limits_flows.parquet`` (for the short transfers: the share of flows called opportunity-limited).
    {split}

    Returns
    -------
    pandas.DataFrame
        Rows (scenario, capture point), columns the diagnosis classes [-], ``expected`` (the class the
        scenario was built for).
    """
    from tcpmodels.experiments.limits.campaign import SCENARIOS
    from tcpmodels.traces.limits import CLASSES

    iv = intervals[intervals["split"] == split]
    tab = pd.crosstab([iv["scenario"], iv["point"]], iv["limit"], normalize="index").reindex(
        columns=list(CLASSES), fill_value=0.0)
    tab["expected"] = [SCENARIOS[s] for s, _ in tab.index]
    return tab


def load_dataset(data_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The shipped dataset: ``(intervals, flows, provenance)``.

    Parameters
    ----------
    data_dir : str or Path
        The folder holding ``datasets/limits_*`` (the repository's ``data``).

    Returns
    -------
    tuple
        ``limits_intervals.parquet``, ``limits_flows.parquet`` (DataFrames) and the provenance (dict).

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that writes it.
    """
    d = Path(data_dir) / "datasets"
    files = [d / "limits_intervals.parquet", d / "limits_flows.parquet", d / "limits_provenance.json"]
    for f in files:
        if not f.exists():
            raise FileNotFoundError(f"{f} is missing: python -m tcpmodels.experiments.limits dataset writes it")
    return pd.read_parquet(files[0]), pd.read_parquet(files[1]), json.loads(files[2].read_text())


@_PARAMETERS.fill
def agreement_table(intervals: pd.DataFrame) -> pd.DataFrame:
    """Share of intervals that agree with the kernel, per scenario, capture point and split.

    Parameters
    ----------
    {intervals}

    Returns
    -------
    pandas.DataFrame
        Rows scenario, columns (split, point): the share that agrees [-] (``short`` included, though
        not scored by the claims).
    """
    return intervals.pivot_table(index="scenario", columns=["split", "point"], values="agree", aggfunc="mean")


@_PARAMETERS.fill
def signature_table(flows: pd.DataFrame, *, split: str = "test") -> pd.DataFrame:
    """Sundaresan's features and verdicts of the self and cross flows of one split.

    Parameters
    ----------
    {flows, split}

    Returns
    -------
    pandas.DataFrame
        scenario, seed, point, flow, slow-start samples, ``rtt_min_s``, ``rtt_max_s``, ``cov``,
        ``norm_diff``, ``congestion`` and ``truth_congestion``.
    """
    f = flows[(flows["split"] == split) & flows["scenario"].isin(("self", "cross"))]
    return f[["scenario", "seed", "point", "flow", "samples", "rtt_min_s", "rtt_max_s", "cov", "norm_diff",
              "congestion", "truth_congestion"]].reset_index(drop=True)


@_PARAMETERS.fill
def plot_confusion(intervals: pd.DataFrame, *, split: str = "test") -> Figure:
    """The confusion matrices of both capture points side by side, each row normalised (share of the kernel's class).

    Parameters
    ----------
    {intervals, split}

    Returns
    -------
    matplotlib.figure.Figure
        Two heat maps (sender, receiver) with the counts written in the cells.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), constrained_layout=True, sharey=True)
    for ax, point in zip(axes, ("sender", "receiver")):
        tab = confusion(intervals, split=split, point=point).drop(columns="agree")
        share = tab.div(tab.sum(axis=1).replace(0, np.nan), axis=0).fillna(0.0)
        ax.imshow(share.to_numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
        for (i, j), n in np.ndenumerate(tab.to_numpy()):
            if n:
                ax.text(j, i, str(n), ha="center", va="center", fontsize=8,
                        color="white" if share.iat[i, j] > 0.6 else "black")
        ax.set_xticks(range(tab.shape[1]), [c.replace("_", "\n") for c in tab.columns], fontsize=8)
        ax.set_yticks(range(tab.shape[0]), [c.replace("_", " ") for c in tab.index])
        ax.set_title(f"captured at the {point} ({split} runs)")
        ax.set_xlabel("diagnosis from the capture")
    axes[0].set_ylabel("kernel (tcp_info)")
    return fig
