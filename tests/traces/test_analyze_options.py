"""``tcpmodels analyze`` refuses what it cannot do, before any work (issue 50, finding 3).

The battery's cases: two captures of one name in different folders wrote one report folder (exit 0), an output
directory that is a file or cannot be written gave a traceback, ``--flow 'garbage:::[[['`` and ``--top -3`` gave
exit 0 and an empty report, a capture named ``.pcap`` wrote into the output root. No notebook runs here: every
case is refused before one would start.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from trace_fixtures import CAPTURES

from tcpmodels.analyze.capture import (
    analyze_streaming,
    capture_endpoints,
    parse_flow_filter,
    report_folders,
    report_notebook,
    select_flows,
)
from tcpmodels.cli import main
from tcpmodels.traces.pcapfile import set_kernel

CAP = CAPTURES / "reno_bulk.pcap.gz"


def _run(capsys, *args):
    code = main(["analyze", *map(str, args)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_two_captures_of_one_name_are_refused_before_any_work(tmp_path, capsys):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(CAP, tmp_path / d / "run.pcap.gz")
    code, out, err = _run(capsys, tmp_path / "a" / "run.pcap.gz", tmp_path / "b" / "run.pcap.gz",
                          "--output-dir", tmp_path / "out")
    assert code == 2 and out == ""
    assert f"{tmp_path / 'a' / 'run.pcap.gz'} and {tmp_path / 'b' / 'run.pcap.gz'} would share" in err
    assert not (tmp_path / "out").exists()
    shutil.copy(CAP, tmp_path / "a" / "run.pcapng")  # another ending, the same folder
    with pytest.raises(ValueError, match="would share the report folder"):
        report_folders([tmp_path / "a" / "run.pcap.gz", tmp_path / "a" / "run.pcapng"], tmp_path / "out")


def test_report_folders_keep_dots_and_never_use_the_root(tmp_path):
    caps = [tmp_path / n for n in ("p5_main-a1.65-n32.pcap.gz", "p5_main-a1.70-n32.pcap.gz", ".pcap", "x.cap")]
    folders = report_folders(caps + caps[:1], tmp_path / "out")  # the same file twice counts once
    assert [f.name for f in folders.values()] == ["p5_main-a1.65-n32", "p5_main-a1.70-n32", "pcap", "x"]
    assert all(f.parent == tmp_path / "out" for f in folders.values())


def test_a_folder_holding_another_captures_report_is_refused(tmp_path):
    folder = tmp_path / "out" / "run"
    folder.mkdir(parents=True)
    (folder / "capture_path.txt").write_text(str(tmp_path / "elsewhere" / "run.pcap") + "\n")
    with pytest.raises(ValueError, match=r"holds the report of .*elsewhere/run.pcap"):
        report_folders([tmp_path / "run.pcap"], tmp_path / "out")
    (folder / "capture_path.txt").write_text(str(tmp_path / "run.pcap") + "\n")  # its own: rerun replaces it
    assert report_folders([tmp_path / "run.pcap"], tmp_path / "out") == {tmp_path / "run.pcap": folder}


def test_an_output_dir_that_is_a_file_or_unwritable_is_one_line(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target, words in ((afile, "is a file, not a folder"), (afile / "sub", "cannot be written"),
                          ("/sys/tcpmodels_analysis", "cannot be written")):
        code, out, err = _run(capsys, CAP, "--output-dir", target)
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, (target, err)


@pytest.mark.parametrize("args, words", [
    (["--flow", "garbage:::[[["], "is not an IP address"),
    (["--flow", "5201"], "a port is written with its colon: ':5201'"),
    (["--flow", "10.0.0.1:99999"], "port '99999' is not an integer in [0, 65535]"),
    (["--flow", "[fd00::1"], "expected ADDR, :PORT or ADDR:PORT"),
    (["--top", "-3"], "--top: must be an integer >= 1; got '-3'"),
    (["--top", "0"], "--top: must be an integer >= 1; got '0'"),
    (["--top", "x"], "--top: must be an integer >= 1; got 'x'"),
])
def test_options_are_checked_before_any_work(tmp_path, capsys, args, words):
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(CAP), "--output-dir", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and words in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kernel", ["auto", "numpy"])
def test_a_filter_matching_no_flow_is_an_error_naming_endpoints(tmp_path, capsys, kernel):
    """Under both decoders: with the numpy reference (no compiler at install) the endpoint count stopped with
    pandas' "Big-endian buffer not supported" (the decoded ports were big-endian views)."""
    previous = set_kernel(kernel)
    try:
        code, out, err = _run(capsys, CAP, "--flow", ":5202", "--output-dir", tmp_path / "out")
    finally:
        set_kernel(previous)
    assert code == 2 and "no flow matches --flow ':5202' in" in err
    top = capture_endpoints(CAP)[0]
    assert f"{top[0]}:{top[1]}" in err
    assert not (tmp_path / "out" / "reno_bulk").exists()


def test_flow_filters_parse_and_select():
    assert parse_flow_filter("") == ("", "")
    assert parse_flow_filter(" :80 ") == ("", "80")
    assert parse_flow_filter("10.0.0.1") == ("10.0.0.1", "")
    assert parse_flow_filter("[FD00:0::1]:080") == ("fd00::1", "80")
    assert parse_flow_filter("fd00::1") == ("fd00::1", "")
    table = pd.DataFrame({"flow": ["10.0.0.1:5000 > 10.0.0.2:80", "[fd00::1]:6000 > [fd00::2]:443"]})
    assert list(select_flows(table, "[fd00:0::1]:6000").index) == [1]
    assert list(select_flows(table, ":80").index) == [0]
    with pytest.raises(ValueError, match="not an IP address"):
        select_flows(table, "garbage:::[[[")


def test_streaming_filter_matching_no_flow_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"no flow matches --flow ':5202' in .*: its endpoints are "):
        analyze_streaming(CAP, tmp_path / "r", flow_filter=":5202", progress=False)
    assert not (tmp_path / "r" / "flows.csv").exists()


def test_the_report_notebook_is_the_shipped_one():
    nb = report_notebook()
    assert nb.name == "analyze_capture.ipynb" and nb.is_file() and nb.parent.name == "notebooks"
