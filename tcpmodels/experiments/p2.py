"""Campaign of paper P2 (Hamazaki, Abe, Kato): probe and data throughput of MPTCP over two paths.

What one *sample* measures (one RTT pair, one repetition), in the paper's
direction client -> server (uploads), all with CUBIC and the kernel's own
MPTCP (v1, default packet scheduler, no coupled congestion control):

1. ``path_probe``: per-path single-path TCP probes, the two paths at once (the
   paths are disjoint), of 64, 128 and 256 KB per path -- totals 128/256/512 KB
   of Table 3. The 64 KB probe on path 1 doubles as the TCP probe of Table 2's
   TCP row.
2. ``mptcp_probe``: single MPTCP probes of each size of Tables 2 and 4
   (paper: 64 KB ... 128 MB; here scaled, see :class:`P2Config`).
3. ``mptcp_data``: the MPTCP data transfer.
4. ``tcp_data``: a single-path TCP data transfer of the same size on path 1 (Table 2, TCP row).

Each transfer's throughput is ``size / (t_last - t_conn)``: from ``connect()``
returning (handshake done) on the client to the last byte read by the server,
the same definition for probes and data (the traffic module's ``rate_bps``).
Bytes per path come from the client's interface counters (``/proc/net/dev``
in its namespace) read before and after each transfer; MPTCP's subflow-1 share
is the path-1 share of those bytes (headers included, the same on both paths).

The topology is :func:`~tcpmodels.testbed.topologies.two_path` with the delay
element. One testbed serves a whole campaign: between samples only the two delay
elements are restarted with the next sample's RTTs (:meth:`Session.set_rtts`).
Each sample (RTT change, measurement) runs inside the host lock
(:func:`tcpmodels.testbed.hostlock.host_lock`), released between samples so that
another campaign can interleave. ``tcp_rmem``/``tcp_wmem`` maxima are raised to
200 MB in both namespaces as in the paper (Table 1). Samples run one repetition
of the whole grid (shuffled) before the next, so a campaign cut short still
covers the grid evenly.

Scaling (:class:`P2Config`, :meth:`P2Config.scaling`): paths of 20 Mbit/s with a
375 kB drop-tail buffer (one BDP at 150 ms) instead of 1 Gbit/s; 4 MB data instead
of 256 MB, which keeps data / (2 x BDP at 150 ms) at 5.6 (paper about 7); probes of
64-512 KB as printed (they concern the handshake and first round trips, which do
not scale), the four larger MPTCP probes (2, 8, 32, 128 MB in the paper) spaced
geometrically from 768 KB to half the data size (128 MB is half of 256 MB).
Measured: about 18.5 s per sample at load 4-5 on 2 cores.

Records go to a JSONL file, one line per sample; ``run`` resumes where a file
stops. ``sweep`` measures Fig. 4 (subflow-1 share versus transfer size for RTT
pairs (150, 150), (150, 120), (120, 150) ms) and can keep captures.
``dataset`` turns the JSONL files into Parquet tables plus a provenance JSON.

Command line (root)::

    python -m tcpmodels.experiments.p2 run --records runs/p2/samples.jsonl
    python -m tcpmodels.experiments.p2 sweep --records runs/p2/fig4.jsonl --captures data/captures
    python -m tcpmodels.experiments.p2 dataset --records runs/p2/samples.jsonl --sweep runs/p2/fig4.jsonl --out data/datasets

References
----------
.. [1] Hamazaki, Abe, Kato, throughput prediction for Linux MPTCP (seed 001), Tables 1-6, Fig. 4-8.
.. [2] Lee et al., history-based throughput prediction with SVR from a probe.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from tcpmodels.experiments.campaign import ServerTestbed

__all__ = ["P2Config", "DEFAULT_CONFIG", "sample_plan", "client_steps", "run_campaign", "run_sweep",
           "build_dataset", "SAMPLE_FIELDS", "TRANSFER_FIELDS", "PAPER_PROBE_LABELS", "FIG4_RTT_PAIRS_MS"]

KB = 1024
MB = 1024 * 1024
REPO = Path(__file__).resolve().parents[2]

#: probe sizes of Tables 2 and 4 as printed, in order (all single MPTCP probes)
PAPER_PROBE_LABELS = ("64KB", "128KB", "256KB", "512KB", "2MB", "8MB", "32MB", "128MB")
#: per-path probe size of Table 3 (per path), keyed by the printed *total* over both paths
PAPER_PATH_PROBE_TOTALS = ("128KB", "256KB", "512KB")
#: RTT pairs (path 1, path 2) of Fig. 4 [ms]
FIG4_RTT_PAIRS_MS = ((150, 150), (150, 120), (120, 150))

#: fields of every sample record (JSONL line of ``run``)
SAMPLE_FIELDS = ("campaign", "schema", "rep", "rtt1_ms", "rtt2_ms", "order", "rtt_measured_ms", "load_avg",
                 "lock_wait_s", "wall_s", "started_utc", "run_id", "config_hash", "transfers")
#: fields of every transfer inside a record
TRANSFER_FIELDS = ("name", "kind", "label", "size_bytes", "path", "mptcp", "rate_bps", "completion_s", "connect_s",
                   "bytes", "tx_bytes_p0", "tx_bytes_p1", "out_segs", "retrans_segs", "error")

SCHEMA = 1


@dataclass(frozen=True, kw_only=True)
class P2Config:
    """Scaled setting of the P2 campaign.

    Parameters
    ----------
    rate_bps : float
        Rate limit of each path, both directions (paper: 1000BASE-T). [bit/s]
    buffer_bytes : int
        Drop-tail buffer at each rate limiter. [bytes]
    data_size_bytes : int
        Data transfer size (paper: 256 MB). [bytes]
    mptcp_probe_sizes_bytes : tuple of int
        Single MPTCP probe sizes standing for :data:`PAPER_PROBE_LABELS`, in order. [bytes]
    path_probe_sizes_bytes : tuple of int
        Per-path TCP probe sizes (per path) for the totals of Table 3. [bytes]
    rtts_ms : tuple of float
        Grid of path RTTs, applied to each path (paper: 120 ... 180 step 4). [ms]
    reps : int
        Repetitions of every RTT pair (paper: 2).
    cc : str
        Congestion control of every socket.
    sock_buf_max_bytes : int
        ``tcp_rmem``/``tcp_wmem`` maximum in both namespaces (paper: 200 MB). [bytes]
    seed : int
        Order of the samples (shuffled per repetition).
    """

    rate_bps: float = 20e6
    buffer_bytes: int = 375_000
    data_size_bytes: int = 4 * MB
    mptcp_probe_sizes_bytes: tuple[int, ...] = (64 * KB, 128 * KB, 256 * KB, 512 * KB, 768 * KB, 1 * MB,
                                                 3 * MB // 2, 2 * MB)
    path_probe_sizes_bytes: tuple[int, ...] = (64 * KB, 128 * KB, 256 * KB)
    rtts_ms: tuple[float, ...] = tuple(float(x) for x in range(120, 181, 4))
    reps: int = 2
    cc: str = "cubic"
    sock_buf_max_bytes: int = 200 * 1000 * 1000
    seed: int = 2
    fig4_sizes_bytes: tuple[int, ...] = (64 * KB, 128 * KB, 256 * KB, 512 * KB, 1 * MB, 2 * MB, 4 * MB)
    fig4_reps: int = 3

    def __post_init__(self):
        if len(self.mptcp_probe_sizes_bytes) != len(PAPER_PROBE_LABELS):
            raise ValueError(f"mptcp_probe_sizes_bytes must hold {len(PAPER_PROBE_LABELS)} sizes [bytes] "
                             f"(for {PAPER_PROBE_LABELS}); got {len(self.mptcp_probe_sizes_bytes)}")
        if len(self.path_probe_sizes_bytes) != len(PAPER_PATH_PROBE_TOTALS):
            raise ValueError(f"path_probe_sizes_bytes must hold {len(PAPER_PATH_PROBE_TOTALS)} sizes [bytes]; "
                             f"got {len(self.path_probe_sizes_bytes)}")
        for name in ("mptcp_probe_sizes_bytes", "path_probe_sizes_bytes", "fig4_sizes_bytes"):
            sizes = getattr(self, name)
            if any(s < 1 for s in sizes) or list(sizes) != sorted(sizes):
                raise ValueError(f"{name} [bytes] must be positive and increasing; got {sizes}")
        if not 1e5 <= self.rate_bps <= 1e10:
            raise ValueError(f"rate_bps [bit/s] must be in [1e5, 1e10]; got {self.rate_bps}")
        if not 1 <= self.data_size_bytes <= 2**34:
            raise ValueError(f"data_size_bytes [bytes] must be in [1, 2**34]; got {self.data_size_bytes}")
        if not self.rtts_ms or any(not 0 <= r <= 2000 for r in self.rtts_ms):
            raise ValueError(f"rtts_ms [ms] must be a non-empty list of values in [0, 2000]; got {self.rtts_ms}")
        if not 1 <= self.reps <= 10:
            raise ValueError(f"reps must be in [1, 10]; got {self.reps}")

    def to_dict(self) -> dict:
        return asdict(self)

    def hash(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]

    def scaling(self) -> dict:
        """How this setting relates to the paper's (Table 1): the numbers the report states."""
        bdp = self.rate_bps * 0.150 / 8
        return {
            "paper_rate_bps": 1e9, "rate_bps": self.rate_bps,
            "paper_data_size_bytes": 256 * MB, "data_size_bytes": self.data_size_bytes,
            "data_scale": self.data_size_bytes / (256 * MB),
            "bdp_per_path_at_150ms_bytes": bdp,
            "data_over_two_path_bdp": self.data_size_bytes / (2 * bdp),
            "paper_data_over_two_path_bdp": 256 * MB / (2 * 1e9 * 0.150 / 8),
            "mptcp_probe_sizes": dict(zip(PAPER_PROBE_LABELS, self.mptcp_probe_sizes_bytes)),
            "path_probe_sizes_per_path": dict(zip(PAPER_PATH_PROBE_TOTALS, self.path_probe_sizes_bytes)),
        }


