"""P5's claims, each part judged by :mod:`tcpmodels.stats` (the ns-3 run, or the seed where runs share files, as the unit).

The tests, stated before the data is seen:

* **C5.1** alpha near 1 gives lower loss: per run at 5 Mbit/s, whole-run loss (S + G1) at
  alpha 1.05 minus at alpha 1.65, paired by client count and seed; claimed negative;
  smallest effect 1 percentage point (a tenth of the paper's own contrast: over 10 % with
  32 clients at alpha 1.65, Fig. 3, against almost none at 1.05, Fig. 2).
* **C5.2** split in three parts at alpha 1.65, 5 Mbit/s: (a) no G1 loss up to 16 clients,
  TOST with margin 0.1 percentage point (argued: below what Fig. 5's axis, up to about
  10 %, can show); (b) G1 loss with 24 and 32 clients, claimed positive, smallest effect
  0.1 point; (c) "depends on losses at the source": in runs where G1 loses, S lost first
  (sign test over those runs, of every seed; only the small-server-queue variant has losses at S).
* **C5.3** split in two, at alpha 1.05, with the *seed* as the unit (client c draws the
  same files in every run of a seed, so runs of one seed share their largest file):
  (a) the largest 1 % of downloads carry more than half of the bytes (quantity: share
  minus 0.5, smallest effect 0.05, argued: "dominate" is a clear majority);
  (b) the largest download sets the end of the run in most runs (sign test).
* **C5.4** H = (3 - alpha)/2: per run, the median H over the estimators minus the
  prediction; TOST over the runs with margin 0.1 (argued: half the distance between the
  predictions of neighbouring alphas, 0.15, would confuse shapes; 0.1 keeps them apart);
  the unit is the run (each long run has its own seed; with one run per alpha the unit is
  the alpha). Separately for the ns-3 long runs and the kernel testbed.
* **C5.4 slope**, beside the pooled residuals (which a line through the model at mid-grid with
  half its slope would pass): the least-squares slope of the per-run median H on alpha, TOST
  against the model's -0.5 with margin ``HURST_MARGIN / (alpha_max - alpha_min)`` of the
  configured alpha grid (0.1 / 0.9 = 0.11 for 1.05-1.95), argued before computing it: the pooled
  test tolerates a constant offset of ±0.1 at every alpha; the trend must not drift by more than
  that same 0.1 from one end of the grid to the other, else "follows (3 - alpha)/2" holds at one
  end only (:func:`tcpmodels.stats.slope_equivalence`, one point per run).

Holm's adjustment runs within each engine (family ``"P5 ns-3"``: C5.1-C5.3 and the ns-3 C5.4
parts; ``"P5 kernel"``: the kernel testbed's C5.4 parts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tcpmodels.models.heavytail import hurst_from_alpha
from tcpmodels.papers.common import claim_spec as _spec
from tcpmodels.papers.p5_selfsimilar.data import P5Dataset
from tcpmodels.papers.phrases import verdict_counts
from tcpmodels.stats import (
    Family,
    Headline,
    claims_table,
    difference,
    direction_count,
    equivalence,
    not_testable,
    slope_equivalence,
)

__all__ = ["claims", "LOSS_EFFECT_PCT", "G1_MARGIN_PCT", "DOMINANCE_EFFECT", "HURST_MARGIN", "MODEL_SLOPE",
           "slope_margin", "family", "answer", "headline"]

#: smallest difference in whole-run loss that matters for C5.1. [percentage points]
LOSS_EFFECT_PCT = 1.0
#: G1 loss below this counts as none (C5.2). [percentage points]
G1_MARGIN_PCT = 0.1
#: byte share of the top 1 % above one half that counts as "dominate" (C5.3). [-]
DOMINANCE_EFFECT = 0.05
#: equivalence margin of measured H around (3 - alpha)/2 (C5.4). [-]
HURST_MARGIN = 0.1
#: d H / d alpha of H = (3 - alpha)/2. [-]
MODEL_SLOPE = -0.5


def slope_margin(alphas: Sequence[float] | np.ndarray) -> float:
    """The margin of the C5.4 slope test: ``HURST_MARGIN / (alpha_max - alpha_min)`` of the configured grid.

    Parameters
    ----------
    alphas : iterable of float
        The alphas the runs were configured with (the setting, not a measurement). [-]

    Returns
    -------
    float
        The largest slope error whose drift over the grid stays within ``HURST_MARGIN``; NaN for fewer
        than two alphas. [-]
    """
    a = np.unique(np.asarray(list(alphas), dtype=float))
    return HURST_MARGIN / float(a.max() - a.min()) if len(a) > 1 else float("nan")

_C51 = "C5.1 alpha close to 1 (more self-similar) gives lower loss rates"
_C52 = ("C5.2 bottleneck loss is not proportional to the client count; it appears only with many clients and "
        "depends on losses at the source")
_C53 = "C5.3 a few very large files dominate throughput and duration"


def _c51(runs: pd.DataFrame) -> list:
    r = runs[(runs["case"] == "main") & np.isclose(runs["backbone_mbps"], 5.0)]
    r = r.assign(loss_pct=100 * (r["loss_s"] + r["loss_g1"]))
    lo = r[np.isclose(r["alpha"], 1.05)].set_index(["n_clients", "seed"])["loss_pct"]
    hi = r[np.isclose(r["alpha"], 1.65)].set_index(["n_clients", "seed"])["loss_pct"]
    d = (lo - hi).dropna()
    spec = _spec(_C51, "loss at alpha 1.05 minus at 1.65 (5 Mbit/s, S + G1)",
                 "Figs. 2-3: at 5 Mbit/s loss at S only with 32 clients at alpha 1.05, over 10 % with 32 clients "
                 "at alpha 1.65", "whole-run loss difference per run pair [percentage points]", LOSS_EFFECT_PCT,
                 "a tenth of the paper's >10 % at 32 clients (Fig. 3)", direction=-1)
    return [difference(spec, d.to_numpy(),
                       we_measured="per (clients, seed): " + ", ".join(f"{n:g}/{s}: {v:+.2f}" for (n, s), v in d.items()),
                       why="runs paired by client count and seed; runs of one seed share the first clients' files")]


def _c52(runs: pd.DataFrame, onset_altq: pd.DataFrame) -> list:
    says = ("Fig. 5 (alpha 1.65, 5 Mbit/s): no loss at G1 with 16 clients; 24 and 32 similar at 2-6 s; with 32 it "
            "persists after 10 s; G1 loss starts ~2 s after the source's")
    r = runs[(runs["case"] == "main") & np.isclose(runs["backbone_mbps"], 5.0) & np.isclose(runs["alpha"], 1.65)]
    few = 100 * r.loc[r["n_clients"] <= 16, "loss_g1"]
    many = 100 * r.loc[r["n_clients"] >= 24, "loss_g1"]
    out = [
        equivalence(_spec(_C52, "(a) no G1 loss up to 16 clients", says, "G1 loss per run [percentage points]",
                          G1_MARGIN_PCT, "argued: below what Fig. 5's axis can show"), few.to_numpy(),
                    we_measured=f"G1 loss in {len(few)} runs with 8-16 clients: max {few.max():.3f} %",
                    why="runs at alpha 1.65 and 5 Mbit/s, main grid; runs of one seed share the first clients' files"),
        difference(_spec(_C52, "(b) G1 loss with 24-32 clients", says, "G1 loss per run [percentage points]",
                         G1_MARGIN_PCT, "argued: the same 0.1 point"), many.to_numpy(),
                   we_measured="G1 loss per run with 24-32 clients: " + ", ".join(f"{x:.2f} %" for x in many),
                   why="with (a) this is the paper's threshold: no loss below, loss above, not in proportion"),
    ]
    spec_c = _spec(_C52, "(c) G1 loses only after the source S has lost", says,
                   "first G1 loss time minus first S loss time per run [s]", 0.5, "'most' means more than half")
    both = onset_altq.dropna(subset=["first_loss_g1_s"]) if len(onset_altq) else onset_altq
    if len(both) == 0:
        out.append(not_testable(spec_c, we_measured="no run with G1 loss in the small-server-queue variant",
                                why="with 3000-packet queues S never drops in ns-3 (its link is faster than the "
                                    "bottleneck), so only the small-queue variant can show it"))
    else:
        lag = (both["first_loss_g1_s"] - both["first_loss_s_s"].fillna(np.inf)).to_numpy(float)
        lag = np.where(np.isfinite(lag), lag, -1.0)  # G1 lost and S never did: against the claim
        runs = ", ".join(f"alpha {a:g} {bw:g} Mbit/s {n:g} clients seed {sd:d}: "
                         + ("S never lost" if x == -1.0 and np.isnan(s_) else f"lag {x:+.1f} s")
                         for a, bw, n, sd, s_, x in zip(both["alpha"], both["backbone_mbps"], both["n_clients"],
                                                        both["seed"].astype(int), both["first_loss_s_s"], lag))
        u = sorted(onset_altq["seed"].astype(int).unique())
        seeds = ("seed " if len(u) == 1 else "seeds ") + ", ".join(str(x) for x in u)
        out.append(direction_count(spec_c, lag, we_measured=f"runs with G1 loss (50-packet S queue): {len(lag)} of "
                                   f"{len(onset_altq)}; {runs}",
                                   why="with 3000-packet queues S never drops in ns-3; judged on the "
                                       f"small-server-queue variant, every run of it the dataset holds ({seeds}; "
                                       "a run with G1 loss is a unit whatever its seed)"))
    return out


def _c53(finish: pd.DataFrame) -> list:
    says = ("Figs. 6, 8, 10: with alpha 1.05, 16 clients finished after 24 because one or two huge files kept going; "
            "oscillating throughput when a few huge files are alone on the link")
    a = finish[np.isclose(finish["alpha"], finish["alpha"].min())]
    per_seed = a.groupby(["backbone_mbps", "seed"]).agg(share=("top1pct_rx_share", "mean"),
                                                        ends=("largest_dominates_end", "mean"))
    return [
        difference(_spec(_C53, "(a) the largest 1 % of downloads carry most of the bytes", says,
                         "byte share of the top 1 % minus 0.5, per seed [-]", DOMINANCE_EFFECT,
                         "argued: 'dominate' is a clear majority"), (per_seed["share"] - 0.5).to_numpy(),
                   we_measured="top-1 % byte share per (backbone, seed): "
                               + ", ".join(f"{b:g} Mbit/s/{s}: {v:.0%}" for (b, s), v in per_seed["share"].items()),
                   why="unit is the seed: runs of one seed share their largest files"),
        direction_count(_spec(_C53, "(b) the largest download sets the end of the run", says,
                              "largest download still running at the end, per seed", 0.5,
                              "'dominate duration' in most seeds"), (per_seed["ends"] - 0.5).to_numpy(),
                        we_measured="share of runs where the largest download runs to the end, per seed: "
                                    + ", ".join(f"{v:.0%}" for v in per_seed["ends"]),
                        why="unit is the seed; a seed counts for the claim when most of its runs end with the "
                            "largest download"),
    ]


def _c54(h: pd.DataFrame, run_key: str, claim: str, series: str) -> object:
    spec = _spec(claim, f"median H over estimators within ±{HURST_MARGIN:g} of (3 - alpha)/2 ({series})",
                 "(model, PAPERS.md; the paper cites it but measures no H) H = (3 - alpha)/2",
                 "median H minus (3 - alpha)/2, per run [-]", HURST_MARGIN,
                 "argued: below the 0.15 between neighbouring alphas' predictions")
    if h.empty:
        return not_testable(spec, we_measured="no runs", why=f"no {series} in the dataset")
    med = h.groupby(["alpha", run_key])["hurst"].median().reset_index()
    med["resid"] = med["hurst"] - hurst_from_alpha(med["alpha"].to_numpy())
    per_alpha = med.groupby("alpha").agg(h=("hurst", "mean"), r=("resid", "mean"), k=("resid", "size"))
    return equivalence(spec, med["resid"].to_numpy(),
                       we_measured=", ".join(f"alpha {a:g}: H {h_:.2f} ({r_:+.2f}, {k_:d} run{'s' if k_ > 1 else ''})"
                                             for a, h_, r_, k_ in zip(per_alpha.index, per_alpha["h"],
                                                                      per_alpha["r"], per_alpha["k"].astype(int))),
                       why="the unit is the run (median over the six estimators of one series; the estimators' "
                           "spread is not a replication); runs at different alphas pooled as residuals")


def _c54_slope(h: pd.DataFrame, run_key: str, claim: str, series: str) -> object:
    margin = slope_margin(h["alpha"]) if not h.empty else float("nan")
    spec = _spec(claim, f"slope of H on alpha equals {MODEL_SLOPE:g} ({series})",
                 "(model, PAPERS.md) H = (3 - alpha)/2: d H / d alpha = -0.5",
                 "least-squares slope of the per-run median H on alpha, minus -0.5 [-]",
                 margin if margin == margin else HURST_MARGIN,
                 f"argued before computing: the pooled margin {HURST_MARGIN:g} of H as the largest drift over the "
                 "configured alpha grid, 0.1 / (alpha_max - alpha_min)")
    if h.empty or margin != margin:
        return not_testable(spec, we_measured="fewer than two alphas", why=f"no slope from the {series}")
    med = h.groupby(["alpha", run_key])["hurst"].median().reset_index()
    return slope_equivalence(spec, med["alpha"], med["hurst"], target=MODEL_SLOPE, unit="run",
                             we_measured=f"slope of H on alpha over {len(med)} runs "
                                         f"({med['alpha'].nunique()} alphas, {med['alpha'].min():g}-{med['alpha'].max():g})",
                             why="the unit is the run (median H over the six estimators); beside the pooled "
                                 "residuals, which a line with another slope through the model at mid-grid passes")


#: The Holm family of a P5 row: ``"P5 kernel"`` for the kernel testbed's parts, else ``"P5 ns-3"``.
family = Family("P5", "claim", r"\[(kernel) testbed\]", default="ns-3")


#: Mask of the headline rows: every C5.4 part (pooled and slope, each engine) and C5.1.
headline = Headline(claims=("C5.4", "C5.1"))


def answer(verdicts: pd.DataFrame) -> list[str]:
    """The answer box of the P5 notebook: at most three sentences computed from the verdicts.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`claims`.

    Returns
    -------
    list of str
        (1) C5.4 pooled and slope per engine; (2) C5.1; (3) the count of the others.
    """
    c54 = verdicts[verdicts["claim"].str.startswith("C5.4")]
    bits = []
    for r in c54.itertuples():
        eng = "kernel" if "[kernel testbed]" in r.claim else "ns-3"
        if r.part.startswith("slope"):
            slope = r.effect + MODEL_SLOPE
            bits.append(f"its slope on alpha ({eng}) is {slope:+.2f} against -0.5: {r.verdict}")
        else:
            bits.append(f"H within ±{HURST_MARGIN:g} of (3 - alpha)/2 pooled over alphas ({eng}): {r.verdict}")
    first = ("Whether H follows (3 - alpha)/2 (C5.4): " + "; ".join(bits) + ".") if bits else \
        "No Hurst runs: C5.4 is not judged."
    c51 = verdicts[verdicts["claim"].str.startswith("C5.1")]
    second = (f"Lower loss near alpha 1 (C5.1, at least 1 point): {c51['verdict'].iloc[0]} (mean "
              f"{c51['effect'].iloc[0]:+.2f} points [{c51['ci_low'].iloc[0]:+.2f}, {c51['ci_high'].iloc[0]:+.2f}])."
              if len(c51) else "")
    rest = verdicts[~verdicts["claim"].str.startswith(("C5.4", "C5.1"))]
    third = f"C5.2-C5.3: {verdict_counts(rest['verdict'])} of {len(rest)} parts." if len(rest) else ""
    return [x for x in (first, second, third) if x]


def claims(dataset: P5Dataset, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Verdicts on C5.1-C5.4, part by part (tests in the module docstring).

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its ``runs``).
    tables : dict
        :func:`tcpmodels.papers.p5_selfsimilar.tables` of the same dataset.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`tcpmodels.stats.VERDICT_COLUMNS`.
    """
    rows = _c51(dataset.runs) + _c52(dataset.runs, tables["onset_altq"]) + _c53(tables["finish"])
    long = dataset.hurst[dataset.hurst["case"] == "long"]
    c54 = "C5.4 measured H of the bottleneck traffic follows (3 - alpha)/2"
    rows += [_c54(long, "run_id", c54, "300 s ns-3 runs"), _c54_slope(long, "run_id", c54, "300 s ns-3 runs")]
    tb = dataset.testbed_hurst
    if not tb.empty:  # the kernel testbed part is optional
        tb = tb if "seed" in tb.columns else tb.assign(seed=0)
        c54k = "C5.4 [kernel testbed] H of heavy-tailed TCP downloads follows (3 - alpha)/2"
        rows += [_c54(tb, "seed", c54k, "real-kernel testbed runs"), _c54_slope(tb, "seed", c54k, "real-kernel testbed runs")]
    return claims_table(rows, family=family)
