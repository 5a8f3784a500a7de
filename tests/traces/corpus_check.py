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
  ``spurious_retransmission`` or ``out_of_order``; ours marked fast / spurious are
  exactly tshark's fast / spurious.
- ``rtt``: on every ACK frame where both give a sequence/ACK RTT sample
  (``tcp.analysis.ack_rtt``), the two agree to the microsecond.
- ``mptcp``: the subflows we group into one MPTCP connection are those tshark
  gives one ``mptcp.stream`` (a one-to-one map over every frame of an MPTCP subflow).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.traces import COLUMNS, TraceWarning, annotate, mptcp_subflows, read_pcap, rtt_samples
from tcpmodels.traces.engines import run_tshark_fields

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "external_captures"

ANALYSIS = {"frame": "frame.number", "srcport": "tcp.srcport", "retrans": "tcp.analysis.retransmission",
            "fast": "tcp.analysis.fast_retransmission", "spurious": "tcp.analysis.spurious_retransmission",
            "ooo": "tcp.analysis.out_of_order", "ack_rtt": "tcp.analysis.ack_rtt", "mptcp_stream": "mptcp.stream"}
ANALYSIS_PREFS = ["tcp.analyze_sequence_numbers:TRUE", "mptcp.analyze_mptcp:TRUE"]


def captures(directory: Path = CORPUS) -> list[Path]:
    return sorted(p for p in directory.iterdir() if ".pcap" in p.name)


def read_quietly(path: Path, engine: str = "native") -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return read_pcap(path, engine=engine)


def tshark_analysis(path: Path) -> pd.DataFrame:
    """tshark's analysis flags per TCP frame, indexed by 0-based frame index."""
    raw = run_tshark_fields(path, list(ANALYSIS.values()), extra_prefs=ANALYSIS_PREFS)
    raw.columns = list(ANALYSIS)
    raw = raw[raw["srcport"] != ""]
    out = pd.DataFrame(index=raw["frame"].astype(np.int64).to_numpy() - 1)
    for k in ("retrans", "fast", "spurious", "ooo"):
        out[k] = (raw[k] != "").to_numpy()
    out["ack_rtt"] = pd.to_numeric(raw["ack_rtt"], errors="coerce").to_numpy()
    out["mptcp_stream"] = pd.to_numeric(raw["mptcp_stream"], errors="coerce").to_numpy()
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


def compare_analysis(nat: pd.DataFrame, ta: pd.DataFrame) -> dict[str, list[str]]:
    diffs: dict[str, list[str]] = {}
    an = annotate(nat)
    fr = nat["frame_index"].to_numpy()
    ta = ta.reindex(fr)
    # a packet captured twice (same IP ID, seq, ...) is our is_duplicate; tshark calls it a retransmission
    dup = an["is_duplicate"].to_numpy()
    for k in ("retrans", "fast", "spurious", "ooo"):
        ta.loc[dup, k] = False
    theirs_all = _frames((ta["retrans"] | ta["fast"] | ta["spurious"] | ta["ooo"]).fillna(False).to_numpy(bool),
                         fr)
    ours_all = _frames(an["is_retransmission"], fr)
    r = []
    if ours_all != theirs_all:
        r.append(f"union: only ours {_show(ours_all - theirs_all)}, only tshark's {_show(theirs_all - ours_all)}")
    for cls, col in (("fast", "is_fast_retransmission"), ("spurious", "is_spurious_retransmission"),
                     ("ooo", "is_out_of_order")):
        if col not in an:
            continue
        ours, theirs = _frames(an[col], fr), _frames(ta[cls].fillna(False).to_numpy(bool), fr)
        if ours != theirs:
            r.append(f"{cls}: only ours {_show(ours - theirs)}, only tshark's {_show(theirs - ours)}")
    if r:
        diffs["retransmissions"] = r
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
    their_id = pd.Series(ta["mptcp_stream"].to_numpy()).groupby(conn).max().fillna(-1).astype(np.int64)
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
    diffs.update(compare_analysis(nat, tshark_analysis(path)))
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
