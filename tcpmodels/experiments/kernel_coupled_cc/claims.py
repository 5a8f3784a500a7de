"""The claims of the validation (RFC 6356 Sec. 2 goals, reference equivalence, the tm_olia timeout explanation), judged."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tcpmodels.experiments.kernel_coupled_cc.ratios import disjoint_pairs, goal_ratios, mean_ratio_ci, pairs_to_decide

__all__ = ["RATE_TOLERANCE", "RTO_SHARE_EFFECT", "claims", "timeout_table", "rto_share_ci", "timeout_difference", "summarize"]


#: Margin of the reference implementations' ratios (rate), and of goal 1's non-inferiority. [-]
RATE_TOLERANCE = 0.05
#: Smallest timeouts-per-loss-event difference that matters for the tm_olia explanation (one in a hundred). [-]
RTO_SHARE_EFFECT = 0.01
_RFC = "RFC 6356 Sec. 2"


def _log_ratios(test, ref) -> np.ndarray:
    a, b = np.asarray(test, dtype=float), np.asarray(ref, dtype=float)
    ok = (a > 0) & (b > 0)
    return np.log(a[ok] / b[ok])


def _spec(claim: str, part: str, says: str, quantity: str, delta: float, source: str, direction: int = 1):
    from tcpmodels.stats import ClaimSpec

    return ClaimSpec(claim=claim, part=part, paper_says=says, quantity=quantity, smallest_effect=delta,
                     effect_source=source, direction=direction)


def _shared_claims(g: pd.DataFrame, v: str, coupled: bool, engine: str) -> list:
    from tcpmodels.stats import difference

    lr = _log_ratios(g["rate_bps"], g["tcp_rate_bps"])
    ratio = f"MPTCP / TCP rate {np.exp(lr.mean()):.3f} (geometric mean over {len(lr)} repetitions)"
    out = []
    if coupled:
        out.append(difference(_spec(f"Goal (a) [{engine}, {v}] do no harm: a coupled connection takes about one TCP "
                                    "flow's share on a shared link", "MPTCP / TCP rate below 1.5", _RFC,
                                    "log 2 - log(MPTCP / TCP rate) per repetition", float(np.log(2 / 1.5)),
                                    "halfway between one TCP share (1) and two uncoupled subflows' (2)"),
                              np.log(2.0) - lr, we_measured=ratio, why="unit: the repetition (interleaved runs)"))
    else:
        out.append(difference(_spec(f"Goal (a) [{engine}, {v}] contrast: uncoupled subflows take about two TCP "
                                    "shares", "MPTCP / TCP rate above 1.5", _RFC, "log(MPTCP / TCP rate) per repetition",
                                    float(np.log(1.5)), "halfway between one TCP share (1) and two (2)"),
                              lr, we_measured=ratio, why="unit: the repetition (interleaved runs)"))
    out.append(difference(_spec(f"Goal 1 [{engine}, {v}] improve throughput: at least one TCP flow's rate on the best "
                                "path (here the shared link)", "MPTCP / TCP rate not below 1 (non-inferiority, 5 %)",
                                _RFC, "log(MPTCP / TCP rate / 0.95) per repetition", float(-np.log(1 - RATE_TOLERANCE)),
                                "non-inferiority margin 5 % (the reference tests' tolerance): supported above 1"),
                          lr - np.log(1 - RATE_TOLERANCE), we_measured=ratio, why="unit: the repetition"))
    return out


def claims(rows: pd.DataFrame, ns3: pd.DataFrame | None = None, *, coupled: Sequence[str] = ("tm_lia", "tm_olia"),
           uncoupled: str = "reno", tolerance: float = 0.02) -> pd.DataFrame:
    """The validation's claims, judged through :class:`tcpmodels.stats.ClaimSpec` (tests in the module docstring).

    Parameters
    ----------
    rows : pandas.DataFrame
        The dataset's rows (``kernel_coupled_cc.parquet``).
    ns3 : pandas.DataFrame, optional
        The ns-3 shared-link runs (``kernel_coupled_cc_ns3.parquet``: variants ``ns3_lia``, ``ns3_uncoupled``).
    coupled, uncoupled : str
        The coupled variants and the uncoupled contrast on the kernel.
    tolerance : float
        Goal (c): allowed relative error of alpha and of OLIA's increase. [-]

    Returns
    -------
    pandas.DataFrame
        A claims table (:data:`tcpmodels.stats.VERDICT_COLUMNS`); Holm's families ``"kernel"`` and ``"ns-3"``.
    """
    from tcpmodels.stats import Family, claims_table, equivalence, inequality, percentile_interval

    out: list = []
    if "experiment" not in rows:
        return claims_table(out)
    reno = rows[rows.experiment == "reno"]
    if len(reno) and reno["rep"].nunique() >= 2:
        piv = reno.pivot_table(index="rep", columns="variant", values=["rate_bps", "retransmits"])
        for col, tol in (("rate_bps", RATE_TOLERANCE), ("retransmits", 0.10)):
            lr = _log_ratios(piv[col]["tm_reno"], piv[col]["reno"])
            out.append(equivalence(_spec("Reference [kernel, tm_reno] tm_reno behaves as the kernel's reno",
                                         f"{'rate' if col == 'rate_bps' else 'retransmits'} ratio within ±{tol:.0%}",
                                         "the BPF reference equals the kernel's", f"log(tm_reno / reno), {col}, per pair",
                                         float(np.log(1 + tol)), f"±{tol:.0%}, stated before the runs"),
                                   lr, we_measured=f"ratio {np.exp(lr.mean()):.4f} over {len(lr)} pairs",
                                   why="unit: the interleaved pair"))
    cub = rows[rows.experiment == "cubic"]
    if len(cub) and cub["rep"].nunique() >= 2:
        piv = cub.pivot_table(index="rep", columns="variant", values="rate_bps")
        lr = _log_ratios(piv["tm_cubic_x"], piv["cubic"])
        out.append(equivalence(_spec("Reference [kernel, tm_cubic_x] tm_cubic_x (x = 1) behaves as the kernel's cubic",
                                     f"rate ratio within ±{RATE_TOLERANCE:.0%}", "the BPF reference equals the kernel's",
                                     "log(tm_cubic_x / cubic) rate, per pair", float(np.log(1 + RATE_TOLERANCE)),
                                     "±5 %, stated before the runs"),
                               lr, we_measured=f"ratio {np.exp(lr.mean()):.4f} over {len(lr)} pairs",
                               why="unit: the interleaved pair"))
    for v, g in rows[rows.experiment == "shared"].groupby("variant"):
        if len(g) >= 2:
            out += _shared_claims(g, v, v in coupled, "kernel")
    for v, pair in disjoint_pairs(rows, coupled, uncoupled):
        out.append(_goal_b(v, _log_ratios(pair[v], pair[uncoupled]), pair))
    goals = goal_ratios(rows, coupled=coupled, uncoupled=uncoupled, tolerance=tolerance)
    for key, what, variant in (("goal_c_alpha_tm_lia", "alpha", "tm_lia"), ("goal_c_incr_tm_olia", "increase", "tm_olia")):
        g = goals.get(key)
        if not g or g.get("method") != "seqcount" or not g["n_distinct"]:
            continue
        out.append(inequality(_spec(f"Goal (c) [kernel, {variant}] the in-kernel {what} is the model's",
                                    f"every consistent record within {tolerance:.0%}", f"{_RFC} (LIA) / OLIA's increase",
                                    "largest |relative error| over the distinct consistent records [-]", tolerance,
                                    f"{tolerance:.0%}, stated before the runs", direction=-1),
                              g["max"], tolerance,
                              we_measured=f"max |error| {g['max']:.2e} over {g['n_distinct']} distinct consistent records "
                                          f"({g['n_torn']} torn reads counted, not tested)",
                              why="sequence counters around each copy; the model on each record's own inputs"))
    for setting in ("shared", "disjoint"):
        tv = timeout_difference(rows, setting=setting)
        if tv:
            out.append(percentile_interval(
                _spec(f"Timeouts [kernel, tm_olia vs tm_lia] tm_olia's smaller subflow loses by timeouts more often "
                      f"({setting})", "pooled timeouts per loss event, tm_olia minus tm_lia", "the explanation offered "
                      "for tm_olia's low share on the shared link", "timeouts per loss event of the smaller subflow, "
                      "tm_olia - tm_lia [-]", RTO_SHARE_EFFECT, "argued: one more timeout per hundred loss events"),
                tv["difference"], tv["boot"], n_runs=tv["runs_olia"] + tv["runs_lia"],
                what="the runs of each variant resampled independently",
                we_measured=f"tm_olia {tv['olia']:.3f} vs tm_lia {tv['lia']:.3f} ({tv['runs_olia']} and {tv['runs_lia']} runs)"))
    if ns3 is not None and len(ns3):
        for v, g in ns3.groupby("variant"):
            if len(g) >= 2:
                out += _shared_claims(g, v, v == "ns3_lia", "ns-3")
    return claims_table(out, family=Family("", "claim", r"\[(ns-3),", default="kernel"))


def _goal_b(variant: str, log_ratio: np.ndarray, pair: pd.DataFrame):
    """Goal (b) of one coupled variant: its share on the less lossy path over the uncoupled share, above 1 by 5 %."""
    from tcpmodels.stats import difference

    return difference(_spec(f"Goal (b) [kernel, {variant}] balance congestion: move traffic to the less lossy path",
                            "share on the less lossy path / uncoupled share above 1", _RFC,
                            "log(share / uncoupled share of the same repetition)", float(np.log(1 + RATE_TOLERANCE)),
                            "5 %, the tolerance of the reference tests"),
                      log_ratio, we_measured=f"share {pair.iloc[:, 0].mean():.3f} vs uncoupled {pair.iloc[:, 1].mean():.3f} "
                                             f"({len(log_ratio)} repetitions)", why="unit: the repetition")


def timeout_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Retransmission timeouts per loss event of the smaller and the larger subflow, per variant and setting.

    Parameters
    ----------
    rows : pandas.DataFrame
        Dataset rows; those of experiment ``timeouts`` (one per run: the counters of the last map
        read, the smaller subflow being the one with fewer delivered segments) are used.

    Returns
    -------
    pandas.DataFrame
        Indexed by (``setting``, ``variant``): ``runs``, ``smaller_loss_events``,
        ``smaller_rto_events``, ``smaller_rto_per_loss`` (pooled over runs), the same for
        ``larger``, ``smaller_rto_per_loss_ci_low`` / ``_ci_high`` (95 % bootstrap interval
        over runs, :func:`rto_share_ci`; degenerate when there is no timeout at all) and
        ``smaller_rto_per_loss_upper95`` (one-sided 95 % Clopper-Pearson upper bound, the loss events
        taken as independent trials and the timeouts, at most one per loss event, as successes);
        with ``delivered_segments`` in the rows also the delivered segments of each subflow summed
        over runs and the loss events per 1000 delivered segments (pooled) [segments].
    """
    from scipy import stats

    cols = ["runs", "smaller_loss_events", "smaller_rto_events", "smaller_rto_per_loss", "smaller_rto_per_loss_ci_low",
            "smaller_rto_per_loss_ci_high", "smaller_rto_per_loss_upper95", "larger_loss_events", "larger_rto_events", "larger_rto_per_loss",
            "smaller_delivered_segments", "larger_delivered_segments", "smaller_loss_events_per_1000_segments",
            "larger_loss_events_per_1000_segments"]
    t = rows[rows.experiment == "timeouts"] if "experiment" in rows else rows.iloc[0:0]
    out = {}
    for (setting, variant), g in t.groupby(["setting", "variant"]):
        sl, sr = g.smaller_loss_events.astype(float), g.smaller_rto_events.astype(float)
        ll, lr = g.larger_loss_events.astype(float), g.larger_rto_events.astype(float)
        ci = rto_share_ci(sr, sl)
        out[(setting, variant)] = {"runs": len(g), "smaller_loss_events": sl.sum(), "smaller_rto_events": sr.sum(),
                                   "smaller_rto_per_loss": sr.sum() / sl.sum() if sl.sum() else np.nan,
                                   "smaller_rto_per_loss_ci_low": ci[0], "smaller_rto_per_loss_ci_high": ci[1],
                                   "smaller_rto_per_loss_upper95": float(stats.beta.ppf(0.95, min(sr.sum(), sl.sum()) + 1,
                                                                                        max(sl.sum() - sr.sum(), 0.0)))
                                   if sl.sum() > sr.sum() else 1.0,
                                   "larger_loss_events": ll.sum(), "larger_rto_events": lr.sum(),
                                   "larger_rto_per_loss": lr.sum() / ll.sum() if ll.sum() else np.nan}
        if "delivered_segments" in g and g.delivered_segments.map(lambda v: isinstance(v, str)).all():
            dl = np.array([json.loads(v) for v in g.delivered_segments], dtype=float)
            sd, ld = dl[:, 0].sum(), dl[:, -1].sum()
            out[(setting, variant)].update({
                "smaller_delivered_segments": sd, "larger_delivered_segments": ld,
                "smaller_loss_events_per_1000_segments": 1e3 * sl.sum() / sd if sd else np.nan,
                "larger_loss_events_per_1000_segments": 1e3 * ll.sum() / ld if ld else np.nan})
    df = pd.DataFrame.from_dict(out, orient="index", columns=cols)
    df.index = pd.MultiIndex.from_tuples(df.index, names=["setting", "variant"]) if len(df) else df.index
    return df


