"""P2's claims where the throughput follows the RTTs: random loss on both paths (issue 57, item 4, second stage).

The campaign :mod:`tcpmodels.experiments.p2.lossy` measures P2's whole sample at the loss rate the spread
pilot chose (:mod:`~tcpmodels.papers.p2_mptcp_prediction.spread`). Here the same claims
(:func:`~tcpmodels.papers.p2_mptcp_prediction.claims`, unchanged) are judged on it as their own Holm family
(:data:`LOSSY_FAMILY`), on the samples of its complete repetitions only (every RTT pair measured as often, so
that the per-pair means weigh the pairs alike), and set beside the shipped setting's verdicts.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p2_lossy import PLANNED_SAMPLES, SCHEMA
from tcpmodels.papers.p2_mptcp_prediction.claims import claims, rpe_headroom, rtt_pairs, sample_errors
from tcpmodels.papers.p2_mptcp_prediction.data import P2Dataset
from tcpmodels.papers.p2_mptcp_prediction.tables import tables
from tcpmodels.records.parts import shipped_record_lines
from tcpmodels.stats import NOT_TESTABLE_HERE

#: the verdict of a part this setting cannot reach

__all__ = ["LOSSY_FAMILY", "load_lossy", "lossy_verdicts", "lossy_section", "reading"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    data_dir : str or Path
        The ``data`` folder.
""")

#: the Holm family of the claims judged in the lossy setting
LOSSY_FAMILY = "P2 lossy"


@_PARAMETERS.fill
def load_lossy(data_dir: str | Path = "data") -> P2Dataset | None:
    """The lossy campaign's samples of its complete repetitions, or None when it is not shipped or has none.

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    P2Dataset or None
        ``samples`` (P2's samples table, the complete repetitions of the provenance's ``complete_reps``) and
        ``provenance`` (loss rate, config, samples against the plan, times, loads).
    """
    if not SCHEMA.present(data_dir, ("samples",)):
        return None
    parts = SCHEMA.read(data_dir, ("samples",))
    prov = parts["provenance"]
    samples = parts["samples"]
    samples = samples[samples["rep"].isin(prov.get("complete_reps", []))].reset_index(drop=True)
    return P2Dataset(samples=samples, provenance=prov) if len(samples) else None


@_PARAMETERS.fill
def lossy_verdicts(data_dir: str | Path = "data", *, quick: bool = False, seed: int = 0) -> pd.DataFrame | None:
    """P2's claims judged in the lossy setting (family :data:`LOSSY_FAMILY`), or None without its dataset.

    Parameters
    ----------
    {data_dir}
    quick : bool
        As for :func:`~tcpmodels.papers.p2_mptcp_prediction.tables`.
    seed : int
        As for :func:`~tcpmodels.papers.p2_mptcp_prediction.tables`.

    Returns
    -------
    pandas.DataFrame or None
        The claims table.
    """
    ds = load_lossy(data_dir)
    return None if ds is None else _judged(ds, quick, seed)


def _judged(ds: P2Dataset, quick: bool, seed: int) -> pd.DataFrame:
    return claims(ds, tables(ds, quick=quick, seed=seed), family=LOSSY_FAMILY)


@_PARAMETERS.fill
def lossy_section(shipped: pd.DataFrame, data_dir: str | Path = "data", *, quick: bool = False,
                  seed: int = 0) -> str:
    """The notebook's paragraph: each part's verdict in the shipped setting beside the lossy one (Markdown).

    Parameters
    ----------
    shipped : pandas.DataFrame
        The shipped setting's claims table (:func:`~tcpmodels.papers.p2_mptcp_prediction.claims`).
    {data_dir}
    quick, seed
        As for :func:`lossy_verdicts`.

    Returns
    -------
    str
        Markdown; a sentence saying what is not run yet when the dataset is not shipped.
    """
    ds = load_lossy(data_dir)
    if ds is None:  # the campaign spans sessions: only how far it got is said before a repetition is complete
        recorded = len(shipped_record_lines(Path(data_dir) / "datasets" / f"{SCHEMA.prefix}_records"))
        so_far = (f" {recorded} of the {PLANNED_SAMPLES} planned samples are recorded so far (the records are "
                  "shipped; the campaign resumes from them)," if recorded else "")
        return ("**P2 at the pilot's loss rate** (`python -m tcpmodels.experiments.p2.lossy`):" + so_far
                + " no complete repetition is shipped yet, so the claims are not judged there.")
    prov = ds.provenance
    lossy = _judged(ds, quick, seed)
    e = sample_errors(ds)
    room = rpe_headroom(e["y_mptcp"].to_numpy(float), rtt_pairs(e))
    side = pd.concat({"shipped": shipped.set_index(["claim", "part"])["verdict"],
                      "lossy": lossy.set_index(["claim", "part"])["verdict"]}, axis=1)
    changed = side[side["shipped"] != side["lossy"]]
    moves = "; ".join(f"{c[:4]} {p}: {a} -> {b}" for (c, p), a, b in
                      zip(changed.index, changed["shipped"], changed["lossy"])) or "none"
    return (f"**P2 at the pilot's loss rate {prov['loss_rate']:g}** ({len(ds.samples)} samples of "
            f"{len(prov['complete_reps'])} complete repetition(s), {prov['samples']} of {prov['plan_samples']} "
            f"planned measured): the constant predictor leaves {room:.1%} headroom for the Fraction of RPE. "
            f"Parts whose verdict differs from the shipped setting's: {moves}. " + reading(side))


def reading(side: pd.DataFrame) -> str:
    """The campaign's reading rule (docs/CAMPAIGNS.md, issue 57 item 4, stated before it ran) applied to the
    Fraction-of-RPE parts of C2.2-C2.4.

    Parameters
    ----------
    side : pandas.DataFrame
        Indexed by (claim, part): the ``shipped`` and ``lossy`` verdicts.

    Returns
    -------
    str
        A sentence per outcome of the rule that occurs: parts not testable in the shipped setting and testable
        here (the RTT dependence of the throughput hid them), parts still not testable (the loss did not give the
        paper's spread on the whole grid), and parts testable in both.
    """
    claim = side.index.get_level_values(0).str[:4]
    rpe = side[side.index.get_level_values(1).str.contains("Fraction of RPE") & claim.isin(["C2.2", "C2.3", "C2.4"])]
    hidden = rpe["shipped"] == NOT_TESTABLE_HERE
    now = rpe["lossy"] != NOT_TESTABLE_HERE

    def named(rows: pd.DataFrame) -> str:
        return ", ".join(f"{c[:4]} {p} ({v})" for (c, p), v in zip(rows.index, rows["lossy"]))

    out = []
    if (hidden & now).any():
        out.append(f"Testable here and not in the shipped setting, so the throughput's weak dependence on the RTTs "
                   f"there was what hid them: {named(rpe[hidden & now])}.")
    if (~now).any():
        out.append(f"Still not testable here (the loss did not give the paper's spread over the whole grid): "
                   f"{named(rpe[~now])}.")
    if (~hidden & now).any():
        out.append(f"Testable in both settings: {named(rpe[~hidden & now])}.")
    return " ".join(out)
