"""Real-kernel test: the testbed keeps each flow's packets in order (``Testbed(keep_flow_order=True)``).

A veth hands each packet to the backlog of the CPU that sent it; on a host with several CPUs the
backlogs drain independently, and a flow's packets can overtake each other. On this 2-CPU host two
window-limited flows with no drop anywhere had 0.2 % of their segments queued out of order at the
receiver and spurious retransmissions (2026-11-28, before RPS steering); the two flows of the test
below, without steering, had 313 segments queued out of order and 174 + 136 reordering events at
the senders in 8 s. With steering, window-limited flows that lose nothing must see no reordering at
all: no segment queued out of order at the receiver, no reordering event at a sender. Needs root
(skips otherwise).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from tcpmodels.testbed import Testbed, dumbbell
from tcpmodels.testbed import workload as wl
from tcpmodels.testbed.netns import cpumask_hex, cpuset_mask_hex, delay_counter_delta, tcp_ext_delta

pytestmark = [pytest.mark.testbed, pytest.mark.usefixtures("testbed_available")]


def test_cpumask_hex_is_the_kernels_notation():
    assert cpumask_hex(1) == "1" and cpumask_hex(2) == "3" and cpumask_hex(32) == "ffffffff"
    assert cpumask_hex(33) == "1,ffffffff" and cpumask_hex(64) == "ffffffff,ffffffff"
    assert cpumask_hex(36) == "f,ffffffff"
    with pytest.raises(ValueError, match="n_cpus must be at least 1; got 0"):
        cpumask_hex(0)
    assert cpuset_mask_hex([0]) == "1" and cpuset_mask_hex([1]) == "2" and cpuset_mask_hex([1, 0, 1]) == "3"
    assert cpuset_mask_hex([32]) == "1,00000000" and cpuset_mask_hex(range(36)) == cpumask_hex(36)
    with pytest.raises(ValueError, match="at least one CPU number, none negative; got \\[\\]"):
        cpuset_mask_hex([])


def _two_window_limited_flows(keep_flow_order: bool, pin: bool = False) -> tuple[dict, int, str, dict]:
    """Two Reno flows, 4 ms each, through a 400 Mbit/s dumbbell for 8 s, each held below half the rate by
    a 60 kB receive window (~120 Mbit/s): TcpExt counters moved per node, packets dropped anywhere, the
    RPS mask read back from the receiver's interface, and the testbed's facts about its delay elements
    (``cpus``: as the testbed reports them, ``affinity``: as the kernel reports them, ``end_rps``: the RPS
    mask of each delayed link's two ends)."""
    topo = dumbbell(access_rtts_s=(0.004, 0.004), bottleneck_rate_bps=400e6, bottleneck_buffer_packets=1000)
    nodes = tuple(replace(n, sysctls=n.sysctls + (("net.ipv4.tcp_rmem", "4096 60000 60000"),)) if n.name == "d"
                  else n for n in topo.nodes)
    topo = replace(topo, nodes=nodes)
    dst = topo.meta["receiver_addr"]
    with Testbed(topo, keep_flow_order=keep_flow_order, pin_delay_elements=pin) as tb:
        rps = tb.exec("d", ["cat", "/sys/class/net/dl/queues/rx-0/rps_cpus"]).stdout.strip()
        delayed = [lk for lk in tb.topology.links if lk.delayed]
        elements = {"cpus": dict(tb.delay_element_cpus),
                    "affinity": {lk.name: os.sched_getaffinity(tb._delay_procs[lk.name].pid) for lk in delayed},
                    "comm": {lk.name: Path(f"/proc/{tb._delay_procs[lk.name].pid}/comm").read_text().strip()
                             for lk in delayed},
                    "end_rps": {(node, lk.name): tb.exec(node, ["cat", f"/sys/class/net/{lk.name}/queues/rx-0/rps_cpus"])
                                .stdout.strip() for lk in delayed for node in (lk.a, lk.b)}}
        server = wl.start_server(tb, "d", port=5311, keep_records=False)
        before = {n: tb.tcp_ext_counters(n) for n in ("s0", "s1", "d")}
        counters0, elements0 = tb.counters(), tb.delay_counters()
        procs = [wl.launch_flows(tb, node, [wl.bulk_flow(flow_id=i + 1, dst=dst, port=5311, duration_s=8.0, cc="reno",
                                                          direction="upload", sample_interval_s=0.5)])
                 for i, node in enumerate(("s0", "s1"))]
        recs = [wl.collect_flows(p, timeout_s=60)[0] for p in procs]
        counters1, elements1 = tb.counters(), tb.delay_counters()
        after = {n: tb.tcp_ext_counters(n) for n in before}
        server.stop()
    assert all(r.get("error") is None and r["samples"][-1]["bytes_acked"] > 50e6 for r in recs)  # both carried data
    moved = {n: tcp_ext_delta(before[n], after[n]) for n in after}
    drops = sum(counters1[i][f] - counters0[i][f] for i in counters1 for f in ("qdisc_drops", "rx_dropped", "tx_dropped")
                if counters1[i][f] is not None and counters0[i][f] is not None)
    drops += sum(n for link in delay_counter_delta(elements0, elements1).values() for d in link.values()
                 for k, n in d.items() if k.startswith("dropped") or k == "send_errors")
    print(f"keep_flow_order {keep_flow_order}, pin {pin}: rps {rps}, drops {drops}, TcpExt moved {moved}, "
          f"delay elements {elements}")
    return moved, drops, rps, elements


@pytest.mark.parametrize("pin", [False, True], ids=["steered", "pinned"])
def test_two_flows_without_loss_arrive_in_order(pin):
    """Steered (RPS on every veth) and pinned (each delay element on one CPU, its frames processed there)."""
    moved, drops, rps, elements = _two_window_limited_flows(True, pin)
    assert int(rps.replace(",", ""), 16) == int(cpumask_hex(os.cpu_count() or 1).replace(",", ""), 16)
    assert drops == 0  # nothing lost, so every out-of-order arrival would be reordering
    assert moved["d"].get("TCPOFOQueue", 0) == 0
    for sender in ("s0", "s1"):
        assert moved[sender].get("TCPSACKReorder", 0) == moved[sender].get("TCPTSReorder", 0) == 0
    n_cpus = os.cpu_count() or 1
    # the pid pinned is the element's own (its binary is delay_element-<source hash>)
    assert all(c.startswith("delay_element") for c in elements["comm"].values())
    if pin:  # the access links' elements take CPUs 0, 1, ... in turn, and their frames are not steered
        assert elements["cpus"] == {"a0": 0, "a1": 1 % n_cpus}
        assert elements["affinity"] == {k: {c} for k, c in elements["cpus"].items()}
        assert set(elements["end_rps"].values()) == {"0"}
    else:
        assert elements["cpus"] == {} and all(len(a) == n_cpus for a in elements["affinity"].values())
        assert {int(m.replace(",", ""), 16) for m in elements["end_rps"].values()} == {2 ** n_cpus - 1}


def test_pinned_delay_elements_need_steering():
    from tcpmodels.experiments.campaign import testbed_label

    with pytest.raises(ValueError, match="pin_delay_elements needs keep_flow_order=True"):
        Testbed(dumbbell(access_rtts_s=(0.004, 0.004), bottleneck_rate_bps=400e6), pin_delay_elements=True)
    assert [testbed_label("p3_kernel", *f) for f in ((False, False), (True, False), (True, True))] == \
        ["p3_kernel", "p3_kernel_steered", "p3_kernel_pinned"]
    with pytest.raises(ValueError, match="pin_delay_elements needs keep_flow_order"):
        testbed_label("p3_kernel", False, True)


def test_steering_to_one_cpu_writes_its_mask_on_every_interface_and_refuses_what_cannot_be():
    """``steer_cpus=(0,)`` (the placement test's one-CPU arm): every veth's receive queues steer to CPU 0."""
    topo = dumbbell(access_rtts_s=(0.004, 0.004), bottleneck_rate_bps=100e6)
    with pytest.raises(ValueError, match="needs keep_flow_order=True"):
        Testbed(topo, steer_cpus=(0,))
    with pytest.raises(ValueError, match=f"must name CPUs of this host \\(0 to {(os.cpu_count() or 1) - 1}\\)"):
        Testbed(topo, keep_flow_order=True, steer_cpus=(os.cpu_count() or 1,))
    with Testbed(topo, keep_flow_order=True, steer_cpus=(0,)) as tb:
        masks = {(n, lk.name): tb.exec(n, ["sh", "-c", f"cat /sys/class/net/{lk.name}/queues/rx-*/rps_cpus"])
                 .stdout.split() for lk in tb.topology.links for n in (lk.a, lk.b)}
        assert tb.rps_cpus == "1" and tb.steer_cpus == (0,)
    assert masks and all(m and {int(x.replace(",", ""), 16) for x in m} == {1} for m in masks.values()), masks


def test_a_restarted_delay_element_stays_pinned():
    """set_link_delay starts a new element (P3 changes RTTs between samples so): it is pinned like the first."""
    topo = dumbbell(access_rtts_s=(0.004, 0.008), bottleneck_rate_bps=100e6)
    with Testbed(topo, keep_flow_order=True, pin_delay_elements=True) as tb:
        first = tb._delay_procs["a1"].pid
        tb.set_link_delay("a1", 0.01)
        again = tb._delay_procs["a1"].pid
        assert again != first and os.sched_getaffinity(again) == {tb.delay_element_cpus["a1"]}
        assert os.sched_getaffinity(tb._delay_procs["a0"].pid) == {tb.delay_element_cpus["a0"]}
