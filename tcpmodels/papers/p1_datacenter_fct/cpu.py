"""What the host's CPUs did in the alternated runs, beside the 70 KB flows' times (issue 57, item 1, follow-up).

In the second (idle-host) session the steered testbed's headline spread far more from seed to seed than the
unsteered one's, and its 70 KB mean FCT beside the TCP background ranged 14-67 ms. The candidate named
before looking (``docs/CAMPAIGNS.md``) was the flow-to-CPU hash of RPS on the host's two CPUs. Each run's
record holds the CPU time by kind per CPU over the run (``cpu_time_s``, from ``/proc/stat``); the datasets'
runs tables keep only the sums, so this module reads the shipped records.

**Exploratory, not a verdict**: the measures (how unevenly the softirq work, i.e. the veth hops, fell on the
CPUs, and the idle time left on the CPU with less of it) were chosen after the second session's results were read,
and are computed on both sessions at once; a rank correlation over 12 seeds per testbed and background is
reported with its p-value for orientation only. A stated test is the next stage.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from tcpmodels.papers.p1_datacenter_fct.abab import SESSION_SCHEMAS
from tcpmodels.records.parts import shipped_record_lines

__all__ = ["SHORT_SIZE_BYTES", "cpu_runs", "cpu_correlations", "cpu_paragraph"]

#: the short flows whose mean completion time the headline uses [bytes]
SHORT_SIZE_BYTES = 70_000


def cpu_runs(data_dir: str | Path = "data", session: str = "idle") -> pd.DataFrame | None:
    """One row per run of a session: its key, the 70 KB mean FCT and the softirq and idle time of each CPU.

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder (the session's shipped records, ``datasets/<prefix>_records*.jsonl.gz``).
    session : {"loaded", "idle"}
        The session (:data:`~tcpmodels.papers.p1_datacenter_fct.abab.SESSION_SCHEMAS`).

    Returns
    -------
    pandas.DataFrame or None
        ``engine``, ``protocol``, ``seed``, ``short_fct_ms`` (mean over the 70 KB flows) [ms],
        ``softirq_imbalance`` (``|s0 - s1| / (s0 + s1)`` of the two busiest CPUs' softirq time) [-],
        ``other_cpu_idle_s`` (idle time of the second CPU by softirq work) [s], ``idle_s`` (all CPUs) [s];
        None without shipped records.

    Raises
    ------
    ValueError
        If ``session`` is not a session.
    """
    if session not in SESSION_SCHEMAS:
        raise ValueError(f"session={session!r}: expected one of {sorted(SESSION_SCHEMAS)}")
    lines = shipped_record_lines(Path(data_dir) / "datasets" / f"{SESSION_SCHEMAS[session].prefix}_records")
    rows = []
    for line in lines:
        r = json.loads(line)
        cpu = r.get("cpu_time_s") or {}
        short = [f["fct_s"] for f in r["flows"]
                 if f.get("size_bytes") == SHORT_SIZE_BYTES and f.get("fct_s") is not None and not f.get("error")]
        if len(cpu) < 2 or not short:
            continue
        per = sorted(((v.get("softirq", 0.0), v.get("idle", 0.0)) for v in cpu.values()), reverse=True)
        (s0, _), (s1, idle1) = per[0], per[1]
        rows.append({"engine": r["engine"], "protocol": r["protocol"], "seed": int(r["seed"]),
                     "short_fct_ms": 1e3 * float(np.mean(short)),
                     "softirq_imbalance": abs(s0 - s1) / (s0 + s1) if s0 + s1 > 0 else np.nan,
                     "other_cpu_idle_s": idle1, "idle_s": sum(i for _, i in per)})
    return pd.DataFrame(rows) if rows else None


def cpu_correlations(runs: pd.DataFrame) -> pd.DataFrame:
    """Spearman's rank correlation of the 70 KB mean FCT with each CPU measure, per testbed and background.

    Parameters
    ----------
    runs : pandas.DataFrame
        :func:`cpu_runs`.

    Returns
    -------
    pandas.DataFrame
        Index (``engine``, ``protocol``); ``runs``, ``fct_min_ms``, ``fct_max_ms`` [ms] and, per measure,
        ``rho_<measure>`` and ``p_<measure>`` (two-sided; orientation only: see the module docstring).
    """
    out = {}
    for (engine, protocol), g in runs.groupby(["engine", "protocol"], sort=True):
        row = {"runs": len(g), "fct_min_ms": g["short_fct_ms"].min(), "fct_max_ms": g["short_fct_ms"].max()}
        for m in ("softirq_imbalance", "other_cpu_idle_s"):
            res = spearmanr(g[m], g["short_fct_ms"]) if len(g) >= 3 else None
            row[f"rho_{m}"] = float(res.statistic) if res is not None else np.nan
            row[f"p_{m}"] = float(res.pvalue) if res is not None else np.nan
        out[(engine, protocol)] = row
    return pd.DataFrame.from_dict(out, orient="index").rename_axis(["engine", "protocol"])


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p {p:.3f}"


def cpu_paragraph(data_dir: str | Path = "data") -> str:
    """The notebook's paragraph: the rank correlations on the steered testbed with the TCP background, per session.

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder.

    Returns
    -------
    str
        Markdown; a sentence saying why there is none when no session's records are shipped.
    """
    parts, signs = [], []
    for session in ("idle", "loaded"):
        runs = cpu_runs(data_dir, session)
        if runs is None:
            continue
        c = cpu_correlations(runs)
        if ("kernel_steered", "tcp") not in c.index:
            continue
        s = c.loc[("kernel_steered", "tcp")]
        u = c.loc[("kernel", "tcp")] if ("kernel", "tcp") in c.index else None
        slow = runs[(runs["engine"] == "kernel_steered") & (runs["protocol"] == "tcp")].nlargest(1, "short_fct_ms")
        signs.append(np.sign(s["rho_softirq_imbalance"]))
        parts.append(
            f"{session} session: steered, beside TCP, the 70 KB mean FCT ({s['fct_min_ms']:.1f}-{s['fct_max_ms']:.1f} "
            f"ms over {int(s['runs'])} seeds) has rank correlation {s['rho_softirq_imbalance']:+.2f} "
            f"({_p(s['p_softirq_imbalance'])}) with how unevenly the softirq work fell on the two CPUs and "
            f"{s['rho_other_cpu_idle_s']:+.2f} ({_p(s['p_other_cpu_idle_s'])}) with the idle time left on the CPU "
            f"with less of it; its slowest seed ({int(slow['seed'].iloc[0])}, {slow['short_fct_ms'].iloc[0]:.1f} ms) "
            f"left {slow['idle_s'].iloc[0]:.1f} s idle on the CPUs together"
            + (f"; unsteered the first correlation is {u['rho_softirq_imbalance']:+.2f} "
               f"({u['fct_min_ms']:.1f}-{u['fct_max_ms']:.1f} ms)" if u is not None else ""))
    if not parts:
        return ("**What spreads the steered seeds**: no shipped records of the alternated campaign carry the CPU "
                "times per CPU.")
    if all(sg < 0 for sg in signs):
        lead = ("In every session the steered seeds are slower the more evenly the veth work is spread over the "
                "CPUs, i.e. faster when it piles on one and leaves another free: the opposite of the candidate named "
                "before (flows slowed by sharing a CPU), and a lead that the steered testbed's spread is the host's "
                "CPUs running out, not the network.")
    elif all(sg > 0 for sg in signs):
        lead = ("In every session the steered seeds are slower the more the veth work piles on one CPU: the "
                "candidate named before (flows slowed by sharing a CPU).")
    else:
        lead = "The sessions disagree in sign: no lead."
    return ("**What spreads the steered seeds (exploratory: the measures were chosen after the results were read)**. "
            + "; ".join(parts) + ". " + lead + " A lead for a stated test, not a verdict.")
