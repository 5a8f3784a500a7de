"""A small ns-3 dumbbell, run twice with the same seed, checked against physics and bookkeeping identities."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from tcpmodels.sim import _ns3
from tcpmodels.sim.config import BulkApp, Dumbbell, Link, PoissonFlows, Sender, SizeDistribution, config_from_dict
from tcpmodels.sim.run import run_config

pytestmark = pytest.mark.sim

RATE_BPS = 10e6
QUEUE_PACKETS = 30
BASE_RTT_S = 2 * (0.001 + 0.01 + 1e-5)
MSS = 1448

CONFIG = Dumbbell(
    senders=[
        Sender(access=Link(rate_bps=1e9, delay_s=0.001), variant="TcpLinuxReno"),
        Sender(
            access=Link(rate_bps=1e9, delay_s=0.001),
            variant="TcpCubic",
            apps=[
                BulkApp(start_s=1.0, size_bytes=1_000_000),
                PoissonFlows(mean_interarrival_s=0.5, size=SizeDistribution(kind="fixed", mean_bytes=20_000), start_s=0.5),
            ],
        ),
    ],
    bottleneck=Link(rate_bps=RATE_BPS, delay_s=0.01, queue_packets=QUEUE_PACKETS),
    duration_s=8.0,
    seed=7,
    pcap_devices=["bottleneck"],
    trace_cwnd=True,
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("dumbbell")
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda k: run_config(CONFIG, base / f"run{k}", timeout_s=600), range(2)))


def test_record(runs):
    rec = runs[0].record
    assert rec["ns3_version"] == _ns3.ns3_version() != "not installed"
    assert config_from_dict(rec["config"]) == CONFIG
    assert rec["seed"] == 7 and rec["topology"] == "dumbbell"
    assert rec["sim_s_per_wall_s"] > 0 and rec["packets_tx"] > 1000


def test_same_seed_same_result(runs):
    a, b = runs
    pd.testing.assert_frame_equal(a.apps, b.apps)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.queues, b.queues)


def test_finite_flows_complete_no_faster_than_the_link_allows(runs):
    apps = runs[0].apps
    finite = apps[apps["size_bytes"].notna()]
    assert len(finite) >= 10  # one 1 MB transfer plus Poisson arrivals at 2/s over 7.5 s
    done = finite[finite["completed"]]
    assert len(done) >= len(finite) - 2  # only flows started near the end may be unfinished
    assert (done["rx_bytes"] == done["size_bytes"]).all()
    # handshake (1 RTT) + first byte's RTT + serialisation of all bytes at the bottleneck
    lower = 1.5 * BASE_RTT_S + done["size_bytes"] * 8 / RATE_BPS * 1500 / 1448 * 0.99
    assert (done["fct_s"] >= lower).all()
    assert np.isnan(apps.loc[~apps["completed"], "fct_s"]).all()


def test_bottleneck_is_full_but_not_exceeded(runs):
    r = runs[0]
    goodput = r.throughput_bps(2.0, 8.0).sum()
    ceiling = RATE_BPS * MSS / (MSS + 52)  # TCP/IP headers with timestamps: 52 bytes
    assert 0.90 * ceiling <= goodput <= ceiling * 1.001


def test_queue_limit_drops_and_flowmonitor_agree(runs):
    r = runs[0]
    q = r.queues[r.queues["device"] == "bottleneck"]
    assert q["queue_packets"].max() <= QUEUE_PACKETS
    assert q["queue_packets"].max() >= QUEUE_PACKETS - 2  # the bulk flows fill it
    drops = int(q["dropped_packets"].sum())
    assert drops > 0
    data = r.flows[r.flows["direction"] == "data"]
    missing = int(data["tx_packets"].sum() - data["rx_packets"].sum())
    # every data packet sent is received, dropped at the bottleneck, or still on its way
    in_flight_max = QUEUE_PACKETS + RATE_BPS * BASE_RTT_S / (8 * 1500) + 20
    assert drops <= missing <= drops + in_flight_max


def test_pcap_reads_through_traces_and_matches_counts(runs):
    traces = pytest.importorskip("tcpmodels.traces.reader")
    r = runs[0]
    pkts = traces.read_pcap(f"{r.out_dir}/bottleneck.pcap")
    assert pkts["captured_bytes"].max() <= CONFIG.pcap_snaplen_bytes
    ports = set(r.apps["port"])
    data_pkts = pkts[pkts["dst_port"].isin(ports) & (pkts["payload_bytes"] > 0)]
    flow_data = r.flows[r.flows["direction"] == "data"]
    q = r.queues[r.queues["device"] == "bottleneck"]
    # the capture sees what left the bottleneck queue: sent - dropped - still queued - not yet arrived
    sent = flow_data["tx_packets"].sum() - int(q["dropped_packets"].sum()) - int(q["queue_packets"].iloc[-1])
    data_pkts_with_syn = pkts[pkts["dst_port"].isin(ports)]
    assert abs(len(data_pkts_with_syn) - sent) <= 40
    assert len(data_pkts) > 0.9 * len(data_pkts_with_syn)


def test_cwnd_trace_shows_losses_and_recovery(runs):
    c = runs[0].cwnd
    assert c is not None
    bulk0 = c[c["flow_index"] == 0]
    cwnd = bulk0.loc[bulk0["what"] == "cwnd_bytes", "value"]
    assert cwnd.min() >= MSS and cwnd.max() > 10 * MSS
    states = set(bulk0.loc[bulk0["what"] == "cong_state", "value"].astype(int))
    assert 3 in states  # CA_RECOVERY after drops at the 30-packet queue
    rtt = bulk0.loc[bulk0["what"] == "rtt_s", "value"]
    assert rtt.min() >= BASE_RTT_S * 0.99
    # queueing adds at most the 30-packet queue; a delayed ACK (up to 200 ms) may stretch a few samples
    assert rtt.quantile(0.95) <= BASE_RTT_S + (QUEUE_PACKETS + 2) * 1500 * 8 / RATE_BPS