def rto_share_ci(rto: ArrayLike, losses: ArrayLike, *, other: tuple[ArrayLike, ArrayLike] | None = None,
                 confidence: float = 0.95, resamples: int = 4000, seed: int = 0) -> tuple[float, float]:
    """95 % percentile-bootstrap interval (runs resampled) of the pooled ratio sum(rto) / sum(losses),
    or, with ``other``, of its difference to ``other``'s pooled ratio (both resampled independently).

    Parameters
    ----------
    rto, losses : array_like
        Per run: timeouts and loss events. [-]
    other : tuple of array_like, optional
        (rto, losses) of the runs of the compared variant. [-]
    confidence : float
        Confidence level. [-]
    resamples : int
        Bootstrap resamples. [-]
    seed : int
        Seed of the resampling. [-]

    Returns
    -------
    tuple of float
        (low, high); NaN when there are fewer than two runs (on either side). [-]
    """
    if np.asarray(rto).size < 2 or (other is not None and np.asarray(other[0]).size < 2):
        return (np.nan, np.nan)
    v = _pooled_ratio_boot(rto, losses, other, resamples=resamples, seed=seed)
    q = np.nanquantile(v, [0.5 - confidence / 2, 0.5 + confidence / 2])
    return (float(q[0]), float(q[1]))


