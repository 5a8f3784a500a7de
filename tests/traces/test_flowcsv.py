"""python -m tcpmodels.traces.flowcsv: the flow table as CSV in one pass, without importing pandas."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from pass_equality import needs_pass
from tcpmodels.traces import TraceWarning, flowcsv, stream
from trace_fixtures import CAPTURES


def _stream_csv(path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return stream.stream_flows(path).to_csv()


@needs_pass
@pytest.mark.parametrize("name", ["p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz", "mptcp_2path.pcapng.gz"])
def test_the_csv_is_what_stream_flows_writes(tmp_path, name, monkeypatch):
    monkeypatch.setattr(flowcsv, "_ROWS_AT_ONCE", 7)  # rows written in blocks: 3148 flows in 450 blocks
    out = tmp_path / "flows.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        assert flowcsv.main([str(CAPTURES / name), "-o", str(out)]) == 0
    assert out.read_text() == _stream_csv(CAPTURES / name)


@needs_pass
def test_a_command_line_without_pandas():
    path = CAPTURES / "reno_bulk.pcap.gz"
    code = ("import sys\nfrom tcpmodels.traces import flowcsv\nflowcsv.main([sys.argv[1]])\n"
            "print('pandas' in sys.modules, 'pyarrow' in sys.modules, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", code, str(path)], capture_output=True, text=True,
                          check=True)
    assert proc.stdout == _stream_csv(path)
    assert proc.stderr.strip().splitlines()[-1] == "False False"


def test_defaults_and_bad_arguments(capsys):
    assert flowcsv.DEFAULT_IDLE_TIMEOUT_S == stream.DEFAULT_IDLE_TIMEOUT_S
    with pytest.raises(SystemExit) as exc:
        flowcsv.main([str(CAPTURES / "reno_bulk.pcap.gz"), "--idle-timeout-s", "0"])
    assert exc.value.code == 2
    assert "--idle-timeout-s [s] must be a positive finite number; got 0.0" in capsys.readouterr().err