DEFAULT_CONFIG = P2Config()


# ------------------------------------------------------------------ plans
def sample_plan(config: P2Config) -> list[dict]:
    """Every sample of the campaign, in run order: repetition 0 of all RTT pairs (shuffled), then 1, ...

    Running whole repetitions first means a campaign cut short still covers the
    whole grid once.
    """
    import numpy as np

    rng = np.random.default_rng(config.seed)
    pairs = [(r1, r2) for r1 in config.rtts_ms for r2 in config.rtts_ms]
    plan = []
    for rep in range(config.reps):
        for i in rng.permutation(len(pairs)):
            r1, r2 = pairs[int(i)]
            plan.append({"campaign": "p2", "rep": rep, "rtt1_ms": float(r1), "rtt2_ms": float(r2),
                         "order": len(plan)})
    return plan


def _label_size(size_bytes: int) -> str:
    return f"{size_bytes // MB}MB" if size_bytes % MB == 0 else f"{size_bytes // KB}KB"


def client_steps(config: P2Config, *, port: int = 5201) -> list[dict]:
    """The client's transfers of one sample, as steps (each step's flows run at the same time)."""
    paths = [("10.0.1.1", "10.0.1.2"), ("10.0.2.1", "10.0.2.2")]
    steps = []
    fid = 1

    def flow(size, mptcp, kind, path=None):
        nonlocal fid
        f = dict(flow_id=fid, kind=kind, dst=paths[0][1] if path is None else paths[path][1], port=port,
                 size_bytes=int(size), cc=config.cc, mptcp=mptcp, direction="upload",
                 bind=None if path is None else paths[path][0], start_s=0.0, sample_interval_s=0.0,
                 path=path)
        fid += 1
        return f

    for total, size in zip(PAPER_PATH_PROBE_TOTALS, config.path_probe_sizes_bytes):
        steps.append({"name": f"path_probe_{total}", "kind": "path_probe", "label": total,
                      "flows": [flow(size, False, "probe", 0), flow(size, False, "probe", 1)]})
    for label, size in zip(PAPER_PROBE_LABELS, config.mptcp_probe_sizes_bytes):
        steps.append({"name": f"mptcp_probe_{label}", "kind": "mptcp_probe", "label": label,
                      "flows": [flow(size, True, "probe")]})
    steps.append({"name": "mptcp_data", "kind": "mptcp_data", "label": "256MB",
                  "flows": [flow(config.data_size_bytes, True, "bulk")]})
    steps.append({"name": "tcp_data", "kind": "tcp_data", "label": "256MB",
                  "flows": [flow(config.data_size_bytes, False, "bulk", 0)]})
    return steps


