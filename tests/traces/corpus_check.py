"""Compare tcpmodels.traces with tshark on one capture, field by field (used by test_external_corpus.py).

``python tests/traces/corpus_check.py [DIR]`` prints one line per capture of the
third-party corpus (default ``../shared/data/external_captures``): ``agree`` or the
aspects that differ.

Aspects
-------
- ``table``: the native packet table equals the tshark engine's, every column,
  every row (timestamps to the nanosecond), and the same records skipped.
- ``retransmissions``: the frames we call retransmissions are the frames tshark
  flags ``tcp.analysis.retransmission``, ``fast_retransmission``,
  ``spurious_retransmission`` or ``out_of_order``; ours marked fast / spurious /
  out-of-order are exactly tshark's.
- ``expert``: keep-alive, zero window, zero-window probe, window update, window full,
  previous segment not captured, ACKed unseen segment and duplicate ACK, frame by frame
  as tshark's ``tcp.analysis`` flags.
- ``rtt``: on every ACK frame where both give a sequence/ACK RTT sample
  (``tcp.analysis.ack_rtt``), the two agree to the microsecond.
- ``mptcp``: the subflows we group into one MPTCP connection are those tshark
  gives one ``mptcp.stream`` (a one-to-one map over every frame of an MPTCP subflow).

Where tshark is wrong
---------------------
Our definitions part from Wireshark's in four places (``tcpmodels.traces.flows``
says why). A difference is accepted only when it falls in one of these classes, and
each class is recognised from tshark's *own* fields (relative sequence and
acknowledgment numbers, lengths, flags, its analysis flags), never from ours and never
by frame number:

1. *Duplicates* (a packet captured twice): tshark flags the second copy a
   retransmission (or a duplicate ACK); we count it once, as ``is_duplicate``. Its
   flags are not compared. (Our duplicate is close in time: see
   ``tcpmodels.traces.annotation.DUPLICATE_MAX_GAP_OF_INITIAL_RTT``.)
2. *A byte re-sent that the peer never acknowledged is no keep-alive*
   (:func:`tshark_keepalive_of_unacked_byte`): tshark calls any segment of at most one
   byte one below its next sequence number a keep-alive, even when the peer's last
   acknowledgment does not cover that byte (e.g. a 1-byte segment re-sent by RTO,
   pymptcpanalyzer_client_1_tcp_only frame 1334, zeek echo-connections frame 29412;
   tshark then takes an RTT sample from the ACK of the re-sent byte, against Karn's
   rule). We count it a retransmission, or nothing when it carries no byte. The ACK
   that answers it is tshark's "keep-alive ACK" and may be our duplicate ACK
   (:func:`tshark_ack_of_unacked_keepalive`).
3. *A first copy after a pure ACK that ran ahead is no retransmission*
   (:func:`tshark_first_copy_after_pure_ack`): tshark lets a pure ACK raise its next
   sequence number, so data sent before that ACK and captured after it (reordering
   between the sender and the capture point) is a "retransmission" or "out-of-order"
   there although no earlier frame of the direction carried any of its bytes
   (inversekey speedtest frames 165, 166). A first copy whose payload the peer has
   acknowledged (its original not captured) is a spurious retransmission for both and
   is compared.
4. *A connection that fell back to TCP is no MPTCP subflow*
   (:func:`tshark_mptcp_fallback_streams`): its SYN carried MP_CAPABLE but its SYN/ACK did
   not (RFC 8684 Sec. 3.7); tshark still gives it an ``mptcp.stream`` (inversekey
   speedtest: 6 connections to a server without MPTCP).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.traces import COLUMNS, TraceWarning, annotate, flows, mptcp_subflows, read_pcap, rtt_samples
from tcpmodels.traces.engines import run_tshark_fields
from tcpmodels.traces.tcptrace_terms import tcptrace_rexmt

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "external_captures"
#: The second set: captures on which earlier versions disagreed with tshark or tcptrace (each a class of defect).
CORPUS2 = CORPUS.parent / "external_captures2"

ANALYSIS = {"frame": "frame.number", "srcport": "tcp.srcport", "stream": "tcp.stream", "seq": "tcp.seq",
            "seq_raw": "tcp.seq_raw", "ack": "tcp.ack", "len": "tcp.len", "flags": "tcp.flags", "retrans": "tcp.analysis.retransmission",
            "fast": "tcp.analysis.fast_retransmission", "spurious": "tcp.analysis.spurious_retransmission",
            "ooo": "tcp.analysis.out_of_order", "ack_rtt": "tcp.analysis.ack_rtt", "mptcp_stream": "mptcp.stream",
            "keepalive": "tcp.analysis.keep_alive", "keepalive_ack": "tcp.analysis.keep_alive_ack",
            "zero_window": "tcp.analysis.zero_window", "zero_window_probe": "tcp.analysis.zero_window_probe",
            "window_update": "tcp.analysis.window_update", "window_full": "tcp.analysis.window_full",
            "not_captured": "tcp.analysis.lost_segment", "acked_unseen": "tcp.analysis.ack_lost_segment",
            "dup_ack": "tcp.analysis.duplicate_ack", "mptcp_subtype": "tcp.options.mptcp.subtype"}
ANALYSIS_PREFS = ["tcp.analyze_sequence_numbers:TRUE", "mptcp.analyze_mptcp:TRUE",
                  "tcp.relative_sequence_numbers:TRUE"]
#: tshark's Expert Info flag -> our annotation column
EXPERT = {"keepalive": "is_keepalive", "zero_window": "is_zero_window", "zero_window_probe": "is_zero_window_probe",
          "window_update": "is_window_update", "window_full": "is_window_full",
          "not_captured": "is_previous_segment_not_captured", "acked_unseen": "is_acked_unseen",
          "dup_ack": "is_dup_ack"}


def captures(directory: Path = CORPUS) -> list[Path]:
    return sorted(p for p in directory.iterdir() if ".pcap" in p.name)


def read_quietly(path: Path, engine: str = "native") -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return read_pcap(path, engine=engine)


def tshark_analysis(path: Path) -> pd.DataFrame:
    """tshark's analysis per TCP frame, indexed by 0-based frame index: flags (bool), ``ack_rtt``,
    ``mptcp_stream``, and the relative ``stream``, ``seq``, ``ack``, ``len``, ``flags`` (int) the argued
    classes are recognised from."""
    raw = run_tshark_fields(path, list(ANALYSIS.values()), extra_prefs=ANALYSIS_PREFS)
    raw.columns = list(ANALYSIS)
    raw = raw[raw["srcport"] != ""]
    out = pd.DataFrame(index=raw["frame"].astype(np.int64).to_numpy() - 1)
    for k in ("retrans", "fast", "spurious", "ooo", "keepalive_ack", *EXPERT):
        out[k] = (raw[k] != "").to_numpy()
    out["ack_rtt"] = pd.to_numeric(raw["ack_rtt"], errors="coerce").to_numpy()
    out["mptcp_stream"] = pd.to_numeric(raw["mptcp_stream"], errors="coerce").to_numpy()
    out["srcport"] = pd.to_numeric(raw["srcport"]).to_numpy()
    for k in ("stream", "seq", "seq_raw", "ack", "len"):
        out[k] = pd.to_numeric(raw[k], errors="coerce").fillna(-1).astype(np.int64).to_numpy()
    out["tcp_flags"] = raw["flags"].apply(lambda v: int(v, 16) if v else 0).to_numpy()
    out["mptcp_subtype"] = pd.to_numeric(raw["mptcp_subtype"], errors="coerce").fillna(-1).astype(int).to_numpy()
    return out


def tshark_mptcp_fallback_streams(ta: pd.DataFrame) -> set[int]:
    """tcp.stream numbers whose SYN carried MP_CAPABLE and whose SYN/ACK was captured without it (class 4)."""
    syn = ta[(ta["tcp_flags"] & 0x12) == 0x02]
    synack = ta[(ta["tcp_flags"] & 0x12) == 0x12]
    asked = set(syn.loc[syn["mptcp_subtype"] == 0, "stream"])
    answered = set(synack.loc[synack["mptcp_subtype"] == 0, "stream"])
    return (asked & set(synack["stream"])) - answered


def _by_direction(ta: pd.DataFrame):
    """tshark's frames grouped by (stream, source port), in frame order."""
    return ta.sort_index().groupby([ta["stream"], ta["srcport"]], sort=False)


