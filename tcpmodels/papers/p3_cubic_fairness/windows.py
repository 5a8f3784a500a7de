"""P3's "greatly improves" judged at the paper's window sizes (issue 57, item 5).

Data: ``p3_windows.parquet`` (:mod:`tcpmodels.experiments.p3.windows`): C3.1's four pairs (Reno 1 ms
against CUBIC 1, 4, 16, 64 ms; RTTs x 2.5 at 400 Mbit/s when the testbed does not carry 1 Gbit/s), kernel
CUBIC (``standard``) and the proposal in the ``divide`` reading, on the pinned testbed, the windows the
paper's (1468-6906 segments alone). Beside it, the shipped pinned 400 Mbit/s samples (``p3_kernel.parquet``).

Claims, stated before the runs (:data:`WINDOWS_SPECS`, family ``P3 windows``), the repetition as the unit,
``dJ`` = Jain's index of the pair under the proposal minus under standard CUBIC, same repetition:

* ``C3.1``: the mean dJ over the four pairs is at least +0.05 (C3.1's own margin, "greatly improves");
  only repetitions with all eight samples count.
* ``64 ms`` / ``16 ms``: dJ at the largest windows (CUBIC 64 and 16 ms) is at least +0.05 each.

**Rule for reading them** (:func:`windows_reading`): ``C3.1`` supported -> the window size is the factor
that made the 400 Mbit/s kernel disagree with the paper; smaller than claimed or contradicted -> the
window size is excluded (the proposal does not greatly improve fairness at the paper's windows either);
inconclusive -> open, with the repetitions needed. The per-pair rows stand on fewer units when the
campaign stopped part-way (its order runs the largest windows first).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p3_windows import KINDS, SCHEMA
from tcpmodels.papers.common import keyed_claims_table
from tcpmodels.papers.phrases import effect_ci_text, runs_needed_text, unshipped_campaign
from tcpmodels.stats import CONTRADICTED, SMALLER_THAN_CLAIMED, SUPPORTED, ClaimSpec, difference

__all__ = ["WINDOWS_SPECS", "WINDOWS_FAMILY", "PAPER_WMAX_SEGMENTS", "load_windows", "dj_per_rep", "windows_verdicts",
           "windows_table", "windows_reading", "windows_paragraph", "windows_section"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    samples : pandas.DataFrame
        :func:`load_windows`.
""")

WINDOWS_FAMILY = "P3 windows"
#: the paper's window of one CUBIC flow alone at 1 Gbit/s per CUBIC RTT (``P3Config.scaling()``), [segments]
PAPER_WMAX_SEGMENTS = {1.0: 1468, 4.0: 1727, 16.0: 2762, 64.0: 6906}
_SAYS = "C3.1: with Reno at 1 ms the proposal greatly improves RTT fairness (J) against standard CUBIC"
_CLAIM = "C3.1 at the paper's windows (kernel, pinned testbed, reading divide)"
_SRC = "C3.1's own margin for 'greatly improves' (+0.05 of Jain's index)"
WINDOWS_SPECS = {
    "C3.1": ClaimSpec(claim=_CLAIM, part="mean dJ over the four Reno 1 ms pairs >= +0.05", paper_says=_SAYS,
                      quantity="mean over pairs of J(divide) - J(standard), per repetition [-]", direction=1,
                      smallest_effect=0.05, effect_source=_SRC),
    "64 ms": ClaimSpec(claim=_CLAIM, part="dJ >= +0.05 at CUBIC 64 ms (the largest window)", paper_says=_SAYS,
                       quantity="J(divide) - J(standard) at Reno 1 / CUBIC 64 ms, per repetition [-]", direction=1,
                       smallest_effect=0.05, effect_source=_SRC),
    "16 ms": ClaimSpec(claim=_CLAIM, part="dJ >= +0.05 at CUBIC 16 ms", paper_says=_SAYS,
                       quantity="J(divide) - J(standard) at Reno 1 / CUBIC 16 ms, per repetition [-]", direction=1,
                       smallest_effect=0.05, effect_source=_SRC),
}


