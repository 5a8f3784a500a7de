"""The exit statuses and one-line messages that every campaign command gives for expected failures."""

from __future__ import annotations

import pytest

from tcpmodels.experiments.campaign import campaign_errors
from tcpmodels.testbed._system import PrivilegeError, TestbedError


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (PrivilegeError("needs root (uid 1000)"), 77, "p9: needs root (uid 1000)"),
        (TestbedError("delay element for link p0 did not start"), 1, "p9: delay element for link p0 did not start"),
        (ValueError("rtts_ms must be > 0; got -1"), 1, "p9: rtts_ms must be > 0; got -1"),
        (KeyboardInterrupt(), 130, "p9: interrupted; rerun the same command to resume"),
    ],
    ids=["privilege", "testbed", "value", "interrupt"],
)
def test_expected_failures_become_one_line_and_an_exit_status(exc, code, message, capsys):
    with pytest.raises(SystemExit) as info:
        with campaign_errors("p9"):
            raise exc
    assert info.value.code == code
    err = capsys.readouterr().err
    assert err == message + "\n" and "Traceback" not in err


def test_only_the_named_extra_types_are_caught():
    with pytest.raises(SystemExit) as info:
        with campaign_errors("p9", also=(OSError,)):
            raise FileNotFoundError("runs/p9/records.jsonl")
    assert info.value.code == 1
    with pytest.raises(KeyError):  # a bug stays a traceback
        with campaign_errors("p9"):
            raise KeyError("rtt1_ms")


def test_success_leaves_no_trace(capsys):
    with campaign_errors("p9"):
        pass
    assert capsys.readouterr().err == ""
