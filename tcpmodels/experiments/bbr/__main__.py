"""Command line of the BBR coexistence campaign: ``pilot``, ``kernel``, ``ns3``, ``dataset``."""

from __future__ import annotations

import json
from dataclasses import replace

from tcpmodels.experiments.bbr import __doc__ as package_doc
from tcpmodels.experiments.bbr.config import DEFAULT_CONFIG, PILOT_CONFIG
from tcpmodels.experiments.campaign_cli import add_run_command, campaign_errors, campaign_parser, with_reps

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Command line (see the package docstring)."""
    parser, sub = campaign_parser("bbr", package_doc)
    p = add_run_command(sub, "pilot", "run or resume the run-length pilot (root; 2 x 180 s)")
    p = add_run_command(sub, "kernel", "run or resume the kernel grid (root; host lock per sample)", reps=True)
    p.add_argument("--warmup-rtts", type=float, help=f"default {DEFAULT_CONFIG.warmup_rtts}")
    p.add_argument("--measure-s", type=float, help=f"default {DEFAULT_CONFIG.measure_s}")
    p.add_argument("--w2-only", action="store_true",
                   help="only the points of claim W2 (1 BBR flow against 1, 2 and 4 CUBIC flows at X = 4 and 16): "
                        "more repetitions where the pilot's power analysis asks for them")
    p = add_run_command(sub, "ns3", "run or resume the ns-3 TcpBbr grid (no root; run it at nice 19)", reps=True)
    p.add_argument("--host-lock", action="store_true", help="take the host lock for each simulation")
    p = sub.add_parser("dataset", help="records -> Parquet + provenance")
    p.add_argument("--kernel-records", nargs="+", default=[])
    p.add_argument("--ns3-records", nargs="+", default=[])
    p.add_argument("--pilot-records", nargs="+", default=[])
    p.add_argument("--out", required=True)
    p.add_argument("--note", default="")
    p.add_argument("--allow-dirty", action="store_true")
    args = parser.parse_args(argv)
    with campaign_errors("bbr"):
        if args.cmd == "pilot":
            from tcpmodels.experiments.bbr.kernel import run_kernel_campaign

            n = run_kernel_campaign(args.records, PILOT_CONFIG, limit=args.limit, progress=not args.no_progress)
        elif args.cmd == "kernel":
            from tcpmodels.experiments.bbr.kernel import run_kernel_campaign

            cfg = DEFAULT_CONFIG
            for name in ("reps", "warmup_rtts", "measure_s"):
                if getattr(args, name, None):
                    cfg = replace(cfg, **{name: getattr(args, name)})
            from tcpmodels.experiments.bbr.config import kernel_plan, prioritized, w2_points

            plan = prioritized(kernel_plan(cfg))
            if args.w2_only:
                plan = [s for s in plan if w2_points(s)]
            n = run_kernel_campaign(args.records, cfg, limit=args.limit, progress=not args.no_progress, plan=plan)
        elif args.cmd == "ns3":
            from tcpmodels.experiments.bbr.ns3 import run_ns3_campaign

            cfg = with_reps(DEFAULT_CONFIG, args.reps)
            n = run_ns3_campaign(args.records, cfg, limit=args.limit, progress=not args.no_progress,
                                 host_lock=args.host_lock)
        else:
            from tcpmodels.experiments.bbr.dataset import build_dataset

            prov = build_dataset(kernel_records=args.kernel_records, ns3_records=args.ns3_records,
                                 pilot_records=args.pilot_records, out_dir=args.out, note=args.note,
                                 allow_dirty=args.allow_dirty)
            print(json.dumps(prov["counts"]))
            return 0
        print(f"bbr {args.cmd}: {n} samples recorded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
