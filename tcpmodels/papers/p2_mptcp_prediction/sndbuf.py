"""P2 Fig. 4: does a send-buffer-limited sender move bytes onto the 120 ms path? (issue 57, item 3)

Data: ``p2_sndbuf.parquet`` (:mod:`tcpmodels.experiments.p2.sndbuf`): MPTCP uploads of 16 MiB (the
paper-equivalent size) and 64 MiB at RTTs (150, 120) ms, ``tm_lia``, with the sender's ``tcp_wmem``
maximum at 0.5, 1, 2 and 4 BDPs of the 150 ms path, 4 repetitions each.

Claims, stated before the runs (:data:`SNDBUF_SPECS`, family ``P2 send buffer``), on the 16 MiB transfers,
the repetition as the unit:

* ``smaller buffer``: the subflow-1 (150 ms path) share at 0.5 BDP is lower than at 4 BDP by at least
  5 points (a third of the 16-19 point gap between ours and the paper's 33.9 %); Welch's interval.
* ``reaches the paper``: the share at 0.5 BDP lies within 5 points of the paper's 33.9 % (TOST).
* ``scheduler``: the MPTCP packet scheduler is not testable here (the kernel offers only ``default``).

**Rule for reading them** (:func:`sndbuf_reading`): ``smaller buffer`` supported -> the send buffer is a
factor that moves bytes onto the 120 ms path (``reaches the paper`` says whether it is the whole gap);
contradicted or smaller than claimed -> the send buffer is excluded as the cause of the gap; inconclusive ->
not decided. The scheduler remains a candidate either way.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p2_sndbuf import JUDGED_SIZE_BYTES, SCHEMA
from tcpmodels.papers.common import keyed_claims_table
from tcpmodels.papers.phrases import effect_ci_text
from tcpmodels.stats import (
    CONTRADICTED,
    SMALLER_THAN_CLAIMED,
    SUPPORTED,
    ClaimSpec,
    difference,
    equivalence,
    not_testable,
)
from tcpmodels.stats.spec import fmt_runs_needed

__all__ = ["PAPER_SHARE1_150_120", "SNDBUF_SPECS", "SNDBUF_FAMILY", "load_sndbuf", "sndbuf_table", "sndbuf_verdicts",
           "sndbuf_reading", "sndbuf_paragraph", "sndbuf_section"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    sweep : pandas.DataFrame
        :func:`load_sndbuf`.
""")

#: the paper's subflow-1 share at RTTs (150, 120) ms (Fig. 4, the largest transfer). [-]
PAPER_SHARE1_150_120 = 0.339
SNDBUF_FAMILY = "P2 send buffer"
_SAYS = ("Fig. 4: at RTTs (150, 120) ms the 150 ms subflow carries 33.9 % of the bytes; ours carries 50-54 %; "
         "the issue's hypothesis: a send-buffer-limited minimum-RTT scheduler moves bytes onto the 120 ms path")
_CLAIM = "P2 Fig. 4 at (150, 120) ms, sender's tcp_wmem max swept 0.5-4 BDP (16 MiB transfers)"
SNDBUF_SPECS = {
    "smaller buffer": ClaimSpec(claim=_CLAIM, part="a send buffer of 0.5 BDP lowers the subflow-1 share (vs 4 BDP)",
                                paper_says=_SAYS, quantity="subflow-1 share at 0.5 BDP - at 4 BDP [-]", direction=-1,
                                smallest_effect=0.05,
                                effect_source="5 points: a third of the 16-19 point gap to the paper's 33.9 %"),
    "reaches the paper": ClaimSpec(claim=_CLAIM, part="at 0.5 BDP the share is the paper's 33.9 % (TOST +-5 points)",
                                   paper_says=_SAYS, quantity="subflow-1 share at 0.5 BDP - 0.339 [-]",
                                   smallest_effect=0.05, effect_source="5 points, as above"),
    "scheduler": ClaimSpec(claim=_CLAIM, part="a minimum-RTT packet scheduler moves bytes onto the 120 ms path",
                           paper_says=_SAYS, quantity="subflow-1 share, other scheduler - default [-]", direction=-1,
                           smallest_effect=0.05, effect_source="5 points, as above", attainable_effect=0.0,
                           attainable_source="the kernel offers one MPTCP packet scheduler: sysctl "
                           "net.mptcp.available_schedulers = default, and no bpf_mptcp_sched_ops in /proc/kallsyms",
                           testable_when="a kernel with BPF MPTCP schedulers (bpf_mptcp_sched_ops) or another "
                           "built-in scheduler"),
}


def load_sndbuf(data_dir: str | Path = "data") -> pd.DataFrame | None:
    """The sweep's transfers, or None when the dataset is not there.

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder (``datasets/p2_sndbuf.parquet``, :mod:`tcpmodels.datasets.p2_sndbuf`), or its
        ``datasets`` folder.

    Returns
    -------
    pandas.DataFrame or None
        One row per transfer (``wmem_factor``, ``rep``, ``size_bytes`` [bytes], ``share1`` [-], ``Bps`` [bytes/s]).
    """
    return SCHEMA.read(data_dir, ("",))[""] if SCHEMA.present(data_dir, ("",)) else None


