"""tcpmodels.sweep: Dask runs, cache keyed by config + code, progress, failures, resume, testbed lock.

These use trivial run functions on a small in-process LocalCluster (2 worker
threads), so they need the ``distributed`` package but not ns-3.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the sweep needs dask.distributed (extra 'sim')")

from tcpmodels import sweep as sw


@dataclass(frozen=True, kw_only=True)
class Toy:
    x: int
    scale: float = 1.0
    fail: bool = False


@dataclass(frozen=True, kw_only=True)
class ToyTestbed:
    x: int
    resources: dict = dataclasses.field(default_factory=lambda: {"testbed": 1})


def square(config: Toy, out_dir: str) -> dict:
    """Writes a file and a call log, returns a value."""
    if config.fail:
        raise RuntimeError(f"boom at x={config.x}")
    Path(out_dir, "value.txt").write_text(str(config.x**2))
    log = Path(out_dir).parents[1] / "calls.log"
    with open(log, "a") as fh:
        fh.write(f"{config.x}\n")
    return {"x": config.x, "y": config.x**2 * config.scale}


def hold(config: ToyTestbed, out_dir: str) -> tuple[float, float]:
    t0 = time.monotonic()
    time.sleep(0.3)
    return t0, time.monotonic()


def hold_free(config: Toy, out_dir: str) -> tuple[float, float]:
    t0 = time.monotonic()
    time.sleep(0.3)
    return t0, time.monotonic()


def calls(cache: Path) -> list[int]:
    log = cache / "calls.log"
    return [int(v) for v in log.read_text().split()] if log.exists() else []


KW = {"n_workers": 2, "processes": False}


def test_grid_is_the_cartesian_product():
    configs = sw.grid(Toy(x=0), x=[1, 2, 3, 4], scale=[1.0, 2.0])
    assert len(configs) == 8
    assert {(c.x, c.scale) for c in configs} == {(x, s) for x in (1, 2, 3, 4) for s in (1.0, 2.0)}
    with pytest.raises(ValueError, match="'rate' is not a field of Toy"):
        sw.grid(Toy(x=0), rate=[1])


def test_cache_key_depends_on_config_and_code():
    a, b = Toy(x=1), Toy(x=2)
    assert sw.cache_key(a, square) == sw.cache_key(Toy(x=1), square)
    assert sw.cache_key(a, square) != sw.cache_key(b, square)
    assert sw.cache_key(a, square) != sw.cache_key(a, hold_free)
    # the ns-3 run function's key covers the scenario modules too
    assert "tcpmodels.sim.scenarios" in sw.run_sim.__code_deps__
    assert len(sw.code_version(sw.run_sim)) == 64


def test_code_version_of_a_package_dependency_covers_all_its_modules():
    # tcpmodels.sim.config is a package: an edit in any of its modules must change the key
    import hashlib
    import importlib
    import pkgutil

    import tcpmodels.sim.config as pkg

    def uses_config(config, out_dir):
        return config

    uses_config.__code_deps__ = ("tcpmodels.sim.config",)
    names = sorted(m.name for m in pkgutil.walk_packages(pkg.__path__, "tcpmodels.sim.config."))
    assert "tcpmodels.sim.config.parts" in names
    h = hashlib.sha256(sw.code_fingerprint(uses_config).encode())
    for mod in [pkg] + [importlib.import_module(n) for n in names]:
        h.update(sw.code_fingerprint(mod).encode())
    assert sw.code_version(uses_config) == h.hexdigest()


def _load_function(tmp_path, name, source):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run


def test_code_version_ignores_docstrings_comments_and_layout_but_not_statements(tmp_path):
    base = _load_function(tmp_path, "v0", "def run(config, out_dir):\n    return config * 2\n")
    documented = _load_function(tmp_path, "v1", (
        'def run(config,\n        out_dir):\n    """Doubles.\n\n    Returns\n    -------\n    int\n    """\n'
        "    # a comment\n    return (config\n            * 2)\n"))
    changed = _load_function(tmp_path, "v2", "def run(config, out_dir):\n    return config * 3\n")
    assert sw.code_version(base) == sw.code_version(documented)
    assert sw.code_version(base) != sw.code_version(changed)


def test_read_cached_and_canonical_json_are_public(tmp_path):
    assert sw.read_cached(tmp_path, "nope") == (False, None)
    assert sw.canonical_json({"b": 1, "a": [1.5]}) == '{"a":[1.5],"b":1}'
    with pytest.raises(ValueError, match="JSON"):
        sw.canonical_json({"x": float("nan")})


def test_sweep_runs_caches_and_reports_progress(tmp_path, capsys):
    configs = sw.grid(Toy(x=0), x=list(range(8)))
    res = sw.sweep(configs, square, cache_dir=tmp_path, desc="toy", **KW)
    assert res.ok and res.n_run == 8 and res.n_cached == 0
    assert [v["y"] for v in res.values] == [x * x for x in range(8)]
    assert sorted(calls(tmp_path)) == list(range(8))
    for x, d in enumerate(res.out_dirs):
        assert Path(d, "value.txt").read_text() == str(x * x)
        assert json.loads(Path(d).parent.joinpath("config.json").read_text())["x"] == x
    err = capsys.readouterr().err
    assert "toy" in err and "8/8" in err
    # second time: everything from the cache, nothing runs
    again = sw.sweep(configs, square, cache_dir=tmp_path, progress=False, **KW)
    assert again.n_cached == 8 and again.n_run == 0
    assert again.values == res.values
    assert sorted(calls(tmp_path)) == list(range(8))


def test_sweep_resumes_after_interruption(tmp_path):
    configs = sw.grid(Toy(x=0), x=list(range(8)))
    sw.sweep(configs[:3], square, cache_dir=tmp_path, progress=False, **KW)
    # a half-written entry from a killed run is ignored, not read as a result
    (tmp_path / f".tmp-{sw.cache_key(configs[5], square)}-dead").mkdir()
    res = sw.sweep(configs, square, cache_dir=tmp_path, progress=False, **KW)
    assert res.n_cached == 3 and res.n_run == 5
    assert sorted(calls(tmp_path)) == list(range(8))


def test_failures_are_reported_with_their_config(tmp_path, capsys):
    configs = [Toy(x=1), Toy(x=2, fail=True), Toy(x=3), Toy(x=4, fail=True)]
    with pytest.raises(sw.SweepError) as info:
        sw.sweep(configs, square, cache_dir=tmp_path, progress=False, **KW)
    msg = str(info.value)
    assert "2 of 4 configs failed" in msg and "boom at x=2" in msg and "boom at x=4" in msg
    assert '"fail":true' in msg and '"x":2' in msg
    assert [f.index for f in info.value.failures] == [1, 3]
    assert "RuntimeError" in info.value.failures[0].traceback
    assert len(list((tmp_path / "failed").glob("*.txt"))) == 2
    assert "2 of 4 configs failed" in capsys.readouterr().err
    # the successes were cached; collect mode returns the rest with None holes
    res = sw.sweep(configs, square, cache_dir=tmp_path, progress=False, on_failure="collect", **KW)
    assert res.n_cached == 2 and res.n_run == 2
    assert res.values[0] == {"x": 1, "y": 1.0} and res.values[1] is None
    assert [f.config.x for f in res.failures] == [2, 4]


def test_duplicate_configs_run_once(tmp_path):
    res = sw.sweep([Toy(x=5), Toy(x=5), Toy(x=6)], square, cache_dir=tmp_path, progress=False, **KW)
    assert res.n_run == 2
    assert res.values[0] == res.values[1]
    assert sorted(calls(tmp_path)) == [5, 6]


def test_testbed_configs_never_overlap_on_a_host(tmp_path):
    assert sw.needs_testbed(ToyTestbed(x=1)) and not sw.needs_testbed(Toy(x=1))
    res = sw.sweep([ToyTestbed(x=i) for i in range(3)], hold, cache_dir=tmp_path, progress=False, **KW)
    spans = sorted(res.values)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end - 1e-3, spans
    # control: without the resource two workers do overlap
    free = sw.sweep([Toy(x=i) for i in range(2)], hold_free, cache_dir=tmp_path / "free", progress=False, **KW)
    (a0, a1), (b0, b1) = sorted(free.values)
    assert b0 < a1


def test_bad_arguments():
    with pytest.raises(ValueError, match="on_failure"):
        sw.sweep([], square, cache_dir="/tmp/unused-tcpmodels", on_failure="ignore")
    with pytest.raises(ValueError, match="n_workers"):
        sw.sweep([], square, cache_dir="/tmp/unused-tcpmodels", n_workers=0)
    with pytest.raises(ValueError, match="config must be a dataclass or JSON-able"):
        sw.cache_key({"rate": float("nan")}, square)


def test_cache_holds_no_pickle_and_never_runs_one(tmp_path):
    """A value.pkl planted in an entry (the old format) is never unpickled: the entry is recomputed and replaced."""
    import pickle

    key = sw.cache_key(Toy(x=4), square)
    planted = tmp_path / key
    planted.mkdir(parents=True)

    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "owned"),))

    (planted / "value.pkl").write_bytes(pickle.dumps(Boom()))
    res = sw.sweep([Toy(x=4)], square, cache_dir=tmp_path, progress=False, **KW)
    assert res.values[0]["y"] == 16 and not (tmp_path / "owned").exists()
    assert not list(tmp_path.rglob("*.pkl")) and (tmp_path / key / "value" / "value.json").exists()
    assert sw.read_cached(tmp_path, key) == (True, res.values[0])