def load_windows(data_dir: str | Path = "data") -> pd.DataFrame | None:
    """The campaign's samples, or None when the dataset is not there.

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder (``datasets/p3_windows.parquet``, :mod:`tcpmodels.datasets.p3_windows`), or its
        ``datasets`` folder.

    Returns
    -------
    pandas.DataFrame or None
        One row per sample (``rep``, ``kind``, ``reno_rtt_ms``, ``cubic_rtt_ms`` [ms], ``jain`` [-],
        ``cubic_wmax_segments`` [segments], ``rtt_scale`` [-], ...).
    """
    return SCHEMA.read(data_dir, ("",))[""] if SCHEMA.present(data_dir, ("",)) else None


def dj_per_rep(samples: pd.DataFrame) -> pd.DataFrame:
    """dJ (divide - standard) per repetition and pair, the pair named by its unscaled CUBIC RTT.

    Parameters
    ----------
    samples : pandas.DataFrame
        :func:`load_windows` (or the pinned rows of ``p3_kernel.parquet``, without ``rtt_scale``).

    Returns
    -------
    pandas.DataFrame
        Index ``rep``, one column per CUBIC RTT [ms, unscaled] (NaN where a kind is missing).
    """
    s = samples[samples["error"].isna()] if "error" in samples else samples
    scale = s["rtt_scale"] if "rtt_scale" in s else 1.0
    s = s.assign(cubic_ms=(s["cubic_rtt_ms"] / scale).round(3), reno_ms=(s["reno_rtt_ms"] / scale).round(3))
    s = s[s["reno_ms"] == 1.0]
    w = s.pivot_table(index=["rep", "cubic_ms"], columns="kind", values="jain")
    standard, proposal = KINDS
    if not set(KINDS) <= set(w.columns):
        return pd.DataFrame()
    return (w[proposal] - w[standard]).unstack("cubic_ms")


@_PARAMETERS.fill
def windows_verdicts(samples: pd.DataFrame) -> pd.DataFrame:
    """The claims of :data:`WINDOWS_SPECS`.

    Parameters
    ----------
    {samples}

    Returns
    -------
    pandas.DataFrame
        :func:`tcpmodels.stats.claims_table` rows with a ``key`` column.
    """
    dj = dj_per_rep(samples)
    full = dj.dropna() if dj.shape[1] == 4 else dj.iloc[:0]
    rows = {"C3.1": difference(WINDOWS_SPECS["C3.1"], full.mean(axis=1)),
            "64 ms": difference(WINDOWS_SPECS["64 ms"], dj.get(64.0, pd.Series(dtype=float))),
            "16 ms": difference(WINDOWS_SPECS["16 ms"], dj.get(16.0, pd.Series(dtype=float)))}
    return keyed_claims_table(rows, family=WINDOWS_FAMILY)


