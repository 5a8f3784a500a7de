"""Wireshark-based engines for :func:`tcpmodels.traces.read_pcap`: ``tshark -T fields`` and pyshark.

The tshark engine is the cross-check of the native one: it asks Wireshark's
dissectors for every column of the packet table (``-E occurrence=f``: the first
occurrence of each field, as the native engine keeps) with absolute sequence
numbers and IP reassembly on, as the native engine reassembles: a reassembled
segment is the row of the frame that completed it, with the frame lengths of all
its fragments summed, and the other fragments are counted as
``ip_fragment_reassembled``.

The pyshark engine gives Wireshark's full dissection packet by packet for users
who want to inspect more fields; it is slow (pyshark parses tshark's PDML/JSON in
Python, a few thousand packets per second) and returns the same table.

References
----------
.. [1] Wireshark display filter reference, ``tcp`` and ``mptcp`` fields, https://www.wireshark.org/docs/dfref/t/tcp.html
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where it is used: streaming a capture's flows starts without it
    import pandas as pd

from tcpmodels._docstrings import SharedEntries

from .pcapfile import CaptureFileError
from .schema import ReadAccounting, conform, empty_table

__all__ = ["tshark_path", "read_with_wireshark", "TSHARK_FIELDS", "TSHARK_MISSING"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    path : str
        Capture file.
    extra_prefs : list of str, optional
        ``name:value`` preferences added to :data:`TSHARK_PREFS`.
    occurrence : {"f", "l", "a"}
        First, last or all (comma-separated) occurrences of a repeated field.
""")

TSHARK_MISSING = ("tshark (Wireshark's command-line dissector) was not found on PATH. Install it with "
                  "`sudo apt-get install tshark` (Debian/Ubuntu), `sudo dnf install wireshark-cli` (Fedora), "
                  "`brew install wireshark` (macOS), or `make system-deps` in this repository; "
                  "the native engine (engine=\"native\") does not need it.")

#: packet-table column (or helper name) -> tshark field
TSHARK_FIELDS = {
    "frame_number": "frame.number",
    "protocols": "frame.protocols",
    "interface_id": "frame.interface_id",
    "time_epoch": "frame.time_epoch",
    "wire_bytes": "frame.len",
    "captured_bytes": "frame.cap_len",
    "ip4_src": "ip.src",
    "ip4_dst": "ip.dst",
    "ip6_src": "ipv6.src",
    "ip6_dst": "ipv6.dst",
    "ip_id": "ip.id",
    "ip_mf": "ip.flags.mf",
    "ip_frag_offset": "ip.frag_offset",
    "ip6_frag": "ipv6.fraghdr.offset",
    "ip6_more": "ipv6.fraghdr.more",
    "ip_fragments": "ip.fragment",
    "ip6_fragments": "ipv6.fragment",
    "src_port": "tcp.srcport",
    "dst_port": "tcp.dstport",
    "seq": "tcp.seq_raw",
    "ack": "tcp.ack_raw",
    "flags": "tcp.flags",
    "window": "tcp.window_size_value",
    "tcp_header_bytes": "tcp.hdr_len",
    "payload_bytes": "tcp.len",
    "mss": "tcp.options.mss_val",
    "window_scale": "tcp.options.wscale.shift",
    "sack_perm": "tcp.options.sack_perm",
    "sack_count": "tcp.options.sack.count",
    "sack_left": "tcp.options.sack_le",
    "sack_right": "tcp.options.sack_re",
    "tsval": "tcp.options.timestamp.tsval",
    "tsecr": "tcp.options.timestamp.tsecr",
    "mptcp_subtype": "tcp.options.mptcp.subtype",
    "mptcp_version": "tcp.options.mptcp.version",
    "mptcp_send_key": "tcp.options.mptcp.sendkey",
    "mptcp_recv_key": "tcp.options.mptcp.recvkey",
    "mptcp_recv_token": "tcp.options.mptcp.recvtok",
    "mptcp_dsn": "tcp.options.mptcp.rawdataseqno",
    "mptcp_subflow_seq": "tcp.options.mptcp.subflowseqno",
    "mptcp_data_len": "tcp.options.mptcp.datalvllen",
    "mptcp_data_ack": "tcp.options.mptcp.rawdataack",
}
TSHARK_PREFS = ["tcp.relative_sequence_numbers:FALSE", "tcp.analyze_sequence_numbers:FALSE",
                "ip.defragment:TRUE", "ipv6.defragment:TRUE", "tcp.desegment_tcp_streams:FALSE",
                "mptcp.analyze_mptcp:FALSE", "mptcp.relative_sequence_numbers:FALSE"]