def sweep_steps(config: P2Config, *, port: int = 5201) -> list[dict]:
    """One repetition of the Fig. 4 sweep: MPTCP transfers of every ``fig4_sizes_bytes``."""
    return [{"name": f"fig4_{_label_size(s)}", "kind": "fig4", "label": _label_size(s),
             "flows": [dict(flow_id=i + 1, kind="bulk", dst="10.0.1.2", port=port, size_bytes=int(s), cc=config.cc,
                            mptcp=True, direction="upload", bind=None, start_s=0.0, sample_interval_s=0.0,
                            path=None)]}
            for i, s in enumerate(config.fig4_sizes_bytes)]


# --------------------------------------------------------- in-namespace client
def _iface_tx_bytes() -> dict[str, int]:
    """Transmitted bytes per interface of the calling process's network namespace."""
    out = {}
    with open("/proc/net/dev", encoding="ascii") as fh:
        for line in fh.readlines()[2:]:
            name, rest = line.split(":", 1)
            out[name.strip()] = int(rest.split()[8])
    return out


def _tcp_segs() -> dict[str, int]:
    """``OutSegs`` and ``RetransSegs`` of the calling process's namespace (``/proc/net/snmp``). [segments]"""
    with open("/proc/net/snmp", encoding="ascii") as fh:
        rows = [line.split() for line in fh if line.startswith("Tcp:")]
    stats = dict(zip(rows[0][1:], rows[1][1:]))
    return {"out_segs": int(stats["OutSegs"]), "retrans_segs": int(stats["RetransSegs"])}


