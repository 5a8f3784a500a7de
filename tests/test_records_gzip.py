"""Shipped .gz files are reproducible: the same content gives the same bytes, whenever and wherever written."""

from __future__ import annotations

import gzip
import os
import struct

from tcpmodels.records import gzip_reproducibly, reproducible_gzip_writer


def _header_mtime_and_flags(path):
    head = path.read_bytes()[:10]
    return struct.unpack("<I", head[4:8])[0], head[3]


def test_writer_leaves_no_name_nor_time_and_text_round_trips(tmp_path):
    lines = ['{"run": 1, "x": "\u00e9"}\n', '{"run": 2}\n']
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "sub_b.jsonl.gz"
    with reproducible_gzip_writer(a, text=True) as fh:
        fh.writelines(lines)
    os.utime(tmp_path, (1, 1))  # a different moment and file name must not change a byte
    with reproducible_gzip_writer(b, text=True) as fh:
        fh.writelines(lines)
    assert a.read_bytes() == b.read_bytes()
    assert _header_mtime_and_flags(a) == (0, 0)  # mtime 0, no FNAME flag
    with gzip.open(a, "rt", encoding="utf-8") as fh:
        assert fh.readlines() == lines


def test_file_copy_matches_the_stream_writer(tmp_path):
    src = tmp_path / "cap.pcap"
    src.write_bytes(bytes(range(256)) * 100)
    gzip_reproducibly(src, tmp_path / "one.gz")
    with reproducible_gzip_writer(tmp_path / "two.gz") as fh:
        fh.write(src.read_bytes())
    assert (tmp_path / "one.gz").read_bytes() == (tmp_path / "two.gz").read_bytes()
    assert gzip.decompress((tmp_path / "one.gz").read_bytes()) == src.read_bytes()
