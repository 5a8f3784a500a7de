"""Command line of the P1 campaign: ``run``/``resume``, ``dataset`` (and the hidden ``client``)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from tcpmodels.experiments.campaign_cli import add_allow_dirty, add_run_command, campaign_errors, campaign_parser
from tcpmodels.experiments.p1 import __doc__ as package_doc
from tcpmodels.experiments.p1.config import DEFAULT_CONFIG, ENGINES, EXPERIMENTS, KERNEL_CCS, UNCOUPLED
from tcpmodels.experiments.p1.dataset import build_dataset
from tcpmodels.experiments.p1.kernel import client_main
from tcpmodels.experiments.p1.runs import run_campaign
from tcpmodels.experiments.p1.schedule import run_plan

__all__ = ["main"]


# ------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser, sub = campaign_parser("p1", package_doc)
    for name in ("run", "resume"):
        p = add_run_command(sub, name, "run or resume the campaign (the same: done runs are skipped)")
        p.add_argument("--engine", choices=ENGINES, default="kernel")
        p.add_argument("--captures", help="kernel: capture the Section 4 short flows here")
        p.add_argument("--experiments", nargs="+", choices=EXPERIMENTS)
        p.add_argument("--seeds", nargs="+", type=int)
        p.add_argument("--cc", nargs="+", choices=KERNEL_CCS, default=[UNCOUPLED],
                       help="kernel: MPTCP congestion control(s) of the runs (uncoupled: per-subflow Reno, with "
                            "the TCP baseline runs; tm_lia / tm_olia: the coupled BPF controls)")
        p.add_argument("--duration-s4-s", type=float)
        p.add_argument("--duration-s5-s", type=float)
        p.add_argument("--drain-s", type=float)
        p.add_argument("--delay-element", action="store_true", help="kernel: 0.5 ms RTT by the delay element")
        p.add_argument("--keep-flow-order", action="store_true",
                       help="kernel: RPS steering on the testbed (no reordering; P1Config.keep_flow_order): the runs "
                            "are labelled engine kernel_steered")
    p = sub.add_parser("dataset", help="JSONL records -> Parquet + provenance")
    p.add_argument("--records", nargs="+", required=True)
    p.add_argument("--out", required=True, help="the data/ directory")
    p.add_argument("--ship-capture")
    p.add_argument("--ns3-status", default="")
    p.add_argument("--note", default="")
    p.add_argument("--duration-s4-s", type=float)
    p.add_argument("--duration-s5-s", type=float)
    p.add_argument("--seeds", nargs="+", type=int)
    add_allow_dirty(p)
    sub.add_parser("client", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cmd == "client":
        client_main(json.loads(sys.stdin.read()))
        return 0
    config = DEFAULT_CONFIG
    if getattr(args, "delay_element", False):
        config = replace(config, delay_element=True)
    if getattr(args, "keep_flow_order", False):
        config = replace(config, keep_flow_order=True)
    for name in ("duration_s4_s", "duration_s5_s", "drain_s"):
        if getattr(args, name, None) is not None:
            config = replace(config, **{name: getattr(args, name)})
    if getattr(args, "seeds", None):
        config = replace(config, seeds=tuple(args.seeds))
    if getattr(args, "experiments", None):
        config = replace(config, experiments=tuple(args.experiments))

    with campaign_errors("p1", also=(RuntimeError,)):
        if args.cmd in ("run", "resume"):
            plan = run_plan(config, args.engine, args.cc)
            n = run_campaign(args.records, config, engine=args.engine, capture_dir=args.captures, plan=plan,
                             limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        else:
            prov = build_dataset(args.records, args.out, config, note=args.note, ship_capture=args.ship_capture,
                                 ns3_status=args.ns3_status, allow_dirty=args.allow_dirty)
            print(json.dumps(prov["engines"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