def _udp_rtt_ms(src: str, dst: str, port: int, count: int = 3) -> float | None:
    """Smallest RTT of ``count`` UDP echoes to the traffic server (the first also resolves ARP). [ms]"""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((src, 0))
    sock.settimeout(3.0)
    rtts = []
    for i in range(count):
        t0 = time.monotonic()
        sock.sendto(i.to_bytes(8, "big"), (dst, port))
        try:
            while True:
                data, _ = sock.recvfrom(2048)
                if int.from_bytes(data[:8], "big") == i:
                    break
            rtts.append((time.monotonic() - t0) * 1e3)
        except OSError:
            pass
    sock.close()
    return min(rtts) if rtts else None


def _client_main(steps: list[dict], port: int) -> None:
    """Run inside the client namespace: RTT check, then each step in order; one JSON line per step."""
    from tcpmodels.testbed import traffic

    out = sys.stdout
    lock = threading.Lock()
    rtts: list = [None, None]

    def probe(i, src, dst):
        rtts[i] = _udp_rtt_ms(src, dst, port)

    threads = [threading.Thread(target=probe, args=(i, f"10.0.{i + 1}.1", f"10.0.{i + 1}.2")) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.write(json.dumps({"rtt_measured_ms": rtts}) + "\n")
    out.flush()
    for step in steps:
        before, segs_before = _iface_tx_bytes(), _tcp_segs()
        recs: list = [None] * len(step["flows"])
        sys.stdout = io.StringIO()  # traffic.run_flow prints its record; we collect it instead
        try:
            def one(i, f):
                recs[i] = traffic.run_flow(f, time.monotonic(), lock)

            threads = [threading.Thread(target=one, args=(i, f)) for i, f in enumerate(step["flows"])]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.stdout = out
        after, segs_after = _iface_tx_bytes(), _tcp_segs()
        delta = {k: after.get(k, 0) - before.get(k, 0) for k in ("p0", "p1")}
        segs = {k: segs_after[k] - segs_before[k] for k in segs_after}
        out.write(json.dumps({"step": step["name"], "records": recs, "tx_bytes": delta, "segs": segs}) + "\n")
        out.flush()


# ------------------------------------------------------------- one sample
def _topology(config: P2Config, rtt1_ms: float, rtt2_ms: float):
    from tcpmodels.testbed import PathSpec, two_path

    topo = two_path([PathSpec(rate_bps=config.rate_bps, rtt_s=r * 1e-3, buffer_bytes=config.buffer_bytes)
                     for r in (rtt1_ms, rtt2_ms)])
    m = config.sock_buf_max_bytes
    sysctls = (("net.ipv4.tcp_rmem", f"4096 131072 {m}"), ("net.ipv4.tcp_wmem", f"4096 16384 {m}"))
    return replace(topo, nodes=tuple(replace(n, sysctls=n.sysctls + sysctls) for n in topo.nodes))


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
                "error": rec.get("error") if ln else "step not run",
            })
    return out


