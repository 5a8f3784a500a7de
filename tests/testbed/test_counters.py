"""Real-kernel test of ``Testbed.counters``: every packet a rate limiter drops is counted once.

A 10 Mbit/s link with a 10-packet drop-tail buffer is offered UDP at about 20 Mbit/s; the
sender counts the datagrams it handed to the kernel and the receiver those that arrived, so
``sent - received`` is the number dropped, known without ``tc``. The delay element on the
link (which frames reach only after the rate limiter) gives a second, independent count of
what passed. Needs root (skips with the reason otherwise).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcpmodels.testbed import PathSpec, Testbed, single_link
from tcpmodels.testbed import workload as wl

pytestmark = [pytest.mark.testbed, pytest.mark.usefixtures("testbed_available")]

_RECEIVE = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind((sys.argv[1], 9000))
print("ready", flush=True)
n = 0
s.settimeout(30)
s.recv(2048); n += 1
s.settimeout(1.5)  # the link is idle well before this after the last datagram
try:
    while True:
        s.recv(2048); n += 1
except socket.timeout:
    pass
print(n, flush=True)
"""

# about 20 Mbit/s of 1000-byte datagrams for 1 s: twice what the link carries
_SEND = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n, payload, t0 = 0, bytes(1000), time.monotonic()
for i in range(2500):
    s.sendto(payload, (sys.argv[1], 9000)); n += 1
    if i % 25 == 24:
        time.sleep(max(0.0, t0 + (i + 1) * 0.0004 - time.monotonic()))
print(n, flush=True)
"""


@pytest.mark.parametrize("qdisc", ["tbf", "htb"])
def test_qdisc_drops_count_each_dropped_packet_once(qdisc):
    dst = "10.0.1.2"
    with Testbed(single_link(PathSpec(rate_bps=10e6, rtt_s=0.004, buffer_packets=10, qdisc=qdisc))) as tb:
        pings = len(wl.ping_rtt(tb, "c", dst, count=3, interval_s=0.01))  # ARP resolved before the burst
        receiver = tb.popen("s", [sys.executable, "-c", _RECEIVE, dst], stdout=subprocess.PIPE,
                            text=True)
        assert receiver.stdout.readline().strip() == "ready"
        before = tb.counters()["c:p0"]
        sent = int(tb.exec("c", [sys.executable, "-c", _SEND, dst]).stdout.split()[-1])
        received = int(receiver.communicate(timeout=60)[0].split()[-1])
        after = tb.counters()["c:p0"]
        per_qdisc = json.loads(tb.exec("c", ["tc", "-s", "-j", "qdisc", "show", "dev", "p0"]).stdout)
    dropped = sent - received
    counted = after["qdisc_drops"] - before["qdisc_drops"]
    element = tb.delay_stats["p0"]["a_to_b"]  # frames from c that passed the rate limiter
    print(f"{qdisc}: sent {sent}, received {received}, qdisc_drops {counted}, "
          f"per qdisc {[(q['kind'], q.get('drops')) for q in per_qdisc]}, delay element c->s {element}")
    assert sent == 2500 and 500 < dropped < 2400  # the link was overflowed, not drained dry
    assert counted == dropped
    # the delay element saw every datagram that left the queue, plus the pings and an ARP or two
    assert element["dropped_loss"] == element["dropped_queue_full"] == element["dropped_socket"] == 0
    assert 0 <= element["received"] - received <= pings + 4
    # why the root alone: the leaf counts the same drops again (what the counters summed until 2026-11-25)
    leaf = [q for q in per_qdisc if not q.get("root")]
    assert len(leaf) == 1 and leaf[0]["kind"] == "pfifo"
    assert sum(q["drops"] for q in per_qdisc) == 2 * leaf[0]["drops"]


def test_delay_counters_are_read_while_the_element_runs_and_count_what_passed():
    """``Testbed.delay_counters`` (SIGUSR1) reads an element's counters without stopping it: the
    difference of two readings is what passed between them (the receiver's own count), the element
    goes on forwarding, and its final counters at teardown are at least the last reading. The
    namespace's TcpExt counters are read from inside it."""
    from tcpmodels.testbed.netns import delay_counter_delta

    dst = "10.0.1.2"
    with Testbed(single_link(PathSpec(rate_bps=10e6, rtt_s=0.004, buffer_packets=10))) as tb:
        wl.ping_rtt(tb, "c", dst, count=3, interval_s=0.01)  # ARP resolved before the first reading
        receiver = tb.popen("s", [sys.executable, "-c", _RECEIVE, dst], stdout=subprocess.PIPE, text=True)
        assert receiver.stdout.readline().strip() == "ready"
        first = tb.delay_counters()
        idle = tb.delay_counters()  # an idle element (nothing queued, no timer) answers too
        sent = int(tb.exec("c", [sys.executable, "-c", _SEND, dst]).stdout.split()[-1])
        received = int(receiver.communicate(timeout=60)[0].split()[-1])
        second = tb.delay_counters()
        after_pings = len(wl.ping_rtt(tb, "c", dst, count=3, interval_s=0.01))  # still forwarding
        tcp_ext = tb.tcp_ext_counters("c")
    final = tb.delay_stats["p0"]["a_to_b"]
    during = delay_counter_delta(first, second)["p0"]["a_to_b"]
    print(f"sent {sent}, received {received}, element during {during}, final {final}")
    assert delay_counter_delta(first, idle)["p0"]["a_to_b"]["received"] == 0
    assert sent == 2500 and 500 < received < 2500  # the rate limiter dropped some before the element
    # every datagram the receiver got passed the element between the two readings, and nothing else did
    assert during["received"] == during["forwarded"] == received
    assert during["dropped_queue_full"] == during["dropped_socket"] == 0
    assert after_pings == 3 and final["received"] >= second["p0"]["a_to_b"]["received"] + 3
    assert "TCPLossProbes" in tcp_ext and tcp_ext["TCPOrigDataSent"] == 0  # a fresh namespace sent no TCP data
