"""Real-kernel tests: namespaces, delay element, rate limiters, MPTCP, cleanup, refusal.

They need root and network namespaces (CI here is root) and skip with the reason
otherwise. Tolerances are the issue's: RTT within ±2 % or 0.1 ms, TCP rate within
±5 % of the rate limiter.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tcpmodels.testbed import Link, Node, PathSpec, Testbed, Topology, dumbbell, fat_tree, netns, single_link, two_path
from tcpmodels.testbed import workload as wl
from tcpmodels.testbed.cpu_latency import hold_cpu_latency

pytestmark = [pytest.mark.testbed, pytest.mark.usefixtures("testbed_available")]

REPO = Path(__file__).resolve().parents[2]
#: bytes of TCP payload per byte on the wire for full-sized segments with timestamps (1448 / 1514)
GOODPUT_PER_WIRE = 1448 / 1514


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _root_links() -> list[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return sorted(line.split(":")[1].strip().split("@")[0] for line in out.splitlines())


def _live_other_namespaces() -> set[str]:
    """Namespaces of runs whose owner is alive (other engineers' or CI jobs' runs): excluded from comparisons."""
    live = netns._live_run_ids()
    return {n for n in _netns_names() if (m := netns.NAMESPACE_RE.match(n)) and m.group(1) in live}


def test_rtt_reproduced_at_1_10_60_150_ms():
    """Four delayed links and one plain link between the same two nodes, pinged with kernel timestamps.

    The plain link's RTT (the stack's own, about 0.05 ms) is subtracted: what the
    delay element must reproduce is the configured delay on top of it.

    It holds a CPU latency request (:mod:`tcpmodels.testbed.cpu_latency`), as the rate tests do: the
    element releases each echo from a timed sleep, and a halted vCPU woke it about a millisecond late
    on CI once (2026-12-06: +1.02 ms at 1 ms, +0.61 ms at 60 ms, median of 30 pings; +0.03-0.13 ms
    in every run before and after, idle or with both CPUs busy).
    """
    rtts_s = [0.001, 0.010, 0.060, 0.150]
    links = [Link(name=f"p{i}", a="c", b="s", a_addrs=(f"10.0.{i + 1}.1/24",), b_addrs=(f"10.0.{i + 1}.2/24",),
                  delay_s=rtt / 2) for i, rtt in enumerate(rtts_s)]
    links.append(Link(name="p9", a="c", b="s", a_addrs=("10.0.9.1/24",), b_addrs=("10.0.9.2/24",), offloads=False))
    topo = Topology(name="rtt", nodes=(Node(name="c"), Node(name="s")), links=tuple(links))
    with hold_cpu_latency() as held, Testbed(topo) as tb:
        assert held, "no CPU latency request: the RTT would measure the vCPU's wake-ups"
        base = np.median(wl.ping_rtt(tb, "c", "10.0.9.2", count=30, interval_s=0.005))
        measured = [np.median(wl.ping_rtt(tb, "c", f"10.0.{i + 1}.2", count=30, interval_s=0.005))
                    for i in range(len(rtts_s))]
    report = {f"{r * 1e3:g} ms": f"{(m - r) * 1e3:+.3f} ms raw, {(m - base - r) * 1e3:+.3f} ms net"
              for r, m in zip(rtts_s, measured)}
    report["load average"] = f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    print("RTT error:", report, f"stack RTT {base * 1e3:.3f} ms")
    assert base < 0.5e-3
    for r, m in zip(rtts_s, measured):
        tol = max(0.02 * r, 0.1e-3)
        assert abs(m - base - r) <= tol, report


def _timed_counters(tb, key: str) -> tuple[float, dict]:
    """The counters of ``key`` and the midpoint of the time it took to read them (one ip + tc call per node). [s]"""
    start = time.monotonic()
    counters = tb.counters()[key]
    return (start + time.monotonic()) / 2.0, counters


@pytest.mark.parametrize("rate_bps, qdisc", [(10e6, "tbf"), (100e6, "tbf"), (500e6, "tbf"), (100e6, "htb")])
def test_tcp_rate_matches_tbf(rate_bps, qdisc):
    """A 3 s CUBIC download through a tbf (or htb) limiter: goodput and wire rate within ±5 %.

    The wire rate is read from the root qdisc's byte counter (``qdisc_bytes``: every segment with
    its headers; the interface's ``tx_bytes`` counts a GSO packet's headers once, 4 % short behind
    htb) between 1 s and 2.5 s into the transfer, each read timed on its own, so connection set-up,
    slow start and teardown (which stretch on a loaded host: with two CPU-bound processes beside it
    the whole-transfer rate of the 100 Mbit/s htb case came out 6 % low) are not part of what is
    compared with the limiter's rate.

    It holds a CPU latency request of 0 us (:mod:`tcpmodels.testbed.cpu_latency`): without one an
    idle vCPU halts and the limiter's timer wakes it late, so the link idles (down to 456 Mbit/s on
    the wire at 500 Mbit/s; CI failed on it once, 94.7 of 100 Mbit/s on 2026-11-29)."""
    with hold_cpu_latency() as held, Testbed(single_link(PathSpec(rate_bps=rate_bps, qdisc=qdisc))) as tb:
        assert held, "no CPU latency request: the wire rate would measure the vCPU's wake-ups"
        server = wl.start_server(tb, "s")
        popen = wl.launch_flows(tb, "c", [wl.bulk_flow(flow_id=1, dst="10.0.1.2", duration_s=3.0, cc="cubic")])
        time.sleep(1.0)
        t0, before = _timed_counters(tb, "s:p0")
        time.sleep(1.5)
        t1, after = _timed_counters(tb, "s:p0")
        (rec,) = wl.collect_flows(popen, 60)
        server.stop()
    assert "error" not in rec, rec
    # what the limiter charged, each segment with its headers; tx_bytes undercounts GSO packets behind htb
    wire_bps = (after["qdisc_bytes"] - before["qdisc_bytes"]) * 8 / (t1 - t0)
    iface_bps = (after["tx_bytes"] - before["tx_bytes"]) * 8 / (t1 - t0)
    print(f"{qdisc} {rate_bps / 1e6:g} Mbit/s: goodput {rec['rate_bps'] / 1e6:.2f}, wire {wire_bps / 1e6:.2f} Mbit/s "
          f"(interface tx_bytes {iface_bps / 1e6:.2f})")
    assert rec["rate_bps"] == pytest.approx(rate_bps * GOODPUT_PER_WIRE, rel=0.05)
    assert wire_bps == pytest.approx(rate_bps, rel=0.05)


def test_mptcp_uses_both_paths_in_proportion_to_rate():
    """20 and 60 Mbit/s paths, same RTT: the 60 Mbit/s path carries 3/4 of the bytes."""
    topo = two_path([PathSpec(rate_bps=20e6, rtt_s=0.010, buffer_bytes=50_000),
                     PathSpec(rate_bps=60e6, rtt_s=0.010, buffer_bytes=150_000)])
    with Testbed(topo) as tb:
        server = wl.start_server(tb, "s", mptcp=True)
        before = tb.counters()
        (rec,) = wl.run_flows(tb, "c", [wl.bulk_flow(flow_id=1, dst="10.0.1.2", duration_s=5.0, mptcp=True)])
        after = tb.counters()
        (srec,) = server.stop()
    assert "error" not in rec, rec
    sent = {p: after[f"s:{p}"]["tx_bytes"] - before[f"s:{p}"]["tx_bytes"] for p in ("p0", "p1")}
    share = sent["p1"] / (sent["p0"] + sent["p1"])
    print(f"MPTCP: {rec['rate_bps'] / 1e6:.1f} Mbit/s, share on the 60 Mbit/s path {share:.3f}")
    assert share == pytest.approx(0.75, abs=0.05)
    assert rec["rate_bps"] == pytest.approx(80e6 * GOODPUT_PER_WIRE, rel=0.1)
    # TCP_INFO ground truth: one subflow per path, each from its own address
    locals_ = {s["local"].split(":")[0] for s in srec["samples"]}
    assert locals_ == {"10.0.1.2", "10.0.2.2"}
    assert rec["mptcp_subflows"] == 1  # the kernel counts subflows beyond the first


def test_traffic_records_cc_and_tcp_info_samples():
    """Per-socket congestion control, upload and download records, TCP_INFO samples, probes per path."""
    topo = two_path([PathSpec(rate_bps=20e6, rtt_s=0.020, buffer_bytes=50_000),
                     PathSpec(rate_bps=10e6, rtt_s=0.040, buffer_bytes=50_000)])
    flows = [wl.bulk_flow(flow_id=i + 1, dst="10.0.1.2", size_bytes=500_000, cc=cc, direction=d, start_s=i * 1.0,
                          sample_interval_s=0.05)
             for i, (cc, d) in enumerate([("reno", "download"), ("cubic", "upload"), ("bbr", "download")])]
    # three probe pairs after the bulk flows (so that nothing queues ahead of them), one second apart
    probe_ids = (10, 20, 30)
    for k, first_id in enumerate(probe_ids):
        pair = wl.probe_flows(first_id=first_id, size_bytes=200_000,
                              paths=[("10.0.1.1", "10.0.1.2"), ("10.0.2.1", "10.0.2.2")])
        for f in pair:
            f["start_s"] += 4.0 + k
        flows += pair
    with Testbed(topo) as tb:
        server = wl.start_server(tb, "s")
        for i in (1, 2):  # resolve ARP first, so that connect times are one RTT
            wl.ping_rtt(tb, "c", f"10.0.{i}.2", count=1)
        recs = {r["flow_id"]: r for r in wl.run_flows(tb, "c", flows)}
        srecs = {r["flow_id"]: r for r in server.stop()}
    for fid, cc in ((1, "reno"), (2, "cubic"), (3, "bbr")):
        rec = recs[fid]
        assert "error" not in rec, rec
        assert rec["bytes"] == 500_000 and rec["cc_effective"] == cc
        # one RTT of 20 ms, not two: the scheduler only adds (CI once saw +13 ms on one connect), so the bound
        # is the second RTT, not the first plus a guess at the noise
        assert 0.019 < rec["connect_s"] < 0.04, rec
        # 500 kB at 20 Mbit/s needs at least 0.2 s
        assert 0.2 < rec["completion_s"] < 2.0 and rec["rate_bps"] < 20e6, rec
    samples = srecs[1]["samples"] + recs[2]["samples"]
    assert srecs[1]["cc_effective"] == "reno"
    assert all(s["cwnd_segments"] > 0 for s in samples)
    assert all(0.019 < s["min_rtt_s"] < 0.03 for s in samples if s["min_rtt_s"] > 0)
    assert max(s["bytes_acked"] for s in srecs[1]["samples"]) >= 500_000
    # probes: path 1 has twice the RTT and half the rate of path 0. A connect takes one RTT plus whatever the
    # scheduler adds (one CI run saw +13 ms once on a 40 ms path), so each path's RTT is its fastest of three connects.
    pairs = [(recs[i], recs[i + 1]) for i in probe_ids]
    for p0, p1 in pairs:
        assert p0["src"].startswith("10.0.1.1:") and p1["src"].startswith("10.0.2.1:"), (p0, p1)
        assert p1["completion_s"] > p0["completion_s"], (p0, p1)
    rtt0, rtt1 = (min(pair[i]["connect_s"] for pair in pairs) for i in (0, 1))
    assert 0.019 < rtt0 and 0.039 < rtt1, (rtt0, rtt1)  # no faster than the configured RTTs (as the bulk flows)
    assert rtt1 == pytest.approx(2 * rtt0, rel=0.1), pairs


def test_random_loss_rate():
    """A 2 % loss link drops 2 % of frames (binomial 4-sigma band) and TCP retransmits."""
    with Testbed(single_link(PathSpec(rate_bps=50e6, rtt_s=0.002, loss_rate=0.02)), seed=5) as tb:
        server = wl.start_server(tb, "s")
        (rec,) = wl.run_flows(tb, "c", [wl.bulk_flow(flow_id=1, dst="10.0.1.2", duration_s=2.0)])
        (srec,) = server.stop()
    stats = tb.delay_stats["p0"]["b_to_a"]  # data direction s -> c
    n, lost = stats["received"], stats["dropped_loss"]
    assert n > 2000
    assert abs(lost - 0.02 * n) <= 4 * np.sqrt(n * 0.02 * 0.98)
    assert srec["samples"][-1]["total_retrans"] > 0


def _steal_jiffies() -> int:
    """CPU time the hypervisor gave to others while this guest's vCPUs wanted to run (``/proc/stat``). [jiffies]"""
    with open("/proc/stat") as fh:
        return int(fh.readline().split()[8])


