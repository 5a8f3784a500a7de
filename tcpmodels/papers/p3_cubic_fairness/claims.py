"""P3's claims, each part judged by :mod:`tcpmodels.stats` with the run as the unit.

The tests, stated before the data is seen:

* **C3.0 (premise, kernel)**, per Reno RTT: CUBIC's throughput share at its largest
  RTT minus its share at its smallest RTT, difference of means over independent
  repetitions (Welch), claimed negative; smallest effect 0.05 of the link (a
  5-point share shift, 50 Mbit/s at the paper's 1 Gbit/s: the size a reader can see
  on Figs. 3-5, whose axes run to 600-800 Mbit/s).
* **C3.1-C3.3 (ns-3, per reading of eq. (4))**: the unit is one ns-3 run of an RTT
  pair with one seed, and its paired difference ``dJ = J(proposal) - J(standard)``
  (same pair, same seed, so same start offsets), all of one ns-3 setting (run length,
  :func:`~tcpmodels.papers.p3_cubic_fairness.runs.ns3_settings`). Two parts per claim and Reno RTT:

  - *direction*: the share of runs where J moves the paper's way, sign test with a
    Clopper-Pearson CI; "most runs" means a share above 0.5;
  - *size*: the mean dJ over the runs, t CI, with the smallest effect that matters
    0.05 for "greatly improves" (C3.1: two flows' J moving by 0.05 is the share moving
    by about 11 points, 110 Mbit/s on the paper's axes) and 0.01 for "improves" /
    "gets worse" (about 5 share points, 50 Mbit/s). The paper prints no numbers
    (only directions), so these are argued, not taken from it.

  C3.2 adds a third part: at 4:64 the proposal is *less* fair (the exception).
* **C3.1-C3.3 (kernel, per reading)**: the same parts on the kernel, the unit one
  repetition of an RTT pair, ``dJ`` between ``tm_cubic_x`` in the reading and the
  kernel's ``cubic`` (same pair and repetition, so same start offsets), parts labelled
  ``kernel:`` (present once the kernel ran the proposal).
* **Fluid model**: deterministic, one value per pair and no runs; one exact
  inequality per claim: the mean dJ over the row's pairs beyond the same smallest
  effect (+0.05, +0.01 or -0.01).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.data import READINGS, P3Dataset
from tcpmodels.papers.p3_cubic_fairness.runs import campaign_exponent, kernel_runs, ns3_duration_s
from tcpmodels.papers.phrases import effect_ci_text, verdict_counts
from tcpmodels.stats import (
    SUPPORTED,
    ClaimSpec,
    Family,
    Headline,
    claims_table,
    difference,
    direction_count,
    inequality,
    not_testable,
)

__all__ = ["family", "headline", "answer", "claims", "reading_summary", "GREAT_DJ", "SMALL_DJ", "SHARE_EFFECT"]

#: smallest dJ that counts as "greatly improves" (C3.1); argued in the module docstring. [-]
GREAT_DJ = 0.05
#: smallest dJ that counts as "improves" / "gets worse" (C3.2, C3.3). [-]
SMALL_DJ = 0.01
#: smallest change of CUBIC's throughput share that matters for the premise C3.0. [-]
SHARE_EFFECT = 0.05

_RULES = {
    1.0: ("C3.1 With Reno at 1 ms the proposal greatly improves RTT fairness",
          "Fig. 3: 'RTT fairness is greatly improved by the proposal'", +1, GREAT_DJ),
    4.0: ("C3.2 With Reno at 4 ms the proposal improves fairness, except 4:64",
          "Fig. 4: 'RTT fairness improves except for 4 ms vs 64 ms'", +1, SMALL_DJ),
    16.0: ("C3.3 With Reno at 16 ms fairness gets worse",
           "Fig. 5 and Sec. 5: 'fairness worsens' when Reno's RTT is high", -1, SMALL_DJ),
}
_DJ_SOURCE = {GREAT_DJ: "argued: 0.05 in J is ~11 share points, 110 Mbit/s on the paper's axes",
              SMALL_DJ: "argued: 0.01 in J is ~5 share points, 50 Mbit/s on the paper's axes"}


def _premise(ds: P3Dataset) -> list:
    out = []
    k = kernel_runs(ds, "standard", "most")
    k = k[k["jain"].notna()] if len(k) else k
    for reno in sorted(k["reno_rtt_ms"].unique()) if len(k) else []:
        g = k[k["reno_rtt_ms"] == reno]
        lo_rtt, hi_rtt = g["cubic_rtt_ms"].min(), g["cubic_rtt_ms"].max()
        share = g["cubic_bps"] / (g["cubic_bps"] + g["reno_bps"])
        spec = ClaimSpec(
            claim="C3.0 (premise) CUBIC with the larger RTT gets less: larger W_max -> larger K -> slower recovery",
            part=f"kernel, Reno {reno:g} ms: CUBIC share at {hi_rtt:g} ms minus at {lo_rtt:g} ms",
            paper_says="Sec. 2.2: a larger-RTT flow needs a larger window, its K is larger, so its performance "
                       "is lower",
            quantity="CUBIC throughput share difference [-]", direction=-1, smallest_effect=SHARE_EFFECT,
            effect_source="argued: 5 share points, 50 Mbit/s on the paper's axes")
        a = share[g["cubic_rtt_ms"] == hi_rtt].to_numpy(float)
        b = share[g["cubic_rtt_ms"] == lo_rtt].to_numpy(float)
        out.append(difference(spec, a, baseline=b,
                              we_measured=f"CUBIC share {a.mean():.3f} at {hi_rtt:g} ms vs {b.mean():.3f} at "
                                          f"{lo_rtt:g} ms ({len(a)} + {len(b)} kernel repetitions at "
                                          f"{g['rate_bps'].iloc[0] / 1e6:g} Mbit/s, {g['measure_s'].iloc[0]:g} s "
                                          f"measured)",
                              why="at small W_max CUBIC is in its Reno-friendly region and K does not act"))
    return out


def _ns3_parts(paired: pd.DataFrame, reading: str, reno: float, expo: float, engine: str = "ns3",
               setting: str = "") -> list:
    text, says, direction, delta = _RULES[reno]
    label = "kernel: " if engine == "kernel" else ""
    runs = "kernel repetitions" if engine == "kernel" else "ns-3 runs"
    name = f"{text} [reading: {reading}]"
    rows = paired[paired["reno_rtt_ms"] == reno]
    main = rows[rows["cubic_rtt_ms"] != 64.0] if reno == 4.0 else rows
    where = "4:1, 4:4, 4:16" if reno == 4.0 else "all four pairs"
    present = sorted(main["cubic_rtt_ms"].unique()) if len(main) else []
    if 0 < len(present) < (3 if reno == 4.0 else 4):  # a partial grid: name the pairs the part rests on
        where = "only " + ", ".join(f"{reno:g}:{c:g}" for c in present)
    note = (f"kernel tm_cubic_x against kernel cubic, same pair and repetition, x(RTT) exponent {expo:.3g}"
            if engine == "kernel" else f"ns-3{setting}, x(RTT) exponent {expo:.3g}")
    word = "fairer" if direction > 0 else "less fair"
    spec = lambda part, quantity, d, eff, src: ClaimSpec(  # noqa: E731
        claim=name, part=label + part, paper_says=says, quantity=quantity, direction=d, smallest_effect=eff,
        effect_source=src)
    if len(main) == 0:
        s = spec(f"{word} in most runs ({where})", "dJ per run", direction, 0.5, "'most' is more than half")
        return [not_testable(s, we_measured=f"no {runs} for these pairs", why=f"the {engine} grid did not cover them")]
    dj = main["dJ"].to_numpy(float)
    per_pair = main.groupby("cubic_rtt_ms")["dJ"].mean()
    detail = "; ".join(f"{reno:g}:{c:g} mean dJ {v:+.3f}" for c, v in per_pair.items())
    k_way = int((np.sign(dj) == direction).sum())
    out = [
        direction_count(spec(f"{word} in most runs ({where})", "dJ = J(proposal) - J(standard) per run", direction,
                             0.5, "'most' means more than half"), dj,
                        we_measured=f"{k_way} of {len(dj)} runs {word} ({detail})", why=note),
        difference(spec(f"mean dJ over runs ({where}) {'>=' if direction > 0 else '<='} "
                        f"{direction * delta:+g}", "dJ = J(proposal) - J(standard) per run [-]", direction, delta,
                        _DJ_SOURCE[delta]), dj, why=note),
    ]
    if reno == 4.0:
        r64 = rows[rows["cubic_rtt_ms"] == 64.0]["dJ"].to_numpy(float)
        s = spec("4:64 is the exception: less fair there", "dJ per run at 4:64 [-]", -1, SMALL_DJ,
                 _DJ_SOURCE[SMALL_DJ])
        out.append(difference(s, r64, why=note) if len(r64) else
                   not_testable(s, we_measured=f"no {runs} at 4:64", why=f"the {engine} grid did not cover 4:64"))
    return out


def _fluid_part(fairness: pd.DataFrame, reading: str, reno: float) -> object:
    text, says, direction, delta = _RULES[reno]
    t = fairness[fairness["cubic_rtt_ms"] != 64.0] if reno == 4.0 else fairness
    d = (t[f"fluid_{reading}_J"] - t["fluid_none_J"]).to_numpy(float)
    spec = ClaimSpec(claim=f"{text} [reading: {reading}]", part="fluid model: mean dJ over the pairs",
                     paper_says=says, quantity="mean dJ over the pairs (deterministic model)", direction=direction,
                     smallest_effect=delta, effect_source=_DJ_SOURCE[delta] + "; the model has no noise")
    if len(d) == 0 or not np.isfinite(d).all():
        return not_testable(spec, we_measured="fluid model incomplete", why="the fluid table lacks pairs of this row")
    return inequality(spec, float(d.mean()), direction * delta,
                      we_measured="; ".join(f"{r}: dJ {x:+.3f}" for r, x in zip(t["ratio"], d)),
                      why="fluid model (proportional losses)", null=0.0)


@_PARAMETERS.fill
def claims(dataset: P3Dataset, tables: dict[str, pd.DataFrame], *, exponent: float | None = None) -> pd.DataFrame:
    """Verdicts on the premise C3.0 (kernel) and on C3.1-C3.3 for each reading of eq. (4).

    Parameters
    ----------
    dataset : P3Dataset
    tables : dict
        :func:`~tcpmodels.papers.p3_cubic_fairness.tables.tables` of the same dataset
        (``paired_<reading>`` and ``fairness_reno<R>`` are read from it).
    {exponent}

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`tcpmodels.stats.VERDICT_COLUMNS` (tests in the module docstring).
    """
    rows = _premise(dataset)
    expo = campaign_exponent(dataset, exponent)
    dur = ns3_duration_s(dataset)
    setting = f" {dur:g} s runs" if dur == dur else ""
    for reading in READINGS:
        for reno in _RULES:
            rows += _ns3_parts(tables[f"paired_{reading}"], reading, reno, expo, setting=setting)
    for reading in READINGS:
        paired = tables.get(f"kernel_paired_{reading}")
        if paired is None or len(paired) == 0:
            continue
        for reno in _RULES:
            rows += _ns3_parts(paired, reading, reno, expo, engine="kernel")
    for reading in READINGS:
        for reno in _RULES:
            rows.append(_fluid_part(tables[f"fairness_reno{reno:g}"], reading, reno))
    return claims_table(rows, family=family)


#: The Holm family of a P3 row: ``"P3 kernel"``, ``"P3 fluid model"`` or ``"P3 ns-3"`` (from the part's prefix).
family = Family("P3", "part", r"^(kernel|fluid model)", default="ns-3")


#: Mask of the headline rows: the premise (C3.0) and every mean-dJ part of C3.1-C3.3 (ns-3 and kernel).
headline = Headline(claims=("C3.0",), part_contains="mean dJ over runs")


def answer(verdicts: pd.DataFrame) -> list[str]:
    """The answer box of the P3 notebook: at most three sentences computed from the verdicts.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`claims`.

    Returns
    -------
    list of str
        (1) the premise on the kernel; (2) C3.1's "greatly improves" per engine and reading; (3) the
        largest mean gain in fairness any engine and reading shows, with its label.
    """
    out = []
    pre = verdicts[verdicts["claim"].str.startswith("C3.0")]
    if len(pre):
        out.append("The premise (CUBIC with the larger RTT gets less beside Reno) on the kernel: "
                   + verdict_counts(pre["verdict"]) + f" of {len(pre)} Reno RTTs.")
    mean = verdicts[verdicts["part"].str.contains("mean dJ over runs")]
    c31 = mean[mean["claim"].str.startswith("C3.1")]
    if len(c31):
        out.append("The proposal's \"greatly improves fairness\" (C3.1, mean dJ at least +0.05), per engine and "
                   "reading: " + "; ".join(
            f"{family.engine_of(p)} {c[c.index('[reading: ') + 10:-1]} {v} ({e:+.3f})" for c, p, v, e in
            zip(c31["claim"], c31["part"], c31["verdict"], c31["effect"])) + ".")
    gains = mean[mean["claim"].str.startswith(("C3.1", "C3.2"))]
    if len(gains):
        best = gains.loc[gains["effect"].idxmax()]
        reading = best["claim"][best["claim"].index("[reading: ") + 10:-1]
        out.append("The largest mean gain of fairness any engine and reading shows is "
                   f"{effect_ci_text(best['effect'], best['ci_low'], best['ci_high'])} "
                   f"({family.engine_of(best['part'])}, {reading} reading, "
                   f"{best['claim'][:4]}: {best['verdict']}).")
    return out[:3]


def reading_summary(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Which reading of eq. (4) reproduces the paper's direction: the verdicts of C3.1-C3.3 side by side.

    ``C3.x`` lists the ns-3 parts' verdicts (direction, size, and for C3.2 the 4:64 exception),
    ``kernel_C3.x`` the kernel's, ``fluid_C3.x`` the fluid model's; ``direction_supported`` is true when the *direction* part
    of all three claims is supported by the ns-3 runs.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`claims`' table (claims tagged ``[reading: multiply]`` / ``[reading: divide]``).

    Returns
    -------
    pandas.DataFrame
        One row per reading of :data:`READINGS`: ``reading``, ``C3.1``-``C3.3`` (ns-3),
        ``kernel_C3.1``-``kernel_C3.3`` and ``fluid_C3.1``-``fluid_C3.3`` (the parts' verdicts joined by " / ", or ``"no data"``) and
        ``direction_supported`` (bool).
    """
    rows = []
    for reading in READINGS:
        v = verdicts[verdicts["claim"].str.endswith(f"[reading: {reading}]")]
        ns3 = v[~v["part"].str.startswith(("fluid", "kernel"))]
        kern = v[v["part"].str.startswith("kernel")]
        row: dict[str, object] = {"reading": reading}
        directions = []
        for c in ("C3.1", "C3.2", "C3.3"):
            m = ns3[ns3["claim"].str.startswith(c)]
            row[c] = " / ".join(m["verdict"]) if len(m) else "no data"
            d = m[m["part"].str.contains("in most runs")]
            directions.append(bool(len(d)) and (d["verdict"] == SUPPORTED).all())
        for c in ("C3.1", "C3.2", "C3.3"):
            m = kern[kern["claim"].str.startswith(c)]
            row[f"kernel_{c}"] = " / ".join(m["verdict"]) if len(m) else "no data"
        for c in ("C3.1", "C3.2", "C3.3"):
            m = v[v["claim"].str.startswith(c) & v["part"].str.startswith("fluid")]
            row[f"fluid_{c}"] = " / ".join(m["verdict"]) if len(m) else "no data"
        row["direction_supported"] = all(directions)
        rows.append(row)
    return pd.DataFrame(rows)
