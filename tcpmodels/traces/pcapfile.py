"""Capture containers (classic pcap, pcapng, gzip) -> batches of packet records as numpy arrays.

This module knows file formats only: where each packet's bytes are, when it was
captured, how long it was on the wire and which link type it carries. Decoding
the bytes is :mod:`tcpmodels.traces.decode`'s job.

Memory is bounded: the file is read in chunks of ``chunk_bytes`` and each chunk
yields one :class:`RecordBatch` (pcapng: also one per section). Walking the
length-prefixed records is the only per-record loop; everything after it is
vectorised.

Kernels: the per-record loops (walking classic pcap records here, decoding
headers in :mod:`~tcpmodels.traces.decode`) run in a small compiled extension,
``tcpmodels.traces.ckernel``, built from C source by the package's install when a
C compiler is present; the numpy / Python path is kept and gives the same
tables. :func:`set_kernel` (or the environment variable
``TCPMODELS_TRACE_KERNEL``) chooses: ``"auto"`` (the compiled kernel if built,
else numpy), ``"c"`` or ``"numpy"``.

References
----------
.. [1] IETF draft-ietf-opsawg-pcap, "PCAP Capture File Format".
.. [2] IETF draft-ietf-opsawg-pcapng, "PCAP Now Generic (pcapng) Capture File Format".
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Iterator

import numpy as np

try:  # the compiled kernel, built by the package's install (setup.py) when a C compiler is present
    from . import ckernel as _ckernel
except ImportError:  # pragma: no cover - depends on the install
    _ckernel = None

__all__ = ["RecordBatch", "CaptureFileError", "iter_batches", "MAX_RECORD_BYTES", "RECORD_LIMIT_CEILING",
           "check_max_record_bytes", "PCAPNG_QUIET_BLOCKS", "MIN_CHUNK_BYTES",
           "MAX_GZIP_EXPANSION", "KERNELS", "set_kernel", "active_kernel", "kernel_available", "compiled_kernel"]

#: Values of the kernel setting: the compiled kernel if built ("auto"), the compiled kernel ("c"), numpy.
KERNELS = ("auto", "c", "numpy")
#: Environment variable giving the initial kernel setting.
KERNEL_ENV = "TCPMODELS_TRACE_KERNEL"
_kernel_setting = [os.environ.get(KERNEL_ENV, "auto")]


def kernel_available() -> bool:
    """Whether the compiled kernel ``tcpmodels.traces.ckernel`` was built and imports.

    Returns
    -------
    bool
        True when the C extension is importable.
    """
    return _ckernel is not None


def compiled_kernel() -> ModuleType:
    """The compiled kernel module ``tcpmodels.traces.ckernel``.

    Returns
    -------
    module
        The C extension (functions ``walk_classic`` and ``decode``).

    Raises
    ------
    RuntimeError
        When it is not built.
    """
    if _ckernel is None:
        raise RuntimeError("the compiled kernel tcpmodels.traces.ckernel is not built (it needs a C compiler when "
                           "the package is installed: `pip install -e .` with gcc present); use kernel 'numpy'")
    return _ckernel


def set_kernel(kernel: str) -> str:
    """Choose the kernel of the native reader for this process.

    Parameters
    ----------
    kernel : {"auto", "c", "numpy"}
        ``"auto"``: the compiled kernel if built, else numpy; ``"c"``: the compiled
        kernel (an error when reading if it is not built); ``"numpy"``: the numpy path.

    Returns
    -------
    str
        The previous setting (to restore it).

    Raises
    ------
    ValueError
        For a value not in :data:`KERNELS`.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}; got {kernel!r}")
    previous = _kernel_setting[0]
    _kernel_setting[0] = kernel
    return previous


def active_kernel(kernel: str | None = None) -> str:
    """The kernel a read uses: ``"c"`` or ``"numpy"``.

    Parameters
    ----------
    kernel : {"auto", "c", "numpy"} or None
        A choice for this call; ``None`` takes the setting of :func:`set_kernel`
        (initially the environment variable ``TCPMODELS_TRACE_KERNEL``, else ``"auto"``).

    Returns
    -------
    str
        ``"c"`` or ``"numpy"``.

    Raises
    ------
    ValueError
        For a value not in :data:`KERNELS` (naming the environment variable if it came from there).
    RuntimeError
        For ``"c"`` when the compiled kernel is not built.
    """
    choice = _kernel_setting[0] if kernel is None else kernel
    if choice not in KERNELS:
        source = f" (from the environment variable {KERNEL_ENV})" if kernel is None else ""
        raise ValueError(f"kernel must be one of {KERNELS}; got {choice!r}{source}")
    if choice == "numpy" or (choice == "auto" and _ckernel is None):
        return "numpy"
    compiled_kernel()  # raises when it is not built
    return "c"

