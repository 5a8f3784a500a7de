"""Packet-capture ingest, side by side with the tools people use: tcpmodels vs tshark | pandas vs dpkt.

Every engine runs as its users run it, as a whole command in its own process
(interpreter start-up, imports and the child tshark included), on the same file
in the same run:

``ours``            ``read_pcap(path)`` (the native reader; ``--kernel`` picks the
                    compiled kernel or the numpy path).
``ours_flows``      ``read_pcap`` + ``flows()``: the flow table with retransmissions.
``tshark_csv``      plain ``tshark -r FILE -T fields -E occurrence=f -e ...`` with the fields
                    of our packet table (Wireshark's default preferences but absolute
                    sequence numbers, for the SACK edges), its output read by
                    ``pandas.read_csv`` from the pipe with its default dtypes. On large
                    files read_csv infers types chunk by chunk, so a column of 64-bit MPTCP
                    keys / data sequence numbers that is empty in some chunks comes back
                    partly as float64 (precision lost; parsed as strings they equal ours).
``tshark_analysis`` the same pipe with tshark's own analysis fields
                    (``tcp.analysis.retransmission``, ``fast_retransmission``,
                    ``spurious_retransmission``, ``out_of_order``): flows and their
                    retransmissions as Wireshark finds them.
``dpkt``            a dpkt loop building the same columns as our table, options
                    (MSS, window scale, SACK, timestamps, MPTCP) included, into a DataFrame
                    (payload from the IP length as dpkt users compute it, which is wrong for a
                    TSO super-segment with IP length 0; the wire length is not compared,
                    dpkt's reader does not give it).

For each, ``whole_s`` is the wall time from the parent's ``Popen`` to the table
being built (start-up included) and ``inproc_s`` the time inside the child from
after its imports; ``cpu_s`` is user + system time of the child and its children,
``rss_mb`` the peak resident memory of the child and ``rss_children_mb`` of the
largest of its children (tshark). Load average before and after each run is kept.

Exactness is checked inside the benchmark, after the timed part: each engine
hashes the columns it shares with ours (sum and position-weighted sum of the
integer values, absent options as our sentinels), and the parent compares
packets, payload bytes and every shared column with ours; per-flow
retransmission counts of ``ours_flows`` are compared with ``tshark_analysis``
(ours counts what tshark flags as retransmission, fast retransmission, spurious
retransmission or out-of-order), after adding to ours the packets captured twice
that occupy sequence space: :func:`tcpmodels.traces.flows` calls them duplicates
and never retransmissions (same IP ID, sequence, flags, ...), while tshark flags
the second copy as a retransmission; the note gives both the raw and the
reconciled agreement. Timestamps are not compared (``read_csv``
parses ``frame.time_epoch`` as float64).

Input: the interleaved multi-flow captures of ``benchmarks/interleaved_capture.py``
(``/work/bigcaps/interleaved_{1M,10M}.pcap``). Results are appended to
``benchmarks/results/pcap_ingest.csv`` with the machine and versions.

Usage::

    python benchmarks/pcap_ingest.py --pcap /work/bigcaps/interleaved_1M.pcap
    python benchmarks/pcap_ingest.py --pcap ... --engines ours ours_flows --kernel numpy
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "pcap_ingest.csv"
ENGINES = ("ours", "ours_flows", "tshark_csv", "tshark_analysis", "dpkt")

#: our column -> tshark field (the fields of our packet table, as our tshark engine asks for them)
TSHARK = {
    "frame_number": "frame.number", "time_epoch": "frame.time_epoch", "wire_bytes": "frame.len",
    "captured_bytes": "frame.cap_len", "src_addr": "ip.src", "dst_addr": "ip.dst", "ip_id": "ip.id",
    "src_port": "tcp.srcport", "dst_port": "tcp.dstport", "seq": "tcp.seq_raw", "ack": "tcp.ack_raw",
    "flags": "tcp.flags", "window": "tcp.window_size_value", "tcp_header_bytes": "tcp.hdr_len",
    "payload_bytes": "tcp.len", "mss": "tcp.options.mss_val", "window_scale": "tcp.options.wscale.shift",
    "sack_permitted": "tcp.options.sack_perm", "sack_count": "tcp.options.sack.count",
    "sack_left": "tcp.options.sack_le", "sack_right": "tcp.options.sack_re",
    "tsval": "tcp.options.timestamp.tsval", "tsecr": "tcp.options.timestamp.tsecr",
    "mptcp_subtype": "tcp.options.mptcp.subtype", "mptcp_version": "tcp.options.mptcp.version",
    "mptcp_send_key": "tcp.options.mptcp.sendkey", "mptcp_recv_key": "tcp.options.mptcp.recvkey",
    "mptcp_recv_token": "tcp.options.mptcp.recvtok", "mptcp_dsn": "tcp.options.mptcp.rawdataseqno",
    "mptcp_subflow_seq": "tcp.options.mptcp.subflowseqno", "mptcp_data_len": "tcp.options.mptcp.datalvllen",
    "mptcp_data_ack": "tcp.options.mptcp.rawdataack",
}
ANALYSIS = {"src_addr": "ip.src", "src_port": "tcp.srcport", "dst_addr": "ip.dst", "dst_port": "tcp.dstport",
            "retrans": "tcp.analysis.retransmission", "fast": "tcp.analysis.fast_retransmission",
            "spurious": "tcp.analysis.spurious_retransmission", "ooo": "tcp.analysis.out_of_order"}
#: columns compared between engines; value used when the option is absent
CHECKED = {"wire_bytes": 0, "captured_bytes": 0, "src_addr": 0, "dst_addr": 0, "ip_id": 0, "src_port": 0,
           "dst_port": 0, "seq": 0, "ack": 0, "flags": 0, "window": 0, "tcp_header_bytes": 0, "payload_bytes": 0,
           "mss": -1, "window_scale": -1, "sack_permitted": 0, "sack_count": 0, "sack_left": 0, "sack_right": 0,
           "has_timestamps": 0, "tsval": 0, "tsecr": 0, "mptcp_subtype": -1, "mptcp_version": -1,
           "mptcp_send_key": 0, "mptcp_recv_key": 0, "mptcp_recv_token": 0, "mptcp_dsn": 0,
           "mptcp_subflow_seq": 0, "mptcp_data_len": 0, "mptcp_data_ack": 0}


# ----------------------------------------------------------------------------------------------- children
def _digest(values) -> str:
    """Order-sensitive hash of an integer column: sum and position-weighted sum, both mod 2^64."""
    import numpy as np

    v = np.asarray(values).astype(np.int64).astype(np.uint64)
    w = np.arange(1, len(v) + 1, dtype=np.uint64)
    return f"{int(v.sum(dtype=np.uint64)):016x}{int((v * w).sum(dtype=np.uint64)):016x}"


def _addr_int(strings) -> "np.ndarray":  # noqa: F821
    import socket

    import numpy as np
    import pandas as pd

    s = pd.Series(strings, dtype="category")
    cats = np.array([int.from_bytes(socket.inet_aton(str(c)), "big") for c in s.cat.categories], np.int64)
    return cats[s.cat.codes.to_numpy()]


def _parse_ints(col, absent: int) -> "np.ndarray":  # noqa: F821
    """A read_csv column (numbers, hex strings, NaN) -> int64 (uint64 bit patterns), absent -> ``absent``."""
    import numpy as np
    import pandas as pd

    s = pd.Series(col)
    out = np.full(len(s), absent, np.int64)
    has = s.notna().to_numpy()
    if not has.any():
        return out
    vals = s[has]
    if not pd.api.types.is_numeric_dtype(vals):  # hex strings (pandas 3: the str dtype) or mixed
        txt = vals.astype(str)
        ints = [int(x, 16) if x.startswith("0x") else int(float(x)) if "." in x else int(x) if x else absent
                for x in txt.str.split(",").str[0].str.strip()]
        out[has] = np.array([v & 0xFFFFFFFFFFFFFFFF for v in ints], np.uint64).view(np.int64)
        return out
    out[has] = vals.to_numpy().astype(np.uint64).astype(np.int64)
    return out


def _child_ours(path: str, kernel: str, with_flows: bool, res: dict) -> None:
    t_in = time.time()
    import numpy as np  # noqa: F401

    if kernel:
        os.environ["TCPMODELS_TRACE_KERNEL"] = kernel
    from tcpmodels.traces import flows, read_pcap

    t_imp = time.time()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = read_pcap(path)
        ft = flows(table) if with_flows else None
    res["t_done"] = time.time()
    res["inproc_s"] = res["t_done"] - t_imp
    res["import_s"] = t_imp - t_in
    from tcpmodels.traces import pcapfile

    res["kernel"] = pcapfile.active_kernel() if hasattr(pcapfile, "active_kernel") else "numpy"
    res["packets"] = len(table)
    res["payload_bytes"] = int(table["payload_bytes"].sum())
    if ft is None:
        digests = {}
        for c, absent in CHECKED.items():
            v = _addr_int(table[c]) if c.endswith("_addr") else table[c].to_numpy()
            digests[c] = _digest(v)
        res["digests"] = digests
    else:
        res["flows"] = len(ft)
        res["retransmissions"] = int(ft["retransmitted_packets"].sum())
        res["per_flow"] = {f"{a} {b} {c} {d}": int(r) for a, b, c, d, r in zip(
            ft["src_addr"].astype(str), ft["src_port"], ft["dst_addr"].astype(str), ft["dst_port"],
            ft["retransmitted_packets"]) if r}
        # after the timed part: packets captured twice that occupy sequence space (tshark: retransmissions)
        from tcpmodels.traces.annotation import annotate

        an = annotate(table)
        dup = table[(an["is_duplicate"] & (an["seq_end_u"] > an["seq_u"])).to_numpy()]
        counts = dup.groupby([dup["src_addr"].astype(str), "src_port", dup["dst_addr"].astype(str), "dst_port"]).size()
        res["per_flow_duplicates"] = {f"{a} {b} {c} {d}": int(n) for (a, b, c, d), n in counts.items()}


def _child_tshark(path: str, analysis: bool, res: dict) -> None:
    import pandas as pd

    fields = ANALYSIS if analysis else TSHARK
    # raw SACK edges (the only sequence-number fields without a _raw twin); everything else as installed
    cmd = ["tshark", "-r", path, "-n", "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields",
           "-E", "occurrence=f"]
    for f in fields.values():
        cmd += ["-e", f]
    t_imp = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    df = pd.read_csv(proc.stdout, sep="\t", header=None, names=list(fields))
    proc.wait()
    res["t_done"] = time.time()
    res["inproc_s"] = res["t_done"] - t_imp
    res["packets"] = len(df)
    if analysis:
        flag = df[["retrans", "fast", "spurious", "ooo"]].notna().any(axis=1)
        r = df[flag]
        counts = r.groupby(["src_addr", "src_port", "dst_addr", "dst_port"]).size()
        res["flows"] = int(df.groupby(["src_addr", "src_port", "dst_addr", "dst_port"]).ngroups)
        res["retransmissions"] = int(flag.sum())
        res["per_flow"] = {f"{a} {b} {c} {d}": int(n) for (a, b, c, d), n in counts.items()}
        return
    res["payload_bytes"] = int(df["payload_bytes"].sum())
    digests = {}
    for c, absent in CHECKED.items():
        if c.endswith("_addr"):
            v = _addr_int(df[c])
        elif c == "has_timestamps":
            v = df["tsval"].notna().to_numpy()
        elif c == "sack_permitted":
            v = df[c].notna().to_numpy()
        else:
            v = _parse_ints(df[c], absent)
        digests[c] = _digest(v)
    res["digests"] = digests


def _child_dpkt(path: str, res: dict) -> None:
    import socket
    import struct

    import dpkt
    import numpy as np
    import pandas as pd

    t_imp = time.time()
    names = list(CHECKED)
    rows = []
    unpack_i, unpack_q, unpack_h = struct.Struct(">I").unpack_from, struct.Struct(">Q").unpack_from, \
        struct.Struct(">H").unpack_from
    with open(path, "rb") as fh:
        reader = dpkt.pcap.Reader(fh)
        for _ts, buf in reader:
            wire = len(buf)  # replaced below by the record's original length
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            tcp = ip.data
            mss = wscale = -1
            sack_perm = sack_count = sack_l = sack_r = has_ts = tsval = tsecr = 0
            mp_sub = mp_ver = -1
            mp_skey = mp_rkey = mp_tok = mp_dsn = mp_sseq = mp_dlen = mp_dack = 0
            seen_sack = seen_key = seen_tok = seen_dsn = seen_dack = False
            for kind, data in dpkt.tcp.parse_opts(tcp.opts):
                n = len(data) + 2
                if kind == 2 and n == 4 and mss < 0:
                    mss = unpack_h(data)[0]
                elif kind == 3 and n == 3 and wscale < 0:
                    wscale = data[0]
                elif kind == 4:
                    sack_perm = 1
                elif kind == 5 and n >= 10 and not seen_sack:
                    sack_count, sack_l, sack_r = (n - 2) // 8, unpack_i(data)[0], unpack_i(data, 4)[0]
                    seen_sack = True
                elif kind == 8 and n == 10 and not has_ts:
                    has_ts, tsval, tsecr = 1, unpack_i(data)[0], unpack_i(data, 4)[0]
                elif kind == 30 and n >= 3:
                    sub = data[0] >> 4
                    if mp_sub < 0:
                        mp_sub = sub
                    if sub == 0:
                        if mp_ver < 0:
                            mp_ver = data[0] & 0x0F
                        if n >= 12 and not seen_key:
                            mp_skey = unpack_q(data, 2)[0]
                            if n >= 20:
                                mp_rkey = unpack_q(data, 10)[0]
                            if n >= 22:
                                mp_dlen = unpack_h(data, 18)[0]
                            seen_key = True
                    elif sub == 7 and n >= 12 and not seen_key:
                        mp_rkey, seen_key = unpack_q(data, 2)[0], True
                    elif sub == 1 and n == 12 and not seen_tok:
                        mp_tok, seen_tok = unpack_i(data, 2)[0], True
                    elif sub == 2:
                        fl = data[1]
                        alen = (8 if fl & 2 else 4) if fl & 1 else 0
                        mlen = ((8 if fl & 8 else 4) + 6) if fl & 4 else 0
                        if 4 + alen + mlen <= n:
                            if alen and not seen_dack:
                                mp_dack = unpack_q(data, 2)[0] if alen == 8 else unpack_i(data, 2)[0]
                                seen_dack = True
                            if mlen and not seen_dsn:
                                q = 2 + alen
                                mp_dsn = unpack_q(data, q)[0] if fl & 8 else unpack_i(data, q)[0]
                                q += 8 if fl & 8 else 4
                                mp_sseq, mp_dlen = unpack_i(data, q)[0], unpack_h(data, q + 4)[0]
                                seen_dsn = True
            rows.append((wire, len(buf), ip.src, ip.dst, ip.id, tcp.sport, tcp.dport, tcp.seq, tcp.ack,
                         tcp.flags, tcp.win, tcp.off * 4, ip.len - ip.hl * 4 - tcp.off * 4, mss, wscale,
                         sack_perm, sack_count, sack_l, sack_r, has_ts, tsval, tsecr, mp_sub, mp_ver, mp_skey,
                         mp_rkey, mp_tok, mp_dsn, mp_sseq, mp_dlen, mp_dack))
    df = pd.DataFrame(rows, columns=names)
    df["src_addr"] = df["src_addr"].map(socket.inet_ntoa).astype("category")
    df["dst_addr"] = df["dst_addr"].map(socket.inet_ntoa).astype("category")
    res["t_done"] = time.time()
    res["inproc_s"] = res["t_done"] - t_imp
    res["packets"] = len(df)
    res["payload_bytes"] = int(df["payload_bytes"].sum())
    # dpkt's pcap reader does not expose the record's original length: read it from the record headers
    res["digests"] = {c: _digest(_addr_int(df[c]) if c.endswith("_addr") else df[c].to_numpy().astype(np.uint64))
                      for c in names if c != "wire_bytes"}


def child(engine: str, path: str, kernel: str, out: str) -> None:
    """Run one engine (in this process), write its result JSON to ``out``."""
    import resource

    res: dict = {"engine": engine}
    if engine in ("ours", "ours_flows"):
        _child_ours(path, kernel, engine == "ours_flows", res)
    elif engine in ("tshark_csv", "tshark_analysis"):
        _child_tshark(path, engine == "tshark_analysis", res)
    elif engine == "dpkt":
        _child_dpkt(path, res)
    else:
        raise ValueError(engine)
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    res["rss_mb"] = me.ru_maxrss / 1024
    res["rss_children_mb"] = kids.ru_maxrss / 1024
    res["cpu_s"] = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    Path(out).write_text(json.dumps(res))


# ----------------------------------------------------------------------------------------------- parent
def _versions() -> dict:
    import dpkt
    import numpy
    import pandas

    ts = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"host": platform.node(), "cpu_model": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": numpy.__version__, "pandas": pandas.__version__, "dpkt": dpkt.__version__,
            "tshark": ts.split("(")[0].replace("TShark", "").strip() or ts,
            "tcpmodels_commit": commit + ("+dirty" if dirty else "")}


def run_engine(engine: str, path: Path, kernel: str) -> dict:
    """Run ``engine`` as a whole command in a child process; returns its measurements."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "res.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        load0 = os.getloadavg()[0]
        t0 = time.time()
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", engine, str(path), kernel,
                               str(out)], env=env, capture_output=True, text=True)
        wall = time.time() - t0
        if proc.returncode != 0 or not out.exists():
            return {"engine": engine, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1], "wall_s": wall}
        res = json.loads(out.read_text())
    res["whole_s"] = res.pop("t_done") - t0
    res["process_s"] = wall
    res["load1_before"], res["load1_after"] = load0, os.getloadavg()[0]
    return res


