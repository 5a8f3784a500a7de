"""Every paper's verdict table, as the notebooks compute it, and a before/after comparison of two of them.

``dump`` runs, in the checkout it is started from (``PYTHONPATH=<checkout>``, working directory the
checkout), the calls the five paper notebooks make (``load_dataset``, ``tables(quick=False, seed=0)``,
``claims``) on that checkout's ``data/`` and writes one CSV per paper (``p1.csv`` ... ``p5.csv``: the
claims frame, one row per claim part). It runs the code of an older commit too, as long as that commit has
the claims contract (issue 16), so the verdicts "before" are what that commit itself printed::

    git worktree add --detach /tmp/before 1724a7e
    (cd /tmp/before && PYTHONPATH=/tmp/before python scripts/verdict_tables.py dump /tmp/v_before)
    python scripts/verdict_tables.py dump /tmp/v_after
    python scripts/verdict_tables.py compare /tmp/v_before /tmp/v_after \\
        --rename '[kernel]=[kernel, uncoupled]' '[ns3]=[ns3, lia]'

``compare`` prints first the number of parts of each outcome per paper, before -> after (:func:`counts`),
then, per paper, a Markdown table ``claim | part | before | after`` with each cell as
``effect [95 % CI] verdict (runs needed), n=<runs>``; a claim part present on one side only shows ``—``
on the other. ``--rename OLD=NEW`` rewrites a label in the before table's claim names first (engines were
relabelled when more congestion controls were added). Outcomes are shortened: ``sup.`` supported,
``smaller`` smaller than claimed, ``contr.`` contradicted, ``inc.`` inconclusive, ``n.t.`` not testable here
(the five outcomes of issue 54; dumps of older commits hold the first, third and fourth only).
``p2_lossy`` is P2's claims at the spread pilot's loss rate (issue 57, item 4; their own Holm family): a
checkout without a complete repetition shipped writes no CSV for it, and its cells are ``—``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import pandas as pd

PAPERS = ("p1", "p2", "p3", "p4", "p5", "p2_lossy")
SHORT_VERDICT = {"supported": "sup.", "smaller than claimed": "smaller", "contradicted": "contr.",
                 "inconclusive": "inc.", "not testable here": "n.t."}


def _p1(data_dir: str) -> pd.DataFrame:
    from tcpmodels.papers import p1_datacenter_fct as p1
    ds = p1.load_dataset(data_dir)
    return p1.claims(ds, p1.tables(ds, quick=False, seed=0), seed=0)


def _p2(data_dir: str) -> pd.DataFrame:
    from tcpmodels.papers import p2_mptcp_prediction as p2
    ds = p2.load_dataset(data_dir)
    if hasattr(ds, "for_cc"):  # since the tm_lia samples: the notebook's main analysis is tm_lia
        ds = ds.for_cc("tm_lia")
    return p2.claims(ds, p2.tables(ds, quick=False, seed=0))


def _p3(data_dir: str) -> pd.DataFrame:
    from tcpmodels.papers import p3_cubic_fairness as p3
    ds = p3.load_dataset(data_dir)
    return p3.claims(ds, p3.tables(ds, quick=False, seed=0))


def _p4(data_dir: str) -> pd.DataFrame:
    from tcpmodels.papers import p4_lftcp
    dataset = p4_lftcp.load_dataset()
    verdicts = p4_lftcp.claims(dataset, p4_lftcp.tables(dataset, quick=False))
    if hasattr(p4_lftcp, "load_measured"):  # since P4 was measured on the kernel (C4.7)
        measured = p4_lftcp.measured_claims(p4_lftcp.load_measured(data_dir))
        verdicts = pd.concat([verdicts, measured], ignore_index=True)
    return verdicts


def _p5(data_dir: str) -> pd.DataFrame:
    from tcpmodels.papers import p5_selfsimilar as p5
    ds = p5.load_dataset(data_dir)
    return p5.claims(ds, p5.tables(ds, quick=False, seed=0))


def _p2_lossy(data_dir: str) -> pd.DataFrame | None:
    """P2's claims at the spread pilot's loss rate (their own family), None where no repetition is shipped."""
    from tcpmodels.papers import p2_mptcp_prediction as p2
    if not hasattr(p2, "lossy_verdicts"):  # before issue 57's item 4
        return None
    return p2.lossy_verdicts(data_dir, quick=False, seed=0)


BUILDERS = {"p1": _p1, "p2": _p2, "p3": _p3, "p4": _p4, "p5": _p5, "p2_lossy": _p2_lossy}


def dump(out_dir: Path, data_dir: str, papers: list[str]) -> int:
    """Write ``<paper>.csv`` for each paper; returns the number of papers that failed (each is reported)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for paper in papers:
        started = time.monotonic()
        try:
            frame = BUILDERS[paper](data_dir)
        except Exception as exc:  # noqa: BLE001 - report and go on: one paper's old code must not hide the others
            print(f"{paper}: failed: {exc!r}", file=sys.stderr)
            failed += 1
            continue
        if frame is None:
            print(f"{paper}: not judged in this checkout (its dataset is not shipped): no CSV")
            continue
        frame.to_csv(out_dir / f"{paper}.csv", index=False)
        print(f"{paper}: {len(frame)} claim parts in {time.monotonic() - started:.1f} s -> {out_dir / paper}.csv")
    return failed


