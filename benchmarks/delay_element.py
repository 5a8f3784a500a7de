"""Delay element: RTT error and CUBIC throughput ceiling at 0.5 / 10 / 60 / 150 ms, beside no element.

Run as root from the repository root::

    .venv/bin/python benchmarks/delay_element.py [--duration-s 3] [--tool python|iperf3] [--json out.json]

For each configured round-trip time the script builds one client/server pair
joined by a link with that delay (no rate limit), measures the RTT with kernel-
timestamped ICMP echoes (median of 40), and runs one CUBIC bulk transfer. Two
reference rows use a plain veth pair with no element: offloads on (what the
kernel does at best) and off (what the element has to work with). Socket
buffers are raised to 64 MB so that the 150 ms case is not capped by the
receive window. Numbers are from one run on this machine, not a constant:
other load on the host moves them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys

import numpy as np

from tcpmodels.testbed import Link, Node, Testbed, Topology
from tcpmodels.testbed import workload as wl

BUFFERS = (("net.ipv4.tcp_rmem", "4096 131072 67108864"), ("net.ipv4.tcp_wmem", "4096 131072 67108864"),
           ("net.core.rmem_max", "67108864"), ("net.core.wmem_max", "67108864"))


def _topology(rtt_s: float | None, offloads: bool | None) -> Topology:
    nodes = (Node(name="c", sysctls=BUFFERS), Node(name="s", sysctls=BUFFERS))
    link = Link(name="p0", a="c", b="s", a_addrs=("10.0.1.1/24",), b_addrs=("10.0.1.2/24",),
                delay_s=(rtt_s or 0.0) / 2, offloads=offloads)
    return Topology(name="bench", nodes=nodes, links=(link,))


def _iperf3(tb, duration_s: float) -> tuple[float, int]:
    server = tb.popen("s", ["iperf3", "-s", "-1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time

    time.sleep(0.3)
    out = tb.exec("c", ["iperf3", "-c", "10.0.1.2", "-R", "-C", "cubic", "-t", str(duration_s), "-J"],
                  timeout=duration_s + 60).stdout
    server.wait(timeout=10)
    end = json.loads(out)["end"]
    return end["sum_received"]["bits_per_second"], end["sum_sent"].get("retransmits", 0)


def measure(rtt_s: float | None, offloads: bool | None, duration_s: float, tool: str) -> dict:
    with Testbed(_topology(rtt_s, offloads)) as tb:
        rtts = wl.ping_rtt(tb, "c", "10.0.1.2", count=40, interval_s=0.005)
        if tool == "iperf3":
            rate_bps, retrans = _iperf3(tb, duration_s)
        else:
            server = wl.start_server(tb, "s")
            (rec,) = wl.run_flows(tb, "c", [wl.bulk_flow(flow_id=1, dst="10.0.1.2", duration_s=duration_s,
                                                         cc="cubic", sample_interval_s=duration_s)])
            (srec,) = server.stop()
            rate_bps, retrans = rec["rate_bps"], srec["samples"][-1]["total_retrans"]
    stats = tb.delay_stats.get("p0", {})
    dropped = sum(stats.get(d, {}).get(k, 0) for d in ("a_to_b", "b_to_a")
                  for k in ("dropped_queue_full", "send_errors", "dropped_socket"))
    return {"rtt_configured_ms": None if rtt_s is None else rtt_s * 1e3, "offloads": offloads,
            "rtt_median_ms": float(np.median(rtts) * 1e3), "rtt_p90_ms": float(np.quantile(rtts, 0.9) * 1e3),
            "throughput_gbps": rate_bps / 1e9, "retransmits": retrans, "element_drops": dropped}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=3.0)
    parser.add_argument("--tool", choices=("python", "iperf3"), default="iperf3" if shutil.which("iperf3") else "python")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = [measure(None, True, args.duration_s, args.tool), measure(None, False, args.duration_s, args.tool)]
    for rtt_ms in (0.5, 10, 60, 150):
        rows.append(measure(rtt_ms * 1e-3, None, args.duration_s, args.tool))
    base = rows[1]["rtt_median_ms"]
    print(f"delay element benchmark ({args.tool}, CUBIC, {args.duration_s:g} s per row, kernel {__import__('os').uname().release})")
    print("| element | RTT set [ms] | RTT median [ms] | error raw [ms] | error net of stack [ms] | CUBIC [Gbit/s] | retrans | element drops |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        set_ms = r["rtt_configured_ms"]
        if set_ms is None:
            name = "none, offloads " + ("on" if r["offloads"] else "off")
            err = net = "-"
        else:
            name = "C delay element"
            err = f"{r['rtt_median_ms'] - set_ms:+.3f}"
            net = f"{r['rtt_median_ms'] - base - set_ms:+.3f}"
        print(f"| {name} | {'-' if set_ms is None else f'{set_ms:g}'} | {r['rtt_median_ms']:.3f} | {err} | {net} | "
              f"{r['throughput_gbps']:.2f} | {r['retransmits']} | {r['element_drops']} |")
    ratio = rows[2]["throughput_gbps"] / rows[1]["throughput_gbps"]
    print(f"ceiling at 0.5 ms relative to plain veth with offloads off: {ratio:.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"tool": args.tool, "duration_s": args.duration_s, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