def compare(results: dict) -> dict:
    """Exactness against ``ours`` / ``ours_flows``: a note per engine ("" = equal)."""
    notes = {}
    ours = results.get("ours")
    for eng, r in results.items():
        if "error" in r:
            notes[eng] = "error: " + r["error"]
            continue
        if eng in ("tshark_csv", "dpkt") and ours and "digests" in ours:
            bad = [c for c, d in r["digests"].items() if ours["digests"].get(c) != d]
            diff = []
            if r["packets"] != ours["packets"]:
                diff.append(f"packets {r['packets']} vs {ours['packets']}")
            if r["payload_bytes"] != ours["payload_bytes"]:
                diff.append(f"payload {r['payload_bytes']} vs {ours['payload_bytes']}")
            if bad:
                diff.append("columns differ: " + " ".join(bad))
            notes[eng] = "; ".join(diff) or f"equal: packets, payload, {len(r['digests'])} columns"
        elif eng == "tshark_analysis" and "ours_flows" in results and "per_flow" in results["ours_flows"]:
            a, b = _by_flow(results["ours_flows"]["per_flow"]), _by_flow(r["per_flow"])
            dups = _by_flow(results["ours_flows"].get("per_flow_duplicates", {}))
            keys = set(a) | set(b)
            differ = [k for k in keys if a.get(k, 0) != b.get(k, 0)]
            rec = {k: a.get(k, 0) + dups.get(k, 0) for k in keys | set(dups)}
            still = sorted(k for k in set(rec) | set(b) if rec.get(k, 0) != b.get(k, 0))
            notes[eng] = (f"per-flow retransmissions: {len(keys) - len(differ)} of {len(keys)} flows with "
                          f"retransmissions agree; ours {sum(a.values())} vs tshark {sum(b.values())}"
                          + (f"; e.g. {sorted(differ)[:3]}" if differ else "")
                          + f"; with ours' {sum(dups.values())} packets captured twice (tshark: retransmissions) "
                          + (f"all {len(set(rec) | set(b))} flows agree" if not still
                             else f"{len(still)} flows still differ, e.g. {still[:3]}"))
        else:
            notes[eng] = ""
    return notes