def tshark_path() -> str:
    """Path of tshark, or RuntimeError saying how to install it.

    Returns
    -------
    str
        The tshark executable found on ``PATH``.

    Raises
    ------
    RuntimeError
        When tshark is not installed (the message says how to install it).
    """
    exe = shutil.which("tshark")
    if exe is None:
        raise RuntimeError(TSHARK_MISSING)
    return exe


#: Fields of the (inner, when tunnelled) IP header: their last occurrence is kept, of the others the first.
IP_FIELDS = ("ip4_src", "ip4_dst", "ip6_src", "ip6_dst", "ip_id", "ip_mf", "ip_frag_offset", "ip6_frag", "ip6_more")
#: Protocol names of ``frame.protocols`` that mark a tunnel, and the ``tunnel`` value they give.
TSHARK_TUNNELS = {"gre": "gre", "vxlan": "vxlan", "geneve": "geneve", "gtp": "gtp", "teredo": "teredo",
                  "l2tp": "l2tp"}
#: The same for the protocol right after ``udp`` when it is not a tunnel's own name: MPLS in UDP, and what
#: VXLAN-GPE carries (Wireshark leaves VXLAN-GPE out of ``frame.protocols``; GPE carrying MPLS reads "mpls").
TSHARK_AFTER_UDP = {"mpls": "mpls", "eth": "vxlan", "ip": "vxlan", "ipv6": "vxlan", "nsh": "vxlan"}


@_PARAMETERS.fill
def tshark_command(path: str, fields: list[str], extra_prefs: list[str] | None = None,
                   occurrence: str = "f") -> list[str]:
    """The ``tshark -T fields`` command line of the tshark engine.

    Parameters
    ----------
    {path}
    fields : list of str
        Wireshark field names, one output column each.
    {extra_prefs, occurrence}

    Returns
    -------
    list of str
        The argument vector (tshark's path first).
    """
    cmd = [tshark_path(), "-r", path, "-n", "-T", "fields", "-E", "separator=/t", "-E", f"occurrence={occurrence}"]
    for pref in TSHARK_PREFS + (extra_prefs or []):
        cmd += ["-o", pref]
    for f in fields:
        cmd += ["-e", f]
    return cmd


@_PARAMETERS.fill
def run_tshark_fields(path: str, fields: list[str], extra_prefs: list[str] | None = None,
                      occurrence: str = "f") -> pd.DataFrame:
    """Run ``tshark -T fields`` and return its output as a DataFrame of strings (one column per field).

    Parameters
    ----------
    {path}
    fields : list of str
        Wireshark field names.
    {extra_prefs, occurrence}

    Returns
    -------
    pandas.DataFrame
        One row per frame, one string column per field (``""`` where absent).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    tcpmodels.traces.pcapfile.CaptureFileError
        If tshark cannot read the file.
    """
    import pandas as pd
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"capture file not found: {path}")
    res = subprocess.run(tshark_command(path, fields, extra_prefs, occurrence), capture_output=True)
    err = res.stderr.decode(errors="replace")
    err = "\n".join(line for line in err.splitlines() if "Running as user" not in line)
    if res.returncode != 0 and not res.stdout:
        raise CaptureFileError(f"{path}: tshark could not read the file: {err.strip()}")
    if not res.stdout:
        return pd.DataFrame(columns=fields, dtype=str)
    return pd.read_csv(io.BytesIO(res.stdout), sep="\t", header=None, names=fields, dtype=str,
                       keep_default_na=False, quoting=3)


def _int(series: pd.Series, dtype: str, absent: int = 0) -> np.ndarray:
    s = series.fillna("")
    out = np.full(len(s), absent, dtype=np.uint64 if dtype == "uint64" else np.int64)
    has = (s != "").to_numpy()
    vals = s[has]
    if len(vals):
        if vals.str.startswith("0x").any():
            out[has] = [int(v, 16) for v in vals]
        elif dtype == "uint64":
            out[has] = [int(v) for v in vals]
        else:
            out[has] = vals.astype(np.int64).to_numpy()
    return out


def _epoch_ns(series: pd.Series) -> np.ndarray:
    parts = series.str.split(".", n=1, expand=True)
    sec = parts[0].astype(np.int64).to_numpy()
    frac = parts[1].fillna("0").str.ljust(9, "0").str[:9].astype(np.int64).to_numpy() if parts.shape[1] > 1 \
        else np.zeros(len(series), np.int64)
    return sec * 1_000_000_000 + frac


def _tunnel_and_ip(protocols: str) -> tuple[str, str]:
    """(tunnel, inner IP protocol name) from a ``frame.protocols`` string such as ``eth:ethertype:ip:gre:ip:tcp``."""
    tunnel, seen_ip, inner, previous = "", False, "", ""
    for name in protocols.split(":"):
        if name == "tcp":
            break
        after_udp = previous == "udp"
        previous = name
        if after_udp and seen_ip and not tunnel and name in TSHARK_AFTER_UDP:
            tunnel = TSHARK_AFTER_UDP[name]
        if name in ("ip", "ipv6"):
            if seen_ip and not tunnel:
                tunnel = "ipip"
            seen_ip, inner = True, name
        elif name in TSHARK_TUNNELS and seen_ip and not tunnel:
            tunnel = TSHARK_TUNNELS[name]
    return tunnel, inner


