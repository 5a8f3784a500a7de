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
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

if TYPE_CHECKING:  # pandas is imported where it is used: streaming a capture's flows starts without it
    import pandas as pd

from . import engines
from .decode import LINK_TYPES, TUNNELS, decode_batch
from .fragments import Datagram, Reassembler
from .pcapfile import MAX_GZIP_EXPANSION, MAX_RECORD_BYTES, PAD_BYTES, RecordBatch, iter_batches
from .prefetch import more_than_one_cpu, prefetched
from .schema import ReadAccounting, TraceWarning, conform, empty_table

__all__ = ["read_pcap", "TraceWarning", "ENGINES"]

ENGINES = ("native", "tshark", "pyshark")


#: Prefix of the accounting notes counting pcapng blocks of a type the reader does not know (type in hex after it).
UNKNOWN_BLOCK_NOTE = "unknown_pcapng_block_"
#: Prefix of the notes counting pcapng blocks of a known type whose content does not parse as that type.
MALFORMED_BLOCK_NOTE = "malformed_pcapng_block_"

#: Timestamps after this (2100-01-01T00:00:00Z) are flagged as implausible (kept, counted). [ns]
_YEAR_2100_NS = 4_102_444_800 * 1_000_000_000


def read_pcap(path: str | os.PathLike, engine: str = "native", *, chunk_bytes: int = 32 << 20,
              max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
              max_record_bytes: int = MAX_RECORD_BYTES, decode_ahead: bool | None = None) -> pd.DataFrame:
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
        Native engine: bytes of decompressed file decoded at once (at least 4096); bounds memory. [bytes]
    max_gzip_expansion : float or None
        Native engine: refuse a gzip file that decompresses to more than this many times its
        size (a decompression bomb); ``None`` reads it anyway. [-]
    max_record_bytes : int
        Native engine: largest record read; a longer one is skipped without being buffered and
        counted (``record_over_limit``); a file header's snap length does not raise it. [bytes]
    decode_ahead : bool, optional
        Native engine: read and decode the next chunk in a second thread while the current one is added to
        the table (:func:`~tcpmodels.traces.prefetch.prefetched`: one chunk ahead). Default: when this
        process may run on more than one CPU. The table is the same.

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes of :data:`tcpmodels.traces.schema.COLUMNS`; the
        :class:`~tcpmodels.traces.schema.ReadAccounting` in ``attrs["accounting"]``.

    Warns
    -----
    TraceWarning
        Naming and counting records skipped (by reason, including timestamps no
        int64 nanosecond count can hold), a truncated last record, options cut by
        the snap length, records longer than the snap length, wire lengths shorter
        than the captured length, timestamps that go backwards and timestamps before
        1970 or after 2100.

    Raises
    ------
    tcpmodels.traces.pcapfile.CaptureFileError
        If the file is empty, not a capture, or corrupt (message names file and offset).
    ValueError
        For an unknown engine, or ``chunk_bytes`` / ``max_gzip_expansion`` out of range.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
    if engine == "native":
        ahead = more_than_one_cpu() if decode_ahead is None else bool(decode_ahead)
        table, acc = _read_native(path, chunk_bytes, max_gzip_expansion, max_record_bytes, ahead)
    else:
        table, acc = engines.read_with_wireshark(path, engine)
    warn_accounting(acc)
    table.attrs["accounting"] = acc
    return table