def _peer_last_ack(ta: pd.DataFrame) -> pd.Series:
    """Per frame: the highest relative acknowledgment number of the earlier frames (with the ACK flag) of the
    reverse direction of its stream (-1 if none), from tshark's own fields."""
    t = ta.sort_index()
    out = pd.Series(-1, index=t.index, dtype=np.int64)
    for _, g in t.groupby("stream", sort=False):
        ports = g["srcport"].to_numpy()
        acks = np.where((g["tcp_flags"].to_numpy() & 0x10) != 0, g["ack"].to_numpy(), -1)
        last: dict[int, int] = {}
        vals = np.empty(len(g), np.int64)
        for i, (port, a) in enumerate(zip(ports.tolist(), acks.tolist())):
            peer = [v for p, v in last.items() if p != port]
            vals[i] = peer[0] if peer else -1
            if a >= 0:
                last[port] = max(a, last.get(port, -1))
        out.loc[g.index] = vals
    return out


def tshark_keepalive_of_unacked_byte(ta: pd.DataFrame) -> set[int]:
    """Frames tshark flags keep-alive although the peer's last acknowledgment does not cover the byte
    (class 2 of the module docstring). 0-based frame indexes."""
    ka = ta[ta["keepalive"] & (ta["len"] <= 1)]
    if len(ka) == 0:
        return set()
    last = _peer_last_ack(ta).reindex(ka.index)
    return set(ka.index[(last.to_numpy() >= 0) & (last.to_numpy() <= ka["seq"].to_numpy())].tolist())


