"""ns-3 simulation speed: simulated seconds per wall second and packets per wall second.

Scenarios (two scales each):

- dumbbell-small: 2 bulk flows (Reno, CUBIC), 50 Mbit/s bottleneck, 20 ms RTT
- dumbbell-large: 8 bulk flows, 500 Mbit/s bottleneck, 20 ms RTT, 1000-packet queue
- caterpillar-8 / caterpillar-32: P5's caterpillar, 5 Mbit/s backbone, Pareto
  (alpha 1.35, mean 10 KB) downloads, 8 or 32 clients
- fattree-4: P1's k=4 fat-tree (100/200/400 Mbit/s, 100 KB queues, 0.5 ms
  RTT), 4 active hosts (one per pod) sending 70 KB TCP flows (per-flow ECMP)
  with Poisson arrivals, mean 50 ms per host: about 400 flows in 5 s
- fattree-16: P1's workload on all 16 hosts: 5 hosts run unlimited LIA
  transfers over the 4 cores, the other 11 send 70 KB TCP flows, Poisson
  arrivals with mean 200 ms: about 275 short flows in 5 s

Each is run serially (one ns-3 process after another) and then all together
through :func:`tcpmodels.sweep.sweep` on the local Dask cluster (one worker
per core). The per-run figures exclude ns-3's import (about 5 s per process,
reported separately); the totals include it.

Speed depends mostly on the congestion windows: ns-3's per-ACK work grows with
the number of segments in flight, so 1000-packet queues (windows of 1000+
segments) are many times slower than 100-packet ones (measured here: a 6 s,
100 Mbit/s two-flow dumbbell ran 71 s with a 1000-packet queue, 8 s with 100).

Measured for the fat-tree (2026-11-22, 2 cores shared with four other
campaigns, load average 5-9): fattree-4, 339 flows, 34 k packets in 5 s
simulated: 4.5 s wall (1.1 simulated s per wall s, 7.5 k packets/s);
fattree-16, 222 short flows + 5 LIA bulk transfers, 429 k packets: 69 s wall
(0.07 simulated s per wall s, 6.2 k packets/s); plus 24-25 s of ns-3 import
per process. Both together: serial 151 s, Dask LocalCluster (2 workers)
376 s -- slower, because the two cores were already busy.

Measured on an idle host (2026-11-24, load < 1.5, ``--quick``), simulated
seconds per wall second and packets per wall second: dumbbell-small 0.55 /
4.7 k, dumbbell-large 0.19 / 14.4 k, caterpillar-8 28.7 / 7.8 k,
caterpillar-32 11.6 / 13.9 k, fattree-4 3.8 / 16.0 k, fattree-16 0.30 /
26.0 k; ns-3 import 8-9 s per process. All six: serial 89.5 s, Dask
LocalCluster (2 workers) 51.9 s, a 1.73x speed-up.

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

import numpy as np
import pandas as pd

from tcpmodels.sim.config import (
    BulkApp,
    Caterpillar,
    Dumbbell,
    FatTree,
    FatTreeConnection,
    Link,
    PoissonFlows,
    Sender,
    SizeDistribution,
)
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

    def fattree(active: list[int], bulk: list[int], mean_interarrival_s: float, duration_s: float) -> FatTree:
        rng = np.random.default_rng(0)
        conns = [
            FatTreeConnection(h, (h + 5) % 16, 0.0, None, cores=(0, 1, 2, 3), coupled=True, tag="bulk")
            for h in bulk
        ]
        for h in active:
            t = 0.0
            while True:
                t += float(rng.exponential(mean_interarrival_s))
                if t >= duration_s - 0.5:
                    break
                dst = int(rng.choice([d for d in active if d != h] if len(active) > 1 else [(h + 1) % 16]))
                conns.append(FatTreeConnection(h, dst, t, 70_000, tag="short"))
        return FatTree(connections=tuple(conns), duration_s=duration_s, seed=0, queue_bin_s=0.1)

    bulk16 = [0, 3, 6, 9, 12]
    return {
        "dumbbell-small": dumbbell(2, 50e6, 20 * scale),
        "dumbbell-large": dumbbell(8, 500e6, 5 * scale),
        "caterpillar-8": caterpillar(8, 20 * scale),
        "caterpillar-32": caterpillar(32, 20 * scale),
        "fattree-4": fattree([0, 4, 8, 12], [], 0.05, 5 * scale),
        "fattree-16": fattree([h for h in range(16) if h not in bulk16], bulk16, 0.2, 5 * scale),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a quarter of the simulated time")
    ap.add_argument("--only", default="", help="comma-separated scenario name prefixes, e.g. 'fattree'")
    args = ap.parse_args(argv)
    cfgs = scenarios(0.25 if args.quick else 1.0)
    if args.only:
        keep = tuple(args.only.split(","))
        cfgs = {k: v for k, v in cfgs.items() if k.startswith(keep)}
        if not cfgs:
            ap.error(f"--only {args.only!r} matches no scenario")
    rows = []
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for name, cfg in cfgs.items():
            r = run_config(cfg, os.path.join(tmp, "serial", name))
            rec = r.record
            rows.append({
                "scenario": name,
                "sim_s": rec["duration_s"],
                "connections": rec["n_connections"],
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
    print(f"load average before/after: {load0} / {os.getloadavg()}")
    print(f"\ntotal wall, all {len(cfgs)} scenarios incl. ns-3 import: serial {serial_total:.1f} s, "
          f"Dask LocalCluster ({n} workers) {dask_total:.1f} s, speed-up {serial_total / dask_total:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
