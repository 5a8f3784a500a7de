"""P1 on the real Linux stack: the fat-tree testbed session, its client processes, and the per-run rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.p1.cc_watch import CcMapWatch
from tcpmodels.experiments.p1.config import BG_PORT, FLOW_PORT, KERNEL_CCS, N_CORES, N_HOSTS, REPO, UNCOUPLED, P1Config
from tcpmodels.topology.addressing import plane_address

__all__ = ["host_addr", "kernel_flows", "socket_cc", "client_main", "KernelSession", "subflow_stats", "kernel_rows"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    conns : list of dict
        The connections of one run (:func:`schedule`).
""")


# ------------------------------------------------------------- kernel engine
def host_addr(host: int, plane: int) -> str:
    """Address of ``host`` on ``plane`` in :func:`~tcpmodels.testbed.topologies.fat_tree` (and in ns-3's fat-tree).

    Parameters
    ----------
    host : int
        Host index, 0-15.
    plane : int
        Core plane, 0 to ``N_CORES - 1``.

    Returns
    -------
    str
        The IPv4 address, dotted quad.
    """
    return plane_address(int(host), int(plane))


def socket_cc(config: P1Config, mptcp: bool, cc: str = UNCOUPLED) -> str:
    """The ``TCP_CONGESTION`` a connection of a run with MPTCP control ``cc`` sets on its socket.

    Parameters
    ----------
    config : P1Config
        Its ``cc`` (Reno) is that of every single-path socket and of uncoupled subflows.
    mptcp : bool
        Whether the connection is MPTCP (its subflows inherit the MPTCP socket's control).
    cc : str
        The run's MPTCP control, one of :data:`~tcpmodels.experiments.p1.config.KERNEL_CCS`.

    Returns
    -------
    str
        ``cc`` for an MPTCP connection under ``tm_lia`` / ``tm_olia``, else ``config.cc``.

    Raises
    ------
    ValueError
        For an unknown ``cc``.
    """
    if cc not in KERNEL_CCS:
        raise ValueError(f"cc must be one of {KERNEL_CCS}; got {cc!r}")
    return cc if (mptcp and cc != UNCOUPLED) else config.cc


@_PARAMETERS.fill
def kernel_flows(conns: list[dict], config: P1Config, *, sample_interval_s: float = 0.1,
                 cc: str = UNCOUPLED) -> dict[int, list[dict]]:
    """The schedule as traffic-module flows, grouped by sending host (uploads: the sender is the client).

    A single-path connection binds its plane-``plane`` source and targets the
    destination's plane-``plane`` address; an MPTCP connection targets plane 0 and
    lets the path manager add the other planes. Background transfers sample TCP_INFO
    every ``sample_interval_s``. [s]

    Parameters
    ----------
    {conns}
    config : P1Config
        Its ``cc`` is set on every single-path socket (and every MPTCP one when ``cc`` is ``uncoupled``).
    sample_interval_s : float
        TCP_INFO sampling interval of background transfers. [s]
    cc : str
        The run's MPTCP congestion control (:func:`socket_cc`): ``tm_lia`` / ``tm_olia`` is set on
        every MPTCP socket (the kernel gives it to each subflow); it must be registered for the run.

    Returns
    -------
    dict of int to list of dict
        Sending host index -> its flow dicts (``flow_id`` = ``conn_id + 1``, ``dst``,
        ``bind``, ``port``, ``size_bytes`` or ``duration_s``, ``cc``, ``mptcp``,
        ``start_s`` [s], ...), as :func:`tcpmodels.testbed.traffic.run_flow` reads them.
    """
    out: dict[int, list[dict]] = {}
    for c in conns:
        plane = 0 if c["mptcp"] else c["plane"]
        bg = c["size_bytes"] is None
        f = {"flow_id": c["conn_id"] + 1, "kind": c["kind"], "dst": host_addr(c["dst"], plane),
             "bind": None if c["mptcp"] else host_addr(c["src"], plane),
             "port": BG_PORT if bg else FLOW_PORT, "size_bytes": c["size_bytes"],
             "duration_s": round(c["end_s"] - c["start_s"], 6) if bg else None,
             "cc": socket_cc(config, c["mptcp"], cc),
             "mptcp": c["mptcp"], "direction": "upload", "start_s": c["start_s"],
             "sample_interval_s": sample_interval_s if bg else 0.0, "path": plane}
        out.setdefault(c["src"], []).append(f)
    return out