#: Largest record read unless told otherwise (libpcap's MAXIMUM_SNAPLEN). A file header's snap length does
#: not raise it: a longer record is skipped and counted (``record_over_limit``) when the header allows it, and
#: is a corrupt file otherwise; ``max_record_bytes`` raises it explicitly. [bytes]
MAX_RECORD_BYTES = 262144
#: Largest ``max_record_bytes`` the formats allow: their captured-length fields are 32-bit. [bytes]
RECORD_LIMIT_CEILING = 0xFFFFFFFF
#: Bytes a pcapng block may hold beyond its packet data (block header and trailer, options). [bytes]
_PCAPNG_BLOCK_OVERHEAD = 64 * 1024
#: pcapng block types of the standard that carry no packet and are skipped quietly: name resolution,
#: interface statistics, systemd journal export, decryption secrets, custom blocks (copyable and not).
#: Any other type (a packet block with a flipped bit, a tool's own block) is skipped and counted
#: (``unknown_blocks``, a warning naming the type).
PCAPNG_QUIET_BLOCKS = frozenset({4, 5, 9, 10, 0x00000BAD, 0x40000BAD})
#: Smallest ``chunk_bytes`` accepted: below a page the per-read overhead dominates and 0 would read nothing.
MIN_CHUNK_BYTES = 4096
#: Default limit on decompressed / compressed size of a gzip capture. Packet captures compress 2-20x
#: (headers repeat, payloads do not); a ratio of 1000 is a file of repeated zeros (a decompression bomb:
#: 1.2 MB expanding to 40 million empty records took 35 s and 0.8 GB before this guard).
MAX_GZIP_EXPANSION = 1000.0
#: Decompressed bytes below which the expansion guard never fires (small files are cheap whatever they hold).
_GZIP_GUARD_FLOOR_BYTES = 64 << 20
#: Largest |timestamp| the packet table holds: int64 nanoseconds since 1970 (years 1678-2262). [ns]
_MAX_NS = (1 << 63) - 1
#: Bytes appended to every chunk so that fixed-width gathers never read outside it.
PAD_BYTES = 512

PCAP_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1000),  # little-endian, microseconds
    b"\xa1\xb2\xc3\xd4": (">", 1000),
    b"\x4d\x3c\xb2\xa1": ("<", 1),  # little-endian, nanoseconds
    b"\xa1\xb2\x3c\x4d": (">", 1),
}
PCAPNG_SHB = 0x0A0D0D0A


class CaptureFileError(ValueError):
    """A capture file that cannot be read; the message names the file, the byte offset and the problem."""


@dataclass
class RecordBatch:
    """Packet records of one chunk of a capture file.

    ``buf`` holds the chunk (plus zero padding); ``data_offset[i]`` is where
    record ``i``'s captured bytes start in it.
    """

    buf: np.ndarray
    data_offset: np.ndarray  # int64
    captured_bytes: np.ndarray  # uint32
    wire_bytes: np.ndarray  # uint32
    timestamp_ns: np.ndarray  # int64
    interface_id: np.ndarray  # uint16
    link_type: np.ndarray  # int32
    frame_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the file's (pcapng: the interface's) snap length per record, 0 if none [bytes]
    snap_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))

    def __len__(self) -> int:
        return len(self.data_offset)


@dataclass
class _State:
    """What the reader learned so far (passed between chunks)."""

    path: str
    records: int = 0
    truncated_tail_bytes: int = 0
    longer_than_snaplen: int = 0
    wire_shorter_than_captured: int = 0
    unrepresentable_timestamps: int = 0
    records_over_limit: int = 0
    unknown_blocks: dict = field(default_factory=dict)  # pcapng block type -> count
    malformed_blocks: dict = field(default_factory=dict)  # pcapng block type -> count (content that does not parse)
    link_types: set = field(default_factory=set)
    # pcapng
    interfaces: list = field(default_factory=list)  # (link_type, snaplen, resol_num, resol_den_pow, offset_s)
    section_first_if: int = 0
    endian: str = "<"


class _GuardedGzip:
    """A gzip stream that refuses to expand beyond ``max_expansion`` times the compressed file size."""

    def __init__(self, path: str, max_expansion: float | None) -> None:
        self._fh = gzip.open(path, "rb")
        self._path = path
        self._compressed = os.path.getsize(path)
        self._limit = None if max_expansion is None else max(_GZIP_GUARD_FLOOR_BYTES,
                                                              max_expansion * self._compressed)
        self._max_expansion = max_expansion
        self._read = 0

    def read(self, n: int = -1) -> bytes:
        data = self._fh.read(n)
        self._count(len(data))
        return data

    def readinto(self, view) -> int:
        n = self._fh.readinto(view)
        self._count(n)
        return n

    def _count(self, n: int) -> None:
        self._read += n
        if self._limit is not None and self._read > self._limit:
            raise CaptureFileError(
                f"{self._path}: gzip data expands more than {self._max_expansion:g} times "
                f"({self._compressed} bytes compressed, over {self._read} decompressed); captures compress "
                "2-20 times, so this looks like a decompression bomb. Pass max_gzip_expansion=None "
                "(or a larger limit) to read it anyway")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._fh.close()


def _open(path: str, max_gzip_expansion: float | None = MAX_GZIP_EXPANSION):
    with open(path, "rb") as fh:
        head = fh.read(2)
    if head == b"\x1f\x8b":
        return _GuardedGzip(path, max_gzip_expansion)
    return open(path, "rb")


def check_chunk_bytes(chunk_bytes: int) -> int:
    """Validate the ``chunk_bytes`` argument of the readers: an integer of at least :data:`MIN_CHUNK_BYTES`.

    Parameters
    ----------
    chunk_bytes : int
        Bytes of (decompressed) file handled at once. [bytes]

    Returns
    -------
    int
        The same value as a Python int. [bytes]

    Raises
    ------
    TypeError
        For a value that is not an integer (``bool`` included).
    ValueError
        For a value below :data:`MIN_CHUNK_BYTES`.
    """
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, (int, np.integer)):
        raise TypeError(f"chunk_bytes [bytes] must be an integer; got {chunk_bytes!r} "
                        f"({type(chunk_bytes).__name__})")
    if chunk_bytes < MIN_CHUNK_BYTES:
        raise ValueError(f"chunk_bytes [bytes] must be at least {MIN_CHUNK_BYTES}; got {chunk_bytes}")
    return int(chunk_bytes)