def tshark_ack_of_unacked_keepalive(ta: pd.DataFrame, keepalives: set[int]) -> set[int]:
    """Frames tshark flags keep-alive ACK whose reverse direction's previous frame is one of ``keepalives``."""
    out = set()
    t = ta.sort_index()
    for _, g in t.groupby("stream", sort=False):
        prev_of_port: dict[int, int] = {}
        for idx, port, kack in zip(g.index.tolist(), g["srcport"].tolist(), g["keepalive_ack"].tolist()):
            peer = [f for p, f in prev_of_port.items() if p != port]
            if kack and peer and peer[0] in keepalives:
                out.add(idx)
            prev_of_port[port] = idx
    return out


def tshark_first_copy_after_pure_ack(ta: pd.DataFrame) -> set[int]:
    """Frames tshark flags retransmission / out-of-order / fast although no earlier frame of the direction
    carried any byte at or beyond their sequence number (class 3 of the module docstring). Not its spurious
    retransmissions: that test reads the peer's acknowledgment only, and ours is the same."""
    flagged = (ta["retrans"] | ta["ooo"] | ta["fast"]) & ~ta["spurious"]
    out = set()
    for _, g in _by_direction(ta):
        if not flagged.reindex(g.index).any():
            continue
        synfin = ((g["tcp_flags"].to_numpy() & 0x03) != 0).astype(np.int64)
        occupies = (g["len"].to_numpy() > 0) | (synfin > 0)
        # absolute sequence numbers, unwrapped: tshark's relative ones start again at a SYN/ACK with a new ISN
        raw = g["seq_raw"].to_numpy(np.int64)
        step = (np.diff(raw) + 2**31) % 2**32 - 2**31
        seq = raw[0] + np.concatenate([[0], np.cumsum(step)]) if len(raw) else raw
        end = np.where(occupies, seq + g["len"].to_numpy() + synfin, np.iinfo(np.int64).min)
        reach = np.maximum.accumulate(np.concatenate([[np.iinfo(np.int64).min], end[:-1]]))
        first_copy = occupies & (seq >= reach)
        out |= set(g.index[first_copy & flagged.reindex(g.index).to_numpy()].tolist())
    return out


