"""The command line of the validation (``python -m tcpmodels.experiments.kernel_coupled_cc``, see the package docstring)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.kernel_coupled_cc.claims import summarize
from tcpmodels.experiments.kernel_coupled_cc.dataset import (
    build_from_records,
    jsonable,
    provenance_facts,
    records_from_dataset,
    write_dataset_files,
)
from tcpmodels.experiments.kernel_coupled_cc.ratios import mean_ratio_ci
from tcpmodels.experiments.kernel_coupled_cc.validation import ns3_shared_link, run_validation
from tcpmodels.testbed import kernel_cc

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Command line: run the validation and write the dataset (see the module docstring).

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0, or 77 when BPF congestion controls cannot be loaded here (the reason printed in one line).
    """
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.experiments.kernel_coupled_cc", description="Validation of the tm_* congestion controls on the testbed; writes a dataset.")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration-s", type=float, default=10.0)
    parser.add_argument("--reno-reps", type=int, default=8)
    parser.add_argument("--reno-duration-s", type=float, default=20.0)
    parser.add_argument("--reading-reps", type=int, default=1)
    parser.add_argument("--cubic-reps", type=int, default=None, help="cubic vs tm_cubic_x pairs (default: --reps)")
    parser.add_argument("--experiments", default="reno,cubic,coupled", help="comma-separated subset")
    parser.add_argument("--seed", type=int, default=0, help="seed of repetition 0 (repetition r: seed + r)")
    parser.add_argument("--first-rep", type=int, default=0, help="number of the first reno pair / coupled repetition")
    parser.add_argument("--until", default=None,
                        help="wall-clock limit, HH:MM UTC today, or per experiment (coupled=HH:MM,reno=HH:MM): no "
                             "reno pair or coupled repetition is started that would not end before it")
    parser.add_argument("--lock-batch-s", type=float, default=240.0,
                        help="hold the host lock across runs for this long before letting other campaigns have it")
    parser.add_argument("--records", default=None,
                        help="append provenance and every row to this JSON-lines file as measured; the dataset "
                             "is then built from it (with any earlier invocations it holds)")
    parser.add_argument("--from-records", nargs="+", default=None,
                        help="do not run: build the dataset from these record files (plain or .gz)")
    parser.add_argument("--keep-from", nargs=2, metavar=("PREFIX", "EXPERIMENTS"), default=None,
                        help="do not run: write the rows of these comma-separated experiments of the dataset at "
                             "PREFIX, with its provenance, as gzipped record lines to <out>_records_kept.jsonl.gz")
    parser.add_argument("--out", default="data/datasets/kernel_coupled_cc", help="path prefix of the outputs")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write a shipped dataset (under the repository's data/) from runs of a dirty tree")
    parser.add_argument("--ns3-reps", type=int, default=0,
                        help="instead of the testbed: the shared experiment in ns-3 (ns3_shared_link), this many "
                             "simulations of --duration-s, written to <out>_ns3.parquet and <out>_ns3.json")
    args = parser.parse_args(argv)
    if args.ns3_reps:
        params = {"ns3_reps": args.ns3_reps, "duration_s": args.duration_s}
        prov = provenance_facts(params)
        prov["parameters"] = {**params, "shared_ns3": "ns-3 Multipath: one link 200 Mbit/s, base RTT 20 ms, 0.5 % loss on "
                              "data packets, 1000-packet queue; 2 subflows (ns3::TcpLia or uncoupled TcpLinuxReno) + "
                              "1 TcpLinuxReno; rates after 2 s; one simulation per repetition (seed 1 + rep)"}
        t0 = time.time()
        rows = ns3_shared_link(reps=args.ns3_reps, duration_s=args.duration_s, seed=1 + args.seed)
        prov["load_average_end"] = list(os.getloadavg())
        prov["wall_time_s"] = time.time() - t0
        prov["summary"] = {f"shared_ns3_{v}_ratio_mptcp_tcp": mean_ratio_ci(g["rate_bps"], g["tcp_rate_bps"])
                           for v, g in rows.groupby("variant") if len(g) >= 2}
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        from tcpmodels.datasets.kernel_coupled_cc_ns3 import SCHEMA

        SCHEMA.validate({"": rows}, complete=False)
        rows.to_parquet(out.parent / (out.name + "_ns3.parquet"), index=False)
        (out.parent / (out.name + "_ns3.json")).write_text(json.dumps(prov, indent=1) + "\n")
        print(json.dumps(prov["summary"], indent=1))
        return 0
    out = Path(args.out)
    repo = REPO_ROOT
    shipped = out.parent.resolve().is_relative_to((repo / "data").resolve())
    if args.keep_from:
        import gzip

        lines = records_from_dataset(args.keep_from[0], args.keep_from[1].split(","))
        out.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(out.parent / (out.name + "_records_kept.jsonl.gz"), "wt") as f:
            for line in lines:
                f.write(json.dumps(line, default=jsonable) + "\n")
        print(f"{len(lines) - 1} rows kept from {args.keep_from[0]}")
        return 0
    if args.from_records:
        rows, cwnd, prov = build_from_records(args.from_records)
        if shipped and prov["git_dirty"] is not False and not args.allow_dirty:
            print("refused: a record was measured from a dirty (or unknown) tree; a shipped dataset must come from "
                  "committed code (or pass --allow-dirty, the provenance then says so)")
            return 1
        write_dataset_files(out, rows, cwnd, prov)
        print(json.dumps(prov["summary"], indent=1, default=jsonable))
        return 0
    reason = kernel_cc.unavailable_reason()
    if reason:
        print(f"kernel_cc validation skipped: {reason}")
        return 77
    until = None
    if args.until:
        import datetime as dt

        def at(hhmm):
            hh, mm = (int(x) for x in hhmm.split(":"))
            return dt.datetime.now(dt.timezone.utc).replace(hour=hh, minute=mm, second=0, microsecond=0).timestamp()

        if "=" in args.until:
            until = {k: at(v) for k, v in (item.split("=") for item in args.until.split(","))}
        else:
            until = at(args.until)
    params = {"reps": args.reps, "duration_s": args.duration_s, "reno_reps": args.reno_reps,
              "reno_duration_s": args.reno_duration_s, "reading_reps": args.reading_reps, "cubic_reps": args.cubic_reps,
              "experiments": tuple(args.experiments.split(",")), "seed": args.seed, "first_rep": args.first_rep,
              "until_unix_s": until, "lock_batch_s": args.lock_batch_s}
    prov = provenance_facts(params)
    if shipped and prov["git_dirty"] is not False and not args.allow_dirty:
        print("refused: uncommitted changes in the tree; a shipped dataset must come from committed code "
              "(commit first, write elsewhere with --out, or pass --allow-dirty)")
        return 1
    t0 = time.time()
    sink = open(args.records, "a") if args.records else None

    def record(kind, **fields):
        if sink is not None:
            sink.write(json.dumps({"kind": kind, **fields}, default=jsonable) + "\n")
            sink.flush()

    record("provenance", **prov)

    def log(row):
        record("row", row=row)
        print(json.dumps({k: v for k, v in row.items() if k != "k_epochs"}, default=jsonable), flush=True)

    try:
        rows, cwnd = run_validation(**params, log=log, on_cwnd=lambda new: record("cwnd", rows=new))
        record("end", load_average_end=list(os.getloadavg()), wall_time_s=time.time() - t0)
    finally:
        if sink is not None:
            sink.close()
    if args.records:
        rows, cwnd, prov = build_from_records([args.records])
    else:
        prov.update(load_average_end=list(os.getloadavg()), wall_time_s=time.time() - t0, summary=summarize(rows))
    write_dataset_files(out, rows, cwnd, prov)
    print(json.dumps(prov["summary"], indent=1, default=jsonable))
    return 0