def cell(row: dict | None) -> str:
    """``effect [95 % CI] verdict (runs needed), n=<runs>`` of one claims-frame record; ``—`` for none."""
    if row is None:
        return "—"
    text = "" if pd.isna(row["effect"]) else f"{row['effect']:+.3g}"
    if not pd.isna(row["ci_low"]) and not (math.isinf(row["ci_low"]) or row["ci_low"] == row["ci_high"]):
        text += f" [{row['ci_low']:+.3g}, {row['ci_high']:+.3g}]"
    verdict = SHORT_VERDICT.get(str(row["verdict"]), str(row["verdict"]))
    text += f" {verdict}"
    if verdict == "inc." and not pd.isna(row["runs_needed"]):
        text += f" ({int(row['runs_needed'])})"
    if not pd.isna(row["n_runs"]) and int(row["n_runs"]) > 0:
        text += f", n={int(row['n_runs'])}"
    return text.strip()


def short_claim(claim: str) -> str:
    """The claim's id and its bracketed label, e.g. ``C1.3 [kernel, tm_lia]`` (the rest is in the notebook)."""
    head = claim.split(" [", 1)[0]
    if "[" in claim and len(head) <= 10:  # "C1.3 [kernel, tm_lia] ...", "Fig. 7 [ns3, lia] ..."
        return claim[:claim.index("]") + 1]
    head = claim.split(" ", 1)[0]
    if "[reading:" in claim:
        return f"{head} {claim[claim.index('[reading:'):claim.index(']', claim.index('[reading:')) + 1]}"
    return head


def counts(before_dir: Path, after_dir: Path, papers: list[str]) -> str:
    """A Markdown table: per paper, the parts of each outcome before -> after (``-`` where a dump is missing)."""
    lines = ["| paper | parts | " + " | ".join(SHORT_VERDICT) + " |", "|---" * (2 + len(SHORT_VERDICT)) + "|"]
    for paper in papers:
        sides = []
        for folder in (before_dir, after_dir):
            path = folder / f"{paper}.csv"
            sides.append(pd.read_csv(path)["verdict"].value_counts() if path.exists() else None)
        total = [("-" if c is None else str(int(c.sum()))) for c in sides]
        cells = [" -> ".join("-" if c is None else str(int(c.get(v, 0))) for c in sides) for v in SHORT_VERDICT]
        lines.append(f"| {paper.upper()} | {' -> '.join(total)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def compare(before_dir: Path, after_dir: Path, renames: list[str], papers: list[str]) -> str:
    """Markdown tables, one per paper, of the before and after verdicts matched on (claim, part)."""
    pairs = [r.split("=", 1) for r in renames]
    if any(len(p) != 2 for p in pairs):
        raise SystemExit(f"--rename takes OLD=NEW; got {renames!r}")
    lines = []
    for paper in papers:
        before_path, after_path = before_dir / f"{paper}.csv", after_dir / f"{paper}.csv"
        for path in (before_path, after_path):
            if not path.parent.is_dir() or not (before_path.exists() or after_path.exists()):
                raise SystemExit(f"{path}: missing (run dump for that checkout first, or name fewer --papers)")
        # a dump without this paper's CSV had no dataset to judge (dump said so): its cells are "—"
        before, after = (pd.read_csv(p) if p.exists() else pd.DataFrame(columns=["claim", "part"])
                         for p in (before_path, after_path))
        for old, new in pairs:
            before["claim"] = before["claim"].str.replace(old, new, regex=False)
        keyed = {(r["claim"], r["part"]): r for r in before.to_dict("records")}
        lines += [f"### {paper.upper()}", "", "| claim | part | before | after |", "|---|---|---|---|"]
        seen = set()
        for row in after.to_dict("records"):
            key = (row["claim"], row["part"])
            seen.add(key)
            lines.append(f"| {short_claim(row['claim'])} | {row['part']} | {cell(keyed.get(key))} | {cell(row)} |")
        for key, old in keyed.items():
            if key not in seen:
                lines.append(f"| {short_claim(key[0])} | {key[1]} | {cell(old)} | — |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``dump OUT_DIR`` or ``compare BEFORE_DIR AFTER_DIR``; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write every paper's claims frame as CSV")
    d.add_argument("out_dir", type=Path)
    d.add_argument("--data-dir", default="data", help="the checkout's data directory (default: data)")
    d.add_argument("--papers", nargs="+", default=list(PAPERS), choices=PAPERS)
    c = sub.add_parser("compare", help="Markdown before/after tables of two dumps")
    c.add_argument("before_dir", type=Path)
    c.add_argument("after_dir", type=Path)
    c.add_argument("--rename", nargs="*", default=[], metavar="OLD=NEW")
    c.add_argument("--papers", nargs="+", default=list(PAPERS), choices=PAPERS)
    args = parser.parse_args(argv)
    if args.command == "dump":
        return 1 if dump(args.out_dir, args.data_dir, args.papers) else 0
    print(counts(args.before_dir, args.after_dir, args.papers) + "\n")
    print(compare(args.before_dir, args.after_dir, args.rename, args.papers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
