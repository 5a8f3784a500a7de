"""The runs: the tm_* congestion controls beside the kernel's on the testbed, and their ns-3 counterpart."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.experiments.kernel_coupled_cc.observe import X_EXPONENT, X_OF_RTT, observed_k, shared_link
from tcpmodels.models.cubic import kozu_k_s
from tcpmodels.models.mptcp import lia_alpha
from tcpmodels.testbed import PathSpec, Testbed, dumbbell, kernel_cc, single_link, two_path
from tcpmodels.testbed import workload as wl
from tcpmodels.testbed.hostlock import host_lock
from tcpmodels.testbed.kernel_cc.arithmetic import olia_increase_segments

__all__ = ["run_validation", "ns3_shared_link"]


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


def _snapshots(cc: str, duration_s: float, launched_s: float | None = None) -> tuple[list[dict], list[dict]]:
    """Five reads of the per-connection map, 0.3 s apart, from the middle of a run, and one more
    1 s before its end (``launched_s``: when the flows were launched, ``time.time()``), for the
    connections with two subflows: (middle reads, last read)."""
    launched_s = time.time() if launched_s is None else launched_s
    time.sleep(max(0.0, launched_s + duration_s / 2 - time.time()))
    snaps = []
    for _ in range(5):
        snaps += [c for c in kernel_cc.dump_connections(cc) if len(c["subflows"]) == 2]
        time.sleep(0.3)
    time.sleep(max(0.0, launched_s + duration_s - 1.0 - time.time()))
    last = [c for c in kernel_cc.dump_connections(cc) if len(c["subflows"]) == 2]
    return snaps, last


def _snapshot_rows(cc: str, snaps: list[dict], rep: int, setting: str) -> list[dict]:
    """One row per calc record (a slot's last alpha or increase with the inputs it was computed
    from, :func:`tcpmodels.testbed.kernel_cc.dump_connections`) of two or more subflows: the
    in-kernel value beside the model evaluated on those inputs, and whether the read was
    ``consistent`` (torn reads are kept, marked, and left out of the goal (c) test)."""
    rows = []
    for c in snaps:
        for k in c.get("calc", []):
            if len(k["slots"]) < 2 or k["slot"] not in k["slots"]:
                continue
            ident = {"setting": setting, "token": c.get("token"), "slot": k["slot"], "seq": k["seq"],
                     "consistent": k["consistent"], "snapshot_method": "seqcount",
                     "age_s": (c["read_ns"] - k["updated_ns"]) * 1e-9 if k["updated_ns"] else np.nan}
            w, r = k["cwnd_segments"], k["srtt_s"]
            if cc == "tm_olia":
                rows.append({**_olia_calc_row(k, rep), **ident})
                continue
            model = float(lia_alpha(w, r))
            rows.append({"experiment": "alpha", "variant": cc, "rep": rep, "alpha_kernel": k["alpha"],
                         "alpha_model": model, "alpha_rel_error": k["alpha"] / model - 1,
                         "cwnd_segments": json.dumps(w), "srtt_s": json.dumps(r), **ident})
    return rows


def _olia_calc_row(k: dict, rep: int) -> dict:
    """OLIA's in-kernel increase of the slot that computed it beside
    :func:`~tcpmodels.testbed.kernel_cc.arithmetic.olia_increase_segments` on the windows, RTTs and
    l that computation used. The error is relative to the increase and to the size of its terms
    ``w_i/(r_i^2 (sum w/r)^2) + |alpha_i|/w_i`` (the increase itself may be near 0 when alpha_i < 0)."""
    w = np.array(k["cwnd_segments"], dtype=float)
    r = np.array(k["srtt_s"], dtype=float)
    ell = np.array(k["ell_segments"], dtype=float)
    i = k["slots"].index(k["slot"])
    model = olia_increase_segments(w, r, ell)
    first = (w / r**2) / np.sum(w / r) ** 2
    alpha_i = (model[i] - first[i]) * w[i]
    got = k["incr_segments"]
    return {"experiment": "olia_incr", "variant": "tm_olia", "rep": rep, "incr_kernel": got,
            "incr_model": float(model[i]), "incr_rel_error": float(got / model[i] - 1) if model[i] else np.nan,
            "incr_rel_error_of_terms": float((got - model[i]) / (first[i] + abs(alpha_i) / w[i])),
            "olia_alpha_model": float(alpha_i),
            "cwnd_segments": json.dumps(w.tolist()), "srtt_s": json.dumps(r.tolist()),
            "ell_segments": json.dumps(ell.tolist())}


def _timeout_rows(cc: str, last: list[dict], rep: int, setting: str) -> list[dict]:
    """Per connection of the last map read of a run: each subflow's loss events (ssthresh calls),
    retransmission timeouts (set_state to TCP_CA_Loss), delivered segments and window; the
    subflow with fewer delivered segments is the smaller one."""
    rows = []
    for c in last:
        subs = sorted(c["subflows"], key=lambda s: s["delivered_segments"])
        rows.append({"experiment": "timeouts", "variant": cc, "rep": rep, "setting": setting, "token": c["token"],
                     "loss_events": json.dumps([s["loss_events"] for s in subs]),
                     "rto_events": json.dumps([s["rto_events"] for s in subs]),
                     "delivered_segments": json.dumps([s["delivered_segments"] for s in subs]),
                     "cwnd_segments": json.dumps([s["cwnd_segments"] for s in subs]),
                     "smaller_loss_events": subs[0]["loss_events"], "smaller_rto_events": subs[0]["rto_events"],
                     "larger_loss_events": subs[-1]["loss_events"], "larger_rto_events": subs[-1]["rto_events"]})
    return rows


class _LockBatches:
    """The host lock held across consecutive units of timed work until ``batch_s`` have passed
    (then let go, so another campaign's turn comes), taken again by the next unit."""

    def __init__(self, batch_s: float, holder: str = "experiments.kernel_coupled_cc", timeout_s: float = 3600.0,
                 path: str | Path | None = None):
        self.batch_s, self.holder, self.timeout_s, self.path = batch_s, holder, timeout_s, path
        self._cm, self._t0 = None, 0.0

    @contextmanager
    def unit(self, what: str) -> Iterator[None]:
        if self._cm is None:
            self._cm = host_lock(timeout_s=self.timeout_s, holder=f"{self.holder} {what}", path=self.path)
            self._cm.__enter__()
            self._t0 = time.time()
        try:
            yield
        except BaseException:
            self.release()
            raise
        if time.time() - self._t0 >= self.batch_s:
            self.release()

    def release(self) -> None:
        if self._cm is not None:
            cm, self._cm = self._cm, None
            cm.__exit__(None, None, None)


def run_validation(*, reps: int = 3, duration_s: float = 10.0, reno_reps: int = 8, reno_duration_s: float = 20.0,
                   reading_reps: int = 1, cubic_reps: int | None = None,
                   experiments: Sequence[str] = ("reno", "cubic", "coupled"), seed: int = 0, first_rep: int = 0,
                   until_unix_s: float | dict[str, float] | None = None, lock_batch_s: float = 240.0,
                   log: Callable[[dict], object] = print,
                   on_cwnd: Callable[[list[dict]], object] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the validation experiments on the testbed, in the order given.

    Repetitions are independent: each reno pair and each coupled repetition gets its own testbed
    whose loss generators are seeded ``seed + rep`` (so both variants of a reno pair draw from the
    same seed: common random numbers within a pair, different ones between pairs); which reno
    (cubic) variant goes first alternates and the order of the coupled variants rotates with the
    repetition. The host lock is held across consecutive units of timed work (a reno pair, a
    cubic pair or run, a coupled repetition) until ``lock_batch_s`` have passed, then let go, so
    runs of other campaigns interleave in turns of about the length of theirs.

    Parameters
    ----------
    reps : int
        Repetitions of the coupled experiments (shared, disjoint; each with all three variants). [-]
    duration_s : float
        Length of a coupled run; cubic runs last 4 times as long. [s]
    reno_reps : int
        Pairs of reno and tm_reno runs. [-]
    reno_duration_s : float
        Length of a reno run. [s]
    reading_reps : int
        Runs of tm_cubic_x with each reading of x(RTT) (multiply, divide). [-]
    cubic_reps : int, optional
        Pairs of cubic and tm_cubic_x (x = 1) runs; ``None``: ``reps``. [-]
    experiments : sequence of str
        Which of ``reno``, ``cubic`` (with the readings) and ``coupled`` (shared, disjoint,
        alpha, olia_incr) to run, in this order.
    seed : int
        Seed of repetition 0's loss generators (repetition ``rep`` gets ``seed + rep``). [-]
    first_rep : int
        Number of the first reno pair and coupled repetition (a later invocation continues an
        earlier one's numbering, and so its seeds). [-]
    until_unix_s : float or dict, optional
        Wall-clock limit (Unix time), one for all or per experiment (``{"coupled": t1, "reno": t2}``):
        a reno pair or coupled repetition is not started (checked again once the host lock is
        held) unless the longest one so far (without waiting for the lock) would end before it. [s]
    lock_batch_s : float
        How long the host lock is held across units before it is let go. [s]
    log : callable
        Called with each row as it is measured (a record sink).
    on_cwnd : callable, optional
        Called with the cwnd rows of each disjoint run that has them.

    Returns
    -------
    tuple of pandas.DataFrame
        (rows: one per run or map snapshot, see the module docstring; cwnd samples of the first
        disjoint run of each variant, ``t_s`` [s], ``cwnd_segments``, ``srtt_s`` [s]).
    """
    rows, cwnd_rows = [], []
    longest = {"reno": 0.0, "coupled": 0.0}
    lock = _LockBatches(lock_batch_s)

    def emit(row):
        rows.append(row)
        log(row)

    def time_left(kind):
        limit = until_unix_s.get(kind) if isinstance(until_unix_s, dict) else until_unix_s
        return limit is None or time.time() + longest[kind] < limit

    def run_reno():
        # reno vs tm_reno (longer runs, more repetitions: 6 s runs scatter by 15-20 %)
        with kernel_cc.congestion_control("tm_reno"):
            for rep in range(first_rep, first_rep + reno_reps):
                if not time_left("reno"):
                    break
                with lock.unit(f"reno pair {rep}"):
                    if not time_left("reno"):    # checked again after waiting for the lock
                        break
                    t0 = time.time()
                    with Testbed(single_link(PathSpec(rate_bps=100e6, rtt_s=0.020, loss_rate=0.01)), seed=seed + rep) as tb:
                        for cc in (("reno", "tm_reno") if rep % 2 == 0 else ("tm_reno", "reno")):
                            rec, srec = _single(tb, cc, reno_duration_s, 0.5)
                            emit({"experiment": "reno", "variant": cc, "rep": rep, "seed": seed + rep,
                                  "rate_bps": rec["rate_bps"], "retransmits": srec["samples"][-1]["total_retrans"],
                                  "cc_effective": srec["cc_effective"]})
                    longest["reno"] = max(longest["reno"], time.time() - t0)

    # cubic vs tm_cubic_x (x = 1), then tm_cubic_x with each reading of x(RTT)
    # (rate limiter on a router, not on the sender's host: there TCP small queues keep the
    # sender from filling the buffer, so it never loses and is never cwnd-limited)
    cubic_topo = dumbbell(access_rtts_s=[0.1], bottleneck_rate_bps=20e6, bottleneck_buffer_bytes=100_000)

    def cubic_run(tb, cc, rep, reading):
        server = wl.start_server(tb, "s0")
        (rec,) = wl.run_flows(tb, "d", [_bulk(tb, "d", "10.1.0.1", cc, 4 * duration_s, interval_s=0.02)])
        time.sleep(1.0)
        (srec,) = server.stop()
        ks = observed_k(srec["samples"], c=0.4, beta_cubic=0.7)
        for k in ks:  # the model's K for the observed windows: kozu_k_s of the W_max whose reduction is W_max - cwnd_epoch
            k["k_model_reading_s"] = float(kozu_k_s((k["w_max_segments"] - k["cwnd_epoch_segments"]) / 0.3,
                                                    k["min_rtt_s"], reading=reading, x_of_rtt=X_OF_RTT,
                                                    c=0.4, beta_cubic=0.7))
        emit({"experiment": "cubic" if reading == "none" else f"cubic_{reading}", "variant": cc, "rep": rep,
              "reading": reading, "rate_bps": rec["rate_bps"],
              "retransmits": srec["samples"][-1]["total_retrans"], "cc_effective": srec["cc_effective"],
              "k_observed_s": float(np.median([k["k_observed_s"] for k in ks])) if ks else np.nan,
              "k_model_s": float(np.median([k["k_model_reading_s"] for k in ks])) if ks else np.nan,
              "k_ratio": float(np.median([k["k_observed_s"] / k["k_model_reading_s"] for k in ks])) if ks else np.nan,
              "k_epochs": json.dumps(ks), "k_cycles": len(ks)})

    def run_cubic():
        with kernel_cc.congestion_control("tm_cubic_x", {"reading": "none"}):
            for rep in range(reps if cubic_reps is None else cubic_reps):
                with lock.unit(f"cubic pair {rep}"), Testbed(cubic_topo) as tb:
                    for cc in (("cubic", "tm_cubic_x") if rep % 2 == 0 else ("tm_cubic_x", "cubic")):
                        cubic_run(tb, cc, rep, "none")
        for reading in ("multiply", "divide"):
            with kernel_cc.congestion_control("tm_cubic_x", {"reading": reading, "x_exponent": X_EXPONENT}):
                for rep in range(reading_reps):
                    with lock.unit(f"cubic {reading} {rep}"), Testbed(cubic_topo) as tb:
                        cubic_run(tb, "tm_cubic_x", rep, reading)

    def run_coupled():
        # shared bottleneck, disjoint paths, alpha snapshots
        variants = ("tm_lia", "tm_olia", "reno")
        shared_topo = shared_link(rate_bps=200e6, rtt_s=0.020, loss_rate=0.005)
        disjoint_topo = two_path([PathSpec(rate_bps=200e6, rtt_s=0.020, loss_rate=0.002),
                                  PathSpec(rate_bps=200e6, rtt_s=0.020, loss_rate=0.02)])
        with kernel_cc.congestion_control("tm_lia"), kernel_cc.congestion_control("tm_olia"):
            for rep in range(first_rep, first_rep + reps):
                if not time_left("coupled"):
                    break
                order = variants[rep % 3:] + variants[:rep % 3]
                with lock.unit(f"coupled rep {rep}"):
                    if not time_left("coupled"):    # checked again after waiting for the lock
                        break
                    t0 = time.time()
                    with Testbed(shared_topo, seed=seed + rep) as tb:
                        server = wl.start_server(tb, "s", mptcp=True)
                        for cc in order:
                            flows = [_bulk(tb, "c", "10.0.1.2", cc, duration_s, mptcp=True, flow_id=1),
                                     _bulk(tb, "c", "10.0.1.2", "reno", duration_s, flow_id=2)]
                            launched = time.time()
                            popen = wl.launch_flows(tb, "c", flows)
                            snaps, last = _snapshots(cc, duration_s, launched) if cc in ("tm_lia", "tm_olia") else ([], [])
                            recs = {r["flow_id"]: r for r in wl.collect_flows(popen, duration_s + 60)}
                            ratio = recs[1]["rate_bps"] / recs[2]["rate_bps"]
                            emit({"experiment": "shared", "variant": cc, "rep": rep, "seed": seed + rep,
                                  "rate_bps": recs[1]["rate_bps"], "tcp_rate_bps": recs[2]["rate_bps"],
                                  "ratio_mptcp_tcp": ratio, "subflows": (recs[1].get("mptcp_subflows") or 0) + 1})
                            for r in _snapshot_rows(cc, snaps, rep, "shared") + _timeout_rows(cc, last, rep, "shared"):
                                emit(r)
                        server.stop()
                    with Testbed(disjoint_topo, seed=seed + rep) as tb:
                        for cc in order:
                            server = wl.start_server(tb, "s", mptcp=True)
                            launched = time.time()
                            popen = wl.launch_flows(tb, "c", [_bulk(tb, "c", "10.0.1.2", cc, duration_s, mptcp=True,
                                                                    interval_s=0.1)])
                            snaps, last = _snapshots(cc, duration_s, launched) if cc in ("tm_lia", "tm_olia") else ([], [])
                            (rec,) = wl.collect_flows(popen, duration_s + 60)
                            time.sleep(1.0)
                            (srec,) = server.stop()
                            by = _per_subflow_bytes(srec)
                            low = sum(v for k, v in by.items() if k.startswith("10.0.1."))
                            share = low / max(sum(by.values()), 1)
                            emit({"experiment": "disjoint", "variant": cc, "rep": rep, "seed": seed + rep,
                                  "rate_bps": rec["rate_bps"], "share_less_lossy": share})
                            for r in _snapshot_rows(cc, snaps, rep, "disjoint") + _timeout_rows(cc, last, rep, "disjoint"):
                                emit(r)
                            if rep == first_rep:
                                new = [{"variant": cc, "t_s": s["t_s"], "subflow": s.get("local", ""),
                                        "cwnd_segments": s["cwnd_segments"], "srtt_s": s["srtt_s"]}
                                       for s in srec["samples"]]
                                cwnd_rows.extend(new)
                                if on_cwnd is not None:
                                    on_cwnd(new)
                    longest["coupled"] = max(longest["coupled"], time.time() - t0)

    runners = {"reno": run_reno, "cubic": run_cubic, "coupled": run_coupled}
    try:
        for exp in experiments:
            runners[exp]()
    finally:
        lock.release()
    return pd.DataFrame(rows), pd.DataFrame(cwnd_rows)


def ns3_shared_link(*, reps: int = 8, duration_s: float = 10.0, warmup_s: float = 2.0, rate_bps: float = 200e6,
                    rtt_s: float = 0.020, loss_rate: float = 0.005, seed: int = 1,
                    log: Callable[[dict], object] = print) -> pd.DataFrame:
    """The shared experiment in ns-3: ns-3 LIA (:mod:`tcpmodels.sim.multipath`) and uncoupled Reno
    subflows, two subflows of one connection beside one ``TcpLinuxReno`` flow on one lossy link.

    One simulation per repetition and seed ``seed + rep``, each holding both variants on two
    equal, separate links (1 ms access links each side, so the base RTT is ``rtt_s``; 1000-packet
    queues; random loss on data packets only).

    Parameters
    ----------
    reps : int
        Repetitions (simulations). [-]
    duration_s : float
        Simulated time of each. [s]
    warmup_s : float
        Time left out before the rates are taken. [s]
    rate_bps : float
        Link rate. [bit/s]
    rtt_s : float
        Base round-trip time. [s]
    loss_rate : float
        Random loss probability per data packet. [-]
    seed : int
        Seed of the first repetition. [-]
    log : callable
        Called with each row as it is computed.

    Returns
    -------
    pandas.DataFrame
        One row per repetition and variant (``ns3_lia``, ``ns3_uncoupled``): ``experiment`` =
        ``shared_ns3``, ``rate_bps`` (the multipath connection) and ``tcp_rate_bps`` [bit/s],
        ``ratio_mptcp_tcp`` [-], ``seed``.
    """
    import tempfile

    from tcpmodels.sim.config import Link as SimLink
    from tcpmodels.sim.config import Multipath, MultipathFlow
    from tcpmodels.sim.run import run_config as sim_run_config

    access_s = 0.001
    link = SimLink(rate_bps=rate_bps, delay_s=rtt_s / 2 - 2 * access_s, queue_packets=1000)
    variants = (("ns3_lia", True), ("ns3_uncoupled", False))
    conns = []
    for p, (_, coupled) in enumerate(variants):
        conns += [MultipathFlow(paths=(p, p), coupled=coupled), MultipathFlow(paths=(p,), coupled=False)]
    rows = []
    for rep in range(reps):
        cfg = Multipath(paths=(link,) * len(variants), connections=tuple(conns), loss_rates=(loss_rate,) * len(variants),
                        access=SimLink(rate_bps=10e9, delay_s=access_s, queue_packets=1000),
                        duration_s=duration_s, seed=seed + rep, queue_bin_s=0.5)
        with tempfile.TemporaryDirectory() as tmp:
            run = sim_run_config(cfg, tmp)
        thr, apps = run.throughput_bps(warmup_s), run.apps

        def rate(k, thr=thr, apps=apps):
            return float(thr.loc[apps.loc[apps["connection"] == k, "flow_index"]].sum())

        for p, (variant, _) in enumerate(variants):
            mp, tcp = rate(2 * p), rate(2 * p + 1)
            rows.append({"experiment": "shared_ns3", "variant": variant, "rep": rep, "seed": seed + rep,
                         "rate_bps": mp, "tcp_rate_bps": tcp, "ratio_mptcp_tcp": mp / tcp if tcp > 0 else np.nan})
            log(rows[-1])
    return pd.DataFrame(rows)