def test_dumbbell_shares_the_bottleneck():
    """Two senders with 10 and 40 ms access RTT share a 40 Mbit/s bottleneck; RTTs are as configured.

    A sender's path crosses three links (access, bottleneck, the plain link to ``d``), two of them
    with a delay element. Each delay element is held to the accuracy of
    ``test_rtt_reproduced_at_1_10_60_150_ms`` (max(2 % of its RTT, 0.1 ms)); the stack's own time per
    hop is measured on the plain link (d -> rb) and counted three times.

    The bottleneck is full while both send: its root qdisc's byte counter (every segment with its
    headers) between 1 s and 3 s into the 4 s transfers is within 5 % of 40 Mbit/s, under a CPU
    latency request as in ``test_tcp_rate_matches_tbf``. The sum of the two whole-transfer goodputs,
    which this test compared before, includes each flow's start-up and teardown: CI failed on it once
    (2026-12-02, 34.3 of 38.3 Mbit/s, 27.5 + 6.8) while 126 runs here (with and without a CPU latency
    request, 16 of them beside two busy loops) never went below 37.1 (mean 38.3, sd 0.4), so that
    run's cause is not known; a failure now prints the steal time and each flow's retransmits."""
    access_rtts_s, bottleneck_rtt_s = [0.010, 0.040], 0.002
    topo = dumbbell(access_rtts_s=access_rtts_s, bottleneck_rate_bps=40e6, bottleneck_buffer_bytes=100_000,
                    bottleneck_rtt_s=bottleneck_rtt_s)
    with hold_cpu_latency() as held, Testbed(topo) as tb:
        assert held, "no CPU latency request: the wire rate would measure the vCPU's wake-ups"
        hop_s = np.median(wl.ping_rtt(tb, "d", "10.3.0.1", count=10, interval_s=0.01))
        rtts = [np.median(wl.ping_rtt(tb, f"s{i}", "10.3.0.2", count=10, interval_s=0.01)) for i in range(2)]
        server = wl.start_server(tb, "d")
        steal_before = _steal_jiffies()
        procs = [wl.launch_flows(tb, f"s{i}", [wl.bulk_flow(flow_id=i + 1, dst="10.3.0.2", duration_s=4.0,
                                                             direction="upload")]) for i in range(2)]
        time.sleep(1.0)
        t0, before = _timed_counters(tb, "ra:bn")
        time.sleep(2.0)
        t1, after = _timed_counters(tb, "ra:bn")
        recs = [wl.collect_flows(p, 60)[0] for p in procs]
        steal = _steal_jiffies() - steal_before
        server.stop()
    assert hop_s < 0.5e-3
    for access_s, rtt in zip(access_rtts_s, rtts):
        tol = sum(max(0.02 * r, 0.1e-3) for r in (access_s, bottleneck_rtt_s))
        assert rtt - 3 * hop_s == pytest.approx(access_s + bottleneck_rtt_s, abs=tol), (rtts, hop_s)
    assert all("error" not in r for r in recs), recs
    wire_bps = (after["qdisc_bytes"] - before["qdisc_bytes"]) * 8 / (t1 - t0)
    seen = {"goodput_mbps": [round(r["rate_bps"] / 1e6, 1) for r in recs], "wire_mbps": round(wire_bps / 1e6, 2),
            "steal_jiffies": steal,
            "retransmits": [r["samples"][-1]["total_retrans"] if r["samples"] else None for r in recs],
            "rtts_s": [round(float(r), 5) for r in rtts]}
    print("dumbbell:", seen)
    # on this host (2026-12-02): wire 39.93 +- 0.09 Mbit/s over 30 runs (min 39.69); the 40-ms sender's goodput
    # 9.4 +- 2.3 Mbit/s over 39 runs with a request (min 4.0 over all 126). The bounds sit 20 and 3 sd away.
    assert wire_bps == pytest.approx(40e6, rel=0.05), seen
    assert all(r["rate_bps"] > 2e6 for r in recs), seen


