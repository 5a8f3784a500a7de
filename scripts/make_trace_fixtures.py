#!/usr/bin/env python3
"""Recreate the packet-capture fixtures in ``data/captures/`` with the kernel's own TCP (root only).

Each fixture is a real capture made in Linux network namespaces (prefix ``tmfx``,
always removed at the end), trimmed to 128 bytes per packet, gzip-compressed, and
written beside a provenance record ``<name>.json`` holding the commands, versions,
parameters and the ground truth recorded at capture time: bytes sent by the
application, interface counters per path, TCP_INFO and ``ss -ti`` retransmits.

Fixtures
--------
cubic_bulk.pcap.gz      CUBIC bulk transfer through a tbf rate limit with a short queue (losses);
                        classic pcap, microsecond timestamps, captured at the sender.
reno_bulk.pcap.gz       The same with Reno; classic pcap, nanosecond timestamps.
mptcp_2path.pcapng.gz   MPTCP v1 transfer over two veth paths (two subflows); pcapng written
                        by dumpcap with one interface block per path.
short_flows_any.pcap.gz A burst of short TCP flows with Poisson arrivals, captured with
                        ``tcpdump -i any`` (link type LINUX_SLL2).

Usage::

    sudo python3 scripts/make_trace_fixtures.py [--out data/captures] [--only cubic_bulk ...]

The script re-invokes itself inside the namespaces (``_serve`` / ``_send`` / ``_burst``
subcommands) so it needs nothing but the Python standard library, ``ip``, ``tc``,
``ethtool``, ``tcpdump`` and ``dumpcap``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import hashlib
import json
import os
import platform
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

PREFIX = "tmfx"
IPPROTO_MPTCP = 262
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
SNAPLEN = 128
PORT = 5201


# ---------------------------------------------------------------- helpers run inside namespaces

def _tcp_info(sock: socket.socket) -> dict:
    """Selected fields of struct tcp_info (linux/tcp.h) for the socket."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    u32 = lambda off: struct.unpack_from("I", raw, off)[0]  # noqa: E731
    u64 = lambda off: struct.unpack_from("Q", raw, off)[0]  # noqa: E731
    info = {
        "snd_mss": u32(8 + 2 * 4),
        "total_retrans": u32(8 + 23 * 4),
        "rtt_us": u32(8 + 15 * 4),
        "snd_cwnd": u32(8 + 18 * 4),
    }
    if len(raw) >= 216:
        info.update(bytes_acked=u64(120), data_segs_out=u32(156), bytes_sent=u64(200), bytes_retrans=u64(208))
    return info


def _ss() -> str:
    return subprocess.run(["ss", "-tinH", "state", "all"], capture_output=True, text=True).stdout


def _serve(port: int, n_conn: int, mptcp: bool) -> None:
    proto = IPPROTO_MPTCP if mptcp else 0
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(128)
    print("ready", flush=True)
    results: list[dict] = []
    lock = threading.Lock()

    def handle(conn: socket.socket, peer) -> None:
        total = 0
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            total += len(chunk)
        conn.sendall(struct.pack("!Q", total))
        conn.close()
        with lock:
            results.append({"peer": f"{peer[0]}:{peer[1]}", "bytes_received": total})

    threads = []
    for _ in range(n_conn):
        conn, peer = srv.accept()
        t = threading.Thread(target=handle, args=(conn, peer))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    print(json.dumps(results), flush=True)


def _one_transfer(host: str, port: int, size: int, cc: str, mptcp: bool, src: str | None = None) -> dict:
    proto = IPPROTO_MPTCP if mptcp else 0
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    if not mptcp:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    if src:
        s.bind((src, 0))
    t0 = time.time()
    s.connect((host, port))
    local = s.getsockname()
    block = bytes(random.Random(size).getrandbits(8) for _ in range(1 << 12)) * 16
    sent = 0
    while sent < size:
        sent += s.send(block[: min(len(block), size - sent)])
    s.shutdown(socket.SHUT_WR)
    echo = b""
    while len(echo) < 8:
        chunk = s.recv(8 - len(echo))
        if not chunk:
            break
        echo += chunk
    out = {
        "local": f"{local[0]}:{local[1]}",
        "bytes_sent_by_application": sent,
        "bytes_received_by_server": struct.unpack("!Q", echo)[0] if len(echo) == 8 else None,
        "duration_s": time.time() - t0,
        "congestion_control": cc,
        "ss_ti_before_close": _ss(),
    }
    if not mptcp:
        out["tcp_info"] = _tcp_info(s)
    s.close()
    return out


