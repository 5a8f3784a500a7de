"""``tcpmodels campaign NAME ...``: one entry to every campaign's own command line (issue 56)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from tcpmodels.cli import main as tcpmodels_main
from tcpmodels.experiments.cli import CAMPAIGNS, run_campaign_command


@pytest.mark.parametrize("name", sorted(CAMPAIGNS))
def test_every_campaign_names_a_main_taking_argv(name):
    module_name, _, function = CAMPAIGNS[name][0].partition(":")
    main = getattr(importlib.import_module(module_name), function)
    assert list(inspect.signature(main).parameters) == ["argv"]
    assert module_name.startswith(f"tcpmodels.experiments.{name}")  # `python -m tcpmodels.experiments.<name>`


def test_help_lists_every_campaign_with_a_line(capsys):
    with pytest.raises(SystemExit) as info:
        tcpmodels_main(["campaign", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for name, (_, line) in CAMPAIGNS.items():
        assert f"  {name} " in out and line in out


def test_a_campaign_runs_with_the_exit_status_and_message_of_its_python_m_form(capsys):
    """The P5 kernel dataset refuses an alpha outside (1, 2) through campaign_errors: status 1, one line."""
    argv = ["kernel-dataset", "--runs", "/nonexistent", "--out", "/nonexistent", "--alphas", "2.5"]
    with pytest.raises(SystemExit) as direct:
        importlib.import_module("tcpmodels.experiments.p5").main(argv)
    err_direct = capsys.readouterr().err
    with pytest.raises(SystemExit) as via_cli:
        tcpmodels_main(["campaign", "p5", *argv])
    assert via_cli.value.code == direct.value.code == 1
    assert capsys.readouterr().err == err_direct == "p5: alphas [-] must each be in (1, 2); got (2.5,)\n"


def test_an_unknown_campaign_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        tcpmodels_main(["campaign", "p9"])
    assert info.value.code == 2
    assert "invalid choice: 'p9'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="campaign must be one of p1, .*; got 'p9'"):
        run_campaign_command("p9", [])
