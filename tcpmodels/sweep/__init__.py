"""Run many experiment configs on Dask, with an on-disk cache, a progress bar and no silent failures.

A *config* is a frozen dataclass (or a JSON-able dict); a *run function*
``fn(config, out_dir) -> value`` does one experiment, may write files into
``out_dir``, and returns plain data, DataFrames, numpy arrays or tcpmodels
dataclasses (e.g. a :class:`tcpmodels.sim.run.SimResult`): what
:mod:`tcpmodels.sweep.valuestore` stores without pickle. :func:`sweep` runs every
config whose result is not cached yet, on a ``distributed.LocalCluster`` (one worker per
core) or on the scheduler you name, and returns the values in input order.

Cache
    ``cache_dir/<key>/`` holds ``config.json``, ``out/`` (the run function's
    files) and ``value/`` (:func:`tcpmodels.sweep.valuestore.dump_value`: JSON, Parquet
    and .npy, never pickle, so a cache directory cannot carry code; an entry
    written by an older version as ``value.pkl`` is not read, and is recomputed).
    The key is the SHA-256 of the config's canonical JSON, the tcpmodels version, and the run function's code version
    (:func:`code_version`). An entry is written to a temporary directory and
    renamed into place only when the run succeeded, so an interrupted sweep
    resumes where it stopped and a failed config is retried next time.
Failures
    Every exception is collected with the config that raised it and its
    traceback (also written to ``cache_dir/failed/<key>.txt``). With
    ``on_failure="raise"`` (default) :class:`SweepError` lists them all after
    the other configs have finished and been cached.
Testbed
    A config with ``resources = {"testbed": 1}`` (attribute or dict key) runs
    under a cluster-wide ``distributed.Lock`` named after the worker's host,
    so only one testbed experiment runs per host at a time, however many
    workers that host has.

References
----------
.. [1] Dask.distributed documentation, "LocalCluster", "Futures", "Lock",
   https://distributed.dask.org/
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import inspect
import itertools
import json
import os
import pkgutil
import shutil
import socket
import sys
import textwrap
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import tcpmodels
from tcpmodels.sim.run import SimResult
from tcpmodels.sweep.valuestore import ValueStoreError, dump_value, load_value

__all__ = [
    "sweep",
    "grid",
    "cache_key",
    "code_version",
    "code_fingerprint",
    "canonical_json",
    "read_cached",
    "needs_testbed",
    "run_sim",
    "SweepResult",
    "SweepFailure",
    "SweepError",
]


def canonical_json(config: Any) -> str:
    """The JSON that names a config in the cache (sorted keys, no whitespace); a dataclass goes through
    :func:`tcpmodels.sim.config.config_to_dict`. Raises ``ValueError`` for what JSON cannot hold exactly.

    Parameters
    ----------
    config : dataclass or dict
        A sim config dataclass, or a JSON-able dict of finite numbers, strings, lists and dicts.

    Returns
    -------
    str
        Compact JSON with sorted keys.

    Raises
    ------
    ValueError
        If ``config`` holds NaN, an infinity or a value JSON cannot encode.
    """
    from tcpmodels.sim.config import config_to_dict

    data = config_to_dict(config) if dataclasses.is_dataclass(config) and not isinstance(config, type) else config
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"config must be a dataclass or JSON-able dict of finite numbers; got {config!r}") from exc


def code_version(fn: Callable) -> str:
    """Hash of ``fn``'s source, plus the sources of the modules it lists in ``fn.__code_deps__``.

    A run function whose behaviour depends on other code (e.g. the ns-3
    scenario builders) names those modules in ``__code_deps__`` so that
    editing them invalidates the cache.

    Parameters
    ----------
    fn : callable
        The run function; its ``__code_deps__`` (optional) holds module names or modules.
        A package listed there counts with every module in it.

    Returns
    -------
    str
        Hex SHA-256 digest (64 characters). Where ``fn``'s source is not available
        (a builtin, a lambda typed at the prompt), its qualified name is hashed instead.

    Raises
    ------
    ImportError
        If a module named in ``__code_deps__`` cannot be imported.
    """
    h = hashlib.sha256()
    try:
        h.update(code_fingerprint(fn).encode())
    except (OSError, TypeError):
        h.update(getattr(fn, "__qualname__", repr(fn)).encode())
    for dep in getattr(fn, "__code_deps__", ()):
        mod = sys.modules.get(dep) if isinstance(dep, str) else dep
        if mod is None:
            mod = importlib.import_module(dep)
        for part in _package_modules(mod):
            h.update(code_fingerprint(part).encode())
    return h.hexdigest()


def code_fingerprint(obj: Any) -> str:
    """What ``obj``'s code does, as text: its syntax tree without docstrings, comments or layout.

    Editing a docstring, a comment or the line wrapping of a run function therefore
    keeps its cache entries valid; changing any statement invalidates them.

    Parameters
    ----------
    obj : module, class or function
        Anything :func:`inspect.getsource` accepts.

    Returns
    -------
    str
        ``ast.dump`` of the parsed source with every docstring removed (no line numbers).

    Raises
    ------
    OSError, TypeError
        If the source of ``obj`` is not available (as :func:`inspect.getsource`).
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _package_modules(mod: Any) -> list[Any]:
    """``mod`` itself, and for a package every module in it (sorted by name), so a dependency split into a
    package still covers all of its code."""
    if not hasattr(mod, "__path__"):
        return [mod]
    names = sorted(m.name for m in pkgutil.walk_packages(mod.__path__, mod.__name__ + "."))
    return [mod] + [importlib.import_module(n) for n in names]