def _send(host: str, port: int, size: int, cc: str, mptcp: bool) -> None:
    print(json.dumps(_one_transfer(host, port, size, cc, mptcp)), flush=True)


def _burst(host: str, port: int, n: int, seed: int, cc: str) -> None:
    rng = random.Random(seed)
    results: list[dict] = []
    lock = threading.Lock()

    def run(size: int) -> None:
        r = _one_transfer(host, port, size, cc, False)
        r.pop("ss_ti_before_close")
        with lock:
            results.append(r)

    threads = []
    for _ in range(n):
        size = rng.choice([2_000, 8_000, 16_000, 32_000, 70_000, 70_000, 150_000])
        t = threading.Thread(target=run, args=(size,))
        t.start()
        threads.append(t)
        time.sleep(rng.expovariate(1 / 0.02))
    for t in threads:
        t.join()
    print(json.dumps(results), flush=True)


# ---------------------------------------------------------------- orchestration (root namespace)

def sh(*args: str, ns: str | None = None, check: bool = True) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    res = subprocess.run(cmd, capture_output=True, text=True)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.strip()}")
    return res.stdout


def counters(ns: str, dev: str) -> dict:
    out = {}
    for key in ("tx_bytes", "rx_bytes", "tx_packets", "rx_packets", "tx_dropped", "rx_dropped"):
        out[key] = int(sh("cat", f"/sys/class/net/{dev}/statistics/{key}", ns=ns))
    return out


def qdisc_stats(ns: str, dev: str) -> str:
    return sh("tc", "-s", "qdisc", "show", "dev", dev, ns=ns)


def cleanup() -> None:
    for line in sh("ip", "netns", "list", check=False).splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(PREFIX):
            sh("ip", "netns", "del", name, check=False)


def make_ns(name: str) -> None:
    sh("ip", "netns", "add", name)
    sh("ip", "link", "set", "lo", "up", ns=name)
    sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=name)
    sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=name)
    sh("sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", ns=name)
    sh("sysctl", "-qw", "net.ipv4.conf.default.rp_filter=0", ns=name)