class Session(ServerTestbed):
    """A running two-path testbed with an MPTCP traffic server, reused across samples.

    Between samples only the delay elements are restarted with the new RTTs
    (:meth:`set_rtts`); namespaces, rate limiters, ARP entries and the server
    stay. Use as a context manager.
    """

    server_node = "s"
    port = 5201
    mptcp = True

    def __init__(self, config: P2Config, rtt1_ms: float, rtt2_ms: float):
        self.config = config
        self.rtts_ms = (float(rtt1_ms), float(rtt2_ms))

    def topology(self):
        return _topology(self.config, *self.rtts_ms)

    def on_server_started(self) -> None:
        # server records are not needed (upload replies carry the times); keep its pipe drained
        threading.Thread(target=lambda: [None for _ in self.server.popen.stdout], daemon=True).start()

    def set_rtts(self, rtt1_ms: float, rtt2_ms: float) -> None:
        """Restart the two delay elements with new round-trip delays [ms]; nothing else changes."""
        if (float(rtt1_ms), float(rtt2_ms)) == self.rtts_ms:
            return
        topo = _topology(self.config, rtt1_ms, rtt2_ms)
        for lk in topo.links:
            if lk.delayed:
                self.tb.set_link_delay(lk.name, lk.delay_s, loss_rate=lk.loss_rate)
        self.tb.topology = topo
        self.rtts_ms = (float(rtt1_ms), float(rtt2_ms))

    def run(self, steps: list[dict], *, capture_dir: Path | None = None, capture_stem: str = "",
            timeout_s: float = 900.0) -> dict:
        """Run ``steps`` from the client at the current RTTs.

        Returns
        -------
        dict
            ``run_id, rtt_measured_ms, transfers`` (see :data:`TRANSFER_FIELDS`) and, with
            ``capture_dir``, ``captures`` (tcpdump statistics of the server's two interfaces).
        """
        import subprocess

        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed.capture import start_capture

        tb = self.tb
        if self.server.popen.poll() is not None:
            raise TestbedError("the traffic server has exited")
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
                  "transfers": _transfers(steps, lines)}
        if capture_dir is not None:
            result["captures"] = cap_stats
        return result


def measure(config: P2Config, rtt1_ms: float, rtt2_ms: float, steps: list[dict], **kwargs) -> dict:
    """Build the two-path testbed for one RTT pair, run ``steps`` (see :meth:`Session.run`), tear down."""
    with Session(config, rtt1_ms, rtt2_ms) as session:
        return session.run(steps, **kwargs)


# --------------------------------------------------------------- campaigns
def _run_plan(records_path, config: P2Config, plan: list[dict], steps: list[dict], *, desc: str,
              limit: int | None, progress: bool, lock_timeout_s: float, capture_for=None,
              yield_s: float = 0.5) -> int:
    """Run the samples of ``plan`` not yet in ``records_path``; one testbed reused, host lock per sample."""
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.records import JsonlRecords

    def session_for(s, session):
        if session is None:
            return Session(config, s["rtt1_ms"], s["rtt2_ms"]).__enter__()
        session.set_rtts(s["rtt1_ms"], s["rtt2_ms"])
        return session

    def measure(s, session):
        cap_dir, cap_stem = capture_for(s) if capture_for else (None, "")
        res = session.run(steps, capture_dir=cap_dir, capture_stem=cap_stem)
        rec = {"schema": SCHEMA, "rtt_measured_ms": res["rtt_measured_ms"], "run_id": res["run_id"],
               "config_hash": config.hash(), "transfers": res["transfers"]}
        if "captures" in res:
            rec["captures"] = res["captures"]
        return rec

    records = JsonlRecords(records_path, ("campaign", "rep", "rtt1_ms", "rtt2_ms"))
    return run_samples(records, plan, measure, desc=desc, session_for=session_for, limit=limit, progress=progress,
                       lock_timeout_s=lock_timeout_s, yield_s=yield_s)


def run_campaign(records_path: str | Path, config: P2Config = DEFAULT_CONFIG, *, limit: int | None = None,
                 progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None) -> int:
    """Run (or resume) the campaign; return the number of samples measured in this call.

    One testbed serves every sample (the delay elements are restarted with each
    sample's RTTs); the host lock is held around each sample only, so another
    campaign can interleave sample by sample.

    Parameters
    ----------
    records_path : str or Path
        JSONL file of sample records; samples already on file (same rep and RTT pair) are skipped.
    limit : int, optional
        Stop after this many new samples (used to time a few samples, and by tests).
    plan : list of dict, optional
        Samples to run instead of :func:`sample_plan` (tests use a tiny grid).
    """
    plan = sample_plan(config) if plan is None else plan
    return _run_plan(records_path, config, plan, client_steps(config), desc="p2 samples", limit=limit,
                     progress=progress, lock_timeout_s=lock_timeout_s)


