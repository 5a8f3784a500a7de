"""Coupled multipath sender (RFC 6356 LIA over k ns-3 TCP subflows): configs, the C++ increase, one simulation.

One 20 s simulation (six disjoint paths, ~28 s wall on 2 cores of which ~13 s
loading ns-3) holds three independent experiments:

- paths 0 and 1 (20 Mbit/s, 24 ms base RTT, 1 % random loss drawn from the
  same random stream): one LIA subflow alone on path 0, one ``TcpLinuxReno``
  alone on path 1. alpha = 1 for one subflow, so LIA must *be* Reno: equal
  packets meet equal losses and the cwnd traces must be identical.
- path 2 (10 Mbit/s, 50-packet drop-tail queue): two LIA subflows of one
  connection against one Reno flow; path 3, the same with two *uncoupled*
  Reno subflows. RFC 6356 goal 2 says the multipath connection should take
  about one TCP's share: coupled total / TCP in [0.7, 1.4] (measured 1.06;
  0.84 with seed 2), uncoupled in [1.6, 2.6] (measured 2.06; 1.95 with seed 2).
- paths 4 and 5 (10 Mbit/s, 24 and 44 ms): a 4 MB transfer split over two LIA
  subflows, starting at 0.5 s (measured: done 1.78 s later, 2.05 / 1.95 MB).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tcpmodels.models.mptcp import lia_alpha, lia_increase_segments
from tcpmodels.sim.config import Link, Multipath, MultipathFlow, config_from_dict, config_hash, config_to_json
from tcpmodels.sim.run import run_config

MSS = 1448
FAST = Link(rate_bps=20e6, delay_s=0.010, queue_packets=100)
SHARED = Link(rate_bps=10e6, delay_s=0.010, queue_packets=50)
SIZE = 4_000_000
START_S = 0.5
WARMUP_S = 5.0
ACCESS_S = 0.001  # one-way delay of each access link (Multipath default)


def base_rtt_s(link: Link) -> float:
    return 2 * (2 * ACCESS_S + link.delay_s)


CONFIG = Multipath(
    paths=[FAST, FAST, SHARED, SHARED, SHARED, Link(rate_bps=10e6, delay_s=0.020, queue_packets=50)],
    loss_rates=[0.01, 0.01, 0, 0, 0, 0],
    connections=[
        MultipathFlow(paths=[0], coupled=True),  # 0: LIA, one subflow
        MultipathFlow(paths=[1], coupled=False),  # 1: TcpLinuxReno
        MultipathFlow(paths=[2, 2], coupled=True),  # 2: LIA x2 on one bottleneck
        MultipathFlow(paths=[2], coupled=False),  # 3: its competing TCP
        MultipathFlow(paths=[3, 3], coupled=False),  # 4: uncoupled Reno x2
        MultipathFlow(paths=[3], coupled=False),  # 5: its competing TCP
        MultipathFlow(paths=[4, 5], coupled=True, start_s=START_S, size_bytes=SIZE),  # 6: finite transfer
    ],
    duration_s=20.0,
    seed=1,
    queue_bin_s=0.5,
    trace_cwnd=True,
)


# ---- configs (no ns-3) ----


def test_lia_config_json_round_trip_and_hash():
    back = config_from_dict(json.loads(config_to_json(CONFIG)))
    assert back == CONFIG
    assert config_hash(back) == config_hash(CONFIG)
    assert config_hash(CONFIG) != config_hash(Multipath(paths=CONFIG.paths, connections=CONFIG.connections[:1]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"connections": [MultipathFlow(paths=[2])]}, "path index 2 out of range: the topology has 2 paths"),
        ({"loss_rates": [0.1]}, r"loss_rates needs one entry per path \(2\); got 1"),
        ({"loss_rates": [0.1, 1.0]}, r"loss_rates entries \[-\] must be in \[0, 1\)"),
        ({"connections": []}, "needs at least one connection"),
        ({"paths": []}, "needs at least one path"),
    ],
)
def test_lia_multipath_validation(kwargs, match):
    base = {"paths": [FAST, FAST], "connections": [MultipathFlow(paths=[0, 1])], **kwargs}
    with pytest.raises(ValueError, match=match):
        Multipath(**base)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"paths": []}, "needs at least one path"),
        ({"paths": [0, -1]}, r"path indices \(integers >= 0\); got -1"),
        ({"paths": [0], "variant": "TcpFoo"}, "variant must be one of"),
        ({"paths": [0], "size_bytes": 0}, r"size_bytes \[bytes\] must be an integer >= 1"),
        ({"paths": [0], "start_s": -1.0}, r"start_s \[s\] must be in \[0, inf\)"),
        ({"paths": [0], "coupled": "yes"}, "coupled must be True or False"),
    ],
)
def test_lia_flow_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultipathFlow(**kwargs)


# ---- the compiled increase against the formula model ----

PROBE = r"""
import json, sys
from tcpmodels.sim import _ns3
from tcpmodels.sim.multipath import load_lia
ns = _ns3.load()
mp = load_lia()
import cppyy
out = []
for k, (w, r) in enumerate(json.loads(sys.argv[1])):
    out.append(list(cppyy.gbl.ns3.LiaProbe(100 + k, [x * 1448.0 for x in w], r, 1448)))
