"""The k=4 fat-tree (P1) in ns-3: config, addressing plan against the kernel testbed, one simulation.

One 6.2 s simulation (about 35 s of CPU, 10 s of it loading ns-3) holds three
experiments separated in time:

- 0-1 s, reachability: a 3 KB connection for every ordered host pair
  (16 x 15) on two planes, (s + d) mod 4 and (s + d + 2) mod 4, so each
  plane carries 112 or 128 pairs (480 connections), plus one per pair with
  ``cores=None`` (per-flow ECMP, 240 connections). Every one must complete,
  and FlowMonitor must see its data on the chosen plane's addresses.
- 1.0-2.6 s, core crossing: a 1 MB transfer h0 -> h12 (pods 0 and 3) pinned
  to core c in the window [1.0 + 0.4c, 1.4 + 0.4c); in its window core c's
  devices must carry it (>= 1 MB towards pod 3) and the other cores almost
  nothing.
- 2.6-6.2 s, RFC 6356 goal 2 (measured over 3.8-6.2 s): an LIA connection
  over all 4 cores h4 -> h8 and a single-path ``TcpLinuxReno`` h4 -> h12 share the 100 Mbit/s link h4 -> e10
  (the only bottleneck of both); the LIA connection should take about one
  TCP's share (ratio in [0.5, 2]; measured 1.50). Control: 4 *uncoupled*
  Reno subflows h5 -> h9 against one Reno h5 -> h13 take far more (ratio > 3
  and more than twice LIA's; measured 14.9).

  (With the two senders on different hosts and a shared 100 Mbit/s receiver
  link, the LIA sender's own 100 Mbit/s link paces it at exactly the line
  rate, the receiver link's queue never drains, and the TCP flow's
  retransmissions are dropped at every RTO: starvation by series bottlenecks
  of equal rate, not a test of LIA.)
"""

from __future__ import annotations

import ipaddress
import json
from collections import Counter

import numpy as np
import pytest

from tcpmodels.sim.config import (
    FAT_TREE_RTT_S,
    FatTree,
    FatTreeConnection,
    config_from_dict,
    config_hash,
    config_to_json,
    fat_tree_link,
)
from tcpmodels.sim.fattree import (
    connection_planes,
    core_name,
    ecmp_plane,
    fat_tree_links,
    fat_tree_routes,
    host_of_address,
    plane_address,
    plane_of_address,
)

SMALL_BYTES = 3000
PIN_BYTES = 1_000_000
PIN_START_S = 1.0
PIN_WINDOW_S = 0.4
GOAL2_START_S = 2.6
GOAL2_MEASURE = (3.8, 6.2)


def _connections() -> tuple[FatTreeConnection, ...]:
    conns = []
    pairs = [(s, d) for s in range(16) for d in range(16) if s != d]
    rng = np.random.default_rng(7)
    for s, d in pairs:  # every pair on two planes, every plane for 120 pairs
        for c in ((s + d) % 4, (s + d + 2) % 4):
            conns.append(FatTreeConnection(s, d, float(rng.uniform(0, 0.8)), SMALL_BYTES, cores=(c,), tag=f"reach{c}"))
    for s, d in pairs:
        conns.append(FatTreeConnection(s, d, float(rng.uniform(0, 0.8)), SMALL_BYTES, tag="ecmp"))
    for c in range(4):
        conns.append(FatTreeConnection(0, 12, PIN_START_S + PIN_WINDOW_S * c, PIN_BYTES, cores=(c,), tag=f"pin{c}"))
    conns += [
        FatTreeConnection(4, 8, GOAL2_START_S, None, cores=(0, 1, 2, 3), coupled=True, tag="lia"),
        FatTreeConnection(4, 12, GOAL2_START_S, None, cores=(1,), variant="TcpLinuxReno", tag="lia_tcp"),
        FatTreeConnection(5, 9, GOAL2_START_S, None, cores=(0, 1, 2, 3), variant="TcpLinuxReno", tag="unc"),
        FatTreeConnection(5, 13, GOAL2_START_S, None, cores=(2,), variant="TcpLinuxReno", tag="unc_tcp"),
    ]
    return tuple(conns)


CONFIG = FatTree(connections=_connections(), duration_s=GOAL2_MEASURE[1], seed=3, queue_bin_s=0.2)


# ---- configs and the addressing plan (no ns-3) ----


def test_fattree_config_json_round_trip_and_hash():
    back = config_from_dict(json.loads(config_to_json(CONFIG)))
    assert back == CONFIG
    assert config_hash(back) == config_hash(CONFIG)
    other = FatTree(connections=CONFIG.connections, duration_s=CONFIG.duration_s, seed=4, queue_bin_s=0.2)
    assert config_hash(other) != config_hash(CONFIG)


