"""Command line of the P3 campaign: ``kernel``, ``pilot``, ``ns3``, ``fluid``, ``dataset``."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from tcpmodels.experiments.campaign_cli import (
    add_dataset_output,
    add_run_command,
    campaign_errors,
    campaign_parser,
    with_reps,
)
from tcpmodels.experiments.p3 import __doc__ as package_doc
from tcpmodels.experiments.p3.config import (
    DEFAULT_CONFIG,
    NS3_KINDS,
    NS3_SETTINGS,
    P3Config,
    ns3_phases,
    ns3_setting,
)
from tcpmodels.experiments.p3.cpu_loss import cpu_loss_repeat_plan
from tcpmodels.experiments.p3.dataset import SHIPPED_NS3_RECORDS, build_dataset, read_ns3_records
from tcpmodels.experiments.p3.fluid import fluid_frame
from tcpmodels.experiments.p3.kernel import KERNEL_KEY, run_kernel_campaign
from tcpmodels.experiments.p3.ns3 import ns3_cached, ns3_plan, ns3_run_id, run_ns3

__all__ = ["main"]


# --------------------------------------------------------------------- CLI
def _ns3_setting_args(p: argparse.ArgumentParser, default: str | None = "short",
                      what: str = "the ns-3 setting") -> None:
    """``--setting``, ``--duration-s`` and ``--seeds`` of the ns-3 commands."""
    p.add_argument("--setting", choices=NS3_SETTINGS, default=default,
                   help=f"{what}: short = the 20 s grid shipped first, long = 10 CUBIC epochs of the longest K "
                        f"(ns3_setting); default {default}")
    p.add_argument("--duration-s", type=float, help="simulated time per run instead of the setting's [s]")
    p.add_argument("--seeds", nargs="+", type=int, help="seeds instead of the setting's")


def _ns3_config(args: argparse.Namespace, config: P3Config) -> P3Config:
    """The ns-3 setting of the command line: the named one, with ``--duration-s`` / ``--seeds`` over it."""
    config = ns3_setting(args.setting or "short", config)
    if args.duration_s:
        config = replace(config, ns3_duration_s=args.duration_s)
    if args.seeds:
        config = replace(config, ns3_seeds=tuple(args.seeds))
    return config


def _ns3_default_phases(args: argparse.Namespace, config: P3Config) -> tuple[str, ...]:
    """The setting's phases (short: with the exponent phases; long or custom: the main ones, seed by seed)."""
    return ns3_phases(config, sliders=args.setting == "short" and not (args.duration_s or args.seeds))