def check_max_record_bytes(max_record_bytes: int) -> int:
    """Validate a ``max_record_bytes`` argument: an integer in [1, :data:`RECORD_LIMIT_CEILING`] that fits in memory.

    Parameters
    ----------
    max_record_bytes : int
        Largest record (captured bytes) to read; longer ones are skipped and counted. [bytes]

    Returns
    -------
    int
        The same value as a Python int. [bytes]

    Raises
    ------
    TypeError
        For a value that is not an integer (``bool`` included).
    ValueError
        For a value below 1, above the formats' 32-bit lengths, or above a quarter of this machine's
        physical memory (one record is held whole while it is read).
    """
    if isinstance(max_record_bytes, bool) or not isinstance(max_record_bytes, (int, np.integer)):
        raise TypeError(f"max_record_bytes [bytes] must be an integer; got {max_record_bytes!r} "
                        f"({type(max_record_bytes).__name__})")
    if not 1 <= max_record_bytes <= RECORD_LIMIT_CEILING:
        raise ValueError(f"max_record_bytes [bytes] must be in [1, {RECORD_LIMIT_CEILING}] (32-bit record "
                         f"lengths); got {max_record_bytes}")
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        memory = 0
    if memory and max_record_bytes > memory // 4:
        raise ValueError(f"max_record_bytes [bytes] must be at most a quarter of this machine's memory "
                         f"({memory // 4}): a record is held whole while it is read; got {max_record_bytes}")
    return int(max_record_bytes)


def _check_expansion(max_gzip_expansion) -> None:
    if max_gzip_expansion is None:
        return
    if isinstance(max_gzip_expansion, bool) or not isinstance(max_gzip_expansion, (int, float, np.number)) \
            or not np.isfinite(max_gzip_expansion) or max_gzip_expansion < 1:
        raise ValueError(f"max_gzip_expansion [-] must be a finite number >= 1, or None for no limit; "
                         f"got {max_gzip_expansion!r}")