def _topology(config: P1Config, host_sysctls: tuple[tuple[str, str], ...] = (), ack_every_segment: bool = False):
    from tcpmodels.testbed import fat_tree

    topo = fat_tree(host_rate_bps=config.host_rate_bps, edge_agg_rate_bps=config.edge_agg_rate_bps,
                    agg_core_rate_bps=config.agg_core_rate_bps, buffer_bytes=config.buffer_bytes)
    # every host pair crosses exactly two host links, each twice per round trip
    links = tuple(replace(lk, delay_s=config.rtt_s / 4) if lk.name.startswith("hl") and config.delay_element else lk
                  for lk in topo.links)
    sysctls = (("net.ipv4.tcp_no_metrics_save", "1"),) + tuple(host_sysctls)  # no ssthresh carried over flows
    nodes = tuple(replace(n, sysctls=n.sysctls + sysctls) if n.name.startswith("h") else n for n in topo.nodes)
    if ack_every_segment:  # one data segment a packet and an ACK for each, as ns-3 sends and acknowledges
        links = tuple(replace(lk, offloads=False) if lk.name.startswith("hl") else lk for lk in links)
        routes = tuple(replace(r, quickack=True) if r.node.startswith("h") else r for r in topo.routes)
        return replace(topo, links=links, nodes=nodes, routes=routes)
    return replace(topo, links=links, nodes=nodes)