def _pooled_ratio_boot(rto, losses, other, *, resamples: int, seed: int) -> np.ndarray:
    """The pooled ratio sum(rto) / sum(losses) on each resample of the runs (minus ``other``'s, resampled after)."""
    rng = np.random.default_rng(seed)

    def boot(r, n_loss):
        r, n_loss = np.asarray(r, dtype=float), np.asarray(n_loss, dtype=float)
        idx = rng.integers(0, r.size, (resamples, r.size))
        num, den = r[idx].sum(axis=1), n_loss[idx].sum(axis=1)
        return np.divide(num, den, out=np.full(resamples, np.nan), where=den > 0)

    v = boot(rto, losses)
    return v - boot(*other) if other is not None else v


def timeout_difference(rows: pd.DataFrame, *, setting: str = "shared", resamples: int = 4000,
                       seed: int = 0) -> dict:
    """The smaller subflow's pooled timeouts per loss event, tm_olia minus tm_lia, with its bootstrap distribution.

    The numbers behind the test of the explanation offered for tm_olia's low share on the shared link
    (judged by :func:`claims`).

    Parameters
    ----------
    rows : pandas.DataFrame
        Dataset rows (experiment ``timeouts``).
    setting : str
        ``shared`` or ``disjoint``.
    resamples, seed : int
        Bootstrap resamples (the runs of each variant resampled independently) and their seed.

    Returns
    -------
    dict
        ``olia``, ``lia`` (pooled timeouts per loss event of the smaller subflow), ``difference`` with
        ``ci_low`` / ``ci_high`` (95 % percentile interval, :func:`rto_share_ci`), ``boot`` (the resampled
        differences), ``runs_olia``, ``runs_lia`` (empty without two runs of both).
    """
    if not {"experiment", "setting"} <= set(rows):
        return {}
    t = rows[(rows.experiment == "timeouts") & (rows.setting == setting)]
    o, li = t[t.variant == "tm_olia"], t[t.variant == "tm_lia"]
    if len(o) < 2 or len(li) < 2:
        return {}
    po = o.smaller_rto_events.sum() / o.smaller_loss_events.sum() if o.smaller_loss_events.sum() else np.nan
    pl = li.smaller_rto_events.sum() / li.smaller_loss_events.sum() if li.smaller_loss_events.sum() else np.nan
    lo, hi = rto_share_ci(o.smaller_rto_events, o.smaller_loss_events,
                          other=(li.smaller_rto_events, li.smaller_loss_events), resamples=resamples, seed=seed)
    boot = _pooled_ratio_boot(o.smaller_rto_events, o.smaller_loss_events, (li.smaller_rto_events, li.smaller_loss_events),
                              resamples=resamples, seed=seed)
    return {"olia": float(po), "lia": float(pl), "difference": float(po - pl), "ci_low": lo, "ci_high": hi,
            "boot": boot, "runs_olia": int(len(o)), "runs_lia": int(len(li))}


