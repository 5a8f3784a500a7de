"""`tcpmodels`'s parser leaves out a sub-command only when an optional dependency is missing, never on a bug."""

import subprocess
import sys
from pathlib import Path

import pytest

from tcpmodels import cli


@pytest.fixture
def fake_modules(tmp_path, monkeypatch):
    """Write sub-command modules into a folder on sys.path; return a function making one from its source."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(source)
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    return make


ADD = "def add_subcommand(sub):\n    sub.add_parser('{name}')\n"


def test_missing_optional_dependency_leaves_the_subcommand_out(fake_modules, monkeypatch):
    ok = fake_modules("tm_cli_ok", ADD.format(name="fine"))
    needs_ns3 = fake_modules("tm_cli_ns3", "import ns.core  # the sim extra\n" + ADD.format(name="sim"))
    monkeypatch.setitem(sys.modules, "ns", None)  # ns-3 not installed, whatever this machine has
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", (ok, needs_ns3))
    choices = cli.build_parser()._subparsers._group_actions[0].choices
    assert list(choices) == ["fine"]


@pytest.mark.parametrize("source, error", [
    ("import tcpmodels.no_such_module\n", ModuleNotFoundError),  # a typo in our own import
    ("from tcpmodels.models import no_such_name\n", ImportError),  # a name moved or renamed
    ("import tm_cli_not_a_dependency\n", ModuleNotFoundError),  # a third-party package nobody declared
])
def test_other_import_errors_are_raised(fake_modules, monkeypatch, source, error):
    broken = fake_modules("tm_cli_broken", source + ADD.format(name="broken"))
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", (broken,))
    with pytest.raises(error):
        cli.build_parser()


def test_every_shipped_subcommand_loads():
    choices = cli.build_parser()._subparsers._group_actions[0].choices
    assert {"init", "report", "testbed", "analyze", "records", "campaign"} <= set(choices)


def test_the_parser_imports_no_pandas():
    # `tcpmodels --help` imports every sub-command module; `analyze.cli` imports `analyze.capture` (pandas,
    # matplotlib, the fits) only when the command runs
    code = ("import sys; from tcpmodels import cli; cli.build_parser(); "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'tcpmodels.analyze.capture') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
