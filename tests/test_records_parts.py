"""Shipped campaign records grow by parts written once: each stage ships only its new lines."""

from __future__ import annotations

import gzip
import json

import pytest

from tcpmodels.cli import main
from tcpmodels.records.parts import record_parts, ship_new_records, shipped_record_lines


def _append(path, *keys):
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(f'{{"key": "{k}", "x": 1}}\n' for k in keys)


def test_each_stage_writes_one_new_part_and_never_rewrites_an_old_one(tmp_path):
    src, stem = tmp_path / "run.jsonl", tmp_path / "ds" / "camp_records"
    _append(src, "a", "b")
    first = ship_new_records(src, stem)
    assert first == tmp_path / "ds" / "camp_records.jsonl.gz"
    before = first.read_bytes()
    assert ship_new_records(src, stem) is None  # nothing new: nothing written
    for stage, keys in enumerate([("c",), ("d", "e")] + [(f"k{i}",) for i in range(9)], start=2):
        _append(src, *keys)
        part = ship_new_records(src, stem)
        assert part.name == f"camp_records_part{stage:02d}.jsonl.gz"
        with gzip.open(part, "rt") as fh:
            assert [line for line in fh] == [f'{{"key": "{k}", "x": 1}}\n' for k in keys]  # only the new lines
    assert first.read_bytes() == before
    (tmp_path / "ds" / "camp_records_partial_part99.jsonl.gz").write_bytes(first.read_bytes())  # another stem's
    # in the order written: the first file, then part02 ... part12 by number
    assert [p.name for p in record_parts(stem)] == ["camp_records.jsonl.gz"] + [
        f"camp_records_part{n:02d}.jsonl.gz" for n in range(2, 13)]
    assert shipped_record_lines(stem) == src.read_text().splitlines(keepends=True)


def test_parts_must_be_records_of_the_file_being_shipped(tmp_path):
    a, b, stem = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "recs"
    _append(a, "1", "2")
    _append(b, "1", "3")
    ship_new_records(a, stem)
    with pytest.raises(ValueError, match=r"1 of the 2 records shipped under .*recs.* are not in .*b\.jsonl"):
        ship_new_records(b, stem)
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        ship_new_records(tmp_path / "missing.jsonl", stem)
    with pytest.raises(ValueError, match=r"without '\.jsonl\.gz'.*'.*recs'"):
        ship_new_records(a, tmp_path / "recs.jsonl.gz")
    assert shipped_record_lines(tmp_path / "nothing") == [] and record_parts(tmp_path / "nothing") == []


def test_commands_ship_and_cat_round_trip(tmp_path, capsys):
    src, stem = tmp_path / "run.jsonl", tmp_path / "recs"
    _append(src, "a")
    assert main(["records", "ship", str(src), str(stem)]) == 0
    _append(src, "b")
    assert main(["records", "ship", str(src), str(stem)]) == 0
    assert "1 new records -> " in capsys.readouterr().out
    assert main(["records", "cat", str(stem)]) == 0
    assert capsys.readouterr().out == src.read_text()
    assert main(["records", "cat", str(tmp_path / "none")]) == 2
    assert "no records shipped under" in capsys.readouterr().err


def test_new_lines_larger_than_a_part_are_cut_into_consecutive_parts(tmp_path):
    """A part stays under ``max_part_bytes`` compressed: the new lines go into as many parts as that takes, cut
    between lines, read back in order."""
    import random

    rng = random.Random(0)
    src, stem = tmp_path / "run.jsonl", tmp_path / "recs"
    src.write_text("".join(json.dumps({"key": i, "noise": "".join(rng.choice("abcdef0123456789") for _ in range(3000))})
                           + "\n" for i in range(40)))
    first = ship_new_records(src, stem, max_part_bytes=20_000)
    parts = record_parts(stem)
    assert first == parts[0] == tmp_path / "recs.jsonl.gz" and len(parts) > 2
    assert all(p.stat().st_size <= 20_000 for p in parts)
    assert shipped_record_lines(stem) == src.read_text().splitlines(keepends=True)
    assert ship_new_records(src, stem, max_part_bytes=20_000) is None
