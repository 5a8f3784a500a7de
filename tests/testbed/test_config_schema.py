"""Testbed configs are checked before any namespace exists: every message names the key, the value and what was expected."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tcpmodels.testbed import runner
from tcpmodels.testbed.config_schema import ConfigError, Table, confined_run_dir, safe_run_name

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str = "two_path") -> dict:
    return copy.deepcopy(runner.load_config(EXAMPLES / f"{name}.toml"))


def check(cfg: dict, monkeypatch) -> None:
    """Run the config up to the privilege check, which is made to stop the run (no namespace is created)."""
    class Stop(Exception):
        pass

    def stop():
        raise Stop

    monkeypatch.setattr(runner, "require_privileges", stop)
    with pytest.raises(Stop):
        runner.run_config(cfg, progress=False)


def test_every_example_passes_the_checks(monkeypatch):
    for name in ("two_path", "dumbbell", "fat_tree"):
        check(example(name), monkeypatch)


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["topology"]["paths"][0].update(rate_mbps="fast"),
     r"\[topology.paths\[0\]\] rate_mbps must be a number >= 0.001 and <= 100000 \[Mbit/s\]; got 'fast' \(str\)"),
    (lambda c: c["topology"]["paths"][1].update(rtt_ms=-5),
     r"\[topology.paths\[1\]\] rtt_ms must be a number >= 0 and <= 20000 \[ms\]; got -5 \(int\)"),
    (lambda c: c["topology"]["paths"][0].update(loss=1.5), r"\[topology.paths\[0\]\] loss must be .*got 1.5"),
    (lambda c: c["topology"]["paths"][0].update(buffer_bytes=10.5),
     r"buffer_bytes must be a whole number >= 1514 \[bytes\]; got 10.5 \(float\)"),
    (lambda c: c["run"].update(seed="one"), r"\[run\] seed must be a whole number >= 0.*; got 'one' \(str\)"),
    (lambda c: c["run"].update(seed=-1), r"\[run\] seed must be a whole number >= 0"),
    (lambda c: c["capture"].update(snaplen_bytes=10),
     r"\[capture\] snaplen_bytes must be a whole number >= 64 and <= 262144 \[bytes\]; got 10"),
    (lambda c: c["capture"].update(points=["zz:p0"]),
     r"\[capture\] points\[0\] node must name a node of topology two_path \(c, s\); got 'zz'"),
    (lambda c: c["capture"].update(points=["c:eth9"]),
     r"\[capture\] points\[0\] 'c:eth9': node c has no interface 'eth9'; its interfaces: \['p0', 'p1'\]"),
    (lambda c: c["capture"].update(points="c:p0"), r"\[capture\] points must be a list"),
    (lambda c: c["traffic"][0].update(kind="flood"),
     r"\[traffic\[0\]\] kind must be one of \['bulk', 'probe', 'poisson'\]; got 'flood'"),
    (lambda c: c["traffic"][1].update(duration_s=0), r"\[traffic\[1\]\] duration_s must be a number > 0"),
    (lambda c: c["traffic"][1].update(mptcp="yes"), r"\[traffic\[1\]\] mptcp must be true or false; got 'yes'"),
    (lambda c: c["traffic"][1].update(**{"from": "x"}), r"\[traffic\[1\]\] from must name a node"),
    (lambda c: c["run"].update(name="../x"), r"\[run\] name must be 1-100 characters .*got '../x'"),
    (lambda c: c["run"].update(name="a/b"), r"\[run\] name must be"),
    (lambda c: c.update(topology=[1, 2]), r"\[topology\] must be a table"),
])
def test_bad_values_name_the_key_value_and_expectation(mutate, message, monkeypatch):
    cfg = example()
    mutate(cfg)
    with pytest.raises(ConfigError, match=message):
        check(cfg, monkeypatch)


def test_run_directory_stays_inside_the_output_directory(tmp_path):
    assert confined_run_dir(tmp_path, "run-1") == (tmp_path / "run-1").resolve()
    with pytest.raises(ConfigError, match="outside the output directory"):
        confined_run_dir(tmp_path, "../escape")
    with pytest.raises(ConfigError, match="not starting with '.'"):
        safe_run_name(".hidden")


def test_table_refuses_unknown_keys_and_non_tables():
    with pytest.raises(ConfigError, match=r"\[x\]: unknown key\(s\) \['b'\]; allowed: \['a'\]"):
        Table("x", {"a": 1, "b": 2}, {"a"})
    with pytest.raises(ConfigError, match=r"\[x\] must be a table"):
        Table("x", 3, {"a"})
    t = Table("x", {"a": float("nan")}, {"a"})
    with pytest.raises(ConfigError, match=r"\[x\] a must be a number \[s\]; got nan"):
        t.number("a", unit="s")