@_PARAMETERS.fill
def windows_table(samples: pd.DataFrame, shipped: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per pair: CUBIC's window (median W_max) against the paper's, J per kind, dJ; the 400 Mbit/s samples beside.

    Parameters
    ----------
    {samples}
    shipped : pandas.DataFrame, optional
        ``p3_kernel.parquet``; its ``p3_kernel_pinned`` rows give the 400 Mbit/s columns.

    Returns
    -------
    pandas.DataFrame
        Index: CUBIC RTT [ms, unscaled]; ``wmax_segments`` (standard, median), ``paper_wmax_segments``,
        ``J_standard``, ``J_divide``, ``dJ_mean``, ``reps``, and with ``shipped`` ``wmax_400M_segments``,
        ``dJ_400M_mean``.
    """
    s = samples.assign(cubic_ms=(samples["cubic_rtt_ms"] / samples["rtt_scale"]).round(3))
    std = s[s["kind"] == "standard"].groupby("cubic_ms")
    div = s[s["kind"] == "divide"].groupby("cubic_ms")
    dj = dj_per_rep(samples)
    out = pd.DataFrame({"wmax_segments": std["cubic_wmax_segments"].median(),
                        "paper_wmax_segments": pd.Series(PAPER_WMAX_SEGMENTS),
                        "J_standard": std["jain"].mean(), "J_divide": div["jain"].mean(),
                        "dJ_mean": dj.mean(), "reps": dj.count()})
    if shipped is not None:
        pin = shipped[shipped["campaign"] == "p3_kernel_pinned"]
        pin = pin[pin["reno_rtt_ms"] == 1.0]
        out["wmax_400M_segments"] = pin[pin["kind"] == "standard"].groupby("cubic_rtt_ms")["cubic_wmax_segments"].median()
        out["dJ_400M_mean"] = dj_per_rep(pin.assign(rtt_scale=1.0)).mean()
    out.index.name = "cubic_rtt_ms"
    return out


def windows_reading(verdicts: pd.DataFrame) -> str:
    """The module's rule applied to the verdicts (Markdown).

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`windows_verdicts`.

    Returns
    -------
    str
        One or two sentences.
    """
    v = verdicts.set_index("key")
    a = v.loc["C3.1"]
    pairs = "; ".join(f"{k}: {effect_ci_text(r.effect, r.ci_low, r.ci_high)} over {r.n_runs} repetitions "
                      f"({r.verdict})" for k, r in v.loc[["64 ms", "16 ms"]].iterrows())
    if a.n_runs < 2:
        return (f"**Not decided yet**: {a.n_runs} complete repetition(s) of the four pairs; per pair at the largest "
                f"windows, dJ {pairs}.")
    ci = f"{effect_ci_text(a.effect, a.ci_low, a.ci_high)} over {a.n_runs} repetitions"
    if a.verdict == SUPPORTED:
        head = f"**The window size is the factor**: at the paper's windows the proposal greatly improves J ({ci}, supported)."
    elif a.verdict in (SMALLER_THAN_CLAIMED, CONTRADICTED):
        head = (f"**The window size is excluded**: at the paper's windows too the proposal does not greatly improve J "
                f"({ci}, {a.verdict}).")
    else:
        need = runs_needed_text(a.runs_needed)
        head = f"**Not decided**: mean dJ {ci} (inconclusive; {need} repetitions would decide it)."
    return head + f" Per pair: {pairs}."


@_PARAMETERS.fill
def windows_paragraph(samples: pd.DataFrame, shipped: pd.DataFrame | None = None) -> str:
    """The notebook's paragraph: the setting, the windows reached, the reading (Markdown).

    Parameters
    ----------
    {samples}
    shipped : pandas.DataFrame, optional
        ``p3_kernel.parquet`` (the 400 Mbit/s samples).

    Returns
    -------
    str
        Markdown.
    """
    t = windows_table(samples, shipped)
    rate = float(samples["rate_bps"].iloc[0]) / 1e6 if "rate_bps" in samples else float("nan")
    scale = float(samples["rtt_scale"].iloc[0])
    wins = "; ".join(f"CUBIC {c:g} ms: {r.wmax_segments:.0f} (paper {r.paper_wmax_segments:.0f}"
                     + (f", 400 Mbit/s {r.wmax_400M_segments:.0f}" if "wmax_400M_segments" in t else "") + ")"
                     for c, r in t.iterrows() if r.wmax_segments == r.wmax_segments)
    return (f"**At the paper's windows** ({rate:.0f} Mbit/s, RTTs x {scale:g}; {len(samples)} samples). CUBIC's median "
            f"W_max sharing the link, segments (the paper: one flow alone): {wins}. {windows_reading(windows_verdicts(samples))}")


def windows_section(data_dir: str | Path = "data", shipped: pd.DataFrame | None = None) -> str:
    """The notebook's section: :func:`windows_paragraph` of the shipped campaign, with how much of its plan ran.

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder.
    shipped : pandas.DataFrame, optional
        The kernel samples of ``p3_kernel.parquet`` (``P3Dataset.kernel``; the 400 Mbit/s columns).

    Returns
    -------
    str
        Markdown; a sentence saying the campaign is not shipped yet when it is not.
    """
    if not SCHEMA.present(data_dir, ("",)):
        return unshipped_campaign("At the paper's windows", "tcpmodels.experiments.p3.windows")
    read = SCHEMA.read(data_dir, ("",))  # the table and its provenance, read once
    samples, prov = read[""], read["provenance"]
    done = (f" {prov['samples']} of the {prov['plan_samples']} planned samples ran (the campaign resumes where it "
            "stopped); complete repetitions only count for the mean over the pairs."
            if "plan_samples" in prov else "")
    if shipped is not None and "campaign" not in shipped:
        shipped = None
    return windows_paragraph(samples, shipped) + done
