"""Whether P3's kernel verdicts hang on the samples with CPU-induced loss.

The kernel bottleneck runs as fast as a pilot found free of loss outside the
bottleneck queue, yet a few samples still lose packets there (``cpu_drops``: the
interfaces', other qdiscs' and the delay elements' drops; the headline counts them).
Such a loss is not the congestion the paper studies, so a verdict that changes when
those samples are left out rests on them. :func:`cpu_loss_sensitivity` judges every
kernel part twice, on all samples and without those, with the same tests
(:mod:`.claims`); a left-out sample takes its pair's difference dJ with it (dJ needs
both kinds of the same RTT pair and repetition). Where those samples were run once
more (``p3 kernel --repeat-cpu-loss``), it judges them a third time with each lossy
sample replaced by its repeat (:func:`with_cpu_loss_repeated`), so the runs per part
stay the plan's.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from tcpmodels.papers.p3_cubic_fairness.claims import claims
from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.data import P3Dataset
from tcpmodels.papers.p3_cubic_fairness.runs import kernel_all_testbeds, kernel_testbed
from tcpmodels.papers.p3_cubic_fairness.tables import tables

__all__ = ["cpu_loss_sensitivity", "without_cpu_loss", "with_cpu_loss_repeated"]


_KEEP = ("effect", "ci_low", "ci_high", "n_runs", "verdict", "runs_needed")


@_PARAMETERS.fill
def without_cpu_loss(ds: P3Dataset) -> P3Dataset:
    """``ds`` without the kernel samples that lost packets outside the bottleneck queue (``cpu_drops`` > 0).

    Samples whose records predate the count (``cpu_drops`` NaN) stay: nothing says they lost any. The kernel
    testbed stays the one ``ds`` uses (:func:`~.runs.kernel_testbed`), though fewer samples might not have
    caught up with the unsteered ones: the two verdicts compare the same testbed.

    Parameters
    ----------
    {ds}

    Returns
    -------
    P3Dataset
        The same data with those kernel rows removed and the testbed fixed (ns-3, fluid model and provenance
        unchanged).
    """
    k = ds.kernel
    keep = ~(k["cpu_drops"] > 0) if "cpu_drops" in k.columns else pd.Series(True, index=k.index)
    return dataclasses.replace(ds, kernel=k[keep].reset_index(drop=True), kernel_testbed=kernel_testbed(ds))


@_PARAMETERS.fill
def with_cpu_loss_repeated(ds: P3Dataset) -> P3Dataset:
    """``ds`` with each kernel sample that lost packets outside the bottleneck queue replaced by its repeat.

    A repeat (``ds.kernel_repeats``) runs the same kind, RTT pair, repetition and start offsets on the same
    testbed; it replaces the sample it names (``repeats_started_utc``) if it lost no packet outside the
    queue itself. A lossy sample without such a repeat is left out, as in :func:`without_cpu_loss`. The
    kernel testbed stays the one ``ds`` uses.

    Parameters
    ----------
    {ds}

    Returns
    -------
    P3Dataset
        The same data with those kernel rows replaced or removed and the testbed fixed; ``attrs`` of the
        new ``kernel`` frame: ``replaced`` (samples replaced by a repeat) and ``left_out`` (lossy samples
        without a loss-free repeat).
    """
    testbed = kernel_testbed(ds)
    k = kernel_all_testbeds(ds)
    lossy = (k["testbed"] == testbed) & (k["cpu_drops"] > 0) if "cpu_drops" in k.columns \
        else pd.Series(False, index=k.index)
    r = ds.kernel_repeats
    if len(r) and "repeats_started_utc" in r.columns:
        r = kernel_all_testbeds(dataclasses.replace(ds, kernel=r))  # the same columns filled as the samples
        r = r[(r["testbed"] == testbed) & (r["cpu_drops"] == 0)].drop_duplicates("repeats_started_utc", keep="first")
        clean_repeat = r.set_index("repeats_started_utc")
    else:
        clean_repeat = pd.DataFrame()
    has_repeat = lossy & (k["started_utc"].isin(clean_repeat.index) if "started_utc" in k.columns else False)
    repeats = clean_repeat.loc[k.loc[has_repeat, "started_utc"]].reset_index() if has_repeat.any() else None
    parts = [k[~lossy]] + ([repeats.reindex(columns=k.columns.union(repeats.columns, sort=False))]
                           if repeats is not None else [])
    out = pd.concat(parts, ignore_index=True, sort=False)
    out = out.sort_values(["kind", "reno_rtt_ms", "cubic_rtt_ms", "rep"], kind="stable").reset_index(drop=True)
    out.attrs.update(replaced=int(has_repeat.sum()), left_out=int((lossy & ~has_repeat).sum()))
    return dataclasses.replace(ds, kernel=out, kernel_testbed=testbed)


@_PARAMETERS.fill
def cpu_loss_sensitivity(ds: P3Dataset, *, exponent: float | None = None) -> pd.DataFrame:
    """Every kernel part of :func:`~.claims.claims` on all samples and without those with CPU-induced loss.

    Parameters
    ----------
    {ds}
    {exponent}

    Returns
    -------
    pandas.DataFrame
        One row per kernel part (premise C3.0 and C3.1-C3.3 per reading, in the order of
        :func:`~.claims.claims`): ``claim_id`` (the claim's number and reading, e.g. ``"C3.2 divide"``),
        ``claim``, ``part``, then ``effect``, ``ci_low``, ``ci_high``,
        ``n_runs``, ``verdict`` and ``runs_needed`` on all samples (suffix ``_all``) and without
        the samples with ``cpu_drops`` > 0 (suffix ``_no_cpu_loss``), and ``verdict_changed`` (bool).
        Where ``ds.kernel_repeats`` has repeats, the same columns with those samples replaced by their
        loss-free repeats (suffix ``_repeated``, :func:`with_cpu_loss_repeated`) and
        ``verdict_changed_repeated`` (against ``_all``).
        ``attrs["testbed"]`` names the kernel testbed the verdicts use, ``attrs["left_out"]`` how many of its
        samples were left out; with repeats ``attrs["replaced"]`` and ``attrs["left_out_repeated"]`` (lossy
        samples with no loss-free repeat).
    """
    clean = without_cpu_loss(ds)
    views = {"_all": ds, "_no_cpu_loss": clean}
    if len(ds.kernel_repeats):
        views["_repeated"] = with_cpu_loss_repeated(ds)
    judged = []
    for suffix, d in views.items():
        v = claims(d, tables(d, exponent=exponent), exponent=exponent)
        judged.append(v[v["part"].str.startswith("kernel")].set_index(["claim", "part"])[list(_KEEP)]
                      .add_suffix(suffix))
    # side by side in claims' order; a part only one set has (a pair with no runs left renames it) keeps its row
    out = pd.concat(judged, axis=1).reset_index()
    reading = out["claim"].str.extract(r"\[reading: (\w+)\]", expand=False).fillna("")
    out.insert(0, "claim_id", (out["claim"].str.split(" ").str[0] + " " + reading).str.strip())
    out["verdict_changed"] = out["verdict_all"] != out["verdict_no_cpu_loss"]
    testbed = clean.kernel_testbed
    before, after = (int((kernel_all_testbeds(d)["testbed"] == testbed).sum()) for d in (ds, clean))
    out.attrs.update(testbed=testbed, left_out=before - after)
    if "_repeated" in views:
        out["verdict_changed_repeated"] = out["verdict_all"] != out["verdict_repeated"]
        attrs = views["_repeated"].kernel.attrs
        out.attrs.update(replaced=attrs["replaced"], left_out_repeated=attrs["left_out"])
    return out