def summarize(rows: pd.DataFrame) -> dict:
    """The item-4 numbers of the issue from the rows (see the module docstring).

    Parameters
    ----------
    rows : pandas.DataFrame
        The rows of :func:`run_validation` (or of the dataset).

    Returns
    -------
    dict
        Per criterion: ratios with 95 % intervals (reno, cubic; the verdicts are :func:`claims`'), K ratios per reading
        (median, min, max, epochs), MPTCP/TCP ratios and shares per variant, alpha and OLIA
        increase errors (all [-]).
    """
    out = {}
    if "experiment" not in rows:
        return out
    reno = rows[rows.experiment == "reno"]
    if reno.rep.nunique() >= 2:
        reno = reno.pivot_table(index="rep", columns="variant", values=["rate_bps", "retransmits"])
        for col, tol in (("rate_bps", 0.05), ("retransmits", 0.10)):
            ci = mean_ratio_ci(reno[col]["tm_reno"], reno[col]["reno"])
            out[f"reno_{col}_ratio"] = {**ci, "tolerance": tol,
                                        "pairs_to_decide": pairs_to_decide(reno[col]["tm_reno"], reno[col]["reno"], tol)}
    cub = rows[rows.experiment == "cubic"]
    if cub.rep.nunique() >= 2:
        cub = cub.pivot_table(index="rep", columns="variant", values="rate_bps")
        ci = mean_ratio_ci(cub["tm_cubic_x"], cub["cubic"])
        out["cubic_rate_ratio"] = {**ci, "tolerance": 0.05}
    for exp in ("cubic", "cubic_multiply", "cubic_divide"):
        sub = rows[rows.experiment == exp]
        for variant, g in sub.groupby("variant"):
            epochs = [e for v in g["k_epochs"] for e in json.loads(v)]
            if epochs:
                r = np.array([e["k_observed_s"] / e["k_model_reading_s"] for e in epochs])
                out[f"{exp}_{variant}_k_ratio"] = {"median": float(np.median(r)), "min": float(r.min()),
                                                   "max": float(r.max()), "n_epochs": int(r.size),
                                                   "within_10pct": bool(np.all(np.abs(r - 1) <= 0.10))}
    for exp, col in (("shared", "ratio_mptcp_tcp"), ("disjoint", "share_less_lossy")):
        for variant, g in rows[rows.experiment == exp].groupby("variant"):
            v = g[col].astype(float)
            out[f"{exp}_{variant}_{col}"] = {"mean": float(v.mean()), "min": float(v.min()), "max": float(v.max()),
                                            "n": int(v.size)}
            if exp == "shared" and len(g) >= 2:   # MPTCP / TCP over runs, with a 95 % interval
                out[f"{exp}_{variant}_{col}"].update(mean_ratio_ci(g["rate_bps"], g["tcp_rate_bps"]))
    # map records: single reads (before the sequence counters) and consistent ones; torn ones in goal_ratios
    clean = rows[~(rows["consistent"] == False)] if "consistent" in rows else rows   # noqa: E712 (NaN: single read)
    g = clean[clean.experiment == "olia_incr"]
    if len(g):
        e = g["incr_rel_error_of_terms"].astype(float).abs()
        out["olia_incr_abs_rel_error_of_terms"] = {"max": float(e.max()), "median": float(e.median()), "n": int(e.size)}
    for variant, g in clean[clean.experiment == "alpha"].groupby("variant"):
        e = g["alpha_rel_error"].astype(float).abs()
        out[f"alpha_{variant}_abs_rel_error"] = {"max": float(e.max()), "median": float(e.median()), "n": int(e.size)}
    out.update(goal_ratios(rows))
    for setting in ("shared", "disjoint"):
        tv = timeout_difference(rows, setting=setting)
        if tv:
            out[f"timeouts_smaller_subflow_{setting}_olia_vs_lia"] = {k: v for k, v in tv.items() if k != "boot"}
    return out
