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
                    ``pandas.read_csv`` from the pipe with its default dtypes.
``tshark_analysis`` the same pipe with tshark's own analysis fields
                    (``tcp.analysis.retransmission``, ``fast_retransmission``,
                    ``spurious_retransmission``, ``out_of_order``): flows and their
                    retransmissions as Wireshark finds them.
``dpkt``            a dpkt loop building the same columns as our table, options
                    (MSS, window scale, SACK, timestamps, MPTCP) included, into a DataFrame,
                    the payload from the IP total length as dpkt users compute it
                    (``ip.len - 4 * ip.hl - 4 * tcp.off``; ``len(tcp.data)`` would count only
                    the bytes kept in a capture cut at the snap length). The wire length is
                    not compared: dpkt's reader does not give it.

For each, ``whole_s`` is the wall time from the parent's ``Popen`` to the table
being built (start-up included) and ``inproc_s`` the time inside the child from
after its imports; ``cpu_s`` is user + system time of the child and its children,
``rss_mb`` the peak resident memory of the child and ``rss_children_mb`` of the
largest of its children (tshark), all three taken when the table is built. Load
average before and after each run is kept.

Exactness is checked inside the benchmark, after the timed part, packet by
packet. Each engine writes the columns it shares with ours (integers, absent
options as our sentinels) and its frame numbers; the parent compares packets,
payload bytes and every column of :data:`CHECKED` with ours frame by frame
(dpkt's rows in order: its loop keeps no frame number), and for each differing
column notes the number of rows, a first frame with both values, for
``tshark_csv`` how many of those rows ``read_csv`` gave as float64 cells, and
how many equal tshark's own text, read again as strings (one more run of the
plain tshark command after the timed ones). Retransmissions of ``ours_flows``
(what tshark flags as retransmission, fast retransmission, spurious
retransmission or out-of-order) are compared with ``tshark_analysis`` frame by
frame and per flow. Timestamps are not compared (``read_csv`` parses
``frame.time_epoch`` as float64).

The differences found, and who is right (``interleaved_1M.pcap``, tshark 4.0.17,
pandas 3.1.1, dpkt 1.9.8; each checked frame by frame):

- ``tshark_csv``, the 64-bit MPTCP columns (``mptcp_send_key``, ``mptcp_recv_key``,
  ``mptcp_dsn``, ``mptcp_data_ack``): tshark prints every value right (its text equals
  ours in all 1,000,000 frames); ``read_csv`` loses them. It types a column chunk by
  chunk of rows: a chunk with an empty cell whose values all fit int64 becomes
  float64, exact only below 2^53 (a chunk with a value of 2^63 or more stays text),
  and the column is an object mix of both (``DtypeWarning``). Of the 5,122 differing
  rows (2 + 60 + 2,999 + 2,061) every one is a float64 cell. E.g. frame 934591, DSS
  option ``1e 16 20 0d 15 ce 82 cd 6f 8e 95 84 50 ff 3d 35 00 00 00 31 7a 60``
  (flags 0x0d: 4-byte data ACK 0x15ce82cd = 365855437, 8-byte DSN
  0x6f8e958450ff3d35 = 8038526780430040373, subflow sequence 49, data-level length
  31328): ours and tshark's ``rawdataseqno`` 8038526780430040373, ``read_csv``
  8.03852678043004e+18 = 8038526780430040064.
- ``dpkt``, ``payload_bytes`` (18,144 bytes fewer): the TSO super-segment of
  ``tcpdump_ipv4_tcp_http_xml_tso.pcap`` (frame 1; 9 copies, e.g. frame 43336) has
  IP total length 0; the dpkt users' formula gives 0 - 20 - 20 = -40, ours and
  tshark's ``tcp.len`` 1976 (tshark: "reported as 0, presumed to be because of TCP
  segmentation offload"): 9 x (1976 + 40) = 18,144. dpkt itself parses the segment
  (``IP.unpack`` takes the rest of the frame when the length is 0); the formula
  does not. No other row differs.