def run_sweep(records_path: str | Path, config: P2Config = DEFAULT_CONFIG, *, capture_dir: str | Path | None = None,
              pairs_ms=FIG4_RTT_PAIRS_MS, progress: bool = True, lock_timeout_s: float = 1800.0,
              limit: int | None = None) -> int:
    """Fig. 4: MPTCP transfers of growing size for each RTT pair, ``fig4_reps`` times; resumable.

    With ``capture_dir``, repetition 0 of the pair (150, 120) ms is captured on the
    server's two interfaces (snaplen 128, TCP port of the traffic only).
    """
    plan = [{"campaign": "p2_fig4", "rep": rep, "rtt1_ms": float(a), "rtt2_ms": float(b), "order": i}
            for i, (rep, (a, b)) in enumerate((rep, p) for rep in range(config.fig4_reps) for p in pairs_ms)]

    def capture_for(s):
        if capture_dir is not None and s["rep"] == 0 and (s["rtt1_ms"], s["rtt2_ms"]) == (150.0, 120.0):
            return Path(capture_dir), f"p2_fig4_rtt{s['rtt1_ms']:g}-{s['rtt2_ms']:g}"
        return None, ""

    return _run_plan(records_path, config, plan, sweep_steps(config), desc="p2 fig4", limit=limit,
                     progress=progress, lock_timeout_s=lock_timeout_s, capture_for=capture_for)


# ----------------------------------------------------------------- dataset
def _share(t: dict) -> float | None:
    a, b = t.get("tx_bytes_p0"), t.get("tx_bytes_p1")
    if a is None or b is None or a + b <= 0:
        return None
    return a / (a + b)


def samples_frame(records: list[dict]):
    """One row per sample: RTTs, load, and per transfer ``<name>_Bps`` (throughput [bytes/s]),
    for MPTCP transfers ``<name>_share1`` (path-1 share of the bytes [-]) and, for MPTCP transfers and the
    TCP data transfer, ``<name>_loss`` (retransmitted / sent segments of the client's namespace [-])."""
    import pandas as pd

    rows = []
    for r in records:
        row = {"rep": r["rep"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "order": r["order"],
               "rtt1_measured_ms": (r.get("rtt_measured_ms") or [None, None])[0],
               "rtt2_measured_ms": (r.get("rtt_measured_ms") or [None, None])[1],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "n_errors": sum(1 for t in r["transfers"] if t.get("error"))}
        for t in r["transfers"]:
            name = t["name"] if t["path"] is None or t["kind"] != "path_probe" else f"{t['name']}_path{t['path'] + 1}"
            rate = t.get("rate_bps")
            row[f"{name}_Bps"] = rate / 8 if rate and not t.get("error") else float("nan")
            if t["mptcp"]:
                sh = _share(t)
                row[f"{name}_share1"] = sh if sh is not None else float("nan")
            if t["kind"] in ("mptcp_data", "tcp_data", "mptcp_probe"):
                out, re_ = t.get("out_segs"), t.get("retrans_segs")
                row[f"{name}_loss"] = re_ / out if out and re_ is not None else float("nan")
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["rep", "rtt1_ms", "rtt2_ms"]).reset_index(drop=True)


