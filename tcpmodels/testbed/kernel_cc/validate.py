"""Validation of the tm_* congestion controls on the testbed (issue 15, item 4); writes a dataset.

``python -m tcpmodels.testbed.kernel_cc.validate --reps 3 --out data/datasets/kernel_coupled_cc``
runs, with the compared variants interleaved within each repetition and the host lock held
per experiment:

* ``reno``: kernel ``reno`` vs ``tm_reno``, one path with random loss: rate and retransmits;
* ``cubic``: kernel ``cubic`` vs ``tm_cubic_x`` (x = 1): rate, and K observed from the cwnd
  trajectory (TCP_INFO every 20 ms) beside RFC 9438's K for the observed windows (:func:`observed_k`);
* ``shared``: one MPTCP connection with two subflows over one lossy link beside one TCP flow,
  MPTCP rate / TCP rate for tm_lia, tm_olia and uncoupled (kernel reno on each subflow);
* ``disjoint``: two paths with 0.2 % and 2 % loss: share of bytes on the less lossy path;
* ``alpha``: in-kernel LIA alpha vs ``lia_alpha`` on the same map snapshot.

Rows go to ``<out>.parquet`` (one per run or snapshot) and provenance to ``<out>.json``
(commit, kernel, tool versions, parameters); cwnd samples of one run per coupled variant
to ``<out>_cwnd.parquet``.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.testbed import kernel_cc
from tcpmodels.models.mptcp import lia_alpha
from tcpmodels.testbed import Link, MptcpEndpoint, Node, PathSpec, Testbed, Topology, dumbbell, single_link, two_path
from tcpmodels.testbed import workload as wl
from tcpmodels.testbed.hostlock import host_lock

__all__ = ["shared_link", "observed_k", "run_validation", "main"]


def shared_link(*, rate_bps: float, rtt_s: float, loss_rate: float) -> Topology:
    """Client ``c`` and server ``s`` on one link; the server has two addresses (10.0.1.2 and
    10.0.1.3, the second announced to MPTCP), so an MPTCP connection gets two subflows that share
    the link with any TCP flow to 10.0.1.2."""
    link = Link(name="p0", a="c", b="s", a_addrs=("10.0.1.1/24",), b_addrs=("10.0.1.2/24", "10.0.1.3/24"),
                rate_bps=rate_bps, delay_s=rtt_s / 2, loss_rate=loss_rate)
    return Topology(name="shared_link",
                    nodes=(Node(name="c", mptcp_subflows=1, mptcp_add_addr_accepted=1),
                           Node(name="s", mptcp_subflows=1, mptcp_add_addr_accepted=1)),
                    links=(link,), endpoints=(MptcpEndpoint(node="s", addr="10.0.1.3", flags="signal", link="p0"),),
                    meta={"server_addr": "10.0.1.2"})


def observed_k(samples: list[dict], c: float = 0.4) -> list[dict]:
    """K observed in a cwnd trajectory (TCP_INFO samples), one entry per congestion epoch.

    An epoch starts when a loss recovery ends (``ca_state`` back to Open after Recovery/Loss),
    with ``cwnd_epoch`` the window then, and ends when the next recovery starts. The cubic curve is flattest at t = K, where it reaches its origin W_max (after
    fast convergence the origin is below the window at the loss, so W_max is read from the
    trajectory): the plateau is the longest run of samples within one segment of the epoch's
    most frequent window, and K observed is the time from the reduction to the plateau's middle
    (epochs that end before the window grows past the plateau are left out).
    The model value is RFC 9438's ``K = cbrt((W_max - cwnd_epoch) / C)`` for those two windows. [s]
    """
    t = np.array([s["t_s"] for s in samples])
    w = np.array([s["cwnd_segments"] for s in samples], dtype=float)
    state = np.array([s["ca_state"] for s in samples])
    starts = [i for i in range(1, len(w)) if state[i] == 0 and state[i - 1] != 0]
    ends = [i for i in range(1, len(w)) if state[i] != 0 and state[i - 1] == 0]
    out = []
    for start in starts:
        end = next((e for e in ends if e > start), None)
        if end is None:
            continue
        seg_t, seg_w = t[start:end], w[start:end]
        if len(seg_w) < 20:
            continue
        values, counts = np.unique(seg_w, return_counts=True)
        plateau = values[np.argmax(counts)]
        near = np.abs(seg_w - plateau) <= 1
        if plateau <= seg_w[0] + 2 or not near.any():
            continue
        idx = np.nonzero(near)[0]
        if seg_w[-1] <= plateau + 1:  # the epoch ended before the curve left its plateau: K not seen
            continue
        mid_s = 0.5 * (seg_t[idx[0]] + seg_t[idx[-1]])
        out.append({"w_max_segments": float(plateau), "cwnd_epoch_segments": float(seg_w[0]),
                    "k_observed_s": float(mid_s - seg_t[0]),
                    "k_model_s": float(np.cbrt((plateau - seg_w[0]) / c))})
    return out


def _bulk(tb, node, dst, cc, duration_s, *, mptcp=False, interval_s=0.1, flow_id=1, start_s=0.0):
    return wl.bulk_flow(flow_id=flow_id, dst=dst, duration_s=duration_s, cc=cc, mptcp=mptcp,
                        sample_interval_s=interval_s, start_s=start_s)


def _single(tb, cc, duration_s, interval_s):
    server = wl.start_server(tb, "s")
    (rec,) = wl.run_flows(tb, "c", [_bulk(tb, "c", "10.0.1.2", cc, duration_s, interval_s=interval_s)])
    time.sleep(1.0)  # the server writes its record (with the samples) after the client has closed
    (srec,) = server.stop()
    return rec, srec


def _per_subflow_bytes(srec: dict) -> dict[str, int]:
    last: dict[str, int] = {}
    for s in srec.get("samples", []):
        key = s.get("local", str(s.get("subflow")))
        last[key] = max(last.get(key, 0), s["bytes_acked"])
    return last


def run_validation(*, reps: int = 3, duration_s: float = 10.0, log=print) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run every experiment ``reps`` times (variants interleaved); return (rows, cwnd samples)."""
    rows, cwnd_rows = [], []
    # reno vs tm_reno
    with host_lock(holder="kernel_cc.validate reno"), kernel_cc.congestion_control("tm_reno"), \
            Testbed(single_link(PathSpec(rate_bps=100e6, rtt_s=0.020, loss_rate=0.01))) as tb:
        for rep in range(reps):
            for cc in ("reno", "tm_reno"):
                rec, srec = _single(tb, cc, duration_s, 0.5)
                rows.append({"experiment": "reno", "variant": cc, "rep": rep, "rate_bps": rec["rate_bps"],
                             "retransmits": srec["samples"][-1]["total_retrans"], "cc_effective": srec["cc_effective"]})
                log(rows[-1])
    # cubic vs tm_cubic_x (x = 1)
    # (rate limiter on a router, not on the sender's host: there TCP small queues keep the
    # sender from filling the buffer, so it never loses and is never cwnd-limited)
    with host_lock(holder="kernel_cc.validate cubic"), kernel_cc.congestion_control("tm_cubic_x", {"reading": "none"}), \
            Testbed(dumbbell(access_rtts_s=[0.1], bottleneck_rate_bps=20e6, bottleneck_buffer_bytes=100_000)) as tb:
        for rep in range(reps):
            for cc in ("cubic", "tm_cubic_x"):
                server = wl.start_server(tb, "s0")
                (rec,) = wl.run_flows(tb, "d", [_bulk(tb, "d", "10.1.0.1", cc, 4 * duration_s, interval_s=0.02)])
                time.sleep(1.0)
                (srec,) = server.stop()
                ks = observed_k(srec["samples"])
                rows.append({"experiment": "cubic", "variant": cc, "rep": rep, "rate_bps": rec["rate_bps"],
                             "retransmits": srec["samples"][-1]["total_retrans"], "cc_effective": srec["cc_effective"],
                             "k_observed_s": float(np.median([k["k_observed_s"] for k in ks])) if ks else np.nan,
                             "k_model_s": float(np.median([k["k_model_s"] for k in ks])) if ks else np.nan,
                             "k_ratio": float(np.median([k["k_observed_s"] / k["k_model_s"] for k in ks])) if ks else np.nan,
                             "k_cycles": len(ks)})
                log(rows[-1])
    # coupled: shared bottleneck, disjoint paths, alpha snapshots
    variants = ("tm_lia", "tm_olia", "reno")
    with host_lock(holder="kernel_cc.validate coupled"), kernel_cc.congestion_control("tm_lia"), \
            kernel_cc.congestion_control("tm_olia"):
        with Testbed(shared_link(rate_bps=200e6, rtt_s=0.020, loss_rate=0.005)) as tb:
            server = wl.start_server(tb, "s", mptcp=True)
            for rep in range(reps):
                for cc in variants:
                    flows = [_bulk(tb, "c", "10.0.1.2", cc, duration_s, mptcp=True, flow_id=1),
                             _bulk(tb, "c", "10.0.1.2", "reno",
                                   duration_s, flow_id=2)]
                    recs = {r["flow_id"]: r for r in wl.run_flows(tb, "c", flows)}
                    ratio = recs[1]["rate_bps"] / recs[2]["rate_bps"]
                    rows.append({"experiment": "shared", "variant": cc, "rep": rep, "rate_bps": recs[1]["rate_bps"],
                                 "tcp_rate_bps": recs[2]["rate_bps"], "ratio_mptcp_tcp": ratio,
                                 "subflows": (recs[1].get("mptcp_subflows") or 0) + 1})
                    log(rows[-1])
            server.stop()
        topo = two_path([PathSpec(rate_bps=200e6, rtt_s=0.020, loss_rate=0.002),
                         PathSpec(rate_bps=200e6, rtt_s=0.020, loss_rate=0.02)])
        with Testbed(topo) as tb:
            for rep in range(reps):
                for cc in variants:
                    server = wl.start_server(tb, "s", mptcp=True)
                    popen = wl.launch_flows(tb, "c", [_bulk(tb, "c", "10.0.1.2", cc, duration_s, mptcp=True,
                                                            interval_s=0.1)])
                    snaps = []
                    if cc == "tm_lia":
                        time.sleep(duration_s / 2)
                        for _ in range(5):
                            snaps += [c for c in kernel_cc.dump_connections("tm_lia") if len(c["subflows"]) == 2]
                            time.sleep(0.3)
                    (rec,) = wl.collect_flows(popen, duration_s + 60)
                    time.sleep(1.0)
                    (srec,) = server.stop()
                    by = _per_subflow_bytes(srec)
                    low = sum(v for k, v in by.items() if k.startswith("10.0.1."))
                    share = low / max(sum(by.values()), 1)
                    rows.append({"experiment": "disjoint", "variant": cc, "rep": rep, "rate_bps": rec["rate_bps"],
                                 "share_less_lossy": share})
                    log(rows[-1])
                    for c in snaps:
                        w = [s["cwnd_segments"] for s in c["subflows"]]
                        r = [s["srtt_s"] for s in c["subflows"]]
                        model = float(lia_alpha(w, r))
                        rows.append({"experiment": "alpha", "variant": cc, "rep": rep, "alpha_kernel": c["alpha"],
                                     "alpha_model": model, "alpha_rel_error": c["alpha"] / model - 1,
                                     "cwnd_segments": json.dumps(w), "srtt_s": json.dumps(r)})
                    if rep == 0:
                        for s in srec["samples"]:
                            cwnd_rows.append({"variant": cc, "t_s": s["t_s"], "subflow": s.get("local", ""),
                                              "cwnd_segments": s["cwnd_segments"], "srtt_s": s["srtt_s"]})
    return pd.DataFrame(rows), pd.DataFrame(cwnd_rows)


