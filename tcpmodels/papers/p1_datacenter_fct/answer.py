"""P1's answer box and headline parts, computed from the verdicts of :func:`~.claims.claims` (never typed).

The paper's question: do 70 KB flows finish later when the background traffic is MPTCP rather than
TCP (C1.3, the mean of Table 2)? Each engine and congestion control answers it on its own; the box
says which ones disagree, and what coupling changes on the kernel (the ``Coupling`` parts).
"""

from __future__ import annotations

import re

import pandas as pd

from tcpmodels.stats import Family, Headline

__all__ = ["family", "headline", "answer", "HEADLINE_PARTS"]

#: The parts of the opening table: C1.3's mean on every engine and control, and coupling's mean.
HEADLINE_PARTS = ("mean higher with MPTCP background", "mean FCT lower with the")
_TAG = re.compile(r"\[(?P<engine>[^,\]]+),\s*(?P<cc>[^\]]+)\]")


#: The Holm family of one P1 row: ``"P1 <engine>"`` from the claim's ``[engine, cc]`` (``"P1 kernel"``,
#: ``"P1 kernel_steered"``, ``"P1 ns3"``; ``"P1"`` without a tag).
family = Family("P1", "claim", _TAG.pattern)


def _tagged(verdicts: pd.DataFrame) -> pd.DataFrame:
    tag = verdicts["claim"].str.extract(_TAG)
    return verdicts.assign(engine=tag["engine"], cc=tag["cc"])


#: Mask of the headline rows: C1.3's mean on every engine and control, and each coupling's mean FCT.
headline = Headline(parts=HEADLINE_PARTS)


def _names(rows: pd.DataFrame) -> str:
    names = [f"{e} {c}" for e, c in zip(rows["engine"], rows["cc"])]
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "none"


def answer(verdicts: pd.DataFrame) -> list[str]:
    """At most three sentences: C1.3's answer per engine, the engines that disagree, and what coupling does.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`~.claims.claims`.

    Returns
    -------
    list of str
        (1) where the 70 KB flows finish later beside MPTCP at the size that matters (C1.3 mean, +10 %),
        (2) the engines and controls that disagree (another outcome), with theirs, and (3) the coupling
        parts on the kernel.
    """
    t = _tagged(verdicts)
    mean = t[t["part"] == "mean higher with MPTCP background"]
    if not len(mean):
        return ["No engine has the runs C1.3 needs (Table 2's 70 KB flows with both backgrounds)."]
    counts = mean["verdict"].value_counts()
    top = counts.index[0]
    agree = mean[mean["verdict"] == top]
    first = (f"That 70 KB flows finish at least 10 % later beside MPTCP than beside TCP background (C1.3, mean FCT) "
             f"is {top} on {_names(agree)}.")
    other = mean[mean["verdict"] != top]
    second = ("The engines that disagree: " + "; ".join(
        f"{v} on {_names(other[other['verdict'] == v])} (mean "
        + ", ".join(f"{x:+.3f}" for x in other.loc[other['verdict'] == v, 'effect']) + " log FCT)"
        for v in dict.fromkeys(other["verdict"])) + ".") if len(other) else "No engine or control disagrees."
    coup = t[t["claim"].str.startswith("Coupling") & t["part"].str.startswith("mean FCT lower")]
    third = ""
    if len(coup):
        cc = coup["verdict"].value_counts()
        third = ("Coupling on the kernel (the paper's open question): 70 KB flows finish at least 10 % sooner beside a "
                 "coupled (tm_lia, tm_olia) than beside an uncoupled MPTCP background in "
                 + ", ".join(f"{n} {v}" for v, n in cc.items()) + f" of {len(coup)} testbed and control pairs "
                 f"(mean {coup['effect'].mean():+.3f} log FCT).")
    return [x for x in (first, second, third) if x]