def compare_tables(nat: pd.DataFrame, tsh: pd.DataFrame) -> list[str]:
    diffs = []
    a, b = nat.attrs["accounting"], tsh.attrs["accounting"]
    # records_read is not compared: tshark counts pcapng custom blocks as frames, we do not
    if a.tcp_parsed != b.tcp_parsed:
        return [f"TCP packets: native {a.tcp_parsed} vs tshark {b.tcp_parsed} (of {a.records_read} records)"]
    for col in COLUMNS:
        x, y = nat[col], tsh[col]
        if col.endswith("_addr") or str(x.dtype) == "category":
            bad = x.astype(str).to_numpy() != y.astype(str).to_numpy()
        else:
            bad = x.to_numpy() != y.to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            diffs.append(f"{col}: {int(bad.sum())} rows (frame {int(nat['frame_index'].iloc[i]) + 1}: "
                         f"{x.iloc[i]} vs {y.iloc[i]})")
    return diffs


def _frames(mask: pd.Series | np.ndarray, frames: np.ndarray) -> set[int]:
    return set((frames[np.asarray(mask)] + 1).tolist())


def _show(s: set[int]) -> str:
    return str(sorted(s)[:5]) + ("..." if len(s) > 5 else "")


def compare_analysis(nat: pd.DataFrame, ta: pd.DataFrame, name: str = "") -> dict[str, list[str]]:
    diffs: dict[str, list[str]] = {}
    an = annotate(nat)
    fr = nat["frame_index"].to_numpy()
    # the argued classes (module docstring), from tshark's fields alone
    unacked_ka = tshark_keepalive_of_unacked_byte(ta)
    ka_acks = tshark_ack_of_unacked_keepalive(ta, unacked_ka)
    first_copies = tshark_first_copy_after_pure_ack(ta)
    fallback = tshark_mptcp_fallback_streams(ta)
    ta = ta.reindex(fr)
    flags = ["retrans", "fast", "spurious", "ooo", *EXPERT]
    ta[flags] = ta[flags].fillna(False).astype(bool)
    # 1: a packet captured twice is our is_duplicate, its copy's flags are not compared
    dup = an["is_duplicate"].to_numpy()
    ta.loc[dup, flags] = False
    # 2: tshark's keep-alive of an unacknowledged byte: a retransmission when it carries the byte
    ka = ta.index.isin(list(unacked_ka))
    ta.loc[ka, "keepalive"] = False
    ta.loc[ka & (nat["payload_bytes"].to_numpy() == 1), "retrans"] = True
    ta.loc[ta.index.isin(list(ka_acks)), "dup_ack"] = an["is_dup_ack"].to_numpy()[ta.index.isin(list(ka_acks))]
    # 3: a first copy after a pure ACK that ran ahead
    fc = ta.index.isin(list(first_copies))
    ta.loc[fc, ["retrans", "fast", "spurious", "ooo"]] = False
    theirs_all = _frames((ta["retrans"] | ta["fast"] | ta["spurious"] | ta["ooo"]).to_numpy(bool), fr)
    ours_all = _frames(an["is_retransmission"], fr)
    r = []
    if ours_all != theirs_all:
        r.append(f"union: only ours {_show(ours_all - theirs_all)}, only tshark's {_show(theirs_all - ours_all)}")
    for cls, col in (("fast", "is_fast_retransmission"), ("spurious", "is_spurious_retransmission"),
                     ("ooo", "is_out_of_order")):
        ours, theirs = _frames(an[col], fr), _frames(ta[cls].to_numpy(bool), fr)
        if ours != theirs:
            r.append(f"{cls}: only ours {_show(ours - theirs)}, only tshark's {_show(theirs - ours)}")
    if r:
        diffs["retransmissions"] = r
    e = []
    for flag, col in EXPERT.items():
        ours, theirs = _frames(an[col], fr), _frames(ta[flag].to_numpy(bool), fr)
        if ours != theirs:
            e.append(f"{flag}: only ours {_show(ours - theirs)}, only tshark's {_show(theirs - ours)}")
    if e:
        diffs["expert"] = e
    # RTT samples on ACK frames where both define one
    s = rtt_samples(nat, an)
    s = s[s["method"] == "seq"].drop_duplicates("ack_frame_index").set_index("ack_frame_index")["rtt_s"]
    theirs = pd.Series(ta["ack_rtt"].to_numpy(), index=fr).dropna()
    both = s.index.intersection(theirs.index)
    bad = np.abs(s.reindex(both).to_numpy() - theirs.reindex(both).to_numpy()) > 1e-6
    if bad.any():
        diffs["rtt"] = [f"{int(bad.sum())} of {len(both)} common samples differ (frames {_show(set(both[bad] + 1))})"]
    # MPTCP grouping
    sub = mptcp_subflows(nat, annotated=an)
    ours_id = pd.Series(np.full(len(nat), -1, np.int64))
    if len(sub):
        m = dict(zip(sub["connection_id"], sub["mptcp_id"]))
        ours_id = an["connection_id"].map(m).fillna(-1).astype(np.int64).reset_index(drop=True)
    # per TCP connection: tshark gives mptcp.stream only to frames that carry an MPTCP option
    conn = an["connection_id"].to_numpy()
    their_stream = np.where(ta["stream"].isin(list(fallback)).to_numpy(), np.nan, ta["mptcp_stream"].to_numpy())
    their_id = pd.Series(their_stream).groupby(conn).max().fillna(-1).astype(np.int64)
    ours_id = ours_id.groupby(conn).max()
    sel = (ours_id >= 0) | (their_id >= 0)
    if sel.any():
        pairs = pd.DataFrame({"o": ours_id[sel], "t": their_id[sel]}).drop_duplicates()
        bad = pairs[(pairs["o"] < 0) | (pairs["t"] < 0) | pairs["o"].duplicated(keep=False)
                    | pairs["t"].duplicated(keep=False)]
        if len(bad):
            diffs["mptcp"] = [f"{len(bad)} (ours, tshark mptcp.stream) pairs break the one-to-one map: "
                              f"{list(map(tuple, bad.to_numpy()[:4]))}"]
    return diffs


