"""The client process P2 runs inside the client namespace (``python -m tcpmodels.experiments.p2 client``)."""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from collections.abc import Collection

__all__ = ["client_main", "parse_ss_subflows"]


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


def parse_ss_subflows(text: str, known: Collection[str] | None = None) -> list[dict]:
    """The TCP sockets of ``ss -tinH`` output: local and peer address, congestion control, MPTCP subflow or not.

    Parameters
    ----------
    text : str
        Output of ``ss -t -i -n -H`` (a socket line, then its indented information line).
    known : collection of str, optional
        The congestion control names to look for; default
        :data:`tcpmodels.testbed.workload.CONGESTION_CONTROLS` (imported here when not given).

    Returns
    -------
    list of dict
        One per socket: ``local``, ``peer`` (``address:port``), ``cc`` (the first token of the
        information line that names a congestion control the project knows, else None) and
        ``mptcp_subflow`` (the information line names the ``tcp-ulp-mptcp`` upper layer).
    """
    if known is None:
        from tcpmodels.testbed.workload import CONGESTION_CONTROLS as known
    out: list[dict] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            toks = line.split()
            if len(toks) >= 2:
                out.append({"local": toks[-2], "peer": toks[-1], "cc": None, "mptcp_subflow": False})
        elif out:
            toks = line.split()
            out[-1]["cc"] = next((t for t in toks if t in known), out[-1]["cc"])
            out[-1]["mptcp_subflow"] = out[-1]["mptcp_subflow"] or "tcp-ulp-mptcp" in toks
    return out


class _SubflowWatch(threading.Thread):
    """Polls ``ss`` in the calling namespace while a step runs: every established TCP socket to the server
    port seen (a connection of an earlier step may still be open and appear too: count paths, not sockets)."""

    def __init__(self, port: int, interval_s: float = 0.2):
        # the names imported here, before the step starts: importing tcpmodels.testbed.workload (and with it
        # tcpmodels.congestion and the models) takes about 1.2 s, and done by the thread's first parse it
        # outlasted a 0.5 s transfer, so no poll saw a subflow
        from tcpmodels.testbed.workload import CONGESTION_CONTROLS

        super().__init__(daemon=True)
        self.known = frozenset(CONGESTION_CONTROLS)
        self.port, self.interval_s = port, interval_s
        self.stop_event = threading.Event()
        self.seen: dict[str, dict] = {}
        self.problem: str | None = None

    def run(self) -> None:
        import subprocess

        while True:
            try:
                proc = subprocess.run(["ss", "-tinH", "state", "established", "dport", "=", f":{self.port}"],
                                      capture_output=True, text=True, timeout=5, check=False)
                for sock in parse_ss_subflows(proc.stdout, self.known):
                    if sock["cc"]:
                        self.seen[sock["local"]] = sock
            except (OSError, subprocess.SubprocessError) as exc:
                self.problem = str(exc)
            if self.stop_event.wait(self.interval_s):
                return

    def finish(self) -> list[dict]:
        self.stop_event.set()
        self.join(timeout=10)
        return sorted(self.seen.values(), key=lambda s: s["local"])


def client_main(steps: list[dict], port: int) -> None:
    """Run inside the client namespace: RTT check, then each step in order; one JSON line per step.

    The first line is ``{"rtt_measured_ms": [path 1, path 2]}`` (smallest of a few UDP echo
    round trips [ms], None when none came back); then per step
    ``{"step", "records", "tx_bytes", "segs"}``: the flow records, the bytes each interface
    (``p0``, ``p1``) sent during the step and the namespace's TCP segment counters; a step with
    ``"watch_subflows": True`` adds ``subflow_cc``: every TCP socket to the server port that ``ss``
    showed during the step (:func:`parse_ss_subflows`, polled every 0.2 s).

    Parameters
    ----------
    steps : list of dict
        :func:`client_steps` or :func:`sweep_steps`; the flows of one step run at the same time.
    port : int
        UDP echo port of the server, for the RTT check.
    """
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
        watch = _SubflowWatch(port) if step.get("watch_subflows") else None
        if watch is not None:
            watch.start()
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
        line = {"step": step["name"], "records": recs, "tx_bytes": delta, "segs": segs}
        if watch is not None:
            line["subflow_cc"] = watch.finish()
            if watch.problem and not line["subflow_cc"]:
                line["subflow_cc_problem"] = watch.problem
        out.write(json.dumps(line) + "\n")
        out.flush()
