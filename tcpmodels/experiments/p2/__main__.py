"""Command line of the P2 campaign: ``run``/``resume``, ``sweep``, ``dataset`` (and the hidden ``client``)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from tcpmodels.experiments.campaign_cli import (
    add_dataset_output,
    add_run_command,
    campaign_errors,
    campaign_parser,
    with_reps,
)
from tcpmodels.experiments.p2 import __doc__ as package_doc
from tcpmodels.experiments.p2.client import client_main
from tcpmodels.experiments.p2.config import DEFAULT_CONFIG, SUBFLOW_CCS
from tcpmodels.experiments.p2.dataset import build_dataset
from tcpmodels.experiments.p2.kernel import run_campaign, run_sweep

__all__ = ["main"]


# ------------------------------------------------------------------- CLI
def _setting_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cc", choices=SUBFLOW_CCS, default=DEFAULT_CONFIG.cc,
                   help="congestion control of every subflow and TCP socket (cubic: uncoupled, the shipped samples)")
    p.add_argument("--data-size-bytes", type=int, default=DEFAULT_CONFIG.data_size_bytes,
                   help="size of the MPTCP and TCP data transfers [bytes]")
    p.add_argument("--rate-bps", type=float, default=DEFAULT_CONFIG.rate_bps, help="rate of each path [bit/s]")
    p.add_argument("--buffer-bytes", type=int, default=DEFAULT_CONFIG.buffer_bytes,
                   help="drop-tail buffer at each path's rate limiter [bytes]")
    p.add_argument("--rtts-ms", type=float, nargs="+",
                   help="RTT grid applied to each path [ms] (default 120 ... 180 step 4; e.g. 120 180 for a pilot "
                        "at the extreme pairs)")


def _setting(config, args):
    changes = {"cc": args.cc, "data_size_bytes": args.data_size_bytes, "rate_bps": args.rate_bps,
               "buffer_bytes": args.buffer_bytes}
    if args.rtts_ms:
        changes["rtts_ms"] = tuple(float(r) for r in args.rtts_ms)
    return replace(config, **changes)


def main(argv: list[str] | None = None) -> int:
    parser, sub = campaign_parser("p2", package_doc)
    for name in ("run", "resume"):
        p = add_run_command(sub, name, "run or resume the campaign (the same: done samples are skipped)", reps=True)
        _setting_options(p)
    p = sub.add_parser("sweep", help="Fig. 4 subflow-share sweep")
    _setting_options(p)
    p.add_argument("--records", required=True)
    p.add_argument("--captures")
    p.add_argument("--sizes-bytes", type=int, nargs="+",
                   help="transfer sizes of the sweep [bytes] (default: P2Config.fig4_sizes_bytes, 64 KiB ... 4 MiB; "
                        "e.g. up to 256 MiB at 100 Mbit/s paths, where 4 MiB is still slow start)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="JSONL records -> Parquet + provenance (keeps the rows already in --out)")
    p.add_argument("--records", help="sample records (omit: only rewrite the rows already in --out)")
    p.add_argument("--sweep")
    add_dataset_output(p)
    p = sub.add_parser("ship-captures", help="gzip a sweep's sample captures into data/captures with their notes")
    p.add_argument("--sweep", required=True, help="records of `sweep --captures`")
    p.add_argument("--captures", required=True, help="the --captures folder of that sweep")
    p.add_argument("--out", default="data/captures")
    p.add_argument("--allow-dirty", action="store_true", help="accept records of a sweep run from a dirty tree")
    p = sub.add_parser("client", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=5201)
    args = parser.parse_args(argv)
    if args.cmd == "client":
        client_main(json.loads(sys.stdin.read()), args.port)
        return 0
    config = DEFAULT_CONFIG

    with campaign_errors("p2"):
        if args.cmd in ("run", "resume", "sweep"):
            config = _setting(config, args)
        if args.cmd in ("run", "resume"):
            config = with_reps(config, args.reps)
            n = run_campaign(args.records, config, limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        elif args.cmd == "sweep":
            if args.sizes_bytes:
                config = replace(config, fig4_sizes_bytes=tuple(args.sizes_bytes))
            n = run_sweep(args.records, config, capture_dir=args.captures, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        elif args.cmd == "ship-captures":
            from tcpmodels.experiments.p2.ship import ship_sweep_captures

            notes = ship_sweep_captures(args.sweep, args.captures, args.out, allow_dirty=args.allow_dirty)
            print(json.dumps({"notes": [str(n) for n in notes]}))
        else:
            prov = build_dataset(args.records, args.sweep, args.out, config, note=args.note, allow_dirty=args.allow_dirty)
            print(json.dumps({k: prov[k] for k in ("n_samples", "n_fig4_records", "sample_wall_s")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
