"""ns-3 simulation speed: simulated seconds per wall second and packets per wall second.

Scenarios (two scales each):

- dumbbell-small: 2 bulk flows (Reno, CUBIC), 50 Mbit/s bottleneck, 20 ms RTT
- dumbbell-large: 8 bulk flows, 500 Mbit/s bottleneck, 20 ms RTT, 1000-packet queue
- caterpillar-8 / caterpillar-32: P5's caterpillar, 5 Mbit/s backbone, Pareto
  (alpha 1.35, mean 10 KB) downloads, 8 or 32 clients

Each is run serially (one ns-3 process after another) and then all together
through :func:`tcpmodels.sweep.sweep` on the local Dask cluster (one worker
per core). The per-run figures exclude ns-3's import (about 5 s per process,
reported separately); the totals include it.

Speed depends mostly on the congestion windows: ns-3's per-ACK work grows with
the number of segments in flight, so 1000-packet queues (windows of 1000+
segments) are many times slower than 100-packet ones (measured here: a 6 s,
100 Mbit/s two-flow dumbbell ran 71 s with a 1000-packet queue, 8 s with 100).

Usage::

    python benchmarks/sim_speed.py            # about 2-4 minutes on 2 idle cores
    python benchmarks/sim_speed.py --quick    # shorter simulated times
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import pandas as pd

from tcpmodels.sim.config import BulkApp, Caterpillar, Dumbbell, Link, PoissonFlows, Sender, SizeDistribution
from tcpmodels.sim.run import run_config
from tcpmodels.sweep import run_sim, sweep


def scenarios(scale: float) -> dict[str, object]:
    def dumbbell(n: int, rate_bps: float, duration_s: float) -> Dumbbell:
        variants = ["TcpLinuxReno", "TcpCubic"]
        return Dumbbell(
            senders=[
                Sender(access=Link(rate_bps=10e9, delay_s=0.0001 * (i + 1), queue_packets=1000),
                       variant=variants[i % 2], apps=[BulkApp(start_s=0.01 * i)])
                for i in range(n)
            ],
            bottleneck=Link(rate_bps=rate_bps, delay_s=0.01, queue_packets=1000),
            duration_s=duration_s,
        )

    def caterpillar(n: int, duration_s: float) -> Caterpillar:
        return Caterpillar(
            n_clients=n,
            workload=PoissonFlows(
                mean_interarrival_s=0.4,
                size=SizeDistribution(kind="pareto", mean_bytes=10_000, alpha=1.35),
                max_flows=50,
            ),
            duration_s=duration_s,
        )

    return {
        "dumbbell-small": dumbbell(2, 50e6, 20 * scale),
        "dumbbell-large": dumbbell(8, 500e6, 5 * scale),
        "caterpillar-8": caterpillar(8, 20 * scale),
        "caterpillar-32": caterpillar(32, 20 * scale),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a quarter of the simulated time")
    args = ap.parse_args(argv)
    cfgs = scenarios(0.25 if args.quick else 1.0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for name, cfg in cfgs.items():
            r = run_config(cfg, os.path.join(tmp, "serial", name))
            rec = r.record
            rows.append({
                "scenario": name,
                "sim_s": rec["duration_s"],
                "packets": rec["packets_tx"],
                "run_wall_s": rec["run_wall_s"],
                "ns3_load_wall_s": rec["ns3_load_wall_s"],
                "sim_s_per_wall_s": rec["sim_s_per_wall_s"],
                "packets_per_wall_s": rec["packets_per_wall_s"],
            })
        serial_total = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = sweep(list(cfgs.values()), run_sim, cache_dir=os.path.join(tmp, "dask"), desc="dask")
        dask_total = time.perf_counter() - t0
    table = pd.DataFrame(rows).set_index("scenario")
    table["dask_run_wall_s"] = [v.record["run_wall_s"] for v in res.values]
    pd.set_option("display.width", 160)
    print(table.round(2).to_string())
    n = os.cpu_count()
    print(f"\ntotal wall, all {len(cfgs)} scenarios incl. ns-3 import: serial {serial_total:.1f} s, "
          f"Dask LocalCluster ({n} workers) {dask_total:.1f} s, speed-up {serial_total / dask_total:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
