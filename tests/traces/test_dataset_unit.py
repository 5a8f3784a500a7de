"""A packet dataset is a unit (issue 50): written whole or not at all, and read only as its metadata lists it.

Each test makes the situation the reliability battery found: an interrupted run whose files a rerun took in,
foreign Parquet files dropped in the folder, a partition file deleted or damaged, a target folder that already
holds something else.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from tcpmodels.cli import main
from tcpmodels.traces import TraceWarning, flows, read_pcap
from tcpmodels.traces.dataset import METADATA_FILE, DatasetError, open_dataset, read_parquet_dataset, to_parquet

CAPTURES = Path(__file__).resolve().parents[2] / "data" / "captures"
CAPTURE = CAPTURES / "short_flows_any.pcap.gz"
OTHER = CAPTURES / "reno_bulk.pcap.gz"
CHUNK = 1 << 16
PARTS = 4


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def truth():
    table = _quiet(read_pcap, CAPTURE)
    return table, _quiet(flows, table)


class _Stop(Exception):
    pass


def _interrupted(out: Path, after_chunks: int, chunk_bytes: int = CHUNK) -> None:
    """to_parquet stopped after ``after_chunks`` chunks (as a KeyboardInterrupt or a crash would stop it)."""
    seen = []

    def progress(nbytes):
        seen.append(nbytes)
        if len(seen) >= after_chunks:
            raise _Stop

    with pytest.raises(_Stop):
        _quiet(to_parquet, CAPTURE, out, chunk_bytes=chunk_bytes, partitions=PARTS, progress=progress)


def test_an_interrupted_run_leaves_nothing_and_a_rerun_reads_true(tmp_path, truth):
    table, want = truth
    out = tmp_path / "ds"
    _interrupted(out, after_chunks=3)
    assert not out.exists() or not any(out.iterdir())
    assert not [p for p in tmp_path.iterdir() if p.name != "ds"], "the temporary folder was left behind"
    ds = _quiet(to_parquet, CAPTURE, out, chunk_bytes=CHUNK * 2, partitions=PARTS)  # another chunk size
    assert sum(ds.rows) == len(table)
    pd.testing.assert_frame_equal(read_parquet_dataset(out), table, check_exact=True)
    pd.testing.assert_frame_equal(_quiet(flows, out), want, check_exact=True)


def test_a_folder_holding_anything_else_is_refused_naming_it(tmp_path):
    out = tmp_path / "ds"
    (out / "part=0000").mkdir(parents=True)
    (out / "part=0000" / "data-00007.parquet").write_bytes(b"left over")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match=r"notes\.txt.*part=0000|part=0000.*notes\.txt"):
        _quiet(to_parquet, CAPTURE, out, partitions=PARTS)
    assert (out / "notes.txt").read_text() == "mine"  # nothing of the user's touched
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(DatasetError, match="not a directory"):
        _quiet(to_parquet, CAPTURE, afile, partitions=PARTS)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert sum(_quiet(to_parquet, CAPTURE, empty, partitions=PARTS).rows) > 0  # an empty folder is fine


@pytest.fixture()
def written(tmp_path):
    out = tmp_path / "ds"
    ds = _quiet(to_parquet, CAPTURE, out, chunk_bytes=CHUNK, partitions=PARTS)
    return out, ds


def test_the_metadata_lists_every_file_with_rows_size_and_checksum(written):
    out, ds = written
    meta = json.loads((out / METADATA_FILE).read_text())
    listed = meta["files"]
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))
    assert sorted(f["file"] for f in listed) == on_disk
    for f in listed:
        assert f["size_bytes"] == (out / f["file"]).stat().st_size and f["rows"] > 0 and "crc32" in f
    by_part = {}
    for f in listed:
        by_part[f["partition"]] = by_part.get(f["partition"], 0) + f["rows"]
    assert [by_part.get(i, 0) for i in range(PARTS)] == meta["rows"]


def test_foreign_parquet_files_are_an_error_naming_them(written, tmp_path):
    out, ds = written
    other = _quiet(to_parquet, OTHER, tmp_path / "other", partitions=PARTS)
    foreign = other.partition_files(other.nonempty()[0])[0]
    shutil.copy(foreign, out / "part=0000" / "data-00099.parquet")
    (out / "part=0042").mkdir()
    shutil.copy(foreign, out / "part=0042" / "data-00000.parquet")
    for read in (open_dataset, read_parquet_dataset, flows):
        with pytest.raises(DatasetError, match=r"part=0000/data-00099\.parquet") as err:
            _quiet(read, out)
        assert "part=0042" in str(err.value)


def test_a_deleted_partition_file_is_an_error_naming_it(written):
    out, ds = written
    victim = ds.partition_files(ds.nonempty()[-1])[0]
    victim.unlink()
    name = str(victim.relative_to(out))
    for read in (open_dataset, read_parquet_dataset, flows):
        with pytest.raises(DatasetError, match=rf"missing.*{name}"):
            _quiet(read, out)
    with pytest.raises(DatasetError, match=name):  # the dataset opened before the deletion checks again
        ds.read_partition(ds.nonempty()[-1])


@pytest.mark.parametrize("damage", ["flip", "truncate", "append"])
def test_a_damaged_partition_file_is_an_error_naming_it(written, damage):
    out, ds = written
    i = ds.nonempty()[0]
    victim = ds.partition_files(i)[0]
    data = bytearray(victim.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x10
    elif damage == "truncate":
        data = data[:-100]
    else:
        data += b"\0" * 8
    victim.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=str(victim.relative_to(out))):
        ds.read_partition(i)
    with pytest.raises(DatasetError, match=str(victim.relative_to(out))):
        _quiet(flows, out)


def test_a_damaged_metadata_file_is_an_error_naming_it(written):
    out, _ = written
    (out / METADATA_FILE).write_text("{ not json")
    with pytest.raises(DatasetError, match=METADATA_FILE):
        open_dataset(out)


def test_analyze_streaming_refuses_a_dataset_folder_it_did_not_write(tmp_path, capsys):
    """The state an interrupted run of an older version left: part files and no metadata. The rerun must not
    take them in (it wrote a flows.csv with 2,834 packets against the true 2,116, exit 0)."""
    report = tmp_path / "out" / CAPTURE.name.split(".")[0]
    stale = report / "packets.parquet" / "part=0003"
    stale.mkdir(parents=True)
    (stale / "data-00005.parquet").write_bytes(b"PAR1 stale")
    code = main(["analyze", str(CAPTURE), "--streaming", "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "part=0003" in err and "Traceback" not in err, err
    assert not (report / "flows.csv").exists()


KILLED_WRITER = """
import sys, time, warnings
from tcpmodels.traces import to_parquet
seen = []
def progress(nbytes):
    seen.append(nbytes)
    if len(seen) == 8:  # some partitions written by now (4 chunks of rows buffered at most)
        print("chunk", flush=True)
        time.sleep(60)  # killed here, in the middle of the dataset
warnings.simplefilter("ignore")
to_parquet(sys.argv[1], sys.argv[2], chunk_bytes=1 << 14, partitions=4, progress=progress)
"""


def test_a_killed_run_leaves_no_dataset_and_the_next_run_removes_its_folder(tmp_path, truth):
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "ds"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(CAPTURE), str(out)], stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "chunk"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        child.stdout.close()
    assert not out.exists()
    (partial,) = tmp_path.glob(".ds.partial-*")  # what SIGKILL left: hidden, beside, never the dataset
    assert any(partial.rglob("*.parquet"))
    table, want = truth
    ds = _quiet(to_parquet, CAPTURE, out, partitions=PARTS)
    assert sum(ds.rows) == len(table) and not partial.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]
    pd.testing.assert_frame_equal(_quiet(flows, out), want, check_exact=True)