def veth(ns_a: str, dev_a: str, addr_a: str, ns_b: str, dev_b: str, addr_b: str) -> None:
    sh("ip", "link", "add", dev_a, "netns", ns_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
    for ns, dev, addr in ((ns_a, dev_a, addr_a), (ns_b, dev_b, addr_b)):
        sh("ip", "addr", "add", addr, "dev", dev, ns=ns)
        sh("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", ns=ns, check=False)
        sh("ip", "link", "set", dev, "up", ns=ns)


def start_capture(ns: str, out: Path, interfaces: list[str], tool: str, nano: bool = False) -> subprocess.Popen:
    if tool == "tcpdump":
        cmd = ["tcpdump", "-Z", "root", "-n", "--immediate-mode", "-s", str(SNAPLEN), "-w", str(out), "-i", interfaces[0]]
        if nano:
            cmd += ["--time-stamp-precision=nano"]
    else:
        cmd = ["dumpcap", "-q", "-s", str(SNAPLEN), "-w", str(out)]
        for dev in interfaces:
            cmd += ["-i", dev]
    proc = subprocess.Popen(["ip", "netns", "exec", ns] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    return proc


def stop_capture(proc: subprocess.Popen) -> str:
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    return err.strip()


def run_in(ns: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, __file__, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_ready(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"server did not start: {line} {proc.stderr.read()}")


def finish(proc: subprocess.Popen, timeout: float = 120) -> object:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"helper failed: {err}")
    return json.loads(out.strip().splitlines()[-1])


def tool_versions() -> dict:
    def first(cmd):
        r = subprocess.run(cmd, capture_output=True, text=True)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    return {"kernel": platform.release(), "python": platform.python_version(),
            "tcpdump": first(["tcpdump", "--version"]), "dumpcap": first(["dumpcap", "--version"]),
            "iproute2": first(["ip", "-V"])}


def routed_topology(rate: str, burst: str, limit: str) -> dict:
    """client --- router --- server; tbf on the router's egress towards the server."""
    c, r, s = f"{PREFIX}c", f"{PREFIX}r", f"{PREFIX}s"
    for ns in (c, r, s):
        make_ns(ns)
    veth(c, "tmfx-c0", "10.201.1.1/24", r, "tmfx-rc", "10.201.1.254/24")
    veth(r, "tmfx-rs", "10.202.1.254/24", s, "tmfx-s0", "10.202.1.2/24")
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=r)
    sh("ip", "route", "add", "default", "via", "10.201.1.254", ns=c)
    sh("ip", "route", "add", "default", "via", "10.202.1.254", ns=s)
    sh("tc", "qdisc", "add", "dev", "tmfx-rs", "root", "tbf", "rate", rate, "burst", burst, "limit", limit, ns=r)
    return {"client": c, "router": r, "server": s, "server_addr": "10.202.1.2",
            "tbf": f"rate {rate} burst {burst} limit {limit} on router egress tmfx-rs",
            "links": "client tmfx-c0 10.201.1.1/24 <-> 10.201.1.254/24 router 10.202.1.254/24 <-> tmfx-s0 10.202.1.2/24 server",
            "offloads": "tso/gso/gro off on every veth", "ipv6": "disabled"}


def bulk(name: str, out_dir: Path, cc: str, size: int, nano: bool) -> dict:
    topo = routed_topology("20mbit", "16kb", "24kb")
    c, r, s = topo["client"], topo["router"], topo["server"]
    tmp = out_dir / f"{name}.pcap"
    server = run_in(s, "_serve", str(PORT), "1", "0")
    wait_ready(server)
    before = {"client tmfx-c0": counters(c, "tmfx-c0"), "server tmfx-s0": counters(s, "tmfx-s0")}
    cap = start_capture(c, tmp, ["tmfx-c0"], "tcpdump", nano=nano)
    client = run_in(c, "_send", topo["server_addr"], str(PORT), str(size), cc, "0")
    sent = finish(client)
    srv = finish(server)
    cap_msg = stop_capture(cap)
    after = {"client tmfx-c0": counters(c, "tmfx-c0"), "server tmfx-s0": counters(s, "tmfx-s0")}
    return {"topology": topo, "capture_point": "client (sender) interface tmfx-c0, before the bottleneck",
            "capture_tool": "tcpdump" + (" --time-stamp-precision=nano" if nano else ""),
            "capture_messages": cap_msg, "sender": sent, "server": srv,
            "interface_counters_delta": _delta(before, after),
            "router_qdisc": qdisc_stats(r, "tmfx-rs"), "_tmp": tmp}


def mptcp(name: str, out_dir: Path, size: int) -> dict:
    c, s = f"{PREFIX}c", f"{PREFIX}s"
    make_ns(c)
    make_ns(s)
    veth(c, "tmfx-c1", "10.201.1.1/24", s, "tmfx-s1", "10.201.1.2/24")
    veth(c, "tmfx-c2", "10.201.2.1/24", s, "tmfx-s2", "10.201.2.2/24")
    # the second subflow (from 10.201.2.1 to the server's first address) must leave through path 2
    sh("ip", "rule", "add", "from", "10.201.2.1", "table", "102", ns=c)
    sh("ip", "route", "add", "10.201.1.0/24", "dev", "tmfx-c2", "table", "102", ns=c)
    for ns in (c, s):
        sh("ip", "mptcp", "limits", "set", "subflow", "2", "add_addr_accepted", "2", ns=ns)
    sh("ip", "mptcp", "endpoint", "add", "10.201.2.1", "dev", "tmfx-c2", "subflow", ns=c)
    for dev in ("tmfx-c1", "tmfx-c2"):
        sh("tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", "10mbit", "burst", "16kb", "limit", "40kb", ns=c)
    tmp = out_dir / f"{name}.pcapng"
    server = run_in(s, "_serve", str(PORT), "1", "1")
    wait_ready(server)
    devs = {"path1 server tmfx-s1": (s, "tmfx-s1"), "path2 server tmfx-s2": (s, "tmfx-s2"),
            "path1 client tmfx-c1": (c, "tmfx-c1"), "path2 client tmfx-c2": (c, "tmfx-c2")}
    before = {k: counters(*v) for k, v in devs.items()}
    cap = start_capture(s, tmp, ["tmfx-s1", "tmfx-s2"], "dumpcap")
    client = run_in(c, "_send", "10.201.1.2", str(PORT), str(size), "cubic", "1")
    sent = finish(client)
    srv = finish(server)
    cap_msg = stop_capture(cap)
    after = {k: counters(*v) for k, v in devs.items()}
    return {"topology": {"client": c, "server": s,
                         "links": "path1 tmfx-c1 10.201.1.1/24 <-> tmfx-s1 10.201.1.2/24; "
                                  "path2 tmfx-c2 10.201.2.1/24 <-> tmfx-s2 10.201.2.2/24",
                         "mptcp": "limits subflow 2 add_addr_accepted 2 (both); client endpoint 10.201.2.1 dev tmfx-c2 subflow; "
                                  "policy rule from 10.201.2.1 table 102 -> 10.201.1.0/24 dev tmfx-c2",
                         "tbf": "rate 10mbit burst 16kb limit 40kb on tmfx-c1 and tmfx-c2 (client egress)",
                         "congestion_control": "kernel default per subflow (" +
                                               sh("sysctl", "-n", "net.ipv4.tcp_congestion_control", ns=c).strip() + ")",
                         "offloads": "tso/gso/gro off on every veth", "ipv6": "disabled"},
            "capture_point": "server interfaces tmfx-s1 and tmfx-s2 (after the client's tbf)",
            "capture_tool": "dumpcap (pcapng, one interface block per path)",
            "capture_messages": cap_msg, "sender": sent, "server": srv,
            "interface_counters_delta": _delta(before, after), "_tmp": tmp}


def short_flows(name: str, out_dir: Path, n: int) -> dict:
    topo = routed_topology("20mbit", "8kb", "12kb")
    c, r, s = topo["client"], topo["router"], topo["server"]
    tmp = out_dir / f"{name}.pcap"
    server = run_in(s, "_serve", str(PORT), str(n), "0")
    wait_ready(server)
    before = {"client tmfx-c0": counters(c, "tmfx-c0")}
    cap = start_capture(c, tmp, ["any"], "tcpdump")
    client = run_in(c, "_burst", topo["server_addr"], str(PORT), str(n), "7", "cubic")
    sent = finish(client)
    srv = finish(server)
    cap_msg = stop_capture(cap)
    after = {"client tmfx-c0": counters(c, "tmfx-c0")}
    return {"topology": topo, "capture_point": "client namespace, tcpdump -i any (LINUX_SLL2)",
            "capture_tool": "tcpdump -i any", "capture_messages": cap_msg,
            "flows": sent, "server": srv, "interface_counters_delta": _delta(before, after),
            "router_qdisc": qdisc_stats(r, "tmfx-rs"), "_tmp": tmp}


def _delta(before: dict, after: dict) -> dict:
    return {k: {f: after[k][f] - before[k][f] for f in after[k]} for k in after}


FIXTURES = {
    "cubic_bulk": lambda d: bulk("cubic_bulk", d, "cubic", 6_000_000, nano=False),
    "reno_bulk": lambda d: bulk("reno_bulk", d, "reno", 3_000_000, nano=True),
    "mptcp_2path": lambda d: mptcp("mptcp_2path", d, 6_000_000),
    "short_flows_any": lambda d: short_flows("short_flows_any", d, 40),
}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1].startswith("_"):
        cmd, args = sys.argv[1], sys.argv[2:]
        if cmd == "_serve":
            _serve(int(args[0]), int(args[1]), args[2] == "1")
        elif cmd == "_send":
            _send(args[0], int(args[1]), int(args[2]), args[3], args[4] == "1")
        elif cmd == "_burst":
            _burst(args[0], int(args[1]), int(args[2]), int(args[3]), args[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "captures"))
    ap.add_argument("--only", nargs="*", choices=sorted(FIXTURES))
    opts = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("make_trace_fixtures.py needs root (network namespaces, tc, tcpdump)")
    out_dir = Path(opts.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    versions = tool_versions()
    for name in opts.only or sorted(FIXTURES):
        cleanup()
        try:
            rec = FIXTURES[name](out_dir)
        finally:
            cleanup()
        tmp: Path = rec.pop("_tmp")
        gz = tmp.with_name(tmp.name + ".gz")
        with open(tmp, "rb") as src, gzip.GzipFile(gz, "wb", mtime=0, compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        tmp.unlink()
        rec.update(fixture=gz.name, sha256=hashlib.sha256(gz.read_bytes()).hexdigest(),
                   snaplen_bytes=SNAPLEN, created_utc=_dt.datetime.now(_dt.timezone.utc).isoformat(),
                   host_versions=versions, recreate=f"sudo python3 scripts/make_trace_fixtures.py --only {name}")
        (out_dir / f"{name}.json").write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
        print(f"{gz.name}: {gz.stat().st_size} bytes", flush=True)


if __name__ == "__main__":
    main()