def test_client_timeout_reports_the_open_sockets_before_the_kill():
    """A flow still running at the client's timeout: the error names it and carries what ``ss`` saw of its
    socket (state, congestion control, TCP_INFO) while it was still open, on both ends."""
    with Testbed(single_link(PathSpec(rate_bps=20e6, rtt_s=0.010))) as tb:
        server = wl.start_server(tb, "s")
        flows = [wl.bulk_flow(flow_id=7, dst="10.0.1.2", duration_s=20.0, cc="reno", direction="upload")]
        with pytest.raises(netns.TestbedError) as exc:
            wl.collect_flows(wl.launch_flows(tb, "c", flows), 1.5, on_timeout=lambda: wl.socket_report(tb, ["c", "s"]))
        server.stop()
    text = str(exc.value)
    assert "0 of 1 flows finished; unfinished flow ids: 7" in text, text
    client_block = text.split("--- c tcp sockets:\n")[1].split("---")[0]
    assert "ESTAB" in client_block and "reno" in client_block and "10.0.1.2:5201" in client_block, text
    assert "--- s tcp sockets:" in text and "--- c mptcp sockets:" in text


def test_fat_tree_pins_each_address_to_its_core():
    """k=4 fat-tree: echoes between plane-c addresses of hosts in different pods cross core c only,
    and an MPTCP connection gets one subflow per core."""
    with Testbed(fat_tree()) as tb:
        addrs = tb.topology.meta["host_addrs"]
        cores = tb.topology.meta["cores"]

        def core_tx():
            cnt = tb.counters()
            return {c: sum(v["tx_packets"] for k, v in cnt.items() if k.startswith(c + ":")) for c in cores}

        for c in range(4):
            before = core_tx()
            rtt = wl.ping_rtt(tb, "h0", addrs["h15"][c], bind=addrs["h0"][c], count=5, interval_s=0.005)
            after = core_tx()
            delta = {k: after[k] - before[k] for k in cores}
            assert len(rtt) == 5
            assert delta[cores[c]] >= 10, delta  # 6 echoes and 6 replies
            # other cores: nothing but the odd ARP reachability probe
            assert all(v <= 2 for k, v in delta.items() if k != cores[c]), delta
        server = wl.start_server(tb, "h15", mptcp=True)
        # 3 s, not 1.5 s: a 1.5 s upload fell to 71-72 Mbit/s in 2 of 16 runs (2026-12-03, one in a full
        # test run), a transient of a few hundred ms that a longer upload dilutes below the 15 % margin
        (rec,) = wl.run_flows(tb, "h0", [wl.bulk_flow(flow_id=1, dst=addrs["h15"][0], duration_s=3.0, mptcp=True)])
        (srec,) = server.stop()
    assert "error" not in rec, rec
    assert {s["local"].split(":")[0] for s in srec["samples"]} == set(addrs["h15"])
    assert rec["rate_bps"] == pytest.approx(100e6 * GOODPUT_PER_WIRE, rel=0.15)