def test_fattree_defaults_are_p1_table1():
    ft = FatTree(connections=(FatTreeConnection(0, 1, 0.0, None),))
    assert (ft.host_link.rate_bps, ft.edge_agg_link.rate_bps, ft.agg_core_link.rate_bps) == (100e6, 200e6, 400e6)
    for link in (ft.host_link, ft.edge_agg_link, ft.agg_core_link):
        assert link.queue_bytes == 100_000
        # six links each way between pods: propagation RTT 0.5 ms
        assert 12 * link.delay_s == pytest.approx(FAT_TREE_RTT_S)
    assert fat_tree_link(1e9, rtt_s=1.2e-3).delay_s == pytest.approx(1e-4)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"src": 16}, r"src \[host index\] must be an integer in \[0, 15\]; got 16"),
        ({"dst": 0}, "src and dst must be different hosts; got both 0"),
        ({"start_s": -1.0}, r"start_s \[s\] must be in \[0, inf\); got -1.0"),
        ({"size_bytes": 0}, r"size_bytes \[bytes\] must be an integer >= 1 or None; got 0"),
        ({"cores": (0, 4)}, r"cores entries \[core index\] must be integers in \[0, 3\]; got 4"),
        ({"cores": (1, 1)}, "cores entries must be distinct"),
        ({"cores": ()}, "cores must be None or hold 1 to 4"),
        ({"variant": "TcpCubicX"}, "variant must be one of"),
    ],
)
def test_fattree_connection_rejects_bad_input(kwargs, match):
    base = {"src": 0, "dst": 5, "start_s": 0.0, "size_bytes": 1000}
    with pytest.raises(ValueError, match=match):
        FatTreeConnection(**{**base, **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ecmp": "packet"}, "ecmp must be 'flow' or 'none'; got 'packet'"),
        ({"connections": ()}, "needs at least one connection"),
        ({"pcap_hosts": (16,)}, r"pcap_hosts entries \[host index\] must be integers in \[0, 15\]"),
        ({"duration_s": 0.0}, r"duration_s \[s\] must be in \(0, inf\)"),
        ({"host_link": {"rate_bps": -1.0, "delay_s": 0.0}}, r"rate_bps \[bit/s\] must be in \(0, inf\)"),
    ],
)
def test_fattree_rejects_bad_input(kwargs, match):
    base = {"connections": (FatTreeConnection(0, 5, 0.0, None),)}
    with pytest.raises(ValueError, match=match):
        FatTree(**{**base, **kwargs})


def test_plane_addresses_match_the_kernel_testbed():
    from tcpmodels.testbed.topologies import fat_tree

    topo = fat_tree()
    for n in range(16):
        assert topo.meta["host_addrs"][f"h{n}"] == [plane_address(n, c) for c in range(4)]
        for c in range(4):
            assert plane_of_address(plane_address(n, c)) == c
            assert host_of_address(plane_address(n, c)) == n
    assert topo.meta["cores"] == [core_name(c) for c in range(4)]
    assert plane_of_address("10.100.0.1") == -1 and host_of_address("10.0.0.2") == -1


def test_links_and_routes_are_the_kernel_testbeds():
    """Same 48 links between the same nodes, and route for route the same (node, prefix, next hop)."""
    from tcpmodels.testbed.topologies import fat_tree

    topo = fat_tree()
    assert {frozenset((a, b)) for a, b, _ in fat_tree_links()} == {frozenset((ln.a, ln.b)) for ln in topo.links}
    owner = {}
    for ln in topo.links:
        for addr in ln.a_addrs:
            owner[addr.split("/")[0]] = ln.a
        for addr in ln.b_addrs:
            owner[addr.split("/")[0]] = ln.b
    kernel = {(r.node, str(ipaddress.IPv4Network(r.dst)), owner[r.via]) for r in topo.routes}
    ours = set(fat_tree_routes())
    assert len(ours) == len(fat_tree_routes()) == len(kernel)
    assert ours == kernel


def test_ecmp_plane_is_uniform_and_seeded():
    planes = [ecmp_plane(s, d, k, 0) for k in range(50) for s in range(16) for d in range(16) if s != d]
    counts = Counter(planes)
    assert set(counts) == {0, 1, 2, 3}
    expected = len(planes) / 4
    assert all(abs(v - expected) < 0.06 * expected for v in counts.values()), counts
    reseeded = [ecmp_plane(s, d, k, 1) for k in range(50) for s in range(16) for d in range(16) if s != d]
    assert 0.6 < np.mean(np.array(planes) != np.array(reseeded)) < 0.9  # about 3/4 move
    conns = tuple(FatTreeConnection(s, 15 - s, 0.0, None) for s in range(8)) + (
        FatTreeConnection(0, 9, 0.0, None, cores=(3, 1)),
    )
    assert connection_planes(FatTree(connections=conns, ecmp="none")) == [(0,)] * 8 + [(3, 1)]
    flow = connection_planes(FatTree(connections=conns, ecmp="flow", seed=5))
    assert flow == [(ecmp_plane(s, 15 - s, s, 5),) for s in range(8)] + [(3, 1)]