def _by_flow(counts: dict[str, int]) -> dict[str, int]:
    """Counts keyed ``"src sport dst dport"`` with the ports as integers (``read_csv`` gives tshark's
    ports as floats when a column has gaps)."""
    out: dict[str, int] = {}
    for key, n in counts.items():
        a, b, c, d = key.split()
        k = f"{a} {int(float(b))} {c} {int(float(d))}"
        out[k] = out.get(k, 0) + n
    return out


def append_rows(results: dict, notes: dict, path: Path, kernel: str, versions: dict) -> None:
    cols = ["date_utc", "capture", "packets_in_file", "file_bytes", "engine", "kernel", "whole_s", "inproc_s",
            "import_s", "cpu_s", "rss_mb", "rss_children_mb", "packets", "payload_bytes", "flows", "retransmissions",
            "exact", "load1_before", "load1_after", "host", "cpu_model", "cores", "python", "numpy", "pandas",
            "dpkt", "tshark", "tcpmodels_commit"]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    new = not RESULTS.exists()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(RESULTS, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        if new:
            w.writeheader()
        for eng, r in results.items():
            if "error" in r:
                continue
            row = dict(r, date_utc=date, capture=path.name, file_bytes=path.stat().st_size, engine=eng,
                       kernel=r.get("kernel", kernel if eng.startswith("ours") else ""), exact=notes.get(eng, ""),
                       packets_in_file=_records(path), **versions)
            for k in ("whole_s", "inproc_s", "import_s", "cpu_s", "rss_mb", "rss_children_mb"):
                if isinstance(row.get(k), float):
                    row[k] = round(row[k], 3)
            w.writerow(row)


def _records(path: Path) -> int:
    """Records of a classic pcap, by walking its record headers (no decoding)."""
    import struct

    n = 0
    with open(path, "rb") as fh:
        magic = fh.read(24)[:4]
        endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        unpack = struct.Struct(endian + "IIII").unpack
        while True:
            h = fh.read(16)
            if len(h) < 16:
                return n
            fh.seek(unpack(h)[2], 1)
            n += 1


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        child(*argv[1:5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pcap", type=Path, required=True, help="capture (from benchmarks/interleaved_capture.py)")
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--kernel", default="", choices=["", "auto", "c", "numpy"],
                    help="our decoding kernel (default: the package's default)")
    ap.add_argument("--no-save", action="store_true", help="do not append to benchmarks/results/pcap_ingest.csv")
    opts = ap.parse_args(argv)
    versions = _versions()
    print(f"{opts.pcap} ({opts.pcap.stat().st_size / 1e6:.0f} MB) on {versions['cpu_model']}, {versions['cores']} "
          f"cores, load {os.getloadavg()}", flush=True)
    results = {}
    order = [e for e in ENGINES if e in opts.engines]
    for eng in order:
        r = run_engine(eng, opts.pcap, opts.kernel)
        results[eng] = r
        if "error" in r:
            print(f"{eng:16s} error: {r['error']}", flush=True)
            continue
        print(f"{eng:16s} {r['packets']:>10,d} packets: whole {r['whole_s']:8.2f} s, in-process {r['inproc_s']:8.2f} s, "
              f"CPU {r['cpu_s']:8.2f} s, RSS {r['rss_mb']:7.0f} MB (children {r['rss_children_mb']:.0f} MB), "
              f"load {r['load1_before']:.1f}->{r['load1_after']:.1f}", flush=True)
    notes = compare(results)
    for eng, note in notes.items():
        if note:
            print(f"{eng:16s} {note}")
    ours = results.get("ours", {})
    for eng in ("tshark_csv", "dpkt"):
        r = results.get(eng, {})
        if "whole_s" in r and "whole_s" in ours:
            print(f"ours vs {eng}: {r['whole_s'] / ours['whole_s']:.1f}x (whole commands, wall), "
                  f"{r['inproc_s'] / ours['inproc_s']:.1f}x (in-process, wall), "
                  f"{r['cpu_s'] / ours['cpu_s']:.1f}x (CPU seconds, whole commands)")
    if "ours_flows" in results and "tshark_analysis" in results and "whole_s" in results["tshark_analysis"] \
            and "whole_s" in results["ours_flows"]:
        print(f"ours_flows vs tshark_analysis: "
              f"{results['tshark_analysis']['whole_s'] / results['ours_flows']['whole_s']:.1f}x (whole commands)")
    if not opts.no_save:
        append_rows(results, notes, opts.pcap, opts.kernel, versions)
        print(f"appended to {RESULTS}")


if __name__ == "__main__":
    main()