def test_cli_run_example_writes_capture_and_record(tmp_path):
    """`tcpmodels testbed run examples/two_path.toml`: a whole pcap, a run record beside it, flow records."""
    proc = subprocess.run([sys.executable, "-m", "tcpmodels", "testbed", "run", str(REPO / "examples" / "two_path.toml"),
                           "--out-dir", str(tmp_path), "--no-progress"], capture_output=True, text=True, timeout=180,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["host"]["kernel"] == os.uname().release and record["seed"] == 1
    assert record["topology"]["name"] == "two_path" and record["flows"]["errors"] == 0
    flows = [json.loads(x) for x in (run_dir / "flows.jsonl").read_text().splitlines()]
    assert [f["kind"] for f in flows[:3]] == ["probe", "probe", "bulk"] and len(flows) > 5
    assert len(flows[2]["samples"]) >= 20  # 3 s at 100 ms
    import dpkt

    for cap in record["captures"]:
        path = Path(cap["path"])
        assert json.loads(Path(str(path) + ".json").read_text())["capture"]["path"] == str(path)
        with path.open("rb") as fh:
            packets = list(dpkt.pcap.Reader(fh))  # raises on a truncated file
        assert len(packets) == cap["packets_captured"] > 1000
        iface = cap["interface"]
        delta = record["counters_after"][f"s:{iface}"]["tx_packets"] - record["counters_before"][f"s:{iface}"]["tx_packets"]
        assert delta > 500
        if shutil.which("tshark"):
            out = subprocess.run(["tshark", "-r", str(path), "-c", "5"], capture_output=True, text=True, timeout=60)
            assert out.returncode == 0 and "5201" in out.stdout, out.stderr


_KILL_CONFIG = """
[run]
name = "killme"
[topology]
kind = "two_path"
[[topology.paths]]
rate_mbps = 10
rtt_ms = 10
[[topology.paths]]
rate_mbps = 10
rtt_ms = 20
[capture]
points = ["s:p0"]
[[traffic]]
kind = "bulk"
duration_s = 60
mptcp = true
"""


def _start_runner_mid_transfer(tmp_path):
    """Start `testbed run` on a 60 s transfer; return (process, run id, pids in its namespaces) once traffic flows."""
    cfg = tmp_path / "kill.toml"
    cfg.write_text(_KILL_CONFIG)
    runner = subprocess.Popen([sys.executable, "-m", "tcpmodels", "testbed", "run", str(cfg), "--out-dir",
                               str(tmp_path), "--no-progress"], cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    run_id = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and run_id is None:
        for path in netns.STATE_DIR.glob("*.json"):
            try:
                if json.loads(path.read_text())["pid"] == runner.pid:
                    run_id = path.stem
            except (OSError, ValueError, KeyError):
                pass
        time.sleep(0.1)
    assert run_id, "the runner never wrote its state file"
    ours = re.compile(rf"^tm{run_id}-")
    deadline = time.monotonic() + 60
    pids: list[int] = []
    while time.monotonic() < deadline:  # wait until traffic runs: client process in namespace c
        pids = [int(p) for n in _netns_names() if ours.match(n)
                for p in subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout.split()]
        if len(pids) >= 5:  # delay elements, server, tcpdump, client
            break
        time.sleep(0.2)
    time.sleep(1.0)
    return runner, run_id, pids


def test_sigterm_tears_down_and_leaves_a_whole_capture(tmp_path):
    """SIGTERM to the runner mid-transfer: it removes everything itself and the pcap is readable."""
    ns_before = _netns_names()
    runner, run_id, pids = _start_runner_mid_transfer(tmp_path)
    runner.send_signal(signal.SIGTERM)
    _, err = runner.communicate(timeout=60)
    assert runner.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert not any(n.startswith(f"tm{run_id}-") for n in _netns_names())
    others = _live_other_namespaces()
    assert _netns_names() - others == ns_before - others
    for pid in pids:
        try:  # gone, or a zombie waiting for its parent; it may vanish between the two reads
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
        except FileNotFoundError:
            continue
        assert "Z" in state, (pid, state)
    import dpkt

    (pcap,) = tmp_path.glob("*/s-p0.pcap")
    with pcap.open("rb") as fh:
        assert len(list(dpkt.pcap.Reader(fh))) > 100


def test_cleanup_after_sigkill_restores_namespaces_and_links(tmp_path):
    """SIGKILL the runner mid-transfer; `testbed cleanup` removes its namespaces and processes, twice harmlessly."""
    ns_before, links_before = _netns_names(), _root_links()
    # leftovers of runs killed before this test (their owner is dead): cleanup is meant to remove those too
    stale_before = {n for n in ns_before if (m := netns.NAMESPACE_RE.match(n)) and m.group(1) not in netns._live_run_ids()}
    runner, run_id, pids = _start_runner_mid_transfer(tmp_path)
    ours = re.compile(rf"^tm{run_id}-")
    runner.send_signal(signal.SIGKILL)
    runner.communicate()
    left = {n for n in _netns_names() if ours.match(n)}
    assert left == {f"tm{run_id}-c", f"tm{run_id}-s", f"tm{run_id}-dly"}  # the kill did leave leftovers
    assert len(pids) >= 5

    proc = subprocess.run([sys.executable, "-m", "tcpmodels", "testbed", "cleanup"], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert set(json.loads(proc.stdout)["removed_namespaces"]) >= left | stale_before
    others = _live_other_namespaces()
    assert _netns_names() - others == ns_before - others - stale_before
    if not stale_before:  # a stale run may also have left links in the root namespace, which cleanup removes
        assert _root_links() == links_before
    for pid in pids:
        try:  # gone, or a zombie waiting for its parent; it may vanish between the two reads
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
        except FileNotFoundError:
            continue
        assert "Z" in state, (pid, state)
    assert not (netns.STATE_DIR / f"{run_id}.json").exists()
    again = subprocess.run([sys.executable, "-m", "tcpmodels", "testbed", "cleanup"], capture_output=True, text=True,
                           timeout=120, cwd=REPO)
    assert again.returncode == 0
    assert not any(ours.match(n) for n in json.loads(again.stdout)["removed_namespaces"])


def test_cleanup_leaves_reserved_and_live_namespaces_alone():
    """`tmfx*` (another tool's fixtures) and namespaces of a run still in progress survive cleanup."""
    fx = f"tmfx{os.getpid() % 100000}-keep"
    subprocess.run(["ip", "netns", "add", fx], check=True)
    try:
        with Testbed(single_link(PathSpec())) as tb:
            report = netns.cleanup()
            assert tb.run_id in report.skipped_live_runs
            assert set(tb.namespaces) <= _netns_names()
        assert fx in _netns_names()
        assert not any(n.startswith(f"tm{tb.run_id}") for n in _netns_names())
    finally:
        subprocess.run(["ip", "netns", "del", fx])


def test_non_root_refusal_before_any_side_effect(tmp_path):
    """As user nobody with no capabilities, run and cleanup refuse, name what is missing, change nothing."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) not installed")
    ns_before = _netns_names()
    out_dir = tmp_path / "out"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "PYTHONPATH": str(REPO)}
    drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    probe = subprocess.run(drop + [sys.executable, "-c", "import tcpmodels.testbed"], capture_output=True, text=True,
                           timeout=60, env=env, cwd="/")
    if probe.returncode != 0:
        pytest.skip(f"user nobody cannot run this Python/package here: {probe.stderr.strip()[-200:]}")
    for args in (["run", str(REPO / "examples" / "two_path.toml"), "--out-dir", str(out_dir)], ["cleanup"]):
        proc = subprocess.run(drop + [sys.executable, "-m", "tcpmodels", "testbed", *args], capture_output=True,
                              text=True, timeout=60, env=env, cwd="/")
        assert proc.returncode == 77, proc.stderr
        assert "CAP_NET_ADMIN" in proc.stderr and "root" in proc.stderr
        assert "Traceback" not in proc.stderr
    others = _live_other_namespaces()
    assert _netns_names() - others == ns_before - others
    assert not out_dir.exists()


def test_set_link_delay_changes_the_rtt_of_a_running_testbed():
    """The public delay change (used by the P2 campaign between samples) restarts only the delay element."""
    with Testbed(single_link(PathSpec(rate_bps=50e6, rtt_s=0.010))) as tb:
        before = np.median(wl.ping_rtt(tb, "c", "10.0.1.2", count=10, interval_s=0.01))
        tb.set_link_delay("p0", 0.020)
        after = np.median(wl.ping_rtt(tb, "c", "10.0.1.2", count=10, interval_s=0.01))
        assert tb.topology.link("p0").delay_s == 0.020
        with pytest.raises(ValueError, match="no link 'p9'"):
            tb.set_link_delay("p9", 0.01)
        with pytest.raises(ValueError, match=r"delay_s \[s\] must be in \(0, 10\]"):
            tb.set_link_delay("p0", 0.0)
    assert before == pytest.approx(0.010, abs=0.0005)
    assert after == pytest.approx(0.040, abs=0.0005)
    (replaced,) = tb.replaced_delay_stats
    assert replaced["delay_s"] == 0.005 and replaced["stats"]["a_to_b"]["received"] >= 10
