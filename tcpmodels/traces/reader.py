"""``read_pcap``: a capture file -> the packet table, by one of three engines.

The native engine (default) walks the file with :mod:`~tcpmodels.traces.pcapfile`
and decodes each chunk with :mod:`~tcpmodels.traces.decode`; the ``tshark`` and
``pyshark`` engines (:mod:`~tcpmodels.traces.engines`) ask Wireshark's dissectors
for the same columns, for cross-checking or for users who want Wireshark's
judgement. All return the schema of :mod:`~tcpmodels.traces.schema`.
"""

from __future__ import annotations

import os
import socket
import warnings

import numpy as np
import pandas as pd

from . import engines
from .decode import LINK_TYPES, TUNNELS, decode_batch
from .pcapfile import iter_batches
from .schema import ReadAccounting, conform, empty_table

__all__ = ["read_pcap", "TraceWarning", "ENGINES"]

ENGINES = ("native", "tshark", "pyshark")


class TraceWarning(UserWarning):
    """Something in a capture was skipped or looks wrong; the message names it and counts it."""


def read_pcap(path: str | os.PathLike, engine: str = "native", *, chunk_bytes: int = 32 << 20) -> pd.DataFrame:
    """Read a capture file into the packet table (one row per TCP segment).

    Parameters
    ----------
    path : str or path-like
        Classic pcap (µs or ns timestamps, either byte order) or pcapng, optionally
        gzip-compressed.
    engine : {"native", "tshark", "pyshark"}
        ``native`` decodes with numpy (fast, bounded memory); ``tshark`` runs
        ``tshark -T fields`` (the cross-check; needs Wireshark's tshark on PATH);
        ``pyshark`` drives tshark through pyshark, giving Wireshark's full dissection
        (very slow: thousands of packets per second).
    chunk_bytes : int
        Native engine: bytes of decompressed file decoded at once; bounds memory. [bytes]

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes of :data:`tcpmodels.traces.schema.COLUMNS`; the
        :class:`~tcpmodels.traces.schema.ReadAccounting` in ``attrs["accounting"]``.

    Warns
    -----
    TraceWarning
        Naming and counting records skipped (by reason), a truncated last record,
        options cut by the snap length, records longer than the snap length and
        timestamps that go backwards.

    Raises
    ------
    tcpmodels.traces.pcapfile.CaptureFileError
        If the file is empty, not a capture, or corrupt (message names file and offset).
    ValueError
        For an unknown engine.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
    if engine == "native":
        table, acc = _read_native(path, chunk_bytes)
    else:
        table, acc = engines.read_with_wireshark(path, engine)
    _warn(acc)
    table.attrs["accounting"] = acc
    return table


def _read_native(path, chunk_bytes: int) -> tuple[pd.DataFrame, ReadAccounting]:
    state: dict = {}
    parts: list[dict] = []
    skipped: dict[str, int] = {}
    notes = {"options_truncated": 0, "payload_beyond_frame": 0}
    for batch in iter_batches(path, state, chunk_bytes=chunk_bytes):
        cols, sk, nt = decode_batch(batch)
        parts.append(cols)
        for k, v in sk.items():
            skipped[k] = skipped.get(k, 0) + v
        for k in notes:
            notes[k] += nt[k]
    if not parts or sum(len(p["seq"]) for p in parts) == 0:
        table = empty_table()
    else:
        cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        table = _finish(cols)
    ts = table["timestamp_ns"].to_numpy()
    notes["timestamps_out_of_order"] = int(np.count_nonzero(ts[1:] < ts[:-1]))
    notes["longer_than_snaplen"] = state.get("longer_than_snaplen", 0)
    acc = ReadAccounting(path=os.fspath(path), engine="native", records_read=state.get("records", 0),
                         tcp_parsed=len(table), skipped=skipped,
                         truncated_tail_bytes=state.get("truncated_tail_bytes", 0),
                         notes={k: v for k, v in notes.items() if v}, link_types=state.get("link_types", ()))
    return table, acc


def _addresses(ver: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> pd.Categorical:
    codes = np.empty(len(ver), np.int64)
    v4 = ver == 4
    u4, inv4 = np.unique(lo[v4], return_inverse=True)
    names = [socket.inet_ntoa(int(x).to_bytes(4, "big")) for x in u4]
    codes[v4] = inv4
    if (~v4).any():
        pair = np.stack([hi[~v4], lo[~v4]], axis=1)
        u6, inv6 = np.unique(pair, axis=0, return_inverse=True)
        codes[~v4] = len(names) + inv6.reshape(-1)
        names += [socket.inet_ntop(socket.AF_INET6, int(a).to_bytes(8, "big") + int(b).to_bytes(8, "big"))
                  for a, b in u6]
    return pd.Categorical.from_codes(codes, categories=names)


def _finish(cols: dict) -> pd.DataFrame:
    ver = cols["ip_version"]
    cols["src_addr"] = _addresses(ver, cols.pop("src_hi"), cols.pop("src_lo"))
    cols["dst_addr"] = _addresses(ver, cols.pop("dst_hi"), cols.pop("dst_lo"))
    cols["timestamp_s"] = cols["timestamp_ns"] / 1e9
    cols["tunnel"] = pd.Categorical.from_codes(cols["tunnel"], categories=list(TUNNELS))
    flags = cols["flags"]
    for name, bit in (("fin", 0x01), ("syn", 0x02), ("rst", 0x04), ("psh", 0x08), ("ack_flag", 0x10)):
        cols[name] = (flags & bit) != 0
    return conform(cols)


def _warn(acc: ReadAccounting) -> None:
    msgs = []
    if acc.skipped:
        parts = []
        for reason, count in sorted(acc.skipped.items()):
            text = f"{count} {reason}"
            if reason == "unknown_link_type":
                unknown = [lt for lt in acc.link_types if lt not in LINK_TYPES]
                text += f" (link type(s) {unknown}; supported: {sorted(LINK_TYPES)})"
            parts.append(text)
        msgs.append(f"skipped {sum(acc.skipped.values())} of {acc.records_read} records: " + ", ".join(parts))
    if acc.records_read == 0:
        msgs.append("no packet records in the file")
    if acc.truncated_tail_bytes:
        msgs.append(f"file ends in the middle of a record: last {acc.truncated_tail_bytes} bytes ignored")
    labels = {"options_truncated": "TCP headers with options cut by the snap length (options not read)",
              "payload_beyond_frame": "segments whose IP length claims more than the frame held (payload cut "
                                      "to the frame)",
              "longer_than_snaplen": "records longer than the file's snap length (kept)",
              "timestamps_out_of_order": "records with a timestamp earlier than the previous one (file order kept)"}
    for key, count in acc.notes.items():
        msgs.append(f"{count} {labels.get(key, key)}")
    if msgs:
        warnings.warn(f"{acc.path} ({acc.engine}): " + "; ".join(msgs), TraceWarning, stacklevel=3)