def _gather(buf: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` bytes starting at each offset (an (n, width) uint8 array)."""
    return buf[offsets[:, None] + np.arange(width)]


def iter_batches(path: str | os.PathLike, state_out: dict | None = None,
                 chunk_bytes: int = 32 << 20, *,
                 max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
                 max_record_bytes: int = MAX_RECORD_BYTES,
                 byte_range: tuple[int, int] | None = None,
                 reuse_buffer: bool = False) -> Iterator[RecordBatch]:
    """Yield :class:`RecordBatch` objects for every packet record of a capture file.

    Parameters
    ----------
    path : str or path-like
        Classic pcap (µs or ns, either byte order) or pcapng, optionally gzip-compressed.
    state_out : dict, optional
        Filled at the end with ``records``, ``truncated_tail_bytes``,
        ``longer_than_snaplen``, ``wire_shorter_than_captured``,
        ``unrepresentable_timestamps``, ``records_over_limit``, ``unknown_blocks`` and
        ``malformed_blocks`` (pcapng block type -> count) and ``link_types``.
    chunk_bytes : int
        Bytes of (decompressed) file handled at once; at least :data:`MIN_CHUNK_BYTES`. [bytes]
    max_gzip_expansion : float or None
        Largest ratio of decompressed to compressed size accepted for a gzip file
        (checked once more than 64 MiB are decompressed); ``None`` for no limit. [-]
    max_record_bytes : int
        Largest record read (captured bytes; at most :data:`RECORD_LIMIT_CEILING`). A file
        header's snap length does not raise it: a longer record that the header allows is skipped
        without being buffered and counted (``records_over_limit``); one the header does not allow
        is a corrupt file. [bytes]
    byte_range : (int, int), optional
        Uncompressed classic pcap only: read the records from file offset ``start`` (a record boundary at or
        after the 24-byte file header) up to ``stop`` as if the file ended there (a record running past
        ``stop`` is a truncated tail), numbering them from 0; offsets in messages stay the file's.
        :func:`tcpmodels.traces.stream.dask_stream_flows` cuts a capture so. [bytes]
    reuse_buffer : bool
        Read each chunk into the last chunk's buffer when it is large enough, instead of a new one. Then a
        batch's ``buf`` holds its records only until the next batch is asked for: for a caller that is
        done with each batch before it takes the next (:class:`~tcpmodels.traces.reader.ChunkedCapture`).

    Yields
    ------
    RecordBatch
        The records of one chunk (pcapng: of one chunk of one section), in file order.

    Returns
    -------
    Iterator[RecordBatch]
        A generator of the batches; ``state_out`` is filled when it is exhausted.

    Notes
    -----
    Records are kept as the file has them, with exceptions that are counted in
    ``state_out``: a wire length shorter than the captured length is raised to the
    captured length (``wire_shorter_than_captured``), a record whose timestamp
    cannot be held as int64 nanoseconds since 1970 (after 2262 or before 1678, e.g.
    a corrupt pcapng ``if_tsresol``) is dropped (``unrepresentable_timestamps``), a
    record longer than ``max_record_bytes`` is dropped (``records_over_limit``) and a
    pcapng block of a type that is neither a packet block nor one of
    :data:`PCAPNG_QUIET_BLOCKS` is skipped (``unknown_blocks``).

    Each record's bytes are copied into memory once (a record cut by a chunk boundary is
    completed by the next read, which is made as long as the record needs), so the work is
    linear in the file's size whatever ``chunk_bytes`` is.

    Raises
    ------
    CaptureFileError
        Empty file, unknown magic number, a corrupt record length, a pcapng packet
        naming an undefined interface, an interface whose ``if_tsresol`` or
        ``if_tsoffset`` no 64-bit timestamp can hold, a gzip file that expands beyond
        ``max_gzip_expansion``; the message names file and offset.
    ValueError, TypeError
        For a ``chunk_bytes`` or ``max_gzip_expansion`` out of range.
    """
    chunk_bytes = check_chunk_bytes(chunk_bytes)
    _check_expansion(max_gzip_expansion)
    max_record_bytes = check_max_record_bytes(max_record_bytes)
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"capture file not found: {path}")
    if os.path.getsize(path) == 0:
        raise CaptureFileError(f"{path}: file is empty (0 bytes), not a capture")
    st = _State(path=path)
    try:
        with _open(path, max_gzip_expansion) as fh:
            try:
                magic = fh.read(4)
            except (OSError, EOFError, zlib.error) as exc:
                raise CaptureFileError(f"{path}: offset 0: cannot decompress: {exc}") from None
            if len(magic) < 4:
                raise CaptureFileError(f"{path}: offset 0: only {len(magic)} bytes, too short for a capture header")
            if byte_range is not None and (magic not in PCAP_MAGIC or isinstance(fh, _GuardedGzip)):
                raise ValueError(f"{path}: byte_range reads an uncompressed classic pcap file only")
            if magic in PCAP_MAGIC:
                yield from _classic(fh, magic, st, chunk_bytes, active_kernel() == "c", max_record_bytes,
                                    byte_range, reuse_buffer)
            elif struct.unpack("<I", magic)[0] == PCAPNG_SHB:
                yield from _pcapng(fh, magic, st, chunk_bytes, max_record_bytes, reuse_buffer)
            else:
                raise CaptureFileError(
                    f"{path}: offset 0: not a pcap or pcapng file (magic number {magic.hex()}; "
                    "expected a1b2c3d4 / a1b23c4d or their byte swaps, or 0a0d0d0a)")
    except (gzip.BadGzipFile, EOFError, OSError, zlib.error) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise CaptureFileError(f"{path}: cannot read compressed data: {exc}") from None
    if state_out is not None:
        state_out.update(records=st.records, truncated_tail_bytes=st.truncated_tail_bytes,
                         longer_than_snaplen=st.longer_than_snaplen,
                         wire_shorter_than_captured=st.wire_shorter_than_captured,
                         unrepresentable_timestamps=st.unrepresentable_timestamps,
                         records_over_limit=st.records_over_limit, unknown_blocks=dict(st.unknown_blocks),
                         malformed_blocks=dict(st.malformed_blocks),
                         link_types=tuple(sorted(st.link_types)))


def _walk_python(chunk, incl_at, limit: int) -> tuple[list, int, int, int]:
    """Offsets of the whole records of ``chunk``, where the first incomplete one starts, and the offset and
    length of a record claiming more than ``limit`` bytes (-1, 0 if none; the walk stops there)."""
    end = len(chunk)
    offs = []
    append = offs.append
    pos = 0
    while pos + 16 <= end:
        incl = incl_at(chunk, pos + 8)[0]
        if incl > limit:
            return offs, pos, pos, incl
        nxt = pos + 16 + incl
        if nxt > end:
            break
        append(pos)
        pos = nxt
    return offs, pos, -1, 0


def _corrupt_length(st: _State, offset: int, index: int, incl: int, limit: int, snaplen: int) -> None:
    raise CaptureFileError(
        f"{st.path}: offset {offset}: record {index} claims {incl} captured bytes, more than the largest "
        f"record read ({limit}, max_record_bytes) and than the file's snap length ({snaplen}); the file is corrupt")


def _discard(fh, n: int, chunk_bytes: int) -> tuple[int, bytes]:
    """Read and drop ``n`` bytes of ``fh`` in pieces of at most ``chunk_bytes`` (memory bounded, time linear);
    returns the bytes dropped (fewer at the end of the file) and the last 4 of them."""
    scratch = memoryview(bytearray(min(n, chunk_bytes, 1 << 20)))
    done, last = 0, b""
    while done < n:
        piece = scratch[:min(len(scratch), n - done)]
        got = _read_into(fh, piece)
        if got:
            last = (last + bytes(piece[max(0, got - 4):got]))[-4:]
        done += got
        if got < len(piece):
            break
    return done, last


def _walk_classic(space: np.ndarray, start: int, end: int, endian: str, limit: int, compiled: bool, incl_at):
    """Records of ``space[start:end]``: (absolute offsets, their 16-byte headers as int64 words or None,
    where the first incomplete record starts, offset of a record over ``limit`` or -1, its length)."""
    chunk = memoryview(space)[start:end]
    if compiled:
        room = (end - start) // 16 + 1
        o = np.empty(room, np.int64)
        words = np.empty((room, 4), np.uint32)
        count, pos, bad_pos, bad_incl = _ckernel.walk_classic(chunk, endian == ">", limit, o, words)
        return o[:count] + start, words[:count].astype(np.int64), start + pos, \
            (start + bad_pos if bad_pos >= 0 else -1), bad_incl
    offs, pos, bad_pos, bad_incl = _walk_python(chunk, incl_at, limit)
    return np.asarray(offs, dtype=np.int64) + start, None, start + pos, (start + bad_pos if bad_pos >= 0 else -1), \
        bad_incl


def _next_space(carry: np.ndarray, chunk_bytes: int, need: int,
                spare: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """A buffer holding ``carry`` (the incomplete record of the last chunk) and room for the next read:
    ``chunk_bytes``, or what the incomplete record still needs if that is more (so it is completed at once).

    ``spare`` (the last chunk's buffer, which ``carry`` may lie in) is used again when it is large enough:
    numpy moves an overlapping ``carry`` to its start correctly. Otherwise a new buffer is allocated; one
    larger than glibc's largest mmap threshold (32 MiB) is mapped and zeroed page by page by the kernel
    each time (perf, 1M-packet stream: 6 % of the samples in that zeroing under ``read``; the wall time it saves
    was within the 2-core VM's run-to-run spread, issue 51). A spare too small is replaced by one at least 1/8
    larger, so carried records of varying length seldom make another."""
    want = max(chunk_bytes, need)
    size = len(carry) + want + PAD_BYTES
    if spare is None:
        space = np.empty(size, np.uint8)
    elif len(spare) >= size:
        space = spare
    else:
        space = np.empty(max(size, len(spare) + len(spare) // 8), np.uint8)
    space[:len(carry)] = carry
    return space, want


def _next_chunk(fh, carry: np.ndarray, chunk_bytes: int, need: int,
                spare: np.ndarray | None = None) -> tuple[np.ndarray, int, int]:
    """The next chunk, read in place after ``carry`` into a buffer of :func:`_next_space` (``spare`` reused
    when large enough), zero-padded.

    Returns the buffer, the bytes read from ``fh`` (0 at its end) and the end of the chunk's data in the buffer
    (``len(carry)`` plus the bytes read; :data:`PAD_BYTES` of zeros follow it).
    """
    kept = len(carry)
    space, want = _next_space(carry, chunk_bytes, need, spare)
    got = _read_into(fh, memoryview(space)[kept:kept + want])
    end = kept + got
    space[end:end + PAD_BYTES] = 0
    return space, got, end


class _Range:
    """An open file read from ``start`` to ``stop`` only: its end is ``stop`` (:func:`iter_batches`' byte_range)."""

    def __init__(self, fh, start: int, stop: int) -> None:
        fh.seek(start)
        self._fh = fh
        self._left = stop - start

    def read(self, n: int = -1) -> bytes:
        data = self._fh.read(self._left if n < 0 else min(n, self._left))
        self._left -= len(data)
        return data

    def readinto(self, view) -> int:
        view = memoryview(view)[:self._left]
        got = self._fh.readinto(view) if len(view) else 0
        self._left -= got
        return got


def _classic(fh, magic: bytes, st: _State, chunk_bytes: int, compiled: bool = False,
             max_record: int = MAX_RECORD_BYTES, byte_range: tuple[int, int] | None = None,
             reuse_buffer: bool = False) -> Iterator[RecordBatch]:
    endian, ns_per_tick = PCAP_MAGIC[magic]
    rest = fh.read(20)
    if len(rest) < 20:
        raise CaptureFileError(f"{st.path}: offset 4: file ends inside the 24-byte pcap file header")
    _major, _minor, _zone, _sigfigs, snaplen, network = struct.unpack(endian + "HHiIII", rest)
    link_type = network & 0xFFFF
    st.link_types.add(link_type)
    file_pos = 24
    if byte_range is not None:
        start, stop = (int(v) for v in byte_range)
        if not 24 <= start <= stop:
            raise ValueError(f"{st.path}: byte_range {byte_range} must satisfy 24 <= start <= stop (after the "
                             "24-byte file header)")
        fh = _Range(fh, start, stop)
        file_pos = start
    carry = np.zeros(0, np.uint8)
    need = 0
    incl_at = struct.Struct(endian + "I").unpack_from
    dt = np.dtype(endian + "u4")
    limit = max_record
    space = None
    while True:
        # one buffer per chunk (or the last one again, ``reuse_buffer``): the carried partial record (copied
        # once, from the last chunk's buffer), then the file's bytes read in place, then padding
        space, got, end = _next_chunk(fh, carry, chunk_bytes, need, space if reuse_buffer else None)
        del carry
        buf = space[:end + PAD_BYTES]
        offsets, headers, frames = [], [], []
        numbered = st.records  # record number of the chunk's next record (skipped ones included)
        pos, discard = 0, 0
        while True:
            o, hdr, stop, bad_pos, bad_incl = _walk_classic(space, pos, end, endian, limit, compiled, incl_at)
            if len(o):
                offsets.append(o)
                headers.append(hdr if hdr is not None else _gather(buf, o, 16).copy().view(dt).astype(np.int64))
                frames.append(np.arange(numbered, numbered + len(o), dtype=np.int64))
                numbered += len(o)
            if bad_pos < 0:
                pos = stop
                break
            if bad_incl > snaplen:  # neither the limit nor the file's header allows it: corruption
                _corrupt_length(st, file_pos + bad_pos, numbered, bad_incl, limit, snaplen)
            record_end = bad_pos + 16 + bad_incl
            if record_end <= end:  # over the limit, wholly in this chunk: skip it
                st.records_over_limit += 1
                numbered += 1
                pos = record_end
                continue
            pos, discard = bad_pos, record_end - end  # the rest of it is dropped from the file, unbuffered
            break
        if offsets:
            o = np.concatenate(offsets)
            hdr = np.concatenate(headers)
            sec, frac, incl, orig = hdr[:, 0], hdr[:, 1], hdr[:, 2], hdr[:, 3]
            st.longer_than_snaplen += int(np.count_nonzero(incl > snaplen))
            n = len(o)
            # unsigned 32-bit seconds reach 2106; fractions are < 1e9 in a valid file but are not trusted
            ts_ns, ok = _checked_linear(sec, 1_000_000_000, frac * ns_per_tick)
            yield _finish_batch(st, RecordBatch(
                buf=buf, data_offset=o + 16, captured_bytes=incl.astype(np.uint32),
                wire_bytes=orig.astype(np.uint32), timestamp_ns=ts_ns,
                interface_id=np.zeros(n, np.uint16), link_type=np.full(n, link_type, np.int32),
                frame_index=np.concatenate(frames), snap_bytes=np.full(n, snaplen, np.uint32)), ok)
        st.records = numbered  # the records skipped over the limit count as read
        if discard:
            dropped, _ = _discard(fh, discard, chunk_bytes)
            if dropped < discard:  # the file ends inside it: a truncated tail, not a record
                st.truncated_tail_bytes = end - pos + dropped
                return
            st.records_over_limit += 1
            st.records += 1
            file_pos += dropped
            pos = end
        carry = space[pos:end]
        file_pos += pos
        pending = end - pos
        need = 16 + int(incl_at(space, pos + 8)[0]) - pending if pending >= 16 else 16 - pending
        if got == 0:
            st.truncated_tail_bytes = pending
            return


def _read_into(fh, view: memoryview) -> int:
    """Fill ``view`` from ``fh`` (fewer bytes only at the end of the file); returns the bytes read."""
    readinto = getattr(fh, "readinto", None)
    if readinto is None:  # the gzip guard reads (and counts) through read()
        data = fh.read(len(view))
        view[:len(data)] = data
        return len(data)
    total = 0
    while total < len(view):
        n = readinto(view[total:])
        if not n:
            break
        total += n
    return total


def _finish_batch(st: _State, batch: RecordBatch, ts_ok: np.ndarray) -> RecordBatch:
    """Raise short wire lengths, drop records with unrepresentable timestamps (the caller counts the records)."""
    short = batch.wire_bytes < batch.captured_bytes
    if short.any():
        st.wire_shorter_than_captured += int(np.count_nonzero(short))
        batch.wire_bytes = np.maximum(batch.wire_bytes, batch.captured_bytes)
    if not ts_ok.all():
        st.unrepresentable_timestamps += int(np.count_nonzero(~ts_ok))
        for name in ("data_offset", "captured_bytes", "wire_bytes", "timestamp_ns", "interface_id", "link_type",
                     "frame_index", "snap_bytes"):
            setattr(batch, name, getattr(batch, name)[ts_ok])
    return batch


def _checked_linear(ticks: np.ndarray, scale: int, extra: np.ndarray | int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``ticks * scale + extra`` in int64 with a mask of the rows that did not overflow.

    ``ticks`` are non-negative integers below 2**64 held in int64 or uint64; rows whose
    exact result lies outside int64 get 0 and ``False`` in the mask.
    """
    t = np.asarray(ticks).astype(np.uint64, copy=False)
    extra = np.asarray(extra, dtype=np.int64)
    limit = np.uint64(_MAX_NS // scale) if scale else np.uint64(_MAX_NS)
    ok = t <= limit
    safe = np.where(ok, t, 0).astype(np.int64)
    base = safe * np.int64(scale)
    with np.errstate(over="ignore"):
        out = base + extra
    ok &= ~((extra > 0) & (out < base))  # extra is small and non-negative in every caller; guard anyway
    return np.where(ok, out, 0), ok


def _tsresol(value: int) -> tuple[int, int]:
    """if_tsresol -> (base, exponent): ticks are base**-exponent seconds."""
    return (2, value & 0x7F) if value & 0x80 else (10, value)


def _ticks_to_ns(ticks: np.ndarray, base: int, exp: int) -> tuple[np.ndarray, np.ndarray]:
    """pcapng 64-bit ticks of base**-exp seconds -> (int64 ns since the interface's epoch, representable mask)."""
    t = np.asarray(ticks).astype(np.uint64, copy=False)
    if base == 10:
        if exp <= 9:
            return _checked_linear(t, 10 ** (9 - exp))
        return (t // np.uint64(10 ** (exp - 9))).astype(np.int64), np.ones(len(t), bool)
    whole = t >> np.uint64(exp)
    frac = t & np.uint64((1 << exp) - 1)
    if exp > 32:  # finer than 2**-32 s: keep the integer part exact, round the fraction to 2**-32 s
        frac_ns = ((frac >> np.uint64(exp - 32)) * np.uint64(1_000_000_000)) >> np.uint64(32)
    else:
        frac_ns = (frac * np.uint64(1_000_000_000)) >> np.uint64(exp)
    return _checked_linear(whole, 1_000_000_000, frac_ns.astype(np.int64))


def _parse_idb(st: _State, body: bytes, file_off: int) -> None:
    e = st.endian
    if len(body) < 8:
        raise CaptureFileError(f"{st.path}: offset {file_off}: interface description block too short")
    link_type, _res, snaplen = struct.unpack_from(e + "HHI", body, 0)
    base, exp, offset_s = 10, 6, 0
    pos = 8
    while pos + 4 <= len(body):
        code, length = struct.unpack_from(e + "HH", body, pos)
        val = body[pos + 4: pos + 4 + length]
        if code == 0:
            break
        if code == 9 and length >= 1:
            base, exp = _tsresol(val[0])
            if exp > (19 if base == 10 else 63):
                raise CaptureFileError(
                    f"{st.path}: offset {file_off}: interface {len(st.interfaces)} has if_tsresol {val[0]:#04x} "
                    f"(ticks of {base}^-{exp} s); a 64-bit timestamp cannot hold that: expected at most 10^-19 s "
                    "(a byte up to 19) or 2^-63 s (a byte up to 0xbf)")
        elif code == 14 and length >= 8:
            offset_s = struct.unpack(e + "q", val[:8])[0]
            if abs(offset_s) > _MAX_NS // 1_000_000_000:
                raise CaptureFileError(
                    f"{st.path}: offset {file_off}: interface {len(st.interfaces)} has if_tsoffset {offset_s} s; "
                    f"expected at most {_MAX_NS // 1_000_000_000} s in magnitude (int64 nanoseconds, 1678-2262)")
        pos += 4 + ((length + 3) & ~3)
    st.interfaces.append((link_type, snaplen, base, exp, offset_s))
    st.link_types.add(link_type)


def _pcapng(fh, magic: bytes, st: _State, chunk_bytes: int,
            max_record: int = MAX_RECORD_BYTES, reuse_buffer: bool = False) -> Iterator[RecordBatch]:
    block_limit = max_record + _PCAPNG_BLOCK_OVERHEAD
    carry = np.frombuffer(magic, np.uint8)
    need = 0
    file_pos = 0
    space = None
    while True:
        space, got, end = _next_chunk(fh, carry, chunk_bytes, need, space if reuse_buffer else None)
        del carry
        buf = space[:end + PAD_BYTES]
        unpack_from = struct.unpack_from
        mv = memoryview(space)
        pos = 0
        blocks = []  # (offset, global interface id, block type, record number) of the packet blocks
        numbered = st.records
        discard, big = 0, (0, 0)
        while pos + 12 <= end:
            btype = unpack_from(st.endian + "I", mv, pos)[0]
            if btype == PCAPNG_SHB:
                bom = space[pos + 8: pos + 12].tobytes()
                if bom == b"\x4d\x3c\x2b\x1a":
                    endian = "<"
                elif bom == b"\x1a\x2b\x3c\x4d":
                    endian = ">"
                else:
                    raise CaptureFileError(f"{st.path}: offset {file_pos + pos}: section header with invalid "
                                           f"byte-order magic {bom.hex()}")
                if blocks:  # a new section: the packets so far form a batch of the old byte order
                    yield _pcapng_batch(buf, blocks, st, max_record)
                    blocks = []
                st.endian = endian
            blen = unpack_from(st.endian + "I", mv, pos + 4)[0]
            if blen < 12 or blen % 4 or (blen > block_limit and btype in (PCAPNG_SHB, 1)):
                raise CaptureFileError(f"{st.path}: offset {file_pos + pos}: block of type {btype:#x} has invalid "
                                       f"length {blen}; the file is corrupt")
            if blen > block_limit:  # too long to read: skipped unbuffered, its trailing length checked
                if pos + blen > end:
                    discard, big = pos + blen - end, (btype, blen)
                    break
                _check_trailer(st, file_pos + pos, btype, blen, unpack_from(st.endian + "I", mv, pos + blen - 4)[0])
                numbered += _skip_big_block(st, btype)
                pos += blen
                continue
            if pos + blen > end:
                break
            if btype == PCAPNG_SHB:
                st.section_first_if = len(st.interfaces)
            elif btype == 1:
                _parse_idb(st, space[pos + 8: pos + blen - 4].tobytes(), file_pos + pos)
            elif btype in (6, 2, 3):
                if btype == 3:
                    local_if = 0
                elif btype == 6:
                    local_if = unpack_from(st.endian + "I", mv, pos + 8)[0]
                else:
                    local_if = unpack_from(st.endian + "H", mv, pos + 8)[0]
                gif = st.section_first_if + local_if
                if gif >= len(st.interfaces):
                    raise CaptureFileError(
                        f"{st.path}: offset {file_pos + pos}: packet block names interface {local_if}, but this "
                        f"section defines only {len(st.interfaces) - st.section_first_if} interface(s)")
                blocks.append((pos, gif, btype, numbered))
                numbered += 1
            elif btype == 4 and not _nrb_well_formed(mv, pos + 8, pos + blen - 4, st.endian):
                st.malformed_blocks[btype] = st.malformed_blocks.get(btype, 0) + 1
            elif btype not in PCAPNG_QUIET_BLOCKS:
                st.unknown_blocks[btype] = st.unknown_blocks.get(btype, 0) + 1
            pos += blen
        if blocks:
            yield _pcapng_batch(buf, blocks, st, max_record)
        st.records = numbered
        if discard:
            btype, blen = big
            dropped, last = _discard(fh, discard, chunk_bytes)
            if dropped < discard:  # the file ends inside it: a truncated tail, not a block
                st.truncated_tail_bytes = end - pos + dropped
                return
            trailer = (space[max(pos, end - 4):end].tobytes() + last)[-4:]
            _check_trailer(st, file_pos + pos, btype, blen, struct.unpack(st.endian + "I", trailer)[0])
            st.records += _skip_big_block(st, btype)
            file_pos += dropped
            pos = end
        carry = space[pos:end]
        file_pos += pos
        pending = end - pos
        need = 0
        if pending >= 8:
            blen = unpack_from(st.endian + "I", mv, pos + 4)[0]
            need = blen - pending if 12 <= blen <= block_limit else 0
        if got == 0:
            st.truncated_tail_bytes = pending
            return


def _nrb_well_formed(mv, start: int, end: int, endian: str) -> bool:
    """Whether a name resolution block's body (``mv[start:end]``) parses: records up to ``nrb_record_end``, then
    options up to ``opt_endofopt`` or the end, nothing after. A packet block whose type lost a bit (6 -> 4)
    does not: its interface id reads as the end of the records, and its packet bytes are left over."""
    pos = start
    while True:  # the records
        if pos + 4 > end:
            return False
        code, length = struct.unpack_from(endian + "HH", mv, pos)
        pos += 4 + ((length + 3) & ~3)
        if code == 0:
            break
    while pos + 4 <= end:  # the options
        code, length = struct.unpack_from(endian + "HH", mv, pos)
        pos += 4 + ((length + 3) & ~3)
        if code == 0:
            break
    return pos == end


def _check_trailer(st: _State, offset: int, btype: int, blen: int, trailer: int) -> None:
    if trailer != blen:
        raise CaptureFileError(f"{st.path}: offset {offset}: block of type {btype:#x} claims {blen} bytes but "
                               f"ends with the length {trailer}; the file is corrupt")


def _skip_big_block(st: _State, btype: int) -> int:
    """Count a block too long to read; 1 if it was a packet record (it counts as read), else 0."""
    if btype in (6, 2, 3):
        st.records_over_limit += 1
        return 1
    if btype not in PCAPNG_QUIET_BLOCKS:
        st.unknown_blocks[btype] = st.unknown_blocks.get(btype, 0) + 1
    return 0


def _pcapng_batch(buf: np.ndarray, blocks: list, st: _State, max_record: int = MAX_RECORD_BYTES) -> RecordBatch:
    """The packet blocks of one chunk (and section) as a batch; records over ``max_record`` dropped and counted."""
    e = st.endian
    pos = np.array([b[0] for b in blocks], np.int64)
    gif = np.array([b[1] for b in blocks], np.int64)
    btype = np.array([b[2] for b in blocks], np.int64)
    number = np.array([b[3] for b in blocks], np.int64)
    n = len(pos)
    u4 = np.dtype(e + "u4")
    hdr = _gather(buf, pos, 28).copy()
    w = hdr.view(u4).astype(np.int64)  # 7 words: type, len, if, tsh, tsl, cap, orig
    blen = w[:, 1]
    ticks = (w[:, 3] << 32) | w[:, 4]
    cap = w[:, 5].copy()
    orig = w[:, 6].copy()
    data_off = pos + 28
    # obsolete packet block: if id and drops are 16-bit, same layout otherwise
    # simple packet block: type, len, orig; data at +12; no timestamp
    is_spb = btype == 3
    if is_spb.any():
        snap = np.array([st.interfaces[g][1] or max_record for g in gif[is_spb]], np.int64)
        orig[is_spb] = w[is_spb, 2]
        cap[is_spb] = np.minimum(np.minimum(orig[is_spb], snap), blen[is_spb] - 16)
        data_off[is_spb] = pos[is_spb] + 12
        ticks[is_spb] = 0
    bad = cap > blen - 32
    bad &= ~is_spb
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CaptureFileError(f"{st.path}: packet block {number[i]}: captured length {cap[i]} does not fit in "
                               f"its block of {blen[i]} bytes; the file is corrupt")
    ts_ns = np.zeros(n, np.int64)
    ts_ok = np.ones(n, bool)
    link = np.zeros(n, np.int32)
    snap = np.zeros(n, np.uint32)
    for g in np.unique(gif):
        sel = gif == g
        link_type, snaplen, base, exp, offset_s = st.interfaces[g]
        ns, ok = _ticks_to_ns(ticks[sel], base, exp)
        with np.errstate(over="ignore"):
            shifted = ns + np.int64(offset_s * 1_000_000_000)
        # adding an offset of either sign overflows exactly when the sign of the sum flips the wrong way
        ok &= ~((offset_s > 0) & (shifted < ns)) & ~((offset_s < 0) & (shifted > ns))
        ts_ns[sel] = np.where(ok, shifted, 0)
        ts_ok[sel] = ok
        link[sel] = link_type
        snap[sel] = snaplen
        if snaplen:
            st.longer_than_snaplen += int(np.count_nonzero(cap[sel] > snaplen))
    over = cap > max_record
    if over.any():  # within the block limit (options room) but longer than the records read
        st.records_over_limit += int(np.count_nonzero(over))
        keep = ~over
        pos, gif, number, cap, orig, data_off, ts_ns, ts_ok, link, snap = (
            a[keep] for a in (pos, gif, number, cap, orig, data_off, ts_ns, ts_ok, link, snap))
    batch = RecordBatch(buf=buf, data_offset=data_off, captured_bytes=cap.astype(np.uint32),
                        wire_bytes=orig.astype(np.uint32), timestamp_ns=ts_ns, interface_id=gif.astype(np.uint16),
                        link_type=link, frame_index=number, snap_bytes=snap)
    return _finish_batch(st, batch, ts_ok)
