"""A report on any capture: ``tcpmodels analyze``, and the tables and figures it shows.

- :mod:`tcpmodels.analyze.capture`  read a capture; its connection table, selected flows, capture point, model
  predictions, figures and notes; :func:`~tcpmodels.analyze.capture.analyze`, the executed report notebook.
- :mod:`tcpmodels.analyze.cli`  the ``tcpmodels analyze`` command line; it imports ``capture`` (pandas,
  matplotlib, the fits) only when the command runs, so ``tcpmodels --help`` stays light (the ``analyze-inside``
  contract of ``.importlinter`` keeps ``capture`` from importing ``cli``).

The public names of ``capture`` are reachable from here too, imported on first use (PEP 562), so that
``from tcpmodels import analyze; analyze.connection_table(...)`` (the report notebook's form) keeps working
without making ``import tcpmodels.analyze.cli`` import pandas.
"""

from importlib import import_module


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in ("capture", "cli"):  # the submodules: reaching cli must not import capture (pandas)
        return import_module(f".{name}", __name__)
    capture = import_module(".capture", __name__)
    if name not in capture.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (nor has tcpmodels.analyze.capture)")
    value = getattr(capture, name)
    globals()[name] = value  # next time without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(import_module(".capture", __name__).__all__))