- ``tshark_analysis``, 36 retransmissions more than ours (9 flows): the packets of
  ``tcpdump_pptp.pcap``'s 10.1.1.10:1723 are each captured twice, the same IP packet
  byte for byte (IP ID and checksums included; the second copy of a frame shorter
  than 60 bytes has Ethernet padding), 0.1-0.24 ms apart: frames 8 and 9 there,
  50373 and 50377 in the 1M capture, IP ID 0x4fb6, sequence 2339250120, 156 bytes
  (210-byte frames identical). With no ACK in between, no timer fires after
  0.24 ms (RFC 6298: RTO of at least 1 s; Linux: 200 ms) and a retransmission
  would carry a new IP ID (this sender's advance by one a packet, 0x4fb4 to
  0x4fbb): the same packet seen twice, which
  :func:`tcpmodels.traces.flows` counts as ``duplicate_packets`` and tshark flags
  as a retransmission. That is 4 of them per
  copy (the SYN/ACK, two data segments, the FIN: frames 3, 9, 14, 20), 36 in 9
  copies, and every one of tshark's 36 extra frames is one of ours' duplicates;
  the other 63,425 are flagged by both, none by ours only.

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
import importlib.util as _ilu
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

_spec = _ilu.spec_from_file_location("child_env", Path(__file__).resolve().with_name("child_env.py"))
child_env = _ilu.module_from_spec(_spec)
_spec.loader.exec_module(child_env)
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
def _usage() -> dict:
    """CPU seconds and peak memory of this process and its waited-for children so far."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"rss_mb": me.ru_maxrss / 1024, "rss_children_mb": kids.ru_maxrss / 1024,
            "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime}


def _save(dumps: str, engine: str, name: str, values) -> None:
    """Write one column of ``engine`` for the row-by-row comparison: int64 (uint64 as their bit
    patterns) or bool, as ``dumps/engine/name.npy``."""
    import numpy as np

    v = np.asarray(values)
    if v.dtype != bool:
        v = v.view(np.int64) if v.dtype == np.uint64 else v.astype(np.int64)
    d = Path(dumps) / engine
    d.mkdir(parents=True, exist_ok=True)
    np.save(d / f"{name}.npy", v)


def _addr_int(strings) -> "np.ndarray":  # noqa: F821
    import socket

    import numpy as np
    import pandas as pd

    s = pd.Series(strings, dtype="category")
    cats = np.array([int.from_bytes(socket.inet_aton(str(c)), "big") for c in s.cat.categories], np.int64)
    codes = s.cat.codes.to_numpy()
    return np.where(codes >= 0, cats[codes] if len(cats) else 0, 0)


def _text_int(text: str, absent: int) -> int:
    """One field as tshark prints it (decimal, ``0x`` hex or empty; first of a comma list) -> int."""
    x = text.split(",")[0].strip()
    if not x:
        return absent
    return int(x, 16) if x.startswith("0x") else int(x)


def _parse_ints(col, absent: int) -> "np.ndarray":  # noqa: F821
    """A ``read_csv`` column (numbers, hex strings, NaN) -> int64 (uint64 bit patterns), absent -> ``absent``.

    A float cell gives the float's own integer value: what the DataFrame holds, not what tshark printed.
    """
    import numpy as np
    import pandas as pd

    s = pd.Series(col)
    out = np.full(len(s), absent, np.int64)
    has = s.notna().to_numpy()
    if not has.any():
        return out
    vals = s[has]
    if pd.api.types.is_numeric_dtype(vals):
        out[has] = vals.to_numpy().astype(np.uint64).astype(np.int64)
        return out
    # hex or decimal strings (pandas 3: the str dtype), or an object column of strings and floats
    ints = [int(v) if isinstance(v, (float, np.floating, int, np.integer)) else _text_int(str(v), absent)
            for v in vals]
    out[has] = np.array([v & 0xFFFFFFFFFFFFFFFF for v in ints], np.uint64).view(np.int64)
    return out


def _float_cells(col) -> "np.ndarray":  # noqa: F821
    """Cells of a ``read_csv`` column that hold a float64 value (not NaN)."""
    import numpy as np
    import pandas as pd

    s = pd.Series(col)
    if pd.api.types.is_float_dtype(s):
        return s.notna().to_numpy()
    if s.dtype == object:
        return np.fromiter((isinstance(v, float) and v == v for v in s), bool, len(s))
    return np.zeros(len(s), bool)


def _tshark_cmd(path: str, fields) -> list[str]:
    """The plain tshark command of ``tshark_csv`` / ``tshark_analysis`` (default preferences, absolute
    sequence numbers)."""
    cmd = ["tshark", "-r", path, "-n", "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields",
           "-E", "occurrence=f"]
    for f in fields:
        cmd += ["-e", f]
    return cmd


def _child_ours(path: str, kernel: str, with_flows: bool, res: dict, dumps: str, engine: str) -> None:
    t_in = time.time()
    import numpy as np

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
    res.update(_usage())
    res["inproc_s"] = res["t_done"] - t_imp
    res["import_s"] = t_imp - t_in
    # after the timed part: the columns compared row by row
    from tcpmodels.traces import pcapfile

    res["kernel"] = pcapfile.active_kernel() if hasattr(pcapfile, "active_kernel") else "numpy"
    res["packets"] = len(table)
    res["payload_bytes"] = int(table["payload_bytes"].sum())
    _save(dumps, engine, "frame", table["frame_index"].to_numpy().astype(np.int64) + 1)
    if ft is None:
        for c in CHECKED:
            _save(dumps, engine, c, _addr_int(table[c]) if c.endswith("_addr") else table[c].to_numpy())
        return
    res["flows"] = len(ft)
    res["retransmissions"] = int(ft["retransmitted_packets"].sum())
    res["per_flow"] = {f"{a} {b} {c} {d}": int(r) for a, b, c, d, r in zip(
        ft["src_addr"].astype(str), ft["src_port"], ft["dst_addr"].astype(str), ft["dst_port"],
        ft["retransmitted_packets"]) if r}
    # packets captured twice that occupy sequence space (tshark: retransmissions)
    from tcpmodels.traces.annotation import annotate

    an = annotate(table)
    is_dup = (an["is_duplicate"] & (an["seq_end_u"] > an["seq_u"])).to_numpy()
    dup = table[is_dup]
    counts = dup.groupby([dup["src_addr"].astype(str), "src_port", dup["dst_addr"].astype(str), "dst_port"]).size()
    res["per_flow_duplicates"] = {f"{a} {b} {c} {d}": int(n) for (a, b, c, d), n in counts.items()}
    _save(dumps, engine, "retransmission", an["is_retransmission"].to_numpy())
    _save(dumps, engine, "duplicate", is_dup)


def _child_tshark(path: str, analysis: bool, res: dict, dumps: str, engine: str) -> None:
    import numpy as np
    import pandas as pd

    fields = ANALYSIS if analysis else TSHARK
    # raw SACK edges (the only sequence-number fields without a _raw twin); everything else as installed
    cmd = _tshark_cmd(path, fields.values())
    t_imp = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    df = pd.read_csv(proc.stdout, sep="\t", header=None, names=list(fields))
    proc.wait()
    res["t_done"] = time.time()
    res.update(_usage())
    res["inproc_s"] = res["t_done"] - t_imp
    res["packets"] = len(df)
    # after the timed part; tshark prints one line per frame, so row i is frame i + 1
    if analysis:
        flag = df[["retrans", "fast", "spurious", "ooo"]].notna().any(axis=1)
        r = df[flag]
        counts = r.groupby(["src_addr", "src_port", "dst_addr", "dst_port"]).size()
        res["flows"] = int(df.groupby(["src_addr", "src_port", "dst_addr", "dst_port"]).ngroups)
        res["retransmissions"] = int(flag.sum())
        res["per_flow"] = {f"{a} {b} {c} {d}": int(n) for (a, b, c, d), n in counts.items()}
        _save(dumps, engine, "frame", np.arange(1, len(df) + 1))
        _save(dumps, engine, "retransmission", flag.to_numpy())
        return
    res["payload_bytes"] = int(df["payload_bytes"].sum())
    _save(dumps, engine, "frame", _parse_ints(df["frame_number"], 0))
    for c, absent in CHECKED.items():
        if c.endswith("_addr"):
            v = _addr_int(df[c])
        elif c == "has_timestamps":
            v = df["tsval"].notna().to_numpy()
        elif c == "sack_permitted":
            v = df[c].notna().to_numpy()
        else:
            v = _parse_ints(df[c], absent)
            fl = _float_cells(df[c])
            if fl.any():  # read_csv's type inference gave float64 cells: exact only below 2^53
                _save(dumps, engine, c + ".float", fl)
        _save(dumps, engine, c, v)


def _child_dpkt(path: str, res: dict, dumps: str, engine: str) -> None:
    import socket
    import struct

    import dpkt
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
    res.update(_usage())
    res["inproc_s"] = res["t_done"] - t_imp
    res["packets"] = len(df)
    res["payload_bytes"] = int(df["payload_bytes"].sum())
    # no frame numbers (the loop skips non-TCP records): rows are compared in order when the counts agree.
    # dpkt's pcap reader does not expose the record's original length: wire_bytes is not compared
    for c in names:
        if c != "wire_bytes":
            _save(dumps, engine, c, _addr_int(df[c]) if c.endswith("_addr") else df[c].to_numpy())


def child(engine: str, path: str, kernel: str, out: str, dumps: str) -> None:
    """Run one engine (in this process), write its result JSON to ``out`` and its columns under ``dumps``.

    Time, CPU seconds and peak memory are taken when the table is built; the columns for
    the row-by-row comparison are written after that.
    """
    res: dict = {"engine": engine}
    if engine in ("ours", "ours_flows"):
        _child_ours(path, kernel, engine == "ours_flows", res, dumps, engine)
    elif engine in ("tshark_csv", "tshark_analysis"):
        _child_tshark(path, engine == "tshark_analysis", res, dumps, engine)
    elif engine == "dpkt":
        _child_dpkt(path, res, dumps, engine)
    else:
        raise ValueError(engine)
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


def run_engine(engine: str, path: Path, kernel: str, dumps: Path) -> dict:
    """Run ``engine`` as a whole command in a child process; returns its measurements (its columns
    for the comparison are left under ``dumps / engine``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "res.json"
        env = child_env.python_env()
        load0 = os.getloadavg()[0]
        t0 = time.time()
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", engine, str(path), kernel,
                               str(out), str(dumps)], env=env, capture_output=True, text=True)
        wall = time.time() - t0
        if proc.returncode != 0 or not out.exists():
            return {"engine": engine, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1], "wall_s": wall}
        res = json.loads(out.read_text())
    res["whole_s"] = res.pop("t_done") - t0
    res["process_s"] = wall
    res["load1_before"], res["load1_after"] = load0, os.getloadavg()[0]
    return res