def table_from_fields(raw: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Packet table from tshark field strings (columns named by :data:`TSHARK_FIELDS` keys).

    Repeated fields come comma-separated (``occurrence=a``) or single: the IP fields
    keep their last occurrence (the inner header of a tunnelled packet), the others
    their first.

    Parameters
    ----------
    raw : pandas.DataFrame
        tshark's output as strings, columns named by the keys of :data:`TSHARK_FIELDS`.

    Returns
    -------
    table : pandas.DataFrame
        The packet table (schema of :mod:`~tcpmodels.traces.schema`).
    skipped : dict
        Frames not in the table, by reason (``not_ip``, ``ip_fragment``, ``not_tcp``).
    """
    import pandas as pd
    raw = raw.copy()
    # reassembled datagrams: the frame that completed one lists its fragments' frame numbers
    members: dict[int, list[int]] = {}
    for col in ("ip_fragments", "ip6_fragments"):
        if col in raw:
            for num, lst in zip(raw["frame_number"], raw[col]):
                if lst:
                    members.setdefault(int(num), []).extend(int(x) for x in lst.split(","))
    for col in raw.columns:
        if col in ("protocols", "ip_fragments", "ip6_fragments"):
            continue
        multi = raw[col].str.contains(",", regex=False)
        if multi.any():
            parts = raw.loc[multi, col].str.split(",")
            raw.loc[multi, col] = parts.str[-1] if col in IP_FIELDS else parts.str[0]
    if "protocols" in raw:
        tun_ip = [_tunnel_and_ip(p) for p in raw["protocols"]]
        raw["tunnel"] = [t for t, _ in tun_ip]
        inner = pd.Series([i for _, i in tun_ip], index=raw.index)
        # "ip:ipv6" without an IPv4 address: an IPv6 header behind IPv4's ethertype, not 6in4
        raw.loc[(raw["tunnel"] == "ipip") & (inner == "ipv6") & (raw["ip4_src"] == ""), "tunnel"] = ""
    else:
        raw["tunnel"] = ""
        inner = pd.Series("", index=raw.index)
    is6 = (raw["ip6_src"] != "") & ((inner == "ipv6") | (inner == ""))
    is4 = (raw["ip4_src"] != "") & ~is6
    is_ip = is4 | is6
    frag = is4 & ((raw["ip_mf"].isin(["1", "True"])) | ~raw["ip_frag_offset"].isin(["", "0"]))
    frag |= is6 & (raw["ip6_more"].isin(["1", "True"]) | ~raw["ip6_frag"].isin(["", "0"]))
    nums = raw["frame_number"].astype(np.int64)
    merged = {m for num, lst in members.items() for m in lst if m != num}
    in_other = nums.isin(list(merged)).to_numpy()
    completing = nums.isin(list(members)).to_numpy()
    frag = frag.to_numpy() & ~completing
    tcp = is_ip.to_numpy() & ~frag & (raw["src_port"] != "").to_numpy()
    is_ip = is_ip.to_numpy()
    skipped = {"not_ip": int((~is_ip).sum()), "ip_fragment": int((is_ip & frag & ~in_other).sum()),
               "ip_fragment_reassembled": int((is_ip & frag & in_other).sum()),
               "not_tcp": int((is_ip & ~frag & (raw["src_port"] == "").to_numpy()).sum())}
    skipped = {k: v for k, v in skipped.items() if v}
    if members:  # a reassembled row carries the frame lengths of all its fragments
        length = dict(zip(nums.tolist(), raw["wire_bytes"].astype(np.int64).tolist()))
        cap_length = dict(zip(nums.tolist(), raw["captured_bytes"].astype(np.int64).tolist()))
        for num, lst in members.items():
            row = raw.index[nums.to_numpy() == num][0]
            raw.loc[row, "wire_bytes"] = str(sum(length[m] for m in set(lst)))
            raw.loc[row, "captured_bytes"] = str(sum(cap_length[m] for m in set(lst)))
    r = raw[tcp]
    if len(r) == 0:
        return empty_table(), skipped
    r6 = is6[tcp].to_numpy()
    flags = _int(r["flags"], "int")
    cols = {
        "frame_index": r["frame_number"].astype(np.int64).to_numpy() - 1,
        "interface_id": _int(r["interface_id"], "int"),
        "timestamp_ns": _epoch_ns(r["time_epoch"]),
        "wire_bytes": _int(r["wire_bytes"], "int"),
        "captured_bytes": _int(r["captured_bytes"], "int"),
        "ip_version": np.where(r6, 6, 4),
        "tunnel": r["tunnel"].to_numpy(),
        "src_addr": np.where(r6, r["ip6_src"], r["ip4_src"]),
        "dst_addr": np.where(r6, r["ip6_dst"], r["ip4_dst"]),
        "ip_id": np.where(r6, 0, _int(r["ip_id"], "int")),
        "flags": flags,
        "sack_permitted": (r["sack_perm"] != "").to_numpy(),
        "has_timestamps": (r["tsval"] != "").to_numpy(),
        "has_mptcp_dsn": (r["mptcp_dsn"] != "").to_numpy(),
        "has_mptcp_data_ack": (r["mptcp_data_ack"] != "").to_numpy(),
    }
    for name in ("src_port", "dst_port", "seq", "ack", "window", "tcp_header_bytes", "payload_bytes",
                 "sack_count", "sack_left", "sack_right", "tsval", "tsecr", "mptcp_recv_token",
                 "mptcp_subflow_seq", "mptcp_data_len"):
        cols[name] = _int(r[name], "int")
    for name in ("mss", "window_scale", "mptcp_subtype", "mptcp_version"):
        cols[name] = _int(r[name], "int", absent=-1)
    for name in ("mptcp_send_key", "mptcp_recv_key", "mptcp_dsn", "mptcp_data_ack"):
        cols[name] = _int(r[name], "uint64")
    cols["timestamp_s"] = cols["timestamp_ns"] / 1e9
    for name, bit in (("fin", 0x01), ("syn", 0x02), ("rst", 0x04), ("psh", 0x08), ("ack_flag", 0x10)):
        cols[name] = (flags & bit) != 0
    return conform(cols), skipped


def read_with_wireshark(path: str | os.PathLike, engine: str) -> tuple[pd.DataFrame, ReadAccounting]:
    """The ``tshark`` and ``pyshark`` engines of :func:`~tcpmodels.traces.read_pcap`.

    Parameters
    ----------
    path : str or path-like
        Capture file.
    engine : {"tshark", "pyshark"}
        Which Wireshark front end dissects it.

    Returns
    -------
    table : pandas.DataFrame
        The packet table.
    accounting : ReadAccounting
        Frames read, parsed and skipped.
    """
    path = os.fspath(path)
    if engine == "pyshark":
        raw = _pyshark_fields(path)
    else:
        raw = run_tshark_fields(path, list(TSHARK_FIELDS.values()), occurrence="a")
        raw.columns = list(TSHARK_FIELDS)
    table, skipped = table_from_fields(raw)
    ts = table["timestamp_ns"].to_numpy()
    notes = {"timestamps_out_of_order": int(np.count_nonzero(ts[1:] < ts[:-1]))}
    acc = ReadAccounting(path=path, engine=engine, records_read=len(raw), tcp_parsed=len(table), skipped=skipped,
                         notes={k: v for k, v in notes.items() if v})
    return table, acc


def _pyshark_fields(path: str) -> pd.DataFrame:
    """Walk the file with pyshark and collect the same field strings tshark -T fields would print."""
    import pandas as pd
    try:
        import pyshark
    except ImportError as exc:
        raise RuntimeError("engine='pyshark' needs the pyshark package (pip install pyshark); "
                           "engine='tshark' gives the same table much faster") from exc
    tshark_path()
    prefs = {p.split(":")[0]: p.split(":")[1] for p in TSHARK_PREFS}
    cap = pyshark.FileCapture(path, keep_packets=False, override_prefs=prefs, use_json=False)
    rows = []
    try:
        for pkt in cap:
            row = {}
            for key, field in TSHARK_FIELDS.items():
                layer_name, _, rest = field.partition(".")
                layer = {"frame": "frame_info"}.get(layer_name, layer_name)
                value = ""
                if layer_name == "frame":
                    value = _pyshark_frame(pkt, rest)
                elif hasattr(pkt, layer):
                    lay = getattr(pkt, layer)
                    f = lay.get_field(field)
                    if f is None:
                        f = lay.get_field(rest.replace(".", "_"))
                    if f is not None:
                        value = str(f.raw_value if key == "ip_frag_offset" else f.show)
                        if key == "sack_perm":
                            value = value or "1"
                row[key] = value
            rows.append(row)
    finally:
        cap.close()
    return pd.DataFrame(rows, columns=list(TSHARK_FIELDS), dtype=str)


def _pyshark_frame(pkt, name: str) -> str:
    if name == "number":
        return str(pkt.number)
    if name == "interface_id":
        return str(getattr(pkt.frame_info, "interface_id", 0) or 0)
    if name == "time_epoch":
        return str(pkt.frame_info.time_epoch)
    if name == "len":
        return str(pkt.length)
    if name == "cap_len":
        return str(pkt.captured_length)
    return ""