def sweep_frame(records: list[dict]):
    """One row per Fig. 4 transfer: RTT pair, repetition, size, path-1 share, throughput."""
    import pandas as pd

    rows = []
    for r in records:
        for t in r["transfers"]:
            rows.append({"rep": r["rep"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "label": t["label"],
                         "size_bytes": t["size_bytes"], "share1": _share(t),
                         "Bps": t["rate_bps"] / 8 if t.get("rate_bps") and not t.get("error") else float("nan"),
                         "load_avg_1m": r["load_avg"][0]})
    return pd.DataFrame(rows)


def build_dataset(records_path: str | Path, sweep_path: str | Path | None, out_dir: str | Path,
                  config: P2Config = DEFAULT_CONFIG, *, note: str = "") -> dict:
    """Write ``p2_samples.parquet``, ``p2_fig4.parquet`` and ``p2_provenance.json`` to ``out_dir``."""
    from datetime import datetime

    from tcpmodels.records import JsonlRecords, git_state, host_facts, utc_now

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    recs = JsonlRecords(records_path, ("campaign", "rep", "rtt1_ms", "rtt2_ms")).read()
    if not recs:
        raise ValueError(f"no sample records in {records_path}")
    samples = samples_frame(recs)
    samples.to_parquet(out_dir / "p2_samples.parquet", index=False, compression="zstd")
    sweep_recs = JsonlRecords(sweep_path, ("campaign", "rep", "rtt1_ms", "rtt2_ms")).read() if sweep_path else []
    if sweep_recs:
        sweep_frame(sweep_recs).to_parquet(out_dir / "p2_fig4.parquet", index=False, compression="zstd")
    walls = [r["wall_s"] for r in recs]
    starts = sorted(r["started_utc"] for r in recs)
    from tcpmodels.testbed._system import tool_versions

    prov = {
        "dataset": "p2", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p2 dataset",
        "records": str(records_path), "sweep_records": str(sweep_path) if sweep_path else None,
        "n_samples": len(recs), "n_planned": len(config.rtts_ms) ** 2 * config.reps,
        "reps_present": sorted({r["rep"] for r in recs}),
        "n_fig4_records": len(sweep_recs),
        "campaign_first_sample_utc": starts[0], "campaign_last_sample_utc": starts[-1],
        "sample_wall_s": {"sum": round(sum(walls), 1), "median": round(sorted(walls)[len(walls) // 2], 2),
                          "max": round(max(walls), 2)},
        "lock_wait_s_sum": round(sum(r.get("lock_wait_s", 0.0) for r in recs), 1),
        "elapsed_first_to_last_sample_s": round(
            (datetime.fromisoformat(starts[-1]) - datetime.fromisoformat(starts[0])).total_seconds()
            + recs[[r["started_utc"] for r in recs].index(starts[-1])]["wall_s"], 1),
        "fig4_wall_s": round(sum(r["wall_s"] for r in sweep_recs), 1),
        "load_avg_1m": {"min": min(r["load_avg"][0] for r in recs), "max": max(r["load_avg"][0] for r in recs),
                        "median": sorted(r["load_avg"][0] for r in recs)[len(recs) // 2]},
        "transfer_errors": int(samples["n_errors"].sum()),
        "config": config.to_dict(), "config_hash": config.hash(), "scaling": config.scaling(),
        "throughput_definition": "size / (last byte read by the server - connect() returned on the client), "
                                 "client -> server (upload), the same for probes and data",
        "share_definition": "path-1 share of the client's transmitted interface bytes during the transfer",
        "congestion_control": config.cc, "mptcp": "Linux kernel MPTCP v1, in-kernel path manager, default scheduler, "
                                                   "uncoupled per-subflow congestion control",
        "host": host_facts(), "tools": tool_versions(), "git": git_state(REPO), "note": note,
        "files": sorted(p.name for p in out_dir.glob("p2_*.parquet")),
    }
    (out_dir / "p2_provenance.json").write_text(json.dumps(prov, indent=1) + "\n")
    return prov


# ------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.experiments.p2", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("run", "resume"):
        p = sub.add_parser(name, help="run or resume the campaign (the same: done samples are skipped)")
        p.add_argument("--records", required=True)
        p.add_argument("--limit", type=int)
        p.add_argument("--reps", type=int)
        p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("sweep", help="Fig. 4 subflow-share sweep")
    p.add_argument("--records", required=True)
    p.add_argument("--captures")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="JSONL records -> Parquet + provenance")
    p.add_argument("--records", required=True)
    p.add_argument("--sweep")
    p.add_argument("--out", required=True)
    p.add_argument("--note", default="")
    p = sub.add_parser("client", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=5201)
    args = parser.parse_args(argv)
    if args.cmd == "client":
        _client_main(json.loads(sys.stdin.read()), args.port)
        return 0
    config = DEFAULT_CONFIG
    from tcpmodels.experiments.campaign import campaign_errors

    with campaign_errors("p2"):
        if args.cmd in ("run", "resume"):
            if args.reps:
                config = replace(config, reps=args.reps)
            n = run_campaign(args.records, config, limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        elif args.cmd == "sweep":
            n = run_sweep(args.records, config, capture_dir=args.captures, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        else:
            prov = build_dataset(args.records, args.sweep, args.out, config, note=args.note)
            print(json.dumps({k: prov[k] for k in ("n_samples", "n_fig4_records", "sample_wall_s")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