@_PARAMETERS.fill
def sndbuf_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """Subflow-1 share and throughput per send-buffer factor and size (mean, sd, repetitions).

    Parameters
    ----------
    {sweep}

    Returns
    -------
    pandas.DataFrame
        Index (``wmem_factor``, ``size_MiB``); ``share1_mean``, ``share1_sd`` [-], ``MBps_mean`` [MB/s], ``reps``.
    """
    ok = sweep[sweep["share1"].notna()]
    g = ok.assign(size_MiB=ok["size_bytes"] / 2**20).groupby(["wmem_factor", "size_MiB"])
    return pd.DataFrame({"share1_mean": g["share1"].mean(), "share1_sd": g["share1"].std(),
                         "MBps_mean": g["Bps"].mean() / 1e6, "reps": g["share1"].size()})


@_PARAMETERS.fill
def sndbuf_verdicts(sweep: pd.DataFrame) -> pd.DataFrame:
    """The claims of :data:`SNDBUF_SPECS` judged on the 16 MiB transfers.

    Parameters
    ----------
    {sweep}

    Returns
    -------
    pandas.DataFrame
        :func:`tcpmodels.stats.claims_table` rows with a ``key`` column.
    """
    s = sweep[(sweep["size_bytes"] == JUDGED_SIZE_BYTES) & sweep["share1"].notna()]
    lo = s.loc[s["wmem_factor"] == s["wmem_factor"].min(), "share1"]
    hi = s.loc[s["wmem_factor"] == s["wmem_factor"].max(), "share1"]
    rows = {"smaller buffer": difference(SNDBUF_SPECS["smaller buffer"], lo, baseline=hi),
            "reaches the paper": equivalence(SNDBUF_SPECS["reaches the paper"], lo - PAPER_SHARE1_150_120),
            "scheduler": not_testable(SNDBUF_SPECS["scheduler"], we_measured="one scheduler (default)",
                                      why="the kernel has no other MPTCP packet scheduler to swap in")}
    return keyed_claims_table(rows, family=SNDBUF_FAMILY)


def sndbuf_reading(verdicts: pd.DataFrame) -> str:
    """The module's rule applied: is the send buffer the factor? (one Markdown sentence or two)

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`sndbuf_verdicts`.

    Returns
    -------
    str
        Markdown.
    """
    v = verdicts.set_index("key")
    a, b = v.loc["smaller buffer"], v.loc["reaches the paper"]
    ci = effect_ci_text(a.effect, a.ci_low, a.ci_high)
    if a.verdict == SUPPORTED:
        head = (f"**The send buffer is a factor**: at 0.5 BDP the 150 ms subflow's share is lower than at 4 BDP by {ci} "
                f"(supported)")
        head += ("; it reaches the paper's 33.9 % (supported)." if b.verdict == SUPPORTED else
                 f"; it does not reach the paper's 33.9 % ({b.verdict}: {b.effect:+.3f} from it).")
    elif a.verdict in (CONTRADICTED, SMALLER_THAN_CLAIMED):
        head = (f"**The send buffer is excluded**: a send buffer of 0.5 BDP moves the 150 ms subflow's share by {ci} "
                f"against 4 BDP ({a.verdict}: less than the 5 points that matter).")
    else:
        shown = a.ci_high < 0  # the direction of the claim (-1): the whole interval below no change
        need = f"; {fmt_runs_needed(a.runs_needed)} repetitions would decide it" if a.runs_needed == a.runs_needed else ""
        head = (f"**Not decided**: the share moves by {ci} between 4 and 0.5 BDP (inconclusive: "
                + ("the direction shows, but not whether it reaches the 5 points that matter" if shown else
                   "the interval holds both no change and the 5 points that matter") + f"{need}).")
        head += (f" At 0.5 BDP the share is {b.effect + PAPER_SHARE1_150_120:.1%}, not the paper's 33.9 % "
                 f"({b.verdict}: {b.effect:+.3f} from it)." if b.verdict == CONTRADICTED else
                 f" Whether 0.5 BDP reaches the paper's 33.9 %: {b.verdict} ({b.effect:+.3f} from it).")
    return head + (" The packet scheduler, the other half of the hypothesis, is not testable on this kernel (only "
                   "`default` is available), so it remains a candidate.")


@_PARAMETERS.fill
def sndbuf_paragraph(sweep: pd.DataFrame) -> str:
    """The notebook's paragraph: the reading, then the share at every buffer (Markdown).

    Parameters
    ----------
    {sweep}

    Returns
    -------
    str
        Markdown.
    """
    t = sndbuf_table(sweep)
    shares = "; ".join(f"{f:g} BDP: {t.loc[(f, 16.0), 'share1_mean']:.1%} at 16 MiB ({t.loc[(f, 16.0), 'MBps_mean']:.1f} "
                       f"MB/s), {t.loc[(f, 64.0), 'share1_mean']:.1%} at 64 MiB"
                       for f in sorted({i[0] for i in t.index}) if (f, 16.0) in t.index and (f, 64.0) in t.index)
    lo, hi = int(t["reps"].min()), int(t["reps"].max())
    return (f"**Send buffer swept at (150, 120) ms** ({lo if lo == hi else f'{lo}-{hi}'} repetitions per "
            f"buffer; tm_lia, 100 Mbit/s paths). {sndbuf_reading(sndbuf_verdicts(sweep))} Subflow-1 share by the sender's "
            f"tcp_wmem maximum: {shares}.")


def sndbuf_section(data_dir: str | Path = "data") -> str:
    """The notebook's paragraph from the shipped sweep, or a sentence saying there is none (Markdown).

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder.

    Returns
    -------
    str
        :func:`sndbuf_paragraph`, or why there is none.
    """
    sweep = load_sndbuf(data_dir)
    if sweep is None:
        return ("**Send buffer swept at (150, 120) ms**: no shipped dataset "
                "(`python -m tcpmodels.experiments.p2.sndbuf`).")
    return sndbuf_paragraph(sweep)
