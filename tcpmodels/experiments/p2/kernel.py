"""P2 on the real kernel: the two-path testbed session, one sample, and the campaigns on the one runner."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.campaign_testbed import ServerTestbed
from tcpmodels.experiments.p2.config import DEFAULT_CONFIG, FIG4_RTT_PAIRS_MS, REPO, SAMPLE_KEY, SCHEMA, P2Config
from tcpmodels.experiments.p2.plans import client_steps, sample_plan, sweep_steps
from tcpmodels.testbed import Topology

__all__ = ["Session", "measure", "cc_loaded", "ensure_cc", "run_campaign", "run_sweep", "SWEEP_KEY"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt1_ms, rtt2_ms : float
        Round-trip propagation delay of path 1 and path 2. [ms]
    steps : list of dict
        :func:`client_steps` or :func:`sweep_steps`.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
""")

#: fields that identify a Fig. 4 sweep sample in its records
SWEEP_KEY = ("campaign", "cc", "rep", "rtt1_ms", "rtt2_ms")


# ------------------------------------------------------------- one sample
def _topology(config: P2Config, rtt1_ms: float, rtt2_ms: float, loss_rate: float = 0.0):
    from tcpmodels.testbed import PathSpec, two_path

    topo = two_path([PathSpec(rate_bps=config.rate_bps, rtt_s=r * 1e-3, buffer_bytes=config.buffer_bytes)
                     for r in (rtt1_ms, rtt2_ms)])
    m = config.sock_buf_max_bytes
    sysctls = (("net.ipv4.tcp_rmem", f"4096 131072 {m}"), ("net.ipv4.tcp_wmem", f"4096 16384 {m}"))
    topo = replace(topo, nodes=tuple(replace(n, sysctls=n.sysctls + sysctls) for n in topo.nodes))
    if loss_rate:  # random loss on both paths, each direction, by the delay element
        topo = replace(topo, links=tuple(replace(lk, loss_rate=loss_rate) if lk.delayed else lk for lk in topo.links))
    return topo


def _transfers(steps: list[dict], lines: list[dict]) -> list[dict]:
    by_name = {ln["step"]: ln for ln in lines if "step" in ln}
    out = []
    for step in steps:
        ln = by_name.get(step["name"])
        for i, f in enumerate(step["flows"]):
            rec = (ln or {}).get("records", [None] * len(step["flows"]))[i] or {}
            tx = (ln or {}).get("tx_bytes", {})
            segs = (ln or {}).get("segs", {})
            out.append({
                "name": step["name"], "kind": step["kind"], "label": step["label"], "size_bytes": f["size_bytes"],
                "path": f["path"], "mptcp": f["mptcp"], "rate_bps": rec.get("rate_bps"),
                "completion_s": rec.get("completion_s"), "connect_s": rec.get("connect_s"), "bytes": rec.get("bytes"),
                "tx_bytes_p0": tx.get("p0"), "tx_bytes_p1": tx.get("p1"),
                "out_segs": segs.get("out_segs"), "retrans_segs": segs.get("retrans_segs"),
                "cc_effective": rec.get("cc_effective"),
                "subflow_cc": (ln or {}).get("subflow_cc") if step.get("watch_subflows") else None,
                "error": rec.get("error") if ln else "step not run",
            })
    return out


