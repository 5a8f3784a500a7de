"""Rows, cwnd samples and provenance: the kernel_coupled_cc dataset from runs or from shipped records."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.kernel_coupled_cc.claims import claims, summarize, timeout_table
from tcpmodels.experiments.kernel_coupled_cc.ratios import goal_ratios, olia_loss_events

__all__ = ["provenance_facts", "jsonable", "records_from_dataset", "build_from_records", "write_dataset_files", "findings_lines"]


def provenance_facts(args: dict) -> dict:
    """Commit, dirtiness of the tree, kernel, tools, parameters and host load, taken before the
    run (the outputs written after it would make the tree dirty).

    Parameters
    ----------
    args : dict
        The command line's parameters, recorded with the description of each experiment.

    Returns
    -------
    dict
        ``commit``, ``git_dirty`` (None when the repository's state is unknown), ``kernel``, ``tools``,
        ``parameters``, ``load_average_start``, ``cpus``, ``created_unix_s``.
    """
    from tcpmodels.testbed import tool_versions

    def out(cmd):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return proc.stdout.strip() if proc.returncode == 0 else None   # not a repository: unknown, not clean
        except (OSError, subprocess.TimeoutExpired):
            return None

    def first(cmd):
        text = out(cmd)
        return text.splitlines()[0] if text else None

    repo = REPO_ROOT
    status = out(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])
    return {
        "commit": first(["git", "-C", str(repo), "rev-parse", "HEAD"]),
        "git_dirty": None if status is None else bool(status),
        "kernel": platform.release(),
        "tools": {**tool_versions(), "clang": first(["clang", "--version"]), "bpftool": first(["bpftool", "version"])},
        "parameters": {**args,
                       "reno": "100 Mbit/s, 20 ms, 1 % random loss; reno_reps pairs of reno_duration_s, order alternating",
                       "cubic": "dumbbell, one sender, 20 Mbit/s bottleneck on a router, 100 ms, 100 kB drop-tail, 4 x duration, TCP_INFO every 20 ms; "
                                "tm_cubic_x with reading none (interleaved with cubic), multiply and divide, x(RTT) = (RTT/1 s)^(-1/3)",
                       "shared": "one link 200 Mbit/s, 20 ms, 0.5 % loss; MPTCP (2 subflows) + 1 TCP reno",
                       "disjoint": "two paths 200 Mbit/s, 20 ms, loss 0.2 % and 2 %"},
        "load_average_start": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "created_unix_s": time.time(),
    }


def jsonable(v: object) -> object:
    """``json.dumps``'s ``default`` for the dataset's provenance: a numpy scalar as its Python value.

    Parameters
    ----------
    v : object
        A value JSON does not know.

    Returns
    -------
    object
        ``v.item()`` for a numpy scalar.

    Raises
    ------
    TypeError
        For anything else (as ``json.dumps`` expects).
    """
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"not JSON serializable: {type(v)}")


def records_from_dataset(prefix: str | Path, experiments: Sequence[str]) -> list[dict]:
    """Record lines (as :func:`build_from_records` reads them) holding the rows of some experiments of
    an earlier dataset, with that dataset's provenance, so a rebuilt dataset keeps rows it cannot
    remeasure. Columns a row does not have (NaN) are left out.

    Parameters
    ----------
    prefix : str or Path
        The earlier dataset's path prefix (``<prefix>.parquet`` and ``<prefix>.json``).
    experiments : sequence of str
        Values of the ``experiment`` column whose rows are kept (e.g. ``reno``, ``cubic``,
        ``cubic_multiply``, ``cubic_divide``).

    Returns
    -------
    list of dict
        A ``provenance`` line (the earlier provenance without its summary, with ``kept_from`` and
        ``experiments``) followed by one ``row`` line per kept row.
    """
    prefix = Path(prefix)
    prov = json.loads(prefix.with_suffix(".json").read_text())
    prov.pop("summary", None)
    rows = pd.read_parquet(prefix.with_suffix(".parquet"))
    kept = rows[rows.experiment.isin(list(experiments))]
    out = [{"kind": "provenance", **prov, "kept_from": str(prefix), "experiments": list(experiments)}]
    for rec in kept.to_dict("records"):
        out.append({"kind": "row", "row": {k: v for k, v in rec.items() if not (isinstance(v, float) and np.isnan(v))}})
    return out


def build_from_records(paths: Sequence[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The dataset from record files (JSON lines, plain or gzipped) written by :func:`main` with
    ``--records``: one ``provenance`` line per invocation, a ``row`` line per measured row,
    ``cwnd`` lines, and an ``end`` line per invocation that finished.

    Parameters
    ----------
    paths : sequence of str or Path
        The record files, in order.

    Returns
    -------
    tuple
        (rows, each with the ``commit`` of the invocation that measured it; cwnd rows, per variant
        those of the earliest invocation that recorded any for it; provenance:
        the common ``commit`` of the invocations that recorded rows (a list if they differ),
        ``git_dirty`` (true if any of them ran from a dirty tree), ``kernel``, ``tools``,
        ``invocations`` (each invocation's own provenance with its wall time, end load and
        number of rows), ``wall_time_s`` summed, and the :func:`summarize` ``summary``).
    """
    import gzip

    rows, cwnd, invocations = [], [], []
    cwnd_from: dict[str, int] = {}
    for path in paths:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            for line in f:
                if not line.strip():
                    continue
                rec = json.loads(line)
                kind = rec.pop("kind")
                if kind == "row":   # each row names the commit that measured it
                    commit = invocations[-1].get("commit") if invocations else None
                    rows.append({**rec["row"], "commit": commit})
                    if invocations:
                        invocations[-1]["rows"] = invocations[-1].get("rows", 0) + 1
                elif kind == "cwnd":   # one run per variant: the earliest invocation's (cwnd rows name no repetition)
                    n_inv = len(invocations)
                    for r in rec["rows"]:
                        if cwnd_from.setdefault(r["variant"], n_inv) == n_inv:
                            cwnd.append(r)
                elif kind == "provenance":
                    invocations.append(rec)
                elif kind == "end" and invocations:
                    invocations[-1].update(rec)
    rows_df, cwnd_df = pd.DataFrame(rows), pd.DataFrame(cwnd)
    measured = [inv for inv in invocations if inv.get("rows")]   # an invocation that recorded no row counts for nothing
    commits = sorted({inv.get("commit") for inv in measured})
    prov = {"commit": commits[0] if len(commits) == 1 else commits,
            "git_dirty": any(inv.get("git_dirty") is not False for inv in measured) if measured else None,
            "kernel": invocations[0].get("kernel") if invocations else None,
            "tools": invocations[0].get("tools") if invocations else None,
            "invocations": invocations,
            "wall_time_s": float(sum(inv.get("wall_time_s", 0.0) for inv in invocations)),
            "summary": summarize(rows_df)}
    return rows_df, cwnd_df, prov


def write_dataset_files(out: Path, rows: pd.DataFrame, cwnd: pd.DataFrame, prov: dict) -> None:
    """Write ``<out>.parquet``, ``<out>_cwnd.parquet`` and ``<out>.json``, the tables checked first.

    Parameters
    ----------
    out : Path
        The path prefix (``--out``; the shipped dataset's is ``data/datasets/kernel_coupled_cc``).
    rows : pandas.DataFrame
        One row per run or map snapshot (:data:`tcpmodels.datasets.kernel_coupled_cc.TABLE`).
    cwnd : pandas.DataFrame
        The cwnd samples (:data:`tcpmodels.datasets.kernel_coupled_cc.CWND`).
    prov : dict
        The provenance.

    Raises
    ------
    tcpmodels.datasets.SchemaError
        Before anything is written, if a table does not match its schema.
    """
    from tcpmodels.datasets.kernel_coupled_cc import SCHEMA

    SCHEMA.validate({"": rows, "cwnd": cwnd}, complete=False)  # the names follow --out; the tables are the dataset's
    out.parent.mkdir(parents=True, exist_ok=True)
    rows.to_parquet(out.with_suffix(".parquet"), index=False)
    cwnd.to_parquet(out.parent / (out.name + "_cwnd.parquet"), index=False)
    out.with_suffix(".json").write_text(json.dumps(prov, indent=1, default=jsonable) + "\n")


def findings_lines(rows: pd.DataFrame) -> list[str]:
    """The notebook's findings, one line each, computed from the dataset's rows.

    Every claim of :func:`claims` with its interval and outcome, the map-record checks
    (:func:`goal_ratios`), the smaller subflow's window in the map dumps of
    tm_lia and tm_olia, OLIA increase errors above 2 % (with the age of the snapshot) and
    OLIA's delivered segments per loss event (:func:`olia_loss_events`).

    Parameters
    ----------
    rows : pandas.DataFrame
        The dataset's rows (``kernel_coupled_cc.parquet``).

    Returns
    -------
    list of str
        One finding per line, numbers formatted for reading.
    """
    verdicts = claims(rows)
    lines = [f"{c[:c.index(']') + 1] if ']' in c else c} {p}: {e:+.4g} [{lo:+.4g}, {hi:+.4g}], {v}"
             for c, p, e, lo, hi, v in zip(verdicts["claim"], verdicts["part"], verdicts["effect"], verdicts["ci_low"],
                                           verdicts["ci_high"], verdicts["verdict"])]
    goals = goal_ratios(rows)
    for key, g in goals.items():
        if g.get("method") == "seqcount":
            lines.append(f"{key}: {g['n_snapshots']} records read, {g['n_torn']} torn (left out, counted), "
                         f"{g['n_distinct']} distinct consistent: max |error| {g['max']:.2e}, median {g['median']:.2e}, "
                         f"{g['within']:.0%} within {g['tolerance']:.0%}")
        elif "ratio" not in g:
            lines.append(f"{key}: max |error| {g['max']:.2e}, median {g['median']:.2e} over {g['n_distinct']} distinct snapshots "
                         f"({g['n_snapshots']} dumps{', single reads without consistency check' if 'single_read' in key else ''}), "
                         f"{g['within']:.0%} within {g['tolerance']:.0%}")
    snap = rows[rows.experiment.isin(["alpha", "olia_incr"])].copy()
    if len(snap):
        snap["min_window"] = [min(json.loads(w)) for w in snap["cwnd_segments"]]
        snap["variant"] = np.where(snap.experiment == "alpha", "tm_lia", "tm_olia")
        snap["total_window"] = [sum(json.loads(w)) for w in snap["cwnd_segments"]]
        for (setting, variant), g in snap.groupby(["setting", "variant"]):
            lines.append(f"{variant} {setting}: the smaller subflow at <= 2 segments in {(g.min_window <= 2).mean():.0%} of "
                         f"{len(g)} dumps (median smaller window {g.min_window.median():.0f} segments, median total "
                         f"{g.total_window.median():.0f} segments)")
        olia_rows = rows[rows.experiment == "olia_incr"]
        if "snapshot_method" in olia_rows:
            olia_rows = olia_rows[olia_rows.snapshot_method != "seqcount"]
        if len(olia_rows) and "age_s" in olia_rows:
            distinct = olia_rows.drop_duplicates(["token", "acks"])
            err = distinct.incr_rel_error_of_terms.abs()
            torn = distinct[err > 0.02]
            lines.append(f"OLIA increase errors above 2 % of the terms (single reads): {len(torn)} of {len(distinct)} distinct snapshots "
                         f"(errors {[round(float(e), 3) for e in torn.incr_rel_error_of_terms]}, updated "
                         f"{[round(float(a) * 1e3, 1) for a in torn.age_s]} ms before the dump, windows {list(torn.cwnd_segments)}); "
                         f"the others at most {err[err <= 0.02].max():.1e}")
    tt = timeout_table(rows)
    for (setting, variant), t in tt.iterrows():
        lines.append(f"{variant} {setting}: smaller subflow {t.smaller_rto_events:.0f} timeouts in {t.smaller_loss_events:.0f} "
                     f"loss events ({t.smaller_rto_per_loss:.3f} per loss event, 95 % interval "
                     f"{t.smaller_rto_per_loss_ci_low:.3f}-{t.smaller_rto_per_loss_ci_high:.3f}, one-sided 95 % upper bound "
                     f"{t.smaller_rto_per_loss_upper95:.3f}), larger subflow "
                     f"{t.larger_rto_events:.0f} in {t.larger_loss_events:.0f}, over {int(t.runs)} runs; loss events per 1000 "
                     f"delivered segments: smaller {t.smaller_loss_events_per_1000_segments:.2f}, larger "
                     f"{t.larger_loss_events_per_1000_segments:.2f} (delivered {t.smaller_delivered_segments:.0f} and "
                     f"{t.larger_delivered_segments:.0f} segments)")
    losses = olia_loss_events(rows)
    for (setting, smaller), g in losses.groupby(["setting", "smaller"]):
        lines.append(f"tm_olia {setting}, {'smaller' if smaller else 'larger'} subflow: median {g.segments_per_loss_event.median():.0f} "
                     f"delivered segments per loss event over {len(g)} subflow dumps")
    return lines
