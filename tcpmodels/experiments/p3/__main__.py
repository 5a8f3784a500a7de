"""Command line of the P3 campaign: ``kernel``, ``pilot``, ``ns3``, ``fluid``, ``dataset``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from tcpmodels.experiments.campaign import add_run_command, campaign_errors, campaign_parser
from tcpmodels.experiments.p3 import __doc__ as package_doc
from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, NS3_KINDS, NS3_PHASES
from tcpmodels.experiments.p3.dataset import build_dataset
from tcpmodels.experiments.p3.fluid import fluid_frame
from tcpmodels.experiments.p3.kernel import run_kernel_campaign
from tcpmodels.experiments.p3.ns3 import ns3_plan, run_ns3

__all__ = ["main"]


# --------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    """Command line: ``kernel``, ``pilot``, ``ns3``, ``fluid``, ``dataset`` (see the module docstring)."""
    parser, sub = campaign_parser("p3", package_doc)
    p = add_run_command(sub, "kernel", "run or resume the kernel grid (root; host lock per sample)", reps=True)
    p.add_argument("--kinds", nargs="+", choices=NS3_KINDS,
                   help="CUBIC variants (default: P3Config.kernel_kinds): standard = kernel cubic, "
                        "multiply / divide = tm_cubic_x with that reading")
    p.add_argument("--measure-s", type=float, help="measured span per sample [s] (default: P3Config.measure_s)")
    p = sub.add_parser("pilot", help="bottleneck pilot: drops not caused by the queue per rate (root; host lock)")
    p.add_argument("--rates-mbps", nargs="+", type=float, default=[100.0, 200.0, 400.0])
    p.add_argument("--measure-s", type=float, default=60.0)
    p.add_argument("--out", required=True, help="JSON file of the results")
    p = sub.add_parser("ns3", help="run or resume the ns-3 grid (cached sweep, one worker)")
    p.add_argument("--cache", required=True)
    p.add_argument("--phases", nargs="+", default=list(NS3_PHASES), choices=NS3_PHASES)
    p.add_argument("--kinds", nargs="+", choices=NS3_KINDS, help="only these CUBIC variants")
    p.add_argument("--reno-rtts-ms", nargs="+", type=float, help="only these Reno RTTs [ms]")
    p.add_argument("--workers", type=int, default=1, help="ns-3 processes at once (default 1)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("fluid", help="the fluid model over the grid -> one Parquet file")
    p.add_argument("--out", required=True)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="records + ns-3 cache + fluid model -> Parquet + provenance")
    p.add_argument("--records")
    p.add_argument("--cache")
    p.add_argument("--fluid", help="fluid table written by the fluid command (else computed)")
    p.add_argument("--out", required=True)
    p.add_argument("--note", default="")
    p.add_argument("--allow-dirty", action="store_true",
                   help="write a shipped dataset (under data/) from a tree with uncommitted changes")
    args = parser.parse_args(argv)
    config = DEFAULT_CONFIG

    with campaign_errors("p3"):
        if args.cmd == "kernel":
            if args.reps:
                config = replace(config, reps=args.reps)
            if args.kinds:
                config = replace(config, kernel_kinds=tuple(args.kinds))
            if args.measure_s:
                config = replace(config, measure_s=args.measure_s)
            n = run_kernel_campaign(args.records, config, limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        elif args.cmd == "pilot":
            from tcpmodels.experiments.p3.pilot import run_pilot

            res = run_pilot([r * 1e6 for r in args.rates_mbps], measure_s=args.measure_s, config=config, out=args.out)
            print(json.dumps([{k: r[k] for k in ("rate_bps", "utilization", "queue_drops", "cpu_drops")}
                              for r in res]))
        elif args.cmd == "ns3":
            plan = [r for r in ns3_plan(config, tuple(args.phases))
                    if (not args.kinds or r["kind"] in args.kinds)
                    and (not args.reno_rtts_ms or r["reno_rtt_ms"] in args.reno_rtts_ms)]
            df = run_ns3(args.cache, config, plan=plan, progress=not args.no_progress, n_workers=args.workers)
            print(json.dumps({"runs_cached": len(df), "cache": args.cache}))
        elif args.cmd == "fluid":
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            df = fluid_frame(config, progress=not args.no_progress)
            df.to_parquet(args.out, index=False, compression="zstd")
            print(json.dumps({"rows": len(df), "out": args.out}))
        else:
            prov = build_dataset(args.records, args.cache, args.out, config, note=args.note, fluid_path=args.fluid, allow_dirty=args.allow_dirty)
            print(json.dumps({k: prov.get(k, {}).get("n_samples" if k == "kernel" else "n_runs")
                              for k in ("kernel", "ns3")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

