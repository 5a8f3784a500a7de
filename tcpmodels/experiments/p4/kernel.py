"""P4 on the real Linux stack: the plan, the testbed session, the runner and the per-sample table."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from tcpmodels.experiments.campaign import KernelGrid
from tcpmodels.experiments.campaign_testbed import ServerTestbed, kernel_testbed_of, testbed_label
from tcpmodels.experiments.p4.config import DEFAULT_CONFIG, REPO, SCHEMA, P4Config
from tcpmodels.records import git_state
from tcpmodels.testbed import Topology

__all__ = ["KERNEL_KEY", "kernel_plan", "WindowSession", "run_kernel_campaign", "summarize_window_limited",
           "kernel_frame"]

KERNEL_KEY = ("campaign", "rep", "rcvbuf_cap_bytes", "rtt_ms")

#: TCP_INFO fields kept per sample (sender side)
_KEEP = ("t_s", "bytes_acked", "snd_wnd_bytes", "cwnd_segments", "mss_bytes", "srtt_s", "min_rtt_s", "unacked",
         "total_retrans", "rwnd_limited_s")


def kernel_plan(config: P4Config = DEFAULT_CONFIG) -> list[dict]:
    """Every sample in run order: repetition 0 of all cells (shuffled), then repetition 1, ...

    Parameters
    ----------
    config : P4Config
        The grid and the number of repetitions.

    Returns
    -------
    list of dict
        ``campaign, rep, rcvbuf_cap_bytes [bytes], rtt_ms [ms], order``, one per sample; ``campaign`` is
        ``p4_kernel``, or ``p4_kernel_steered`` with ``config.keep_flow_order`` (same cells and order, so that
        both testbeds' samples sit apart in one records file, :data:`KERNEL_KEY`).
    """
    import numpy as np

    rng = np.random.default_rng(config.seed)
    cells = config.cells
    label = testbed_label("p4_kernel", config.keep_flow_order)
    plan = []
    for rep in range(config.reps):
        for i in rng.permutation(len(cells)):
            cap, rtt = cells[int(i)]
            plan.append({"campaign": label, "rep": rep, "rcvbuf_cap_bytes": cap, "rtt_ms": rtt, "order": len(plan)})
    return plan


def _rmem(cap_bytes: int) -> str:
    # min, default, max: the default (the buffer a new socket starts with) never above the cap
    return f"4096 {min(131072, int(cap_bytes))} {int(cap_bytes)}"


class WindowSession(ServerTestbed):
    """One link ``c -- s`` with a delay element and a tbf rate limiter; the receiver ``s`` runs the server.

    Between samples the link's delay and the receiver's ``tcp_rmem`` change
    (:meth:`set_cell`); the server restarts when the cap changes, so its
    listening socket (whose buffer new connections inherit) is made under the new cap.
    """

    server_node = "s"
    port = 5401

    def __init__(self, config: P4Config, rcvbuf_cap_bytes: int, rtt_ms: float):
        self.config = config
        self.keep_flow_order = config.keep_flow_order
        self.cap_bytes, self.rtt_ms = int(rcvbuf_cap_bytes), float(rtt_ms)

    def topology(self) -> Topology:
        """The single link with the sender's and receiver's buffer sysctls.

        Returns
        -------
        tcpmodels.testbed.Topology
            :func:`~tcpmodels.testbed.topologies.single_link` at ``link_rate_bps`` and the current RTT,
            ``tcp_wmem`` up to ``sndbuf_max_bytes`` on ``c``, ``tcp_rmem`` capped on ``s``.
        """
        from tcpmodels.testbed.topologies import PathSpec, single_link

        cfg = self.config
        topo = single_link(PathSpec(rate_bps=cfg.link_rate_bps, rtt_s=self.rtt_ms * 1e-3))
        common = (("net.ipv4.tcp_no_metrics_save", "1"),)
        extra = {"c": (("net.ipv4.tcp_wmem", f"4096 16384 {cfg.sndbuf_max_bytes}"),),
                 "s": (("net.ipv4.tcp_rmem", _rmem(self.cap_bytes)),)}
        nodes = tuple(replace(n, sysctls=n.sysctls + common + extra.get(n.name, ())) for n in topo.nodes)
        return replace(topo, nodes=nodes)

    def set_cell(self, rcvbuf_cap_bytes: int, rtt_ms: float) -> None:
        """Move to another cell (restart the delay element and/or set the cap and restart the server).

        Parameters
        ----------
        rcvbuf_cap_bytes : int
            The receiver's ``tcp_rmem`` maximum. [bytes]
        rtt_ms : float
            Round-trip time of the link. [ms]
        """
        from tcpmodels.testbed import workload as wl

        if float(rtt_ms) != self.rtt_ms:
            self.tb.set_link_delay("p0", float(rtt_ms) * 1e-3 / 2)
            self.rtt_ms = float(rtt_ms)
        if int(rcvbuf_cap_bytes) != self.cap_bytes:
            self.tb.set_sysctls("s", [("net.ipv4.tcp_rmem", _rmem(rcvbuf_cap_bytes))])
            self.server.stop()
            self.server = wl.start_server(self.tb, self.server_node, port=self.port)
            self.cap_bytes = int(rcvbuf_cap_bytes)

    def run(self, duration_s: float, sample_interval_s: float) -> dict:
        """One upload from ``c`` to ``s`` in the current cell.

        Parameters
        ----------
        duration_s : float
            Length of the transfer. [s]
        sample_interval_s : float
            TCP_INFO sampling interval on the sender. [s]

        Returns
        -------
        dict
            ``run_id``, ``ping_rtt_ms`` (median of 5 ICMP echoes before the transfer) [ms],
            ``tcp_rmem`` (read back from the receiver's namespace), ``flow`` (the client's
            record, ``samples`` reduced to the fields in ``_KEEP``), ``link_rate_bps``, ``rps_cpus`` (the
            testbed's RPS mask; None without steering, ``config.keep_flow_order``).
        """
        import numpy as np

        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed import workload as wl

        tb = self.tb
        if self.server.popen.poll() is not None:
            raise TestbedError("the traffic server has exited")
        dst = tb.topology.meta["server_addr"]
        ping = float(np.median(wl.ping_rtt(tb, "c", dst, count=5, interval_s=0.05))) * 1e3
        rmem = " ".join(tb.exec("s", ["sysctl", "-n", "net.ipv4.tcp_rmem"]).stdout.split())
        flow = wl.bulk_flow(flow_id=1, dst=dst, port=self.port, duration_s=duration_s, cc="cubic",
                            direction="upload", sample_interval_s=sample_interval_s)
        rec = wl.run_flows(tb, "c", [flow], timeout_s=duration_s + 120)[0]
        rec["samples"] = [{k: s.get(k) for k in _KEEP} for s in rec.get("samples", [])]
        return {"run_id": tb.run_id, "ping_rtt_ms": ping, "tcp_rmem": rmem, "flow": rec,
                "link_rate_bps": self.config.link_rate_bps, "rps_cpus": tb.rps_cpus}


def _session_for(config: P4Config, s: dict, session: WindowSession | None) -> WindowSession:
    if session is None:
        return WindowSession(config, s["rcvbuf_cap_bytes"], s["rtt_ms"]).__enter__()
    session.set_cell(s["rcvbuf_cap_bytes"], s["rtt_ms"])
    return session


def _record(config: P4Config, s: dict, session: WindowSession, git_at_start: dict) -> dict:
    # ``git_at_start``: the code this process imported, the tree at its start (later edits to the tree do not
    # change what runs, except the traffic program, started afresh per sample: the dataset checks it did not change)
    duration = sum(config.spans_s(s["rtt_ms"]))
    return {"schema": SCHEMA, "config_hash": config.hash(), "git_at_start": git_at_start, "git": git_state(REPO),
            **session.run(duration, config.sample_interval_s)}


#: Run (or resume) the kernel grid, a :class:`~tcpmodels.experiments.campaign.KernelGrid`:
#: ``run_kernel_campaign(records_path, config=DEFAULT_CONFIG, *, limit, progress, lock_timeout_s, plan, yield_s)``
#: returns the samples measured by the call; samples on file (same :data:`KERNEL_KEY`) are skipped; ``plan``
#: (tests use one) replaces :func:`kernel_plan`. One testbed, its receive-buffer cap and delay set per sample.
run_kernel_campaign = KernelGrid(key=KERNEL_KEY, plan_of=kernel_plan, session_for=_session_for, measure=_record,
                                 desc="p4 kernel", default_config=DEFAULT_CONFIG)


def summarize_window_limited(samples: list[dict], rtt_s: float, *, warmup_s: float,
                             plateau_fraction: float = 0.97, min_span_s: float = 1.0) -> dict:
    """Rate and advertised window of one window-limited transfer, from the sender's TCP_INFO samples.

    The measured span starts at the later of ``warmup_s`` and two RTTs after the
    advertised window (``snd_wnd_bytes``) first reaches ``plateau_fraction`` of its
    final value (median over the last quarter of the samples: receive-buffer
    autotuning grows it during the first RTTs), and ends at the last sample.

    Parameters
    ----------
    samples : list of dict
        ``t_s`` (since the connection started) [s], ``bytes_acked`` [bytes], ``snd_wnd_bytes`` [bytes],
        ``min_rtt_s``, ``srtt_s`` [s], ``cwnd_segments`` and ``mss_bytes``, ``total_retrans`` [packets],
        ``rwnd_limited_s`` [s].
    rtt_s : float
        Configured round-trip time (for the plateau margin). [s]
    warmup_s : float
        Earliest start of the measured span. [s]
    plateau_fraction : float
        Fraction of the final window that counts as reached. [-]
    min_span_s : float
        Shortest acceptable span; shorter raises ``ValueError``. [s]

    Returns
    -------
    dict
        ``t_from_s, t_to_s, span_s, plateau_s`` [s], ``rate_bps`` (least-squares slope of bytes acked
        against time over the span) and ``rate_endpoints_bps`` (bytes acked between the span's ends
        over its length: off by up to one window per span, the ACKs of one window arrive together) [bit/s],
        ``snd_wnd_bytes`` (median over the span), ``snd_wnd_min_bytes``, ``snd_wnd_max_bytes`` [bytes],
        ``min_rtt_s``, ``srtt_s`` (median over the span) [s], ``cwnd_bytes`` (median cwnd x MSS) [bytes],
        ``retrans_in_span`` [packets], ``rwnd_limited_fraction`` (of the span) [-].
    """
    import numpy as np

    rows = [s for s in samples if s.get("bytes_acked") is not None and s.get("snd_wnd_bytes") is not None]
    if len(rows) < 5:
        raise ValueError(f"{len(rows)} TCP_INFO samples with bytes_acked and snd_wnd; need at least 5")
    t = np.array([s["t_s"] for s in rows], float)
    acked = np.array([s["bytes_acked"] for s in rows], float)
    wnd = np.array([s["snd_wnd_bytes"] for s in rows], float)
    final = float(np.median(wnd[-max(1, len(wnd) // 4):]))
    reached = np.nonzero(wnd >= plateau_fraction * final)[0]
    plateau = float(t[reached[0]]) if len(reached) else math.inf
    t_from, t_to = max(warmup_s, plateau + 2 * rtt_s), float(t[-1])
    if not t_to - t_from >= min_span_s:
        raise ValueError(f"measured span {t_to - t_from:.2f} s < {min_span_s} s (window plateau at {plateau:.2f} s)")
    inside = (t >= t_from) & (t <= t_to)
    at = np.interp([t_from, t_to], t, acked)
    # A window-limited sender's ACKs arrive in one burst per RTT, so bytes_acked is a staircase with a
    # step of one window per RTT: the difference between the two ends is off by up to a step (5 % over
    # 20 RTTs). The least-squares slope through every sample of the span averages the steps out.
    slope = float(np.polyfit(t[inside], acked[inside], 1)[0]) if inside.sum() >= 3 else math.nan

    def med(key, scale=1.0):
        v = [s[key] for s, k in zip(rows, inside) if k and s.get(key) is not None]
        return float(np.median(v)) * scale if v else math.nan

    cwnd = [s["cwnd_segments"] * s["mss_bytes"] for s, k in zip(rows, inside)
            if k and s.get("cwnd_segments") is not None and s.get("mss_bytes")]
    retr = [s["total_retrans"] for s, k in zip(rows, inside) if k and s.get("total_retrans") is not None]
    rl = [(s["t_s"], s["rwnd_limited_s"]) for s, k in zip(rows, inside) if k and s.get("rwnd_limited_s") is not None]
    return {"t_from_s": t_from, "t_to_s": t_to, "span_s": t_to - t_from, "plateau_s": plateau,
            "rate_bps": slope * 8, "rate_endpoints_bps": float((at[1] - at[0]) * 8 / (t_to - t_from)),
            "snd_wnd_bytes": float(np.median(wnd[inside])), "snd_wnd_min_bytes": float(wnd[inside].min()),
            "snd_wnd_max_bytes": float(wnd[inside].max()),
            "min_rtt_s": float(min(s["min_rtt_s"] for s, k in zip(rows, inside) if k)),
            "srtt_s": med("srtt_s"), "cwnd_bytes": float(np.median(cwnd)) if cwnd else math.nan,
            "retrans_in_span": int(retr[-1] - retr[0]) if retr else -1,
            "rwnd_limited_fraction": float((rl[-1][1] - rl[0][1]) / (rl[-1][0] - rl[0][0]))
            if len(rl) > 1 and rl[-1][0] > rl[0][0] else math.nan}


def kernel_frame(records: list[dict], config: P4Config = DEFAULT_CONFIG) -> pd.DataFrame:
    """One row per sample: the cell, the measured rate, the advertised window, RTTs and the model.

    Parameters
    ----------
    records : list of dict
        Records written by :func:`run_kernel_campaign`.
    config : P4Config
        The setting the records were made with (warm-up per RTT).

    Returns
    -------
    pandas.DataFrame
        Columns: ``rep, rcvbuf_cap_bytes, rtt_ms, order, ping_rtt_ms, tcp_rmem``, the
        :func:`summarize_window_limited` fields, ``model_bps`` (``window_limited_throughput_bps``
        of the median advertised window and ``min_rtt_s``), ``ratio`` (measured / model),
        ``model_srtt_bps`` and ``ratio_srtt`` (the same with the median srtt),
        ``cap_model_bps`` (cap / RTT, the naive reading), ``adv_fraction_of_cap``,
        ``link_rate_bps``, ``rate_fraction_of_link``, ``load_avg_1m``, ``wall_s``,
        ``started_utc``, ``cc_effective``, ``campaign`` (the record's label), ``testbed``
        (:func:`~tcpmodels.experiments.campaign_testbed.kernel_testbed_of`: ``steered`` if the record has an RPS mask,
        ``rps_cpus``, else ``reordering``: every sample before 2026-11-28), ``error``.
    """

    from tcpmodels.models.throughput import window_limited_throughput_bps

    rows = []
    for r in records:
        f = r["flow"]
        row = {"rep": r["rep"], "rcvbuf_cap_bytes": r["rcvbuf_cap_bytes"], "rtt_ms": r["rtt_ms"],
               "order": r["order"], "ping_rtt_ms": r["ping_rtt_ms"], "tcp_rmem": r["tcp_rmem"],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "cc_effective": f.get("cc_effective"), "link_rate_bps": r["link_rate_bps"],
               "campaign": r.get("campaign", "p4_kernel"),
               "testbed": kernel_testbed_of(r), "error": f.get("error")}
        try:
            s = summarize_window_limited(f["samples"], r["rtt_ms"] * 1e-3, warmup_s=config.spans_s(r["rtt_ms"])[0])
        except (ValueError, KeyError) as exc:
            row["error"] = (row["error"] or "") + f" summary: {exc}"
            rows.append(row)
            continue
        row.update(s)
        row["model_bps"] = float(window_limited_throughput_bps(s["snd_wnd_bytes"], s["min_rtt_s"]))
        row["ratio"] = row["rate_bps"] / row["model_bps"]
        row["model_srtt_bps"] = float(window_limited_throughput_bps(s["snd_wnd_bytes"], s["srtt_s"]))
        row["ratio_srtt"] = row["rate_bps"] / row["model_srtt_bps"]
        row["cap_model_bps"] = float(window_limited_throughput_bps(r["rcvbuf_cap_bytes"], r["rtt_ms"] * 1e-3))
        row["adv_fraction_of_cap"] = s["snd_wnd_bytes"] / r["rcvbuf_cap_bytes"]
        row["rate_fraction_of_link"] = row["rate_bps"] / r["link_rate_bps"]
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["rtt_ms", "rcvbuf_cap_bytes", "rep"]).reset_index(drop=True) if len(df) else df
