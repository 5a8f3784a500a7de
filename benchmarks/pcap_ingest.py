"""Packet-capture ingest: tcpmodels' native reader vs tshark -T fields + pandas vs dpkt vs pyshark.

Makes (or takes) a capture of at least 1M packets and reports, for each engine
on the same file in the same run, packets per second and peak memory, with
ratios to the native engine; then times the flow table (RTT, retransmissions)
on the native packet table. Each engine runs in its own child process so that
its peak resident memory (including tshark's) is measured alone.

The default input is made from the committed CUBIC fixture: its 6712 packets
are repeated with shifted timestamps and a distinct client port per copy
(so 150 copies give ~1M packets in 150 TCP connections with real loss
patterns). pyshark is run on a slice and extrapolated (it is ~1000x slower).

Usage::

    python benchmarks/pcap_ingest.py [--packets 1000000] [--pcap FILE] [--pyshark-slice 3000]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "data" / "captures" / "cubic_bulk.pcap.gz"


def make_capture(path: Path, packets: int) -> int:
    """Write a classic pcap of >= ``packets`` records by repeating the CUBIC fixture."""
    from tcpmodels.traces.pcapfile import iter_batches

    batches = list(iter_batches(FIXTURE))
    b = batches[0]
    assert len(batches) == 1 and (b.link_type == 1).all()
    hdr_off = b.data_offset - 16
    recs = [bytes(b.buf[o: o + 16 + c]) for o, c in zip(hdr_off, b.captured_bytes)]
    blob = np.frombuffer(b"".join(recs), np.uint8)
    lens = np.array([len(r) for r in recs])
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    ts0 = b.timestamp_ns
    span = int(ts0[-1] - ts0[0]) + 1_000_000
    # which port field belongs to the client (10.201.1.1:ephemeral): the fixture's client port
    data = b.buf
    eth = b.data_offset
    sport = (data[eth + 34].astype(np.int64) << 8) | data[eth + 35]
    client_port = int(np.bincount(sport[sport != 5201]).argmax())  # the server listens on 5201
    copies = -(-packets // len(recs))
    with open(path, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 128, 1))
        for k in range(copies):
            out = blob.copy()
            ts = ts0 + k * span
            sec = (ts // 1_000_000_000).astype("<u4")
            usec = ((ts % 1_000_000_000) // 1000).astype("<u4")
            out[starts[:, None] + np.arange(4)] = sec.view(np.uint8).reshape(-1, 4)
            out[starts[:, None] + 4 + np.arange(4)] = usec.view(np.uint8).reshape(-1, 4)
            newport = (20000 + k) & 0xFFFF
            for off in (34, 36):  # TCP source / destination port after a 14-byte Ethernet and 20-byte IP header
                pos = starts + 16 + off
                is_client = ((out[pos].astype(np.int64) << 8) | out[pos + 1]) == client_port
                out[pos[is_client]] = newport >> 8
                out[pos[is_client] + 1] = newport & 0xFF
            fh.write(out.tobytes())
    return copies * len(recs)


CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
engine, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
import pandas as pd
if engine in ("native", "tshark"):
    from tcpmodels.traces import read_pcap, flows
elif engine == "dpkt":
    import dpkt, socket
elif engine == "pyshark":
    import pyshark
out = {}
def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
t = time.perf_counter()
c0 = cpu()
if engine in ("native", "tshark"):
    table = read_pcap(path, engine=engine)
    out["packets"] = len(table)
    out["seconds"] = time.perf_counter() - t
    out["cpu_seconds"] = cpu() - c0
    if engine == "native":
        t2 = time.perf_counter()
        c2 = cpu()
        ft = flows(table)
        out["flow_seconds"] = time.perf_counter() - t2
        out["flow_cpu_seconds"] = cpu() - c2
        out["flows"] = len(ft)
        out["retransmissions"] = int(ft["retransmitted_packets"].sum())
        out["rtt_samples"] = int(ft["rtt_samples"].sum())
elif engine == "dpkt":
    rows = []
    with open(path, "rb") as fh:
        for ts, buf in dpkt.pcap.Reader(fh):
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            tcp = ip.data
            opts = dpkt.tcp.parse_opts(tcp.opts)
            rows.append((ts, socket.inet_ntoa(ip.src), socket.inet_ntoa(ip.dst), tcp.sport, tcp.dport, tcp.seq,
                         tcp.ack, tcp.flags, tcp.win, ip.len - ip.hl * 4 - tcp.off * 4, len(opts)))
    table = pd.DataFrame(rows, columns=["ts", "src", "dst", "sport", "dport", "seq", "ack", "flags", "win",
                                        "payload", "nopts"])
    out["packets"] = len(table)
    out["seconds"] = time.perf_counter() - t
    out["cpu_seconds"] = cpu() - c0
elif engine == "pyshark":
    cap = pyshark.FileCapture(path, keep_packets=False, display_filter=None)
    n = 0
    for pkt in cap:
        if "TCP" in pkt:
            _ = (pkt.sniff_timestamp, pkt.ip.src, pkt.ip.dst, pkt.tcp.srcport, pkt.tcp.dstport, pkt.tcp.seq_raw,
                 pkt.tcp.ack_raw, pkt.tcp.flags, pkt.tcp.window_size_value, pkt.tcp.len)
        n += 1
        if n >= limit:
            break
    cap.close()
    out["packets"] = n
    out["seconds"] = time.perf_counter() - t
    out["cpu_seconds"] = cpu() - c0
self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
out["peak_rss_mb"] = max(self_rss, child_rss) / 1024
print(json.dumps(out))
"""