def _load(dumps: Path, engine: str, name: str):
    import numpy as np

    f = Path(dumps) / engine / f"{name}.npy"
    return np.load(f, mmap_mode="r") if f.exists() else None


def _aligned(dumps: Path, ours: str, eng: str, n_ours: int, n_peer: int):
    """Rows of ``ours`` and of ``eng`` that are the same frame: (frames, rows in ours, rows in eng),
    by frame number, or in order when ``eng`` has no frame numbers and the packet counts agree."""
    import numpy as np

    fo, fp = _load(dumps, ours, "frame"), _load(dumps, eng, "frame")
    if fo is None:
        return None
    if fp is None:
        if n_ours != n_peer:
            return None
        rows = np.arange(n_ours)
        return np.asarray(fo), rows, rows
    frames, ia, ib = np.intersect1d(fo, fp, assume_unique=True, return_indices=True)
    return frames, ia, ib


#: columns of 64-bit unsigned values (stored as int64 bit patterns)
UINT64 = ("mptcp_send_key", "mptcp_recv_key", "mptcp_dsn", "mptcp_data_ack")


def _show(col: str, v) -> int:
    """A stored value as the column means it (uint64 bit patterns back to unsigned)."""
    v = int(v)
    return v % (1 << 64) if col in UINT64 else v


