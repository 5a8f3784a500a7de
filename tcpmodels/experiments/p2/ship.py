"""Ship the Fig. 4 sample captures of a P2 sweep: the notebook's packet-level check of the subflow shares.

``p2 sweep --captures DIR`` captures repetition 0 of the pair (150, 120) ms on the server's two
interfaces (snaplen 128 bytes, :meth:`~tcpmodels.experiments.p2.kernel.Session.run`).
:func:`ship_sweep_captures` gzips those pcaps into ``data/captures`` and writes beside each a JSON
note: what was captured, where, with which tool and filter, tcpdump's counts, the sample's record
(RTTs measured, load), the subflow-1 shares the interface counters gave per size (the notebook
compares them with the shares read from the packets), the configuration, tools, host, and the
commit of the code that ran the sweep.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tcpmodels.experiments.p2.dataset import path1_share
from tcpmodels.experiments.p2.kernel import SWEEP_KEY

__all__ = ["ship_sweep_captures"]

_RECORD_FIELDS = ("campaign", "cc", "path_rate_bps", "rep", "rtt1_ms", "rtt2_ms", "run_id", "started_utc",
                  "rtt_measured_ms", "load_avg")


def ship_sweep_captures(sweep_records: str | Path, capture_dir: str | Path, out_dir: str | Path = "data/captures",
                        *, allow_dirty: bool = False) -> list[Path]:
    """Gzip the captured sweep samples' pcaps into ``out_dir``, each with its JSON note.

    Parameters
    ----------
    sweep_records : str or Path
        JSONL records of ``p2 sweep --captures`` (:func:`~tcpmodels.experiments.p2.kernel.run_sweep`).
    capture_dir : str or Path
        The ``--captures`` folder of that sweep (``p2_fig4_rtt150-120_s-p0.pcap`` and ``-p1``).
    out_dir : str or Path
        Where the ``.pcap.gz`` files and notes go (the notebook reads ``data/captures``).
    allow_dirty : bool
        Accept records of a sweep that ran from a tree with uncommitted changes (the note says so).

    Returns
    -------
    list of Path
        The notes written, one per interface of each captured sample.

    Raises
    ------
    ValueError
        If no record carries captures, or a captured record's code is unknown or had uncommitted
        changes (and not ``allow_dirty``).
    FileNotFoundError
        If a captured record's pcap is not in ``capture_dir``.
    """
    from tcpmodels.records import JsonlRecords, gzip_reproducibly, host_facts
    from tcpmodels.testbed import tool_versions

    recs = [r for r in JsonlRecords(sweep_records, SWEEP_KEY).read() if r.get("captures")]
    if not recs:
        raise ValueError(f"{sweep_records}: no sweep record carries captures (run `p2 sweep --captures DIR`)")
    for r in recs:
        git = r.get("git") or {}
        if not allow_dirty and (not git.get("commit") or git.get("dirty") is not False):
            raise ValueError(f"{sweep_records}: the sample rep {r['rep']} ({r['rtt1_ms']:g}, {r['rtt2_ms']:g}) ms "
                             f"ran from code {git or 'of unknown commit'}; expected a clean commit "
                             "(or allow_dirty=True)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    host, tools = host_facts(), tool_versions()
    notes = []
    for r in recs:
        shares = [{"size_bytes": t["size_bytes"], "share1": path1_share(t)} for t in r["transfers"]]
        sizes = ", ".join(f"{t['size_bytes'] // 1024} KiB" for t in r["transfers"])
        for stats in r["captures"]:
            src = Path(capture_dir) / Path(stats["path"]).name
            if not src.exists():
                raise FileNotFoundError(f"{src}: the capture of sample rep {r['rep']} "
                                        f"({r['rtt1_ms']:g}, {r['rtt2_ms']:g}) ms is not in {capture_dir}")
            dst = out_dir / (src.name + ".gz")
            gzip_reproducibly(src, dst)
            iface = stats["interface"]
            note = {
                "capture": dst.name,
                "what": (f"Fig. 4 sweep ({r.get('cc')} subflows, {r.get('path_rate_bps', 0) / 1e6:g} Mbit/s paths), "
                         f"repetition {r['rep']}, RTT1 = {r['rtt1_ms']:g} ms, RTT2 = {r['rtt2_ms']:g} ms: MPTCP "
                         f"uploads (client -> server) of {sizes}, one after another"),
                "capture_point": (f"server namespace, interface {iface} (path {int(iface[-1]) + 1}), after the "
                                  "client's rate limiter and the delay element"),
                "filter": "tcp port 5201",
                "snaplen_bytes": stats.get("snaplen_bytes"),
                "tool": "tcpdump -U (tcpmodels.testbed.capture)",
                "tcpdump_stats": {k: stats[k] for k in ("packets_captured", "packets_received_by_filter",
                                                        "packets_dropped_by_kernel") if k in stats},
                "compressed": "gzip -9 (no name, mtime 0)",
                "bytes_gz": dst.stat().st_size,
                "sha256_gz": hashlib.sha256(dst.read_bytes()).hexdigest(),
                "record": {k: r[k] for k in _RECORD_FIELDS if k in r},
                "counter_shares": shares,
                "config": r.get("config"),
                "tools": tools,
                "host": host,
                "git": r.get("git"),
                "generator": "python -m tcpmodels.experiments.p2 sweep --captures DIR; "
                             "python -m tcpmodels.experiments.p2 ship-captures",
            }
            path = out_dir / (src.name.removesuffix(".pcap") + ".json")
            path.write_text(json.dumps(note, indent=1) + "\n")
            notes.append(path)
    return notes


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("use: python -m tcpmodels.experiments.p2 ship-captures")