def _provenance(reps: int, duration_s: float) -> dict:
    from tcpmodels.testbed._system import tool_versions

    def first(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return None

    repo = Path(__file__).resolve().parents[2]
    return {
        "commit": first(["git", "-C", str(repo), "rev-parse", "HEAD"]),
        "kernel": platform.release(),
        "tools": {**tool_versions(), "clang": first(["clang", "--version"]), "bpftool": first(["bpftool", "version"])},
        "parameters": {"reps": reps, "duration_s": duration_s,
                       "reno": "100 Mbit/s, 20 ms, 1 % random loss",
                       "cubic": "dumbbell, one sender, 20 Mbit/s bottleneck on a router, 100 ms, 100 kB drop-tail, 4 x duration, TCP_INFO every 20 ms",
                       "shared": "one link 200 Mbit/s, 20 ms, 0.5 % loss; MPTCP (2 subflows) + 1 TCP reno",
                       "disjoint": "two paths 200 Mbit/s, 20 ms, loss 0.2 % and 2 %"},
        "created_unix_s": time.time(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.testbed.kernel_cc.validate", description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration-s", type=float, default=10.0)
    parser.add_argument("--out", default="data/datasets/kernel_coupled_cc", help="path prefix of the outputs")
    args = parser.parse_args(argv)
    reason = kernel_cc.unavailable_reason()
    if reason:
        print(f"kernel_cc validation skipped: {reason}")
        return 77
    rows, cwnd = run_validation(reps=args.reps, duration_s=args.duration_s)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows.to_parquet(out.with_suffix(".parquet"), index=False)
    cwnd.to_parquet(out.parent / (out.name + "_cwnd.parquet"), index=False)
    out.with_suffix(".json").write_text(json.dumps(_provenance(args.reps, args.duration_s), indent=1) + "\n")
    summary = rows.groupby(["experiment", "variant"]).agg("median", numeric_only=True)
    print(summary.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