def client_main(spec: dict) -> None:
    """Run inside a host namespace: every flow of ``spec["flows"]`` at ``t0_mono_s + start_s``.

    Each flow runs in its own thread; its record goes to stdout as a JSON line
    (:func:`tcpmodels.testbed.traffic.run_flow`).

    Parameters
    ----------
    spec : dict
        ``t0_mono_s`` (the monotonic-clock origin of the start times [s]) and ``flows``
        (one host's entry of :func:`kernel_flows`).
    """
    from tcpmodels.testbed import traffic

    lock = threading.Lock()
    t0 = float(spec["t0_mono_s"])
    threads = [threading.Thread(target=traffic.run_flow, args=(f, t0, lock), daemon=True) for f in spec["flows"]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class KernelSession:
    """The fat-tree testbed with an MPTCP-capable traffic server on both ports of every host; reused across runs.

    With ``config.keep_flow_order`` every veth's received packets are steered with RPS
    (:class:`tcpmodels.testbed.Testbed` ``keep_flow_order``).

    Parameters
    ----------
    config : P1Config
        The setting (rates, buffers, base RTT, steering).
    host_sysctls : tuple of (str, str)
        Sysctls set in every host's namespace besides P1's own (e.g. ``net.ipv4.tcp_recovery`` 0: one factor
        swapped toward ns-3, :mod:`tcpmodels.experiments.p1.swaps`).
    steer_cpus : tuple of int, optional
        With ``config.keep_flow_order``: the CPUs RPS steers to (:class:`tcpmodels.testbed.Testbed`
        ``steer_cpus``; default all, :mod:`tcpmodels.experiments.p1.placement`).
    ack_every_segment : bool
        Send one segment a packet and acknowledge every one, as ns-3 does (:mod:`tcpmodels.experiments.p1.delack`):
        no TSO, GSO or GRO on the host links (the offloads that let a host send, and a receiver acknowledge, several
        segments as one packet) and ``quickack 1`` on every host route (no delayed ACKs;
        :class:`tcpmodels.testbed.topology.Route`).
    """

    def __init__(self, config: P1Config, host_sysctls: tuple[tuple[str, str], ...] = (),
                 steer_cpus: tuple[int, ...] | None = None, ack_every_segment: bool = False):
        self.config = config
        self.host_sysctls = tuple(host_sysctls)
        self.steer_cpus = steer_cpus
        self.ack_every_segment = bool(ack_every_segment)
        self.tb = None
        self.servers: list = []
        self.setup_s = None

    def __enter__(self) -> "KernelSession":
        from tcpmodels.testbed import Testbed
        from tcpmodels.testbed import workload as wl

        t0 = time.monotonic()
        self.tb = Testbed(_topology(self.config, self.host_sysctls, self.ack_every_segment),
                          keep_flow_order=self.config.keep_flow_order, steer_cpus=self.steer_cpus).__enter__()
        try:
            for n in range(N_HOSTS):
                for port in (BG_PORT, FLOW_PORT):
                    self.servers.append(wl.start_server(self.tb, f"h{n}", port=port, mptcp=True,
                                                        keep_records=False))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.setup_s = time.monotonic() - t0
        self.base_rtt_s = self.measure_base_rtt_s()
        return self

    def measure_base_rtt_s(self) -> dict:
        """Idle ICMP round trip between hosts in different pods (h0 -> h12 on each plane). [s]

        Returns
        -------
        dict of str to float or None
            ``"plane{p}"`` -> median of 10 pings, or None when none came back. [s]
        """
        from tcpmodels.testbed import workload as wl

        out = {}
        for plane in range(N_CORES):
            rtts = wl.ping_rtt(self.tb, "h0", host_addr(12, plane), count=10, interval_s=0.01,
                               bind=host_addr(0, plane))
            out[f"plane{plane}"] = float(np.median(rtts)) if len(rtts) else None
        return out

    def __exit__(self, *exc) -> None:
        for srv in self.servers:  # before the testbed, whose exit would close the pipes under their readers
            try:
                srv.stop()
            except subprocess.TimeoutExpired:
                srv.popen.kill()
        self.servers = []
        if self.tb is not None:
            self.tb.__exit__(*exc)
            self.tb = None

    @_PARAMETERS.fill
    def run(self, conns: list[dict], *, capture_dir: Path | None = None, capture_stem: str = "",
            cc: str = UNCOUPLED) -> dict:
        """Run one schedule; return the flow records (one per connection) and capture statistics.

        One client process per sending host is started in its namespace
        (``python -m tcpmodels.experiments.p1 client``); all start their flows from a common
        monotonic-clock origin.

        Parameters
        ----------
        {conns}
        capture_dir : Path, optional
            Capture each Section 4 short-flow sender's host link here (snap length 96,
            port ``FLOW_PORT`` only).
        capture_stem : str
            Prefix of the capture files (``{stem}_h{host}.pcap``).
        cc : str
            The run's MPTCP congestion control (:func:`kernel_flows`); a ``tm_*`` one must be
            registered (:func:`tcpmodels.testbed.kernel_cc.congestion_control` around the call),
            and its connection map is polled during the run (:class:`~tcpmodels.experiments.p1.cc_watch.CcMapWatch`).

        Returns
        -------
        dict
            ``run_id`` (testbed), ``records`` (the clients' flow records), ``captures``
            (capture statistics), ``t0_mono_s`` [s], ``base_rtt_s`` (per plane) [s],
            ``cc_map`` (:meth:`~tcpmodels.experiments.p1.cc_watch.CcMapWatch.summary`, None for ``uncoupled``), ``tcp_ext`` (the
            TcpExt counters that moved during the run, summed over the 16 hosts: reordering
            events, DSACKs, out-of-order segments, retransmissions) and ``rps_cpus`` (the testbed's
            RPS mask, None without steering).

        Raises
        ------
        tcpmodels.testbed.TestbedError
            If a traffic server has exited, or a client fails or does not finish within
            60 s after the last connection's end.
        """
        import subprocess

        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed.capture import start_capture
        from tcpmodels.testbed.netns import tcp_ext_delta

        tb = self.tb
        for srv in self.servers:
            if srv.popen.poll() is not None:
                raise TestbedError(f"the traffic server in {srv.node} port {srv.port} has exited")
        by_host = kernel_flows(conns, self.config, cc=cc)
        hosts = [f"h{n}" for n in range(N_HOSTS)]
        tcp0 = {h: tb.tcp_ext_counters(h) for h in hosts}
        watch = CcMapWatch(cc) if cc != UNCOUPLED else None
        caps = []
        if capture_dir is not None:
            senders = sorted({c["src"] for c in conns if c["kind"] == "short"})
            for h in senders:
                caps.append(start_capture(tb, f"h{h}", f"hl{h}", Path(capture_dir) / f"{capture_stem}_h{h}.pcap",
                                          snaplen_bytes=96, bpf_filter=f"tcp port {FLOW_PORT}"))
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        t0 = time.monotonic() + 1.5 + 0.1 * len(by_host)  # every client has started its threads by then
        end_s = max(c["end_s"] for c in conns)
        procs = {}
        if watch is not None:
            watch.__enter__()
        try:
            for h, flows in by_host.items():
                p = tb.popen(f"h{h}", [sys.executable, "-m", "tcpmodels.experiments.p1", "client"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, label=f"p1-client-h{h}")
                try:
                    p.stdin.write(json.dumps({"t0_mono_s": t0, "flows": flows}))
                    p.stdin.close()
                except BrokenPipeError as exc:
                    p.wait(timeout=10)
                    raise TestbedError(f"p1 client in h{h} exited at start: {p.stderr.read().strip()[-2000:]}") from exc
                p.stdin = None
                procs[h] = p
            records = []
            deadline = t0 + end_s + 60.0
            for h, p in procs.items():
                try:
                    out, err = p.communicate(timeout=max(5.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired as exc:
                    raise TestbedError(f"p1 client in h{h} did not finish within {end_s + 60:.0f} s") from exc
                if p.returncode != 0:
                    raise TestbedError(f"p1 client in h{h} failed (exit {p.returncode}): {err.strip()[-2000:]}")
                records += [json.loads(x) for x in out.splitlines() if x.strip()]
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            time.sleep(0.1)
            cap_stats = [c.stop() for c in caps]
            if watch is not None:
                watch.__exit__(None, None, None)
        tcp_ext: dict = {}  # summed over the hosts: which host saw a counter move is not kept
        for h in hosts:
            for name, v in tcp_ext_delta(tcp0[h], tb.tcp_ext_counters(h)).items():
                tcp_ext[name] = tcp_ext.get(name, 0) + v
        return {"run_id": tb.run_id, "records": records, "captures": cap_stats, "t0_mono_s": t0,
                "base_rtt_s": self.base_rtt_s, "cc_map": watch.summary() if watch is not None else None,
                "tcp_ext": tcp_ext, "rps_cpus": tb.rps_cpus}


# ----------------------------------------------------------- record analysis
def subflow_stats(samples: list[dict], *, mss_default_bytes: float = 1448.0) -> list[dict]:
    """Per-subflow summary of a background connection from its TCP_INFO samples.

    Parameters
    ----------
    samples : list of dict
        The sender's TCP_INFO samples (``t_s``, ``cwnd_segments``, ``ssthresh_segments``,
        ``srtt_s``, ``bytes_acked``, ``bytes_sent``, ``mss_bytes``, ``ca_state``; MPTCP:
        ``subflow``, ``local``, ``remote``).
    mss_default_bytes : float
        MSS used when a sample reports none. [bytes]

    Returns
    -------
    list of dict
        One per subflow: ``subflow``, ``remote``, ``duration_s`` [s], ``throughput_bps``
        [bit/s] (bytes acknowledged over the sampled span), ``rtt_mean_s`` [s] (mean srtt),
        ``mss_bytes``, ``cwnd_mean_segments``, ``loss_events`` (window reductions seen in the
        samples, :func:`tcpmodels.fit.cubic.cwnd_epochs`), ``segments_sent``,
        ``loss_event_rate`` [-] (loss events per segment sent; a lower bound, as reductions
        closer together than the sampling interval merge) and ``retransmit_rate`` [-].
    """
    import pandas as pd

    from tcpmodels.fit.cubic import cwnd_epochs

    if not samples:
        return []
    s = pd.DataFrame(samples)
    if "subflow" not in s:
        s["subflow"] = 0
    s["remote"] = s.get("remote", pd.Series([""] * len(s))).fillna("")
    out = []
    for (sub, remote), g in s.groupby(["subflow", "remote"], sort=True):
        g = g.sort_values("t_s")
        g = g[g["cwnd_segments"] > 0]
        if len(g) < 3:
            continue
        span = float(g["t_s"].iloc[-1] - g["t_s"].iloc[0])
        acked = float(g["bytes_acked"].iloc[-1] - g["bytes_acked"].iloc[0])
        mss = float(g["mss_bytes"].replace(0, np.nan).median()) if "mss_bytes" in g else mss_default_bytes
        mss = mss if np.isfinite(mss) else mss_default_bytes
        ep = cwnd_epochs(g["t_s"].to_numpy(float), g["cwnd_segments"].to_numpy(float),
                         g["ssthresh_segments"].to_numpy(float), g["ca_state"].to_numpy(int))
        sent = float(g["bytes_sent"].iloc[-1] - g["bytes_sent"].iloc[0]) / mss
        retr = float(g["bytes_retrans"].iloc[-1] - g["bytes_retrans"].iloc[0]) / mss if "bytes_retrans" in g else np.nan
        out.append({"subflow": int(sub), "remote": remote, "duration_s": span,
                    "throughput_bps": acked * 8 / span if span > 0 else np.nan,
                    "rtt_mean_s": float(g["srtt_s"].mean()), "mss_bytes": mss,
                    "cwnd_mean_segments": float(g["cwnd_segments"].mean()), "loss_events": int(len(ep)),
                    "segments_sent": sent, "loss_event_rate": len(ep) / sent if sent > 0 else np.nan,
                    "retransmit_rate": retr / sent if sent > 0 else np.nan})
    return out


def _classify_capture(path: Path) -> list[dict]:
    """Pattern (P1 Table 3) of every short flow in one capture, keyed by the sender's port."""
    import warnings

    from tcpmodels.traces import TraceWarning, classify_short_flows, read_pcap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    if len(packets) == 0:
        return []
    cl = classify_short_flows(packets)
    return [{"src_port": int(r.src_port), "pattern": str(r.pattern), "fct_capture_s": float(r.fct_s),
             "retransmitted_packets": int(r.retransmitted_packets),
             "timeout_gap_s": None if np.isnan(r.timeout_gap_s) else float(r.timeout_gap_s)}
            for r in cl.itertuples()]


def kernel_rows(conns: list[dict], res: dict, capture_dir: Path | None) -> tuple[list, list, list]:
    """Flow rows, background subflow rows and kept TCP_INFO samples of one kernel run.

    Parameters
    ----------
    conns : list of dict
        The connections of the run (:func:`schedule`).
    res : dict
        What :meth:`KernelSession.run` returned.
    capture_dir : Path or None
        Where the run's captures are (the files themselves are listed in ``res["captures"]``); None: no
        patterns are classified.

    Returns
    -------
    tuple of (list, list, list)
        Flow rows (``fct_s`` [s], ``bytes``, ``rate_bps`` [bit/s], ``error``, and for
        short flows their P1 Table 3 ``pattern``), subflow rows of the background
        connections (:func:`subflow_stats`) and the TCP_INFO samples of the first
        background connection.
    """
    by_id = {r.get("flow_id"): r for r in res["records"]}
    patterns: dict[tuple[int, int], dict] = {}
    if capture_dir is not None:
        for cap in res.get("captures", []):
            host = int(Path(cap["path"]).stem.rsplit("_h", 1)[1])
            for row in _classify_capture(Path(cap["path"])):
                patterns[(host, row["src_port"])] = row
    flows, subflows, samples = [], [], []
    for c in conns:
        r = by_id.get(c["conn_id"] + 1, {})
        row = {**{k: c[k] for k in ("conn_id", "kind", "src", "dst", "start_s", "size_bytes", "mptcp", "plane")},
               "fct_s": r.get("completion_s") if not r.get("error") else None, "bytes": r.get("bytes"),
               "rate_bps": r.get("rate_bps"), "connect_s": r.get("connect_s"), "cc_effective": r.get("cc_effective"),
               "mptcp_subflows": r.get("mptcp_subflows"), "error": r.get("error") or (None if r else "no record")}
        if c["kind"] == "short" and r.get("src"):
            port = int(r["src"].rsplit(":", 1)[1])
            pat = patterns.get((c["src"], port), {})
            row.update(pattern=pat.get("pattern"), fct_capture_s=pat.get("fct_capture_s"),
                       retransmitted_packets=pat.get("retransmitted_packets"), timeout_gap_s=pat.get("timeout_gap_s"))
        flows.append(row)
        if c["kind"] == "background" and r.get("samples"):
            for sf in subflow_stats(r["samples"]):
                subflows.append({"conn_id": c["conn_id"], "src": c["src"], "dst": c["dst"], "mptcp": c["mptcp"],
                                 **sf})
            if not samples:  # keep the first background connection's samples (the LIA time series)
                keep = ("t_s", "subflow", "remote", "cwnd_segments", "ssthresh_segments", "srtt_s", "ca_state",
                        "bytes_acked", "total_retrans")
                samples = [{"conn_id": c["conn_id"], **{k: s.get(k) for k in keep}} for s in r["samples"]]
    return flows, subflows, samples