class ChunkedCapture:
    """A capture decoded chunk by chunk, with the read accounting kept as it goes.

    :func:`read_pcap` joins the chunks into one table; :func:`tcpmodels.traces.to_parquet`
    writes each one out (memory set by ``chunk_bytes``). Iterate :meth:`decoded` once; then
    :meth:`accounting` and :meth:`warn` describe the whole file.

    Parameters
    ----------
    path : str or path-like
        Classic pcap or pcapng, optionally gzip-compressed.
    chunk_bytes : int
        Bytes of decompressed file decoded at once (at least 4096). [bytes]
    max_gzip_expansion : float or None
        As for :func:`read_pcap`. [-]
    on_batch : callable, optional
        Called with the number of decompressed file bytes of each chunk as it is read [bytes].
    max_record_bytes : int
        As for :func:`read_pcap`. [bytes]
    byte_range : (int, int), optional
        Uncompressed classic pcap: decode only the records between these file offsets (as
        :func:`~tcpmodels.traces.pcapfile.iter_batches`, frame numbers from 0); :meth:`partial` and
        :func:`join_partials` give the accounting of the ranges of a whole file. [bytes]
    """

    def __init__(self, path: str | os.PathLike, chunk_bytes: int = 32 << 20,
                 max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
                 on_batch: Callable[[int], object] | None = None, max_record_bytes: int = MAX_RECORD_BYTES,
                 byte_range: tuple[int, int] | None = None) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.max_gzip_expansion = max_gzip_expansion
        self.max_record_bytes = max_record_bytes
        self.on_batch = on_batch
        self.byte_range = byte_range
        self._first_ts: int | None = None
        self._state: dict = {}
        self._skipped: dict[str, int] = {}
        self._notes = {"options_truncated": 0, "payload_beyond_frame": 0, "timestamps_out_of_order": 0,
                       "timestamps_before_1970_or_after_2100": 0}
        self._parsed = 0
        self._last_ts: int | None = None
        self._reassembler = Reassembler()

    def decoded(self) -> Iterator[dict[str, np.ndarray]]:
        """Decoded columns of each chunk that holds TCP segments, in file order.

        Returns
        -------
        iterator of dict
            The packet-table columns as :func:`~tcpmodels.traces.decode.decode_batch` gives
            them (addresses as uint64 halves ``src_hi, src_lo, dst_hi, dst_lo``, ``tunnel`` as a
            code); :func:`assemble_table` turns one into a packet table.
        """
        for batch in iter_batches(self.path, self._state, chunk_bytes=self.chunk_bytes,
                                  max_gzip_expansion=self.max_gzip_expansion,
                                  max_record_bytes=self.max_record_bytes, byte_range=self.byte_range,
                                  reuse_buffer=True):  # each batch is decoded (copied out) before the next
            if self.on_batch is not None:
                self.on_batch(max(int(len(batch.buf)) - PAD_BYTES, 0))
            fragments: list = []
            cols, sk, nt = decode_batch(batch, fragments=fragments)
            if fragments:
                cols = self._reassemble(fragments, cols, sk, nt)
            self._count(sk, nt, cols["timestamp_ns"])
            if len(cols["seq"]):
                yield cols

    def _reassemble(self, fragments: list, cols: dict[str, np.ndarray], sk: dict[str, int],
                    nt: dict[str, int]) -> dict[str, np.ndarray]:
        """Feed this chunk's fragment records to the reassembler; the chunk's columns with the datagrams they
        completed decoded and placed at their completing record (file order kept). Accounting: a completed
        datagram's fragment records leave ``ip_fragment``: the completing one becomes the row (or the skip
        reason of what the datagram held), the others ``ip_fragment_reassembled``."""
        parts = [cols]
        while fragments:
            done: list[Datagram] = [d for d in map(self._reassembler.add, fragments) if d is not None]
            fragments = []
            if not done:
                break
            for d in done:
                sk["ip_fragment"] = sk.get("ip_fragment", 0) - d.fragments
                sk["ip_fragment_reassembled"] = sk.get("ip_fragment_reassembled", 0) + d.fragments - 1
            more, more_sk, more_nt = decode_batch(_datagram_batch(done), kernel="numpy", fragments=fragments)
            for k, v in more_sk.items():
                sk[k] = sk.get(k, 0) + v
            for k in nt:
                nt[k] += more_nt.get(k, 0)
            if len(more["seq"]):
                by_frame = {d.last.frame_index: d for d in done}
                hit = [by_frame[int(i)] for i in more["frame_index"]]
                more["wire_bytes"] = np.array([d.wire_bytes for d in hit], np.uint32)
                more["captured_bytes"] = np.array([d.captured_bytes for d in hit], np.uint32)
                outer = np.array([d.last.tunnel for d in hit], np.int8)
                more["tunnel"] = np.where(outer != 0, outer, more["tunnel"]).astype(np.int8)
                parts.append(more)
        if len(parts) == 1:
            return cols
        order = np.argsort(np.concatenate([p["frame_index"] for p in parts]), kind="stable")
        return {k: np.concatenate([np.asarray(p[k]).astype(cols[k].dtype, copy=False) for p in parts])[order]
                for k in cols}

    def _count(self, sk: dict[str, int], nt: dict[str, int], ts: np.ndarray) -> None:
        for k, v in sk.items():
            self._skipped[k] = self._skipped.get(k, 0) + v
        for k in ("options_truncated", "payload_beyond_frame"):
            self._notes[k] += nt[k]
        if len(ts):
            back = int(np.count_nonzero(ts[1:] < ts[:-1]))
            if self._last_ts is not None and ts[0] < self._last_ts:
                back += 1
            if self._first_ts is None:
                self._first_ts = int(ts[0])
            self._last_ts = int(ts[-1])
            self._notes["timestamps_out_of_order"] += back
            self._notes["timestamps_before_1970_or_after_2100"] += int(
                np.count_nonzero((ts < 0) | (ts > _YEAR_2100_NS)))
            self._parsed += len(ts)

    def partial(self) -> dict:
        """What this reading counted, to be joined with the other ranges of the file (:func:`join_partials`).

        Returns
        -------
        dict
            Plain values (picklable): the accounting's counters, the first and last TCP timestamps [ns], the
            fragments the reassembler saw (``fragments_seen``: a range's fragments may belong to a datagram
            completed in another range, so such ranges cannot be joined) and the read state.
        """
        st = self._state
        acc = self.accounting()
        return {"accounting": acc.to_dict(), "first_ts": self._first_ts, "last_ts": self._last_ts,
                "records": int(st.get("records", 0)), "truncated_tail_bytes": int(st.get("truncated_tail_bytes", 0)),
                "fragments_seen": bool(self._reassembler.completed or self._reassembler.dropped
                                       or self._skipped.get("ip_fragment", 0)
                                       or self._skipped.get("ip_fragment_reassembled", 0))}

    def accounting(self) -> ReadAccounting:
        """The read accounting of the whole file (after :meth:`decoded` ran to its end).

        Returns
        -------
        ReadAccounting
            As ``read_pcap(path).attrs["accounting"]``.
        """
        state = self._state
        skipped = dict(self._skipped)
        notes = dict(self._notes)
        notes["longer_than_snaplen"] = state.get("longer_than_snaplen", 0)
        notes["wire_shorter_than_captured"] = state.get("wire_shorter_than_captured", 0)
        if state.get("unrepresentable_timestamps"):
            skipped["unrepresentable_timestamp"] = state["unrepresentable_timestamps"]
        if state.get("records_over_limit"):
            skipped["record_over_limit"] = state["records_over_limit"]
        for btype, count in sorted(state.get("unknown_blocks", {}).items()):
            notes[f"{UNKNOWN_BLOCK_NOTE}{btype:#x}"] = count
        for btype, count in sorted(state.get("malformed_blocks", {}).items()):
            notes[f"{MALFORMED_BLOCK_NOTE}{btype:#x}"] = count
        skipped = {k: v for k, v in skipped.items() if v}
        for why, count in self._reassembler.dropped.items():
            notes[f"ip_fragments_dropped_{why}"] = count
        return ReadAccounting(path=os.fspath(self.path), engine="native", records_read=state.get("records", 0),
                              tcp_parsed=self._parsed, skipped=skipped,
                              truncated_tail_bytes=state.get("truncated_tail_bytes", 0),
                              notes={k: v for k, v in notes.items() if v}, link_types=state.get("link_types", ()))