def check_capture(path: Path) -> dict[str, list[str]]:
    """Aspect -> differences from tshark (empty when the capture agrees)."""
    nat, tsh = read_quietly(path), read_quietly(path, "tshark")
    diffs = {}
    t = compare_tables(nat, tsh)
    if t:
        diffs["table"] = t
    diffs.update(compare_analysis(nat, tshark_analysis(path), path.name))
    return diffs


def main(argv: list[str]) -> int:
    directory = Path(argv[1]) if len(argv) > 1 else CORPUS
    agree = 0
    paths = captures(directory)
    for p in paths:
        try:
            d = check_capture(p)
        except Exception as exc:  # noqa: BLE001 - a report line per capture
            d = {"error": [f"{type(exc).__name__}: {exc}"]}
        agree += not d
        print(f"{p.name:45s} " + ("agree" if not d else "; ".join(f"{k}: {' | '.join(v)}" for k, v in d.items())))
    print(f"{agree} of {len(paths)} agree with tshark")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))


# ---------------------------------------------------------------- tcptrace, the second peer
#: Captures whose TCP tcptrace 6.6 does not decode (its link layers and encapsulations end before these), so
#: there is nothing to compare: a limit of tcptrace, not a definition.
TCPTRACE_CANNOT_DECODE = {
    "arkime_nflog.pcap": "LINKTYPE_NFLOG", "suricata_bug-4810_pppoe-session-http.pcap": "PPPoE",
    "zeek_erspan.pcap": "GRE/ERSPAN and IP fragments", "tcpdump_geneve.pcap": "Geneve",
    "arkime_mpls-basic.pcap": "MPLS (it decodes one direction only)",
    "tcpdump_bigtcp-ipv6-hbh.pcap": "IPv6 jumbograms (hop-by-hop Jumbo Payload)",
    "scapy_macos.pcapng.gz": "pcapng from macOS", "gopacket_be_test202.pcapng": "big-endian pcapng",
    "tcpdump_ipv4_tcp_http_xml_tso.pcap": "IPv4 total length 0 (segmentation offload)",
    "short_flows_any.pcap.gz": "Linux cooked v2 (LINKTYPE 276): 'tcptrace did not understand link format'",
}
#: Captures where tcptrace is wrong, with the differences that shows (the test expects exactly these).
TCPTRACE_WRONG = {
    # PPP link (LINKTYPE 9): tcptrace reads the ICMPv6 frames 1463 and 1465 (tshark: ppp:ipv6:icmpv6, 58 bytes)
    # as copies of the TCP packet before each (its -p dump prints frame 1463 with 1462's IPv4 and TCP headers),
    # so it counts one packet too many in each direction of 10.1.0.1:49078, and the copy of a data packet as
    # a data packet and a retransmission
    "pymptcpanalyzer_iperf-mptcp-0-0.pcap": [
        "(('10.1.0.1', 49078), ('10.2.1.1', 5001)) a2b packets: ours 1527, tcptrace 1528",
        "(('10.1.0.1', 49078), ('10.2.1.1', 5001)) a2b data packets: ours 1521, tcptrace 1522",
        "(('10.1.0.1', 49078), ('10.2.1.1', 5001)) a2b retransmissions: ours 0, tcptrace 1",
        "(('10.1.0.1', 49078), ('10.2.1.1', 5001)) a2b data bytes: ours 2166516, tcptrace 2167944",
        "(('10.1.0.1', 49078), ('10.2.1.1', 5001)) b2a packets: ours 781, tcptrace 782"],
}