print(json.dumps(out))
"""

CASES = [
    ([10], [0.05]),  # one subflow: Reno, 1/w
    ([10, 10], [0.1, 0.1]),  # alpha = 1/2
    ([40, 10], [0.02, 0.2]),
    ([5, 30, 12], [0.15, 0.03, 0.06]),
    ([100, 3], [0.01, 0.5]),  # the uncoupled cap binds on the small window
]


@pytest.mark.sim
def test_lia_compiled_increase_matches_rfc6356_model():
    """alpha and the per-ACK increase of ns3::TcpLia equal tcpmodels.models.mptcp's to 1e-9."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(CASES)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for (w, r), res in zip(CASES, got):
        assert res[0] == pytest.approx(lia_alpha(w, r), rel=1e-9)
        expected = np.atleast_1d(lia_increase_segments(np.array(w, float), np.array(r, float))) * MSS
        np.testing.assert_allclose(res[1:], expected, rtol=1e-9)
    assert got[0][1] == pytest.approx(MSS / 10)  # one subflow: Reno's MSS/w per ACK


# ---- the simulation ----


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_config(CONFIG, tmp_path_factory.mktemp("lia"), timeout_s=900)


def _thr(run) -> np.ndarray:
    return run.throughput_bps(WARMUP_S).to_numpy()


@pytest.mark.sim
def test_lia_subflows_take_their_own_paths(run):
    """Every path's bottleneck queue carried the bytes its subflows delivered, and no more than 1 % extra."""
    apps, q = run.apps, run.queues
    for p in range(len(CONFIG.paths)):
        delivered = apps.loc[apps["path"] == p, "rx_bytes"].sum()
        enq = q.loc[q["device"] == f"path{p}", "enqueued_bytes"].sum()
        assert delivered > 1e6, p
        # each packet adds 52 bytes of headers; losses and retransmissions add a few more
        assert delivered * 1500 / MSS <= enq <= delivered * 1500 / MSS * 1.05, (p, delivered, enq)


@pytest.mark.sim
def test_lia_one_subflow_is_reno(run):
    """Same loss pattern, alpha = 1: the LIA subflow's cwnd trace and bytes equal TcpLinuxReno's exactly."""
    apps, c = run.apps, run.cwnd
    lia, reno = apps[apps["connection"] == 0].iloc[0], apps[apps["connection"] == 1].iloc[0]
    assert lia["variant"] == "TcpLia" and reno["variant"] == "TcpLinuxReno"
    cw = c[c["what"] == "cwnd_bytes"]
    a = cw[cw["flow_index"] == lia["flow_index"]][["t_s", "value"]].to_numpy()
    b = cw[cw["flow_index"] == reno["flow_index"]][["t_s", "value"]].to_numpy()
    assert len(a) > 500  # many windows, several losses
    states = c[(c["flow_index"] == lia["flow_index"]) & (c["what"] == "cong_state")]["value"]
    assert (states == 3).sum() >= 10  # >= 10 loss recoveries
    np.testing.assert_array_equal(a, b)
    assert lia["rx_bytes"] == reno["rx_bytes"]


@pytest.mark.sim
def test_lia_rfc6356_goal2_one_tcp_share_on_a_shared_bottleneck(run):
    """Two LIA subflows take about one TCP's share next to a Reno flow; two uncoupled Reno subflows take two."""
    apps, thr = run.apps, _thr(run)
    by_conn = {int(k): thr[apps.index[apps["connection"] == k]].sum() for k in (2, 3, 4, 5)}
    coupled = by_conn[2] / by_conn[3]
    uncoupled = by_conn[4] / by_conn[5]
    assert 0.7 <= coupled <= 1.4, by_conn
    assert 1.6 <= uncoupled <= 2.6, by_conn
    assert uncoupled > 1.4 * coupled
    ceiling = SHARED.rate_bps * MSS / (MSS + 52)
    for conns in ((2, 3), (4, 5)):
        assert sum(by_conn[k] for k in conns) >= 0.9 * ceiling  # the bottleneck stays full either way
    assert apps.loc[apps["connection"] == 2, "rx_bytes"].min() > 0.15 * apps.loc[apps["connection"] == 3, "rx_bytes"].iloc[0]


@pytest.mark.sim
def test_lia_finite_transfer_split_over_two_paths(run):
    apps = run.apps
    subs = apps[apps["connection"] == 6].sort_values("subflow")
    s0, s1 = subs.iloc[0], subs.iloc[1]
    assert subs["completed"].all() and (subs["connection_size_bytes"] == SIZE).all()
    # exactly S bytes arrived, over both paths, all that was handed to each subflow
    assert subs["rx_bytes"].sum() == SIZE == s0["connection_rx_bytes"]
    assert (subs["rx_bytes"] == subs["handed_bytes"]).all()
    assert subs["rx_bytes"].min() >= 0.25 * SIZE
    # subflow 1 sends its SYN when subflow 0's handshake completes (MP_JOIN), one path-0 RTT after the start
    assert s0["start_s"] == START_S
    assert s1["start_s"] == pytest.approx(s0["connected_s"], abs=1e-9)
    assert s1["start_s"] - START_S >= base_rtt_s(CONFIG.paths[4])
    assert s1["connected_s"] - s1["start_s"] >= base_rtt_s(CONFIG.paths[5])
    # completion: no faster than both links together allow, faster than one path could
    fct = s0["fct_s"]
    both = SIZE * 8 * (MSS + 52) / MSS / (CONFIG.paths[4].rate_bps + CONFIG.paths[5].rate_bps)
    assert base_rtt_s(CONFIG.paths[4]) + both <= fct < 2 * both, fct
    # the bins agree: the last byte arrives in the bin holding the completion time
    bins = run.bins[run.bins["flow_index"].isin(subs["flow_index"])]
    assert bins["rx_bytes"].sum() == SIZE
    t_last = bins["t_end_s"].max()
    assert t_last - CONFIG.queue_bin_s < START_S + fct <= t_last + 1e-9