def join_partials(path: str | os.PathLike, parts: list[dict]) -> ReadAccounting:
    """The read accounting of a whole file from those of its consecutive byte ranges.

    Parameters
    ----------
    path : str or path-like
        The file (named in the accounting).
    parts : list of dict
        :meth:`ChunkedCapture.partial` of each range, in file order; the ranges cover the file's records,
        each once, and no range saw IP fragments.

    Returns
    -------
    ReadAccounting
        As ``read_pcap(path).attrs["accounting"]``: counts summed, a timestamp going backwards across a
        cut counted as the whole-file reading counts it, the truncated tail the last range's.
    """
    skipped: dict[str, int] = {}
    notes: dict[str, int] = {}
    links: set = set()
    last_ts = None
    back = 0
    for p in parts:
        acc = p["accounting"]
        for total, counts in ((skipped, acc["skipped"]), (notes, acc["notes"])):
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
        links.update(acc["link_types"])
        if p["first_ts"] is not None:
            if last_ts is not None and p["first_ts"] < last_ts:
                back += 1
            last_ts = p["last_ts"]
    if back:
        notes["timestamps_out_of_order"] = notes.get("timestamps_out_of_order", 0) + back
    return ReadAccounting(path=os.fspath(path), engine="native",
                          records_read=sum(p["accounting"]["records_read"] for p in parts),
                          tcp_parsed=sum(p["accounting"]["tcp_parsed"] for p in parts), skipped=skipped,
                          truncated_tail_bytes=parts[-1]["accounting"]["truncated_tail_bytes"] if parts else 0,
                          notes=notes, link_types=tuple(sorted(links)))