def tshark_text_values(path: Path, columns: list[str], frames) -> dict:
    """tshark's own text of ``columns`` at ``frames``, parsed exactly (the plain command of
    ``tshark_csv``, read as strings): ``{column: {frame: value}}``; absent -> our sentinel."""
    import socket

    import numpy as np
    import pandas as pd

    fields = {"frame_number": TSHARK["frame_number"]}
    for c in columns:
        fields[c] = TSHARK["tsval"] if c == "has_timestamps" else TSHARK[c]
    want = np.unique(np.asarray(frames, np.int64))
    out: dict = {c: {} for c in columns}
    with subprocess.Popen(_tshark_cmd(str(path), list(fields.values())), stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as proc:
        for chunk in pd.read_csv(proc.stdout, sep="\t", header=None, names=list(fields), dtype=str,
                                 keep_default_na=False, quoting=3, chunksize=500_000):
            fr = chunk["frame_number"].astype(np.int64).to_numpy()
            sel = np.isin(fr, want)
            if not sel.any():
                continue
            for c in columns:
                for f, text in zip(fr[sel], chunk[c].to_numpy()[sel]):
                    if c.endswith("_addr"):
                        v = int.from_bytes(socket.inet_aton(text), "big") if text else 0
                    elif c in ("has_timestamps", "sack_permitted"):
                        v = int(bool(text))
                    else:
                        v = _text_int(text, CHECKED[c])
                    out[c][int(f)] = v
    return out


def compare(results: dict, dumps: Path, pcap: Path | None = None) -> dict:
    """Exactness against ``ours`` / ``ours_flows``, row by row: a note per engine.

    For ``tshark_csv`` and ``dpkt``: packets, payload bytes, and every column of :data:`CHECKED`
    frame by frame; a differing column is given with its number of rows, a first example,
    for ``tshark_csv`` how many of its rows ``read_csv`` gave as float64 cells, and (when
    ``pcap`` is given) how many of them equal tshark's own text, read again as strings in one
    more run of the plain tshark command after the timed ones. For ``tshark_analysis``: the
    frames flagged as retransmission by both, by tshark only (of them: packets captured twice,
    our duplicates) and by ours only, then the per-flow counts.
    """
    import numpy as np

    notes: dict = {}
    diffs: dict = {}  # engine -> [{column, frames, peer, ours, float64}]
    ours = results.get("ours")
    for eng, r in results.items():
        if "error" in r:
            notes[eng] = "error: " + r["error"]
        elif eng in ("tshark_csv", "dpkt") and ours and "error" not in ours:
            notes[eng], diffs[eng] = _compare_table(eng, r, ours, dumps)
        elif eng == "tshark_analysis" and "ours_flows" in results and "per_flow" in results["ours_flows"]:
            notes[eng] = _compare_retransmissions(r, results["ours_flows"], dumps)
        else:
            notes[eng] = ""
    pending = [d for ds in diffs.values() for d in ds]
    text = {}
    if pending and pcap is not None:
        text = tshark_text_values(pcap, sorted({d["column"] for d in pending}),
                                  np.concatenate([d["frames"] for d in pending]))
    for eng, ds in diffs.items():
        parts = []
        for d in ds:
            c, frames = d["column"], d["frames"]
            part = (f"{c}: {len(frames)} rows differ, e.g. frame {int(frames[0])}: {_show(c, d['peer'][0])} "
                    f"vs ours {_show(c, d['ours'][0])}")
            if d["float64"]:
                part += f", {d['float64']} of them float64 cells of read_csv's frame"
            if text:
                tv = [text[c].get(int(f)) for f in frames]
                n_ours = sum(v == _show(c, x) for v, x in zip(tv, d["ours"]))
                n_peer = sum(v == _show(c, x) for v, x in zip(tv, d["peer"]))
                part += f"; tshark's text equals ours in {n_ours} of {len(frames)}, {eng}'s in {n_peer}"
            parts.append(part)
        notes[eng] = "; ".join([notes[eng]] + parts)
    return notes


def _compare_table(eng: str, r: dict, ours: dict, dumps: Path) -> tuple[str, list]:
    """The summary of ``eng``'s packet table against ours and its differing columns."""
    import numpy as np

    head = []
    if r["packets"] != ours["packets"]:
        head.append(f"packets {r['packets']} vs {ours['packets']}")
    if r["payload_bytes"] != ours["payload_bytes"]:
        head.append(f"payload {r['payload_bytes']} vs {ours['payload_bytes']} "
                    f"({r['payload_bytes'] - ours['payload_bytes']:+d})")
    al = _aligned(dumps, "ours", eng, ours["packets"], r["packets"])
    if al is None:
        return "; ".join(head + ["rows not comparable (no frame numbers, packet counts differ)"]), []
    frames, ia, ib = al
    equal, differ, absent = [], [], []
    for c in CHECKED:
        b = _load(dumps, eng, c)
        if b is None:
            absent.append(c)
            continue
        a_v, b_v = np.asarray(_load(dumps, "ours", c))[ia], np.asarray(b)[ib]
        rows = np.flatnonzero(a_v != b_v)
        if not len(rows):
            equal.append(c)
            continue
        fl = _load(dumps, eng, c + ".float")
        differ.append({"column": c, "frames": frames[rows], "peer": b_v[rows], "ours": a_v[rows],
                       "float64": int(np.asarray(fl)[ib][rows].sum()) if fl is not None else 0})
    if not head and not differ:
        head.append(f"equal: packets, payload, {len(equal)} columns row by row")
    else:
        head.append(f"{len(equal)} of {len(equal) + len(differ)} columns equal row by row over "
                    f"{len(frames)} packets")
    if absent:
        head.append("not given: " + " ".join(absent))
    return "; ".join(head), differ


def _compare_retransmissions(r: dict, of: dict, dumps: Path) -> str:
    """Retransmissions of tshark's analysis against ours, frame by frame and per flow."""
    import numpy as np

    note = []
    al = _aligned(dumps, "ours_flows", "tshark_analysis", of["packets"], r["packets"])
    if al is not None:
        frames, ia, ib = al
        o = np.asarray(_load(dumps, "ours_flows", "retransmission"))[ia]
        dup = np.asarray(_load(dumps, "ours_flows", "duplicate"))[ia]
        t = np.asarray(_load(dumps, "tshark_analysis", "retransmission"))[ib]
        t_only, o_only = np.flatnonzero(t & ~o), np.flatnonzero(o & ~t)
        t_dup, t_rest = t_only[dup[t_only]], t_only[~dup[t_only]]
        note.append(f"frame by frame: {int((o & t).sum())} retransmissions flagged by both; {len(t_only)} by "
                    f"tshark only, {len(t_dup)} of them packets captured twice (ours: duplicates"
                    + (f", e.g. frame {int(frames[t_dup[0]])}" if len(t_dup) else "") + ")"
                    + (f", {len(t_rest)} not, e.g. frames {[int(f) for f in frames[t_rest[:3]]]}" if len(t_rest)
                       else "")
                    + f"; {len(o_only)} by ours only"
                    + (f", e.g. frames {[int(f) for f in frames[o_only[:3]]]}" if len(o_only) else ""))
    a, b = _by_flow(of["per_flow"]), _by_flow(r["per_flow"])
    dups = _by_flow(of.get("per_flow_duplicates", {}))
    keys = set(a) | set(b)
    differ = [k for k in keys if a.get(k, 0) != b.get(k, 0)]
    rec = {k: a.get(k, 0) + dups.get(k, 0) for k in keys | set(dups)}
    still = sorted(k for k in set(rec) | set(b) if rec.get(k, 0) != b.get(k, 0))
    note.append(f"per flow: {len(keys) - len(differ)} of {len(keys)} flows with retransmissions agree; "
                f"ours {sum(a.values())} vs tshark {sum(b.values())}"
                + (f", e.g. {sorted(differ)[:3]}" if differ else "")
                + f"; with ours' {sum(dups.values())} packets captured twice (tshark: retransmissions) "
                + (f"all {len(set(rec) | set(b))} flows agree" if not still
                   else f"{len(still)} flows still differ, e.g. {still[:3]}"))
    return "; ".join(note)


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
        child(*argv[1:6])
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
    child_env.warm_bytecode()
    with tempfile.TemporaryDirectory(prefix="pcap_ingest_") as dumps:
        for eng in order:
            r = run_engine(eng, opts.pcap, opts.kernel, Path(dumps))
            results[eng] = r
            if "error" in r:
                print(f"{eng:16s} error: {r['error']}", flush=True)
                continue
            print(f"{eng:16s} {r['packets']:>10,d} packets: whole {r['whole_s']:8.2f} s, in-process "
                  f"{r['inproc_s']:8.2f} s, CPU {r['cpu_s']:8.2f} s, RSS {r['rss_mb']:7.0f} MB (children "
                  f"{r['rss_children_mb']:.0f} MB), load {r['load1_before']:.1f}->{r['load1_after']:.1f}", flush=True)
        notes = compare(results, Path(dumps), opts.pcap)
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