def cache_key(config: Any, fn: Callable) -> str:
    """SHA-256 over the config's canonical JSON, ``tcpmodels.__version__`` and :func:`code_version`.

    Parameters
    ----------
    config : dataclass or dict
        The config (see :func:`canonical_json`).
    fn : callable
        The run function (see :func:`code_version`).

    Returns
    -------
    str
        The first 32 hex digits of the digest: the name of the cache entry.

    Raises
    ------
    ValueError
        If ``config`` cannot be written as canonical JSON.
    """
    h = hashlib.sha256()
    for part in (canonical_json(config), tcpmodels.__version__, code_version(fn)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def needs_testbed(config: Any) -> bool:
    """True if the config declares the ``testbed`` resource.

    Parameters
    ----------
    config : dataclass or dict
        A config with an optional ``resources`` mapping (attribute or dict key).

    Returns
    -------
    bool
        Whether ``resources["testbed"]`` is present and truthy.
    """
    res = config.get("resources") if isinstance(config, dict) else getattr(config, "resources", None)
    return bool(res and res.get("testbed"))


def grid(base: Any, **axes: Sequence[Any]) -> list[Any]:
    """Every combination of the given field values applied to ``base`` (a dataclass).

    Parameters
    ----------
    base : dataclass
        The config every combination starts from.
    **axes : sequence
        Field name -> the values it takes; the last axis varies fastest.

    Returns
    -------
    list of dataclass
        ``dataclasses.replace(base, ...)`` for each element of the Cartesian product
        of the axes (``[base]`` for no axes).

    Raises
    ------
    TypeError
        If ``base`` is not a dataclass instance.
    ValueError
        If an axis is not a field of ``base``.

    Examples
    --------
    >>> from tcpmodels.sim.config import Dumbbell, Link, Sender
    >>> base = Dumbbell(senders=[Sender(access=Link(rate_bps=1e9, delay_s=0.001))],
    ...                 bottleneck=Link(rate_bps=1e7, delay_s=0.01))
    >>> len(grid(base, seed=[0, 1], loss_rate=[0.0, 0.01, 0.02]))
    6
    """
    if not dataclasses.is_dataclass(base) or isinstance(base, type):
        raise TypeError(f"base must be a dataclass instance; got {type(base).__name__}")
    names = {f.name for f in dataclasses.fields(base)}
    for k in axes:
        if k not in names:
            raise ValueError(f"{k!r} is not a field of {type(base).__name__}; fields are {sorted(names)}")
    keys = list(axes)
    return [dataclasses.replace(base, **dict(zip(keys, combo))) for combo in itertools.product(*axes.values())]


@dataclass(frozen=True, kw_only=True)
class SweepFailure:
    """One config that raised: its position, cache key, config, and the error."""

    index: int
    key: str
    config: Any
    error: str
    traceback: str

    def to_dict(self) -> dict:
        """The failure as a plain dict.

        Returns
        -------
        dict
            The fields, recursively through :func:`dataclasses.asdict`.
        """
        return dataclasses.asdict(self)


class SweepError(RuntimeError):
    """One or more configs failed; ``.failures`` lists them and ``.result`` holds the rest."""

    def __init__(self, failures: list[SweepFailure], result: "SweepResult"):
        self.failures = failures
        self.result = result
        lines = [f"{len(failures)} of {len(result.configs)} configs failed:"]
        for f in failures:
            lines.append(f"  [{f.index}] {canonical_json(f.config)[:300]}\n      {f.error}")
        super().__init__("\n".join(lines))


@dataclass(frozen=True, kw_only=True)
class SweepResult:
    """Values in input order (``None`` where the config failed) and the bookkeeping."""

    configs: list
    keys: list[str]
    values: list
    failures: list[SweepFailure]
    n_cached: int
    n_run: int
    cache_dir: str
    out_dirs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The result as a plain dict.

        Returns
        -------
        dict
            The fields, recursively through :func:`dataclasses.asdict` (dataclass
            configs and values become dicts too).
        """
        return dataclasses.asdict(self)

    @property
    def ok(self) -> bool:
        return not self.failures


def _entry_dir(cache_dir: Path, key: str) -> Path:
    return cache_dir / key


def read_cached(cache_dir: Path, key: str) -> tuple[bool, Any]:
    """``(True, value)`` of the cache entry ``key`` under ``cache_dir``, or ``(False, None)`` if absent or unreadable.

    Parameters
    ----------
    cache_dir : Path
        The sweep's cache directory.
    key : str
        The entry's name (:func:`cache_key`).

    Returns
    -------
    tuple of (bool, Any)
        Whether a value was read, and the value (``None`` if not). Unreadable means
        not a valid value directory, an I/O error, or a class that cannot be imported.
    """
    d = _entry_dir(cache_dir, key)
    try:
        return True, load_value(d / "value")
    except FileNotFoundError:
        return False, None
    except (ValueStoreError, OSError, ImportError):
        return False, None


def _in_dask_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


def _run_one(fn: Callable, config: Any, key: str, cache_dir: str) -> tuple[str, Any]:
    """Worker side: run, then move the finished entry into place. Returns ("ok", value) or ("error", (msg, tb))."""
    cache = Path(cache_dir)
    tmp = cache / f".tmp-{key}-{uuid.uuid4().hex[:8]}"
    final = _entry_dir(cache, key)
    try:
        (tmp / "out").mkdir(parents=True)
        (tmp / "config.json").write_text(canonical_json(config))

        def call() -> Any:
            return fn(config, str(tmp / "out"))

        if needs_testbed(config) and _in_dask_worker():
            from distributed import Lock

            with Lock(f"tcpmodels-testbed-{socket.gethostname()}"):
                value = call()
        else:
            value = call()
        value = _rebase_paths(value, str(tmp / "out"), str(final / "out"))
        dump_value(value, tmp / "value")
        if (final / "value").is_dir():  # another run of the same key finished first
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            if final.exists():  # an entry of the old format (value.pkl), never read: replace it
                shutil.rmtree(final)
            os.replace(tmp, final)
        return "ok", value
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        tb = traceback.format_exc()
        failed = cache / "failed"
        failed.mkdir(parents=True, exist_ok=True)
        (failed / f"{key}.txt").write_text(f"config: {canonical_json(config)}\n\n{tb}")
        shutil.rmtree(tmp, ignore_errors=True)
        return "error", (f"{type(exc).__name__}: {exc}", tb)


def _rebase_paths(value: Any, old: str, new: str) -> Any:
    """Point ``out_dir`` fields of a returned dataclass at the entry's final place."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and hasattr(value, "out_dir"):
        if isinstance(value.out_dir, str) and value.out_dir.startswith(old):
            return dataclasses.replace(value, out_dir=new + value.out_dir[len(old):])
    return value


def _loopback_only(processes: bool) -> dict:
    """LocalCluster arguments that keep every listening socket on 127.0.0.1: worker processes bind the host
    (127.0.0.1 by default); threads of this process (``processes=False``, inproc) would serve their HTTP
    endpoint on every interface unless given an address."""
    return {} if processes else {"worker_dashboard_address": "127.0.0.1:0"}


def _progress(total: int, enabled: bool, desc: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="run", file=sys.stderr)


def sweep(
    configs: Iterable[Any],
    fn: Callable[[Any, str], Any],
    *,
    cache_dir: str | os.PathLike,
    scheduler_address: str | None = None,
    client: Any = None,
    n_workers: int | None = None,
    processes: bool = True,
    progress: bool = True,
    on_failure: str = "raise",
    desc: str = "sweep",
    dashboard_address: str | None = "127.0.0.1:0",
) -> SweepResult:
    """Run ``fn(config, out_dir)`` for every config not yet cached; return all values in input order.

    Parameters
    ----------
    configs : iterable of dataclass or dict
        What to run (see :func:`grid`). Duplicates run once.
    fn : callable
        ``fn(config, out_dir) -> value``; importable at module level when
        workers are separate processes. ``fn.__code_deps__`` may list modules
        whose source is part of the cache key.
    cache_dir : path
        Where finished runs are kept (see the module docstring).
    scheduler_address : str, optional
        A running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``, to scale out.
    client : distributed.Client, optional
        Use this client instead of creating a cluster.
    n_workers : int, optional
        Workers of the local cluster; default one per core (``os.cpu_count()``),
        each with one thread.
    processes : bool
        Local workers as processes (default) or threads of this process.
    progress : bool
        Show a tqdm progress bar on stderr.
    on_failure : {"raise", "collect"}
        ``"raise"``: after every config has finished, raise :class:`SweepError`
        listing each failed config; ``"collect"``: return them in ``.failures``.
    desc : str
        Label of the progress bar.
    dashboard_address : str or None
        Local cluster only: where its Dask dashboard listens; default a free port of 127.0.0.1 (the
        dashboard has no authentication: give ``"0.0.0.0:8787"`` only on a trusted network); ``None``
        starts none. The scheduler and the workers listen on 127.0.0.1 only.

    Returns
    -------
    SweepResult
        The values in input order (``None`` for a failed config), the cache keys,
        failures, counts of cached and run configs, and each config's ``out`` directory.

    Raises
    ------
    SweepError
        With ``on_failure="raise"``, if any config failed (after the others finished).
    ValueError
        For an unknown ``on_failure``, ``n_workers`` < 1, or a config that cannot be
        written as canonical JSON.
    TypeError
        If ``fn`` is not callable.
    """
    if on_failure not in ("raise", "collect"):
        raise ValueError(f"on_failure must be 'raise' or 'collect'; got {on_failure!r}")
    if n_workers is not None and (not isinstance(n_workers, int) or n_workers < 1):
        raise ValueError(f"n_workers must be an integer >= 1; got {n_workers!r}")
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {fn!r}")
    configs = list(configs)
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    keys = [cache_key(c, fn) for c in configs]
    values: list[Any] = [None] * len(configs)
    done: dict[str, Any] = {}
    for k in dict.fromkeys(keys):
        hit, v = read_cached(cache, k)
        if hit:
            done[k] = v
    todo = [k for k in dict.fromkeys(keys) if k not in done]
    first_index = {}
    for i, k in enumerate(keys):
        first_index.setdefault(k, i)
    errors: dict[str, tuple[str, str]] = {}

    if todo:
        from distributed import Client, LocalCluster, as_completed

        own_client = own_cluster = None
        if client is None:
            if scheduler_address is not None:
                client = own_client = Client(scheduler_address)
            else:
                own_cluster = LocalCluster(
                    n_workers=n_workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=processes,
                    # a free port (8787 may be taken by another cluster) of the loopback interface only
                    dashboard_address=dashboard_address,
                    **_loopback_only(processes),
                )
                client = own_client = Client(own_cluster)
        try:
            futures = {}
            for k in todo:
                cfg = configs[first_index[k]]
                fut = client.submit(_run_one, fn, cfg, k, str(cache.resolve()), key=f"tcpmodels-{k}", pure=False)
                futures[fut] = k
            with _progress(len(configs), progress, desc) as bar:
                bar.update(len(configs) - sum(keys.count(k) for k in todo))
                for fut in as_completed(futures):
                    k = futures[fut]
                    try:
                        status, payload = fut.result()
                    except Exception as exc:  # noqa: BLE001 - e.g. a worker died
                        status, payload = "error", (f"{type(exc).__name__}: {exc}", traceback.format_exc())
                    if status == "ok":
                        done[k] = payload
                    else:
                        errors[k] = payload
                    bar.update(keys.count(k))
                    if errors:
                        bar.set_postfix(failed=len(errors))
        finally:
            if own_client is not None:
                own_client.close()
            if own_cluster is not None:
                own_cluster.close()

    failures = []
    for i, k in enumerate(keys):
        if k in done:
            values[i] = done[k]
        elif k in errors:
            msg, tb = errors[k]
            failures.append(SweepFailure(index=i, key=k, config=configs[i], error=msg, traceback=tb))
    result = SweepResult(
        configs=configs,
        keys=keys,
        values=values,
        failures=failures,
        n_cached=len(configs) - sum(keys.count(k) for k in todo),
        n_run=len(todo),
        cache_dir=str(cache),
        out_dirs=[str(_entry_dir(cache, k) / "out") for k in keys],
    )
    if failures:
        print(
            f"tcpmodels.sweep: {len(failures)} of {len(configs)} configs failed "
            f"(tracebacks in {cache / 'failed'})",
            file=sys.stderr,
        )
        if on_failure == "raise":
            raise SweepError(failures, result)
    return result


def run_sim(config: Any, out_dir: str) -> SimResult:
    """Run function for ns-3 configs: one fresh process per scenario (:func:`tcpmodels.sim.run.run_config`).

    Parameters
    ----------
    config : Dumbbell, Caterpillar or Multipath
        The scenario (:mod:`tcpmodels.sim.config`).
    out_dir : str
        Where the simulation writes its files (created if missing).

    Returns
    -------
    SimResult
        The simulation's tables.
    """
    from tcpmodels.sim.run import run_config

    return run_config(config, out_dir)


run_sim.__code_deps__ = (
    "tcpmodels.sim.config",
    "tcpmodels.sim.blocks",
    "tcpmodels.sim.scenarios",
    "tcpmodels.sim.run",
    "tcpmodels.sim._ns3",
    "tcpmodels.sim.cc",
)