def _datagram_batch(done: list[Datagram]) -> RecordBatch:
    """Reassembled datagrams as a batch of raw-IP records (LINKTYPE_RAW), each at its completing record."""
    offsets, chunks, pos = [], [], 0
    for d in done:
        offsets.append(pos)
        chunks.append(d.ip_bytes)
        pos += len(d.ip_bytes)
    buf = np.frombuffer(b"".join(chunks) + bytes(PAD_BYTES), np.uint8)
    last = [d.last for d in done]
    return RecordBatch(buf=buf, data_offset=np.array(offsets, np.int64),
                       captured_bytes=np.array([d.captured_prefix_bytes for d in done], np.uint32),
                       wire_bytes=np.array([len(d.ip_bytes) for d in done], np.uint32),
                       timestamp_ns=np.array([f.timestamp_ns for f in last], np.int64),
                       interface_id=np.array([f.interface_id for f in last], np.uint16),
                       link_type=np.full(len(done), 101, np.int32),
                       frame_index=np.array([f.frame_index for f in last], np.int64),
                       snap_bytes=np.zeros(len(done), np.uint32))


#: Smallest classic pcap record holding a TCP segment (16-byte record header, 14-byte Ethernet header left
#: out: raw IPv4 20 + TCP 20): the packets of an uncompressed file are at most its size over this. [bytes]
_MIN_TCP_RECORD_BYTES = 56