class Session(ServerTestbed):
    """A running two-path testbed with an MPTCP traffic server, reused across samples.

    Between samples only the delay elements are restarted with the new RTTs
    (:meth:`set_rtts`); namespaces, rate limiters, ARP entries and the server
    stay. Use as a context manager.

    Parameters
    ----------
    config : P2Config
        Path rate, buffer, socket buffers.
    rtt1_ms, rtt2_ms : float
        The first sample's round-trip delays of path 1 and path 2. [ms]
    loss_rate : float
        Random loss of each direction of both paths, by the delay elements (0: none; issue 57's
        item 4 uses it for a setting where the throughput follows the RTTs). [-]
    """

    server_node = "s"
    port = 5201
    mptcp = True

    def __init__(self, config: P2Config, rtt1_ms: float, rtt2_ms: float, *, loss_rate: float = 0.0):
        self.config = config
        self.rtts_ms = (float(rtt1_ms), float(rtt2_ms))
        self.loss_rate = float(loss_rate)

    def topology(self) -> Topology:
        """The two-path topology at the session's current RTTs.

        Returns
        -------
        tcpmodels.testbed.Topology
            :func:`~tcpmodels.testbed.topologies.two_path` with the configured rate and buffer,
            socket buffers up to ``sock_buf_max_bytes`` in every namespace, and the session's
            ``loss_rate`` on every delayed link.
        """
        return _topology(self.config, *self.rtts_ms, self.loss_rate)

    @_PARAMETERS.fill
    def set_rtts(self, rtt1_ms: float, rtt2_ms: float) -> None:
        """Restart the two delay elements with new round-trip delays [ms]; nothing else changes.

        Parameters
        ----------
        {rtt1_ms, rtt2_ms}
        """
        if (float(rtt1_ms), float(rtt2_ms)) == self.rtts_ms:
            return
        topo = _topology(self.config, rtt1_ms, rtt2_ms, self.loss_rate)
        for lk in topo.links:
            if lk.delayed:
                self.tb.set_link_delay(lk.name, lk.delay_s, loss_rate=lk.loss_rate)
        self.tb.topology = topo
        self.rtts_ms = (float(rtt1_ms), float(rtt2_ms))

    @_PARAMETERS.fill
    def run(self, steps: list[dict], *, capture_dir: Path | None = None, capture_stem: str = "",
            timeout_s: float = 900.0) -> dict:
        """Run ``steps`` from the client at the current RTTs.

        Parameters
        ----------
        {steps}
        capture_dir : Path, optional
            Capture the server's two interfaces here (snap length 128, the server's port only).
        capture_stem : str
            Prefix of the capture files (``{stem}_s-p0.pcap``, ``{stem}_s-p1.pcap``).
        timeout_s : float
            Longest wait for the client process. [s]

        Returns
        -------
        dict
            ``run_id, rtt_measured_ms, transfers`` (see :data:`TRANSFER_FIELDS`), ``tcp_ext`` (the
            server's and the client's TcpExt counters that moved during the steps, node -> name ->
            count: reordering events, DSACKs, out-of-order segments) and, with ``capture_dir``,
            ``captures`` (tcpdump statistics of the server's two interfaces).

        Raises
        ------
        tcpmodels.testbed.TestbedError
            If the traffic server has exited, or the client fails or times out.
        """
        import subprocess

        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed.capture import start_capture
        from tcpmodels.testbed.netns import tcp_ext_delta

        tb = self.tb
        if self.server.popen.poll() is not None:
            raise TestbedError("the traffic server has exited")
        tcp0 = {n: tb.tcp_ext_counters(n) for n in ("s", "c")}
        caps = []
        if capture_dir is not None:
            for iface in ("p0", "p1"):
                caps.append(start_capture(tb, "s", iface, Path(capture_dir) / f"{capture_stem}_s-{iface}.pcap",
                                          snaplen_bytes=128, bpf_filter=f"tcp port {self.port}"))
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        proc = tb.popen("c", [sys.executable, "-m", "tcpmodels.experiments.p2", "client", "--port", str(self.port)],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                        label="p2-client")
        try:
            out, err = proc.communicate(json.dumps(steps), timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.communicate()
            raise TestbedError(f"p2 client did not finish within {timeout_s} s") from exc
        finally:
            cap_stats = [c.stop() for c in caps]
        if proc.returncode != 0:
            raise TestbedError(f"p2 client failed (exit {proc.returncode}): {err.strip()[-2000:]}")
        lines = [json.loads(x) for x in out.splitlines() if x.strip()]
        head = next((ln for ln in lines if "rtt_measured_ms" in ln), {})
        result = {"run_id": tb.run_id, "rtt_measured_ms": head.get("rtt_measured_ms"),
                  "transfers": _transfers(steps, lines),
                  "tcp_ext": {n: tcp_ext_delta(tcp0[n], tb.tcp_ext_counters(n)) for n in ("s", "c")}}
        if capture_dir is not None:
            result["captures"] = cap_stats
        return result


@_PARAMETERS.fill
def measure(config: P2Config, rtt1_ms: float, rtt2_ms: float, steps: list[dict], **kwargs: Any) -> dict:
    """Build the two-path testbed for one RTT pair, run ``steps`` (see :meth:`Session.run`), tear down.

    Parameters
    ----------
    config : P2Config
        Rate, buffer and socket buffers of the testbed.
    {rtt1_ms, rtt2_ms, steps}
    **kwargs
        ``capture_dir``, ``capture_stem``, ``timeout_s`` of :meth:`Session.run`.

    Returns
    -------
    dict
        What :meth:`Session.run` returns.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        If the testbed or the client fails.
    """
    with Session(config, rtt1_ms, rtt2_ms) as session:
        return session.run(steps, **kwargs)


# --------------------------------------------------------------- campaigns
def cc_loaded(cc: str) -> AbstractContextManager:
    """Context: the BPF congestion control ``cc`` registered for the campaign (nothing for the kernel's own).

    Parameters
    ----------
    cc : str
        The campaign's MPTCP congestion control; a ``tm_*`` one is a BPF program.

    Returns
    -------
    contextlib.AbstractContextManager
        :func:`tcpmodels.testbed.kernel_cc.congestion_control` for a ``tm_*`` control, else a context that does
        nothing.
    """
    from contextlib import nullcontext

    if not cc.startswith("tm_"):
        return nullcontext()
    from tcpmodels.testbed import kernel_cc

    return kernel_cc.congestion_control(cc)


def ensure_cc(cc: str) -> None:
    """Register ``cc`` again if another process unregistered it between samples (its owner ended).

    Parameters
    ----------
    cc : str
        The campaign's MPTCP congestion control; nothing is done for one that is not ``tm_*``.
    """
    if not cc.startswith("tm_"):
        return
    from tcpmodels.testbed import kernel_cc

    if cc not in kernel_cc.available_congestion_controls():
        kernel_cc.load(cc, owner_pid=os.getpid(), replace=True)


def _run_plan(records_path, config: P2Config, plan: list[dict], steps: list[dict], *, desc: str,
              limit: int | None, progress: bool, lock_timeout_s: float, capture_for=None,
              yield_s: float = 0.5, key: tuple[str, ...] = SAMPLE_KEY, loss_rate: float = 0.0,
              stop_at_utc: str | None = None) -> int:
    """Run the samples of ``plan`` not yet in ``records_path``; one testbed reused (with ``loss_rate`` on both
    paths), host lock per sample; a BPF ``config.cc`` is registered for the whole call (and again before a
    sample if it went away)."""
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.records import JsonlRecords, git_state

    code = git_state(REPO)  # the code that ran: each record carries it

    def session_for(s, session):
        if session is None:
            return Session(config, s["rtt1_ms"], s["rtt2_ms"], loss_rate=loss_rate).__enter__()
        session.set_rtts(s["rtt1_ms"], s["rtt2_ms"])
        return session

    def measure(s, session):
        cap_dir, cap_stem = capture_for(s) if capture_for else (None, "")
        ensure_cc(config.cc)
        res = session.run(steps, capture_dir=cap_dir, capture_stem=cap_stem)
        rec = {"schema": SCHEMA, "path_rate_bps": config.rate_bps, "rtt_measured_ms": res["rtt_measured_ms"],
               "run_id": res["run_id"], "config_hash": config.hash(), "config": config.to_dict(),
               "git": code, "transfers": res["transfers"], "tcp_ext": res["tcp_ext"]}
        if "captures" in res:
            rec["captures"] = res["captures"]
        return rec

    records = JsonlRecords(records_path, key)
    if not records.pending(plan)[:limit]:
        return 0
    with cc_loaded(config.cc):
        return run_samples(records, plan, measure, desc=desc, session_for=session_for, limit=limit,
                           progress=progress, lock_timeout_s=lock_timeout_s, yield_s=yield_s,
                           stop_at_utc=stop_at_utc)


@_PARAMETERS.fill
def run_campaign(records_path: str | Path, config: P2Config = DEFAULT_CONFIG, *, limit: int | None = None,
                 progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None,
                 loss_rate: float = 0.0, desc: str = "p2 samples", stop_at_utc: str | None = None) -> int:
    """Run (or resume) the campaign; return the number of samples measured in this call.

    One testbed serves every sample (the delay elements are restarted with each
    sample's RTTs); the host lock is held around each sample only, so another
    campaign can interleave sample by sample. With ``config.cc`` ``tm_lia`` or
    ``tm_olia`` the BPF program is registered for the call
    (:func:`tcpmodels.testbed.kernel_cc.congestion_control`) and every socket,
    hence every MPTCP subflow, runs it; the records say which congestion control
    each subflow of the data transfer ran (``subflow_cc``).

    Parameters
    ----------
    records_path : str or Path
        JSONL file of sample records; samples already on file (same :data:`SAMPLE_KEY`: cc, data size, path rate,
        rep and RTT pair) are skipped.
    config : P2Config
        The campaign's setting.
    limit : int, optional
        Stop after this many new samples (used to time a few samples, and by tests).
    {progress, lock_timeout_s}
    plan : list of dict, optional
        Samples to run instead of :func:`sample_plan` (tests use a tiny grid).
    loss_rate : float
        Random loss of each direction of both paths (:class:`Session`; issue 57's item 4). [-]
    desc : str
        The campaign as the progress bar and the host lock name it.
    stop_at_utc : str, optional
        No sample starts after this UTC time (:func:`tcpmodels.experiments.campaign.run_samples`).

    Returns
    -------
    int
        Samples measured and recorded by this call.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed samples in a row.
    """
    plan = sample_plan(config) if plan is None else plan
    return _run_plan(records_path, config, plan, client_steps(config), desc=desc, limit=limit,
                     progress=progress, lock_timeout_s=lock_timeout_s, loss_rate=loss_rate, stop_at_utc=stop_at_utc)


@_PARAMETERS.fill
def run_sweep(records_path: str | Path, config: P2Config = DEFAULT_CONFIG, *, capture_dir: str | Path | None = None,
              pairs_ms: Sequence[tuple[float, float]] = FIG4_RTT_PAIRS_MS, progress: bool = True,
              lock_timeout_s: float = 1800.0, limit: int | None = None) -> int:
    """Fig. 4: MPTCP transfers of growing size for each RTT pair, ``fig4_reps`` times; resumable.

    With ``capture_dir``, repetition 0 of the pair (150, 120) ms is captured on the
    server's two interfaces (snaplen 128, TCP port of the traffic only).

    Parameters
    ----------
    records_path : str or Path
        JSONL file of the sweep's records (campaign ``"p2_fig4"``).
    config : P2Config
        Sizes (``fig4_sizes_bytes``), repetitions (``fig4_reps``) and testbed setting.
    capture_dir : str or Path, optional
        Folder of the captures described above.
    pairs_ms : sequence of (float, float)
        RTT pairs (path 1, path 2). [ms]
    {progress, lock_timeout_s}
    limit : int, optional
        Stop after this many new samples.

    Returns
    -------
    int
        Samples (RTT pair and repetition) measured by this call.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed samples in a row.
    """
    plan = [{"campaign": "p2_fig4", "cc": config.cc, "rep": rep, "rtt1_ms": float(a), "rtt2_ms": float(b),
             "order": i}
            for i, (rep, (a, b)) in enumerate((rep, p) for rep in range(config.fig4_reps) for p in pairs_ms)]

    def capture_for(s):
        if capture_dir is not None and s["rep"] == 0 and (s["rtt1_ms"], s["rtt2_ms"]) == (150.0, 120.0):
            return Path(capture_dir), f"p2_fig4_rtt{s['rtt1_ms']:g}-{s['rtt2_ms']:g}"
        return None, ""

    return _run_plan(records_path, config, plan, sweep_steps(config), desc="p2 fig4", limit=limit,
                     progress=progress, lock_timeout_s=lock_timeout_s, capture_for=capture_for, key=SWEEP_KEY)