def main(argv: list[str] | None = None) -> int:
    """Command line: ``kernel``, ``pilot``, ``ns3``, ``fluid``, ``dataset`` (see the module docstring)."""
    parser, sub = campaign_parser("p3", package_doc)
    p = add_run_command(sub, "kernel", "run or resume the kernel grid (root; host lock per sample)", reps=True)
    p.add_argument("--kinds", nargs="+", choices=NS3_KINDS,
                   help="CUBIC variants (default: P3Config.kernel_kinds): standard = kernel cubic, "
                        "multiply / divide = tm_cubic_x with that reading")
    p.add_argument("--measure-s", type=float, help="measured span per sample [s] (default: P3Config.measure_s)")
    p.add_argument("--keep-flow-order", action="store_true",
                   help="run the grid on the steered testbed (RPS steering, Testbed keep_flow_order): its samples "
                        "are labelled p3_kernel_steered and kept apart from the unsteered ones (default: off, "
                        "P3Config.kernel_keep_flow_order)")
    p.add_argument("--pin-delay-elements", action="store_true",
                   help="with steering, pin each delay element to one CPU and process its frames there (Testbed "
                        "pin_delay_elements; implies --keep-flow-order): samples labelled p3_kernel_pinned")
    p.add_argument("--repeat-cpu-loss", action="store_true",
                   help="instead of the grid, run once more each sample of the testbed chosen (in --records) that "
                        "lost packets outside the bottleneck queue, same key and start offsets; the repeats are "
                        "labelled <testbed label>_repeat and kept apart from the grid (resumes like the grid)")
    p = sub.add_parser("pilot", help="bottleneck pilot: drops not caused by the queue per rate (root; host lock)")
    p.add_argument("--rates-mbps", nargs="+", type=float, default=[100.0, 200.0, 400.0])
    p.add_argument("--measure-s", type=float, default=60.0)
    p.add_argument("--pair-ms", nargs=2, type=float, metavar=("RENO", "CUBIC"), default=[1.0, 64.0],
                   help="the Reno and CUBIC RTTs [ms] (default 1 64: the pair with the longest K)")
    p.add_argument("--kind", choices=NS3_KINDS, default="standard",
                   help="CUBIC variant: standard = kernel cubic (default), multiply / divide = tm_cubic_x")
    p.add_argument("--keep-flow-order", action="store_true",
                   help="RPS steering on the testbed (Testbed keep_flow_order; the campaign's default is off, "
                        "P3Config.kernel_keep_flow_order)")
    p.add_argument("--pin-delay-elements", action="store_true",
                   help="with steering, each delay element pinned to one CPU (implies --keep-flow-order)")
    p.add_argument("--out", required=True, help="JSON file of the results")
    p = sub.add_parser("ns3", help="run or resume the ns-3 grid (cached sweep, one worker)")
    p.add_argument("--cache", required=True)
    _ns3_setting_args(p)
    p.add_argument("--phases", nargs="+", help="main<i> / slider<i> (default: the setting's, seed by seed)")
    p.add_argument("--kinds", nargs="+", choices=NS3_KINDS, help="only these CUBIC variants")
    p.add_argument("--reno-rtts-ms", nargs="+", type=float, help="only these Reno RTTs [ms]")
    p.add_argument("--skip-records", default=str(SHIPPED_NS3_RECORDS),
                   help="leave out the runs whose records are in this file (default: the shipped ones, so a "
                        "campaign resumes on a fresh machine); 'none' to skip nothing")
    p.add_argument("--limit", type=int, help="run at most this many runs not yet made (in plan order)")
    p.add_argument("--workers", type=int, default=1, help="ns-3 processes at once (default 1)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("ns3-pilot", help="run chosen ns-3 runs with window tracing; count the CUBIC flow's epochs")
    _ns3_setting_args(p, default="long")
    p.add_argument("--pairs", nargs="+", default=["16:64", "4:64"], help="Reno:CUBIC RTT pairs [ms]")
    p.add_argument("--kind", choices=NS3_KINDS, default="multiply",
                   help="CUBIC variant (default multiply: the longest K, P3Config.scaling()['ns3'])")
    p.add_argument("--seed-index", type=int, default=0, help="index into the setting's seeds")
    p.add_argument("--out", required=True, help="JSON file of the results")
    p = sub.add_parser("fluid", help="the fluid model over the grid -> one Parquet file")
    p.add_argument("--out", required=True)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="records + ns-3 cache + fluid model -> Parquet + provenance")
    p.add_argument("--records")
    p.add_argument("--cache")
    _ns3_setting_args(p, default=None, what="a further ns-3 setting to look up in the cache (the named ones always are)")
    p.add_argument("--fluid", help="fluid table written by the fluid command (else computed)")
    p.add_argument("--keep-fluid", action="store_true", help="keep the fluid table in --out and its provenance")
    add_dataset_output(p)
    p.add_argument("--drop-superseded-kernel", action="store_true",
                   help="leave out the kernel samples an earlier build made from records that --records does not "
                        "hold (a grid restarted into a new records file); rows whose records are gone stay")
    args = parser.parse_args(argv)
    config = DEFAULT_CONFIG

    with campaign_errors("p3"):
        if args.cmd == "kernel":
            config = with_reps(config, args.reps)
            if args.kinds:
                config = replace(config, kernel_kinds=tuple(args.kinds))
            if args.measure_s:
                config = replace(config, measure_s=args.measure_s)
            if args.keep_flow_order or args.pin_delay_elements:
                config = replace(config, kernel_keep_flow_order=True, kernel_pin_delay_elements=args.pin_delay_elements)
            plan = None
            if args.repeat_cpu_loss:
                from tcpmodels.records import JsonlRecords

                plan = cpu_loss_repeat_plan(JsonlRecords(args.records, KERNEL_KEY).read(), config)
                print(json.dumps({"repeats_planned": len(plan), "records": args.records}))
            n = run_kernel_campaign(args.records, config, limit=args.limit, progress=not args.no_progress, plan=plan)
            print(json.dumps({"measured": n, "records": args.records}))
        elif args.cmd == "pilot":
            from tcpmodels.experiments.p3.pilot import run_pilot

            if args.keep_flow_order or args.pin_delay_elements:
                config = replace(config, kernel_keep_flow_order=True, kernel_pin_delay_elements=args.pin_delay_elements)
            res = run_pilot([r * 1e6 for r in args.rates_mbps], measure_s=args.measure_s, config=config, out=args.out,
                            reno_rtt_ms=args.pair_ms[0], cubic_rtt_ms=args.pair_ms[1], kind=args.kind)
            print(json.dumps([{k: r[k] for k in ("rate_bps", "utilization", "queue_drops", "cpu_drops")}
                              for r in res]))
        elif args.cmd == "ns3":
            config = _ns3_config(args, config)
            phases = tuple(args.phases) if args.phases else _ns3_default_phases(args, config)
            plan = [r for r in ns3_plan(config, phases)
                    if (not args.kinds or r["kind"] in args.kinds)
                    and (not args.reno_rtts_ms or r["reno_rtt_ms"] in args.reno_rtts_ms)]
            done = set() if args.skip_records == "none" else {r["run_id"] for r in read_ns3_records(args.skip_records)}
            todo = [r for r in plan if ns3_run_id(r, config) not in done]
            pending = [r for r, hit in zip(todo, ns3_cached(args.cache, config, todo)) if not hit]
            run = pending[:args.limit] if args.limit is not None else pending
            t0 = time.monotonic()
            df = run_ns3(args.cache, config, plan=run, progress=not args.no_progress, n_workers=args.workers) \
                if run else []
            print(json.dumps({"duration_s": config.ns3_duration_s, "seeds": list(config.ns3_seeds),
                              "planned": len(plan), "in_records": len(plan) - len(todo),
                              "cached_before": len(todo) - len(pending), "ran": len(df),
                              "remaining": len(pending) - len(df), "wall_s": round(time.monotonic() - t0, 1),
                              "cache": args.cache}))
        elif args.cmd == "ns3-pilot":
            from tcpmodels.experiments.p3.ns3_pilot import run_ns3_pilot

            config = _ns3_config(args, config)
            seed = config.ns3_seeds[args.seed_index]
            pairs = [tuple(float(x) for x in pr.split(":")) for pr in args.pairs]
            runs = [r for r in ns3_plan(config, (f"main{args.seed_index}",))
                    if r["kind"] == args.kind and (r["reno_rtt_ms"], r["cubic_rtt_ms"]) in pairs and r["seed"] == seed]
            res = run_ns3_pilot(config, runs, out=args.out)
            print(json.dumps([{"run_id": r["run_id"], "wall_s": r["wall_s"],
                               "cubic_epochs": r["flows"]["cubic"]["n_epochs"],
                               "cubic_epoch_median_s": r["flows"]["cubic"]["epoch_stats_s"].get("median"),
                               "enough": r["flows"]["cubic"]["enough"]} for r in res["runs"]]))
        elif args.cmd == "fluid":
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            df = fluid_frame(config, progress=not args.no_progress)
            df.to_parquet(args.out, index=False, compression="zstd")
            print(json.dumps({"rows": len(df), "out": args.out}))
        else:
            if args.drop_superseded_kernel and not args.records:
                parser.error("--drop-superseded-kernel needs --records (the records that supersede the shipped ones)")
            if args.setting or args.duration_s or args.seeds:
                config = _ns3_config(args, config)
            prov = build_dataset(args.records, args.cache, args.out, config, note=args.note, fluid_path=args.fluid,
                                 fluid=not args.keep_fluid, allow_dirty=args.allow_dirty,
                                 drop_superseded_kernel=args.drop_superseded_kernel)
            print(json.dumps({k: prov.get(k, {}).get("n_samples" if k == "kernel" else "n_runs")
                              for k in ("kernel", "ns3")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