class GrowingColumns:
    """Decoded chunks appended into columns allocated once for the whole capture (grown by doubling if the
    estimate falls short), so that reading is linear in the packets: no final concatenation of every chunk.

    The first allocation is an upper bound on the rows (an uncompressed file's size over the smallest TCP
    record); the pages past the last row are never written, so they take address space, not memory.

    Parameters
    ----------
    expected_rows : int
        Rows to allocate for at the first chunk (0: twice the first chunk's, then doubling).
    """

    def __init__(self, expected_rows: int = 0) -> None:
        self.expected_rows = int(expected_rows)
        self.rows = 0
        self._cols: dict[str, np.ndarray] = {}

    def append(self, cols: dict[str, np.ndarray]) -> None:
        """Copy one chunk's columns in (the chunk can then be freed).

        Parameters
        ----------
        cols : dict
            Decoded columns of one chunk, the same names and dtypes for every chunk.
        """
        n = len(cols["seq"])
        need = self.rows + n
        if not self._cols:
            cap = max(need, self.expected_rows, 2 * n)
            self._cols = {k: np.empty(cap, np.asarray(v).dtype) for k, v in cols.items()}
        elif need > len(self._cols["seq"]):
            cap = max(need, 2 * len(self._cols["seq"]))
            for k, v in self._cols.items():
                grown = np.empty(cap, v.dtype)
                grown[:self.rows] = v[:self.rows]
                self._cols[k] = grown
        for k, v in cols.items():
            self._cols[k][self.rows:need] = v
        self.rows = need

    def columns(self) -> dict[str, np.ndarray]:
        """The columns so far (views of the first ``rows`` rows).

        Returns
        -------
        dict
            Column name -> array of ``rows`` values.
        """
        return {k: v[:self.rows] for k, v in self._cols.items()}