def run(engine: str, path: Path, limit: int = 0) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, engine, str(path), str(limit)], capture_output=True, text=True)
    if res.returncode != 0:
        return {"error": res.stderr.strip().splitlines()[-1] if res.stderr else "failed"}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packets", type=int, default=1_000_000)
    ap.add_argument("--pcap", help="use this capture instead of making one")
    ap.add_argument("--pyshark-slice", type=int, default=3000)
    ap.add_argument("--skip", nargs="*", default=[], choices=["tshark", "dpkt", "pyshark"])
    opts = ap.parse_args()
    warnings.simplefilter("ignore")
    tmp = None
    if opts.pcap:
        path = Path(opts.pcap)
        total = None
    else:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "bench.pcap"
        total = make_capture(path, opts.packets)
        print(f"made {path} ({total} packets, {path.stat().st_size / 1e6:.0f} MB) from {FIXTURE.name}")
    results = {}
    print(f"load average before the run: {os.getloadavg()} on {os.cpu_count()} CPUs (wall times share the machine)")
    for engine in ("native", "tshark", "dpkt", "pyshark"):
        if engine in opts.skip:
            continue
        r = run(engine, path, opts.pyshark_slice if engine == "pyshark" else 0)
        results[engine] = r
        if "error" in r:
            print(f"{engine:8s} error: {r['error']}")
            continue
        r["pps"] = r["packets"] / r["seconds"]
        r["cpu_pps"] = r["packets"] / r["cpu_seconds"]
        note = f" (slice of {r['packets']}, extrapolated)" if engine == "pyshark" else ""
        print(f"{engine:8s} {r['packets']:>9d} packets: wall {r['seconds']:7.2f} s = {r['pps']:>10,.0f} packets/s; "
              f"CPU {r['cpu_seconds']:7.2f} s = {r['cpu_pps']:>10,.0f} packets/s; peak RSS {r['peak_rss_mb']:6.0f} MB"
              f"{note}", flush=True)
    nat = results.get("native", {})
    if "pps" in nat:
        for engine, r in results.items():
            if engine != "native" and "pps" in r:
                print(f"native vs {engine:8s}: {nat['pps'] / r['pps']:7.1f}x faster (wall), "
                      f"{nat['cpu_pps'] / r['cpu_pps']:7.1f}x (CPU); {engine} uses "
                      f"{r['peak_rss_mb'] / nat['peak_rss_mb']:.2f}x the native peak memory")
        print(f"flow table ({nat['flows']} flows, {nat['retransmissions']} retransmissions, "
              f"{nat['rtt_samples']} RTT samples) from {nat['packets']} packets: wall {nat['flow_seconds']:.2f} s, "
              f"CPU {nat['flow_cpu_seconds']:.2f} s")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