# ---- one simulation ----


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    from tcpmodels.sim.run import run_config

    return run_config(CONFIG, tmp_path_factory.mktemp("fattree"), timeout_s=1200)


@pytest.mark.sim
def test_every_pair_reaches_on_every_plane(result):
    apps = result.apps
    reach = apps[apps["tag"].str.startswith("reach") | (apps["tag"] == "ecmp")]
    assert len(reach) == 3 * 240
    pinned = reach[reach["tag"].str.startswith("reach")]
    # s + d is even for 112 ordered pairs (s != d) and odd for 128
    assert pinned["cores"].value_counts().sort_index().to_dict() == {"0": 112, "1": 128, "2": 112, "3": 128}
    missing = reach[~reach["completed"]]
    assert missing.empty, missing[["src", "dst", "cores"]].head().to_string()
    assert (reach["rx_bytes"] == SMALL_BYTES).all()
    # the bytes arrived from the chosen plane's source address
    for c in range(4):
        sel = reach[reach["cores"] == str(c)]
        assert (sel[f"rx_bytes_core{c}"] == SMALL_BYTES).all()
    # and FlowMonitor saw each data flow between the two hosts' addresses of that plane
    data = result.flows[result.flows["direction"] == "data"].merge(
        apps[["flow_index", "src", "dst", "cores"]], on="flow_index", suffixes=("_addr", "")
    )
    data = data[data["flow_index"].isin(reach["flow_index"])]
    assert len(data) == len(reach)
    assert (data["dst_addr"].map(plane_of_address).astype(str) == data["cores"]).all()
    assert (data["src_addr"].map(plane_of_address).astype(str) == data["cores"]).all()
    assert (data["src_addr"].map(host_of_address) == data["src"]).all()
    assert (data["dst_addr"].map(host_of_address) == data["dst"]).all()


@pytest.mark.sim
def test_ecmp_spreads_single_path_flows_over_the_cores(result):
    ecmp = result.apps[result.apps["tag"] == "ecmp"]
    counts = ecmp["cores"].value_counts()
    assert sorted(counts.index) == ["0", "1", "2", "3"]
    assert counts.min() >= 40 and counts.max() <= 80, counts.to_dict()  # 240 flows, 60 expected per core
    expected = [str(p[0]) for p in connection_planes(CONFIG)]
    assert (ecmp["cores"] == [expected[i] for i in ecmp["connection"]]).all()


@pytest.mark.sim
def test_a_pinned_transfer_crosses_its_core_only(result):
    q = result.queues
    apps = result.apps.set_index("tag")
    for c in range(4):
        assert apps.loc[f"pin{c}", "completed"] and apps.loc[f"pin{c}", "fct_s"] < PIN_WINDOW_S - 0.05
        lo = PIN_START_S + PIN_WINDOW_S * c
        win = q[(q["t_end_s"] > lo + 1e-6) & (q["t_end_s"] < lo + PIN_WINDOW_S + 1e-6)]
        for other in range(4):
            down = win[win["device"] == f"{core_name(other)}->a3{other // 2}"]["enqueued_bytes"].sum()
            up = win[win["device"] == f"a0{other // 2}->{core_name(other)}"]["enqueued_bytes"].sum()
            if other == c:
                assert down >= PIN_BYTES and up >= PIN_BYTES, (c, down, up)
            else:
                assert down + up < 0.01 * PIN_BYTES, (c, other, down, up)


@pytest.mark.sim
def test_lia_over_four_cores_takes_about_one_tcp_share(result):
    rate = result.throughput_bps(*GOAL2_MEASURE)
    by_tag = dict(zip(result.apps["tag"], result.apps["flow_index"]))
    lia, tcp = rate[by_tag["lia"]], rate[by_tag["lia_tcp"]]
    unc, unc_tcp = rate[by_tag["unc"]], rate[by_tag["unc_tcp"]]
    # both pairs share one 100 Mbit/s host link and fill it
    assert 85e6 < lia + tcp < 100e6 and 85e6 < unc + unc_tcp < 100e6
    print(f"LIA / TCP = {lia / tcp:.2f}, uncoupled / TCP = {unc / unc_tcp:.2f}")
    assert 0.5 < lia / tcp < 2.0, (lia, tcp)
    assert unc / unc_tcp > 3.0 and unc / unc_tcp > 2 * lia / tcp, (unc, unc_tcp)
    # the LIA connection used all four cores
    row = result.apps.set_index("tag").loc["lia"]
    assert all(row[f"rx_bytes_core{c}"] > 0 for c in range(4))