def _expected_rows(path) -> int:
    """An upper bound on the TCP packets of an uncompressed capture (0 for a gzip file: unknown)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(2) == b"\x1f\x8b":
                return 0
        return os.path.getsize(path) // _MIN_TCP_RECORD_BYTES + 1
    except OSError:
        return 0


def _read_native(path, chunk_bytes: int, max_gzip_expansion: float | None,
                 max_record_bytes: int = MAX_RECORD_BYTES,
                 decode_ahead: bool = False) -> tuple[pd.DataFrame, ReadAccounting]:
    reading = ChunkedCapture(path, chunk_bytes, max_gzip_expansion, max_record_bytes=max_record_bytes)
    growing = GrowingColumns(_expected_rows(path))
    chunks = reading.decoded()
    for cols in prefetched(chunks, name="tcpmodels-decode-ahead") if decode_ahead else chunks:
        growing.append(cols)
        del cols
    table = assemble_table(growing.columns()) if growing.rows else empty_table()
    return table, reading.accounting()


def _address_names(ver: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> list[str]:
    """Text of addresses given by version and uint64 halves (few: the distinct ones)."""
    out = []
    for v, a, b in zip(ver.tolist(), hi.tolist(), lo.tolist()):
        if v == 4:
            out.append(socket.inet_ntoa(int(b).to_bytes(4, "big")))
        else:
            out.append(socket.inet_ntop(socket.AF_INET6, int(a).to_bytes(8, "big") + int(b).to_bytes(8, "big")))
    return out


def _addresses(ver: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> pd.Categorical:
    """Addresses as a categorical: IPv4 first, then IPv6, each in numeric order.

    Linear in the rows: distinct values by hashing (``pandas.factorize``), only the distinct
    ones are sorted.
    """
    import pandas as pd
    v6 = (ver != 4).astype(np.uint64)
    # (version, hi, lo) -> one code by hashing each part, then pairs of codes
    c_lo, u_lo = pd.factorize(lo)
    if v6.any():
        c_hi, u_hi = pd.factorize(hi)
        key = (c_hi.astype(np.int64) * len(u_lo) + c_lo) * 2 + v6.astype(np.int64)
        codes, u_key = pd.factorize(key)
        u_key = np.asarray(u_key)
        uv6 = u_key % 2
        ulo = np.asarray(u_lo)[(u_key // 2) % len(u_lo)]
        uhi = np.asarray(u_hi)[(u_key // 2) // len(u_lo)]
    else:
        codes, ulo = c_lo, np.asarray(u_lo)
        uhi = np.zeros(len(ulo), np.uint64)
        uv6 = np.zeros(len(ulo), np.int64)
    rank = np.lexsort((ulo, uhi, uv6))  # IPv4 before IPv6, numeric order within each
    new_code = np.empty(len(rank), np.int64)
    new_code[rank] = np.arange(len(rank))
    names = _address_names(np.where(uv6[rank] == 1, 6, 4), uhi[rank], ulo[rank])
    return pd.Categorical.from_codes(new_code[codes], categories=names)


def assemble_table(cols: dict[str, np.ndarray]) -> pd.DataFrame:
    """The packet table of decoded columns (:meth:`ChunkedCapture.decoded`): addresses as text, flag columns.

    Parameters
    ----------
    cols : dict
        Decoded columns (consumed: the address halves are removed from it).

    Returns
    -------
    pandas.DataFrame
        The schema's columns and dtypes; address categories IPv4 first, then IPv6, numeric order.
    """
    import pandas as pd
    ver = cols["ip_version"]
    cols["src_addr"] = _addresses(ver, cols.pop("src_hi"), cols.pop("src_lo"))
    cols["dst_addr"] = _addresses(ver, cols.pop("dst_hi"), cols.pop("dst_lo"))
    cols["timestamp_s"] = cols["timestamp_ns"] / 1e9
    cols["tunnel"] = pd.Categorical.from_codes(cols["tunnel"], categories=list(TUNNELS))
    flags = cols["flags"]
    for name, bit in (("fin", 0x01), ("syn", 0x02), ("rst", 0x04), ("psh", 0x08), ("ack_flag", 0x10)):
        cols[name] = (flags & bit) != 0
    return conform(cols)


def warn_accounting(acc: ReadAccounting) -> None:
    """Warn (:class:`TraceWarning`) about what the accounting counts: skipped records, truncation, odd timestamps.

    Parameters
    ----------
    acc : ReadAccounting
        The accounting of one capture.

    Returns
    -------
    None
    """
    msgs = []
    if acc.skipped:
        parts = []
        for reason, count in sorted(acc.skipped.items()):
            text = f"{count} {reason}"
            if reason == "unknown_link_type":
                unknown = [lt for lt in acc.link_types if lt not in LINK_TYPES]
                text += f" (link type(s) {unknown}; supported: {sorted(LINK_TYPES)})"
            elif reason == "record_over_limit":
                text += (f" (longer than max_record_bytes, {MAX_RECORD_BYTES} unless raised; not read into memory: "
                         "pass a larger max_record_bytes to read them)")
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
              "timestamps_out_of_order": "records with a timestamp earlier than the previous one (file order kept)",
              "timestamps_before_1970_or_after_2100": "records timestamped before 1970 or after 2100 (kept; "
                                                      "a corrupt header or an unset clock?)",
              "wire_shorter_than_captured": "records whose wire length is shorter than their captured length "
                                            "(wire length raised to the captured length)",
              "ip_fragments_dropped_timed_out": "IP fragments of datagrams incomplete after the reassembly timeout",
              "ip_fragments_dropped_memory": "IP fragments dropped when the reassembly held too many bytes",
              "ip_fragments_dropped_too_long": "IP fragments of datagrams longer than an IP packet can be"}
    for key, count in acc.notes.items():
        if key.startswith(MALFORMED_BLOCK_NOTE):
            msgs.append(f"{count} pcapng block(s) of type {key[len(MALFORMED_BLOCK_NOTE):]} skipped whose content "
                        "does not parse as that type (a corrupt packet block?)")
            continue
        if key.startswith(UNKNOWN_BLOCK_NOTE):
            msgs.append(f"{count} pcapng block(s) of unknown type {key[len(UNKNOWN_BLOCK_NOTE):]} skipped (not a "
                        "block this reader reads: a corrupt packet block, or another tool's block?)")
            continue
        msgs.append(f"{count} {labels.get(key, key)}")
    if msgs:
        warnings.warn(f"{acc.path} ({acc.engine}): " + "; ".join(msgs), TraceWarning, stacklevel=3)