def tcptrace_table(path: Path) -> pd.DataFrame:
    """``tcptrace -l -r -n --csv`` of a capture (gzip decompressed to a temporary file first): one row per
    connection, tcptrace's column names."""
    import gzip
    import io
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src = path
        if path.suffix == ".gz":
            src = Path(tmp) / path.stem
            with gzip.open(path) as fin:
                src.write_bytes(fin.read())
        res = subprocess.run(["tcptrace", "-l", "-r", "-n", "--csv", str(src)], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"tcptrace failed on {path.name}: {(res.stdout + res.stderr).strip()[:300]}")
        out = res.stdout
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
    if not lines:
        return pd.DataFrame()
    df = pd.read_csv(io.StringIO("\n".join(lines)), skipinitialspace=True)
    df.columns = [c.strip() for c in df.columns]
    return df


def compare_tcptrace(path: Path, nat: pd.DataFrame | None = None) -> list[str]:
    """Differences from tcptrace's per-connection counters, each direction (empty when they agree).

    Compared: packets, data packets and bytes, unique bytes, missed data (our ``bytes_not_captured``) and
    retransmissions. The definitions that differ, each checked, not skipped:

    - tcptrace's rexmt + out-of-order is our retransmissions plus duplicates, keep-alives and zero-window probes
      that occupy sequence space, less the spurious retransmissions that advance the highest sequence number
      (``tcpmodels.traces.tcptrace_terms``);
    - its stream length runs to the sequence number of a RST: its missed data may be ours + 1 in a direction
      that sent one;
    - it writes an IPv6 address with leading zero groups as ``:0001`` (for ``::1``);
    - it splits a reused 4-tuple differently (a SYN after a RST or FIN): a 4-tuple used by more than one
      connection on either side is not compared;
    - it takes an IP length beyond the frame at its word (ours counts what the frame held, and says so in the
      accounting note ``payload_beyond_frame``): there its data bytes may exceed ours.
    """
    import ipaddress
    if path.name in TCPTRACE_CANNOT_DECODE:
        return []
    nat = read_quietly(path) if nat is None else nat
    an = annotate(nat)
    ft = flows(nat, an)
    ft["tcptrace_rexmt"] = tcptrace_rexmt(an)
    beyond = nat.attrs["accounting"].notes.get("payload_beyond_frame", 0) > 0

    def norm(a) -> str:
        a = str(a)
        if a.startswith(":") and not a.startswith("::"):
            a = ":" + a
        try:
            return str(ipaddress.ip_address(a))
        except ValueError:
            return a

    def key(a, pa, b, pb) -> tuple:
        return tuple(sorted([(norm(a), int(pa)), (norm(b), int(pb))]))

    ours: dict[tuple, list] = {}
    for r in ft.itertuples():
        ours.setdefault(key(r.src_addr, r.src_port, r.dst_addr, r.dst_port), []).append(r)
    ours_conns = {k: len({r.connection_id for r in v}) for k, v in ours.items()}
    tt = tcptrace_table(path)
    if len(tt) == 0:
        return [] if len(ft) == 0 else [f"tcptrace found no connection, we found {len(ours_conns)}"]
    tt_keys = [key(t.host_a, t.port_a, t.host_b, t.port_b) for t in tt.itertuples()]
    reused = {k for k in tt_keys if tt_keys.count(k) > 1} | {k for k, n in ours_conns.items() if n > 1}
    diffs = []
    for t, k in zip(tt.to_dict("records"), tt_keys):
        if k in reused:
            continue
        if k not in ours:
            diffs.append(f"{k}: tcptrace only")
            continue
        for d, (host, port) in (("a2b", (t["host_a"], t["port_a"])), ("b2a", (t["host_b"], t["port_b"]))):
            mine = [r for r in ours[k] if norm(r.src_addr) == norm(host) and int(r.src_port) == int(port)]
            if not mine:
                if t[f"total_packets_{d}"] > 0:
                    diffs.append(f"{k} {d}: tcptrace only")
                continue
            r = mine[0]
            pairs = {"packets": (r.packets, t[f"total_packets_{d}"]),
                     "data packets": (r.data_packets, t[f"actual_data_pkts_{d}"]),
                     "unique bytes": (r.unique_payload_bytes, t[f"unique_bytes_sent_{d}"]),
                     "retransmissions": (r.tcptrace_rexmt, t[f"rexmt_data_pkts_{d}"] + t[f"outoforder_pkts_{d}"])}
            data_bytes = (r.payload_bytes, t[f"actual_data_bytes_{d}"])
            if not (beyond and data_bytes[0] <= data_bytes[1]):
                pairs["data bytes"] = data_bytes
            elif pairs["data packets"][0] <= pairs["data packets"][1]:
                for name in ("unique bytes", "data packets"):
                    pairs.pop(name)
            missed = t[f"missed_data_{d}"]
            if not pd.isna(missed):
                pairs["missed data"] = (r.bytes_not_captured + (1 if (r.rst_seen
                                                                      and missed == r.bytes_not_captured + 1) else 0),
                                        missed)
            for name, (a, b) in pairs.items():
                if pd.isna(b) or int(a) != int(b):
                    diffs.append(f"{k} {d} {name}: ours {a}, tcptrace {b}")
    return diffs
