"""tcpmodels: analytical TCP models, fitted to real captures and checked against the papers.

Subpackages, one job each (see docs/ARCHITECTURE.md):

- :mod:`tcpmodels.models`      formula models (Mathis, PFTK, BDP, CUBIC, MPTCP LIA, heavy tails, Hurst)
- :mod:`tcpmodels.predict`     history-based throughput predictors (scikit-learn estimators)
- :mod:`tcpmodels.traces`      pcap/pcapng -> packet table -> flows and per-flow metrics
- :mod:`tcpmodels.testbed`     Linux network namespaces running the kernel's own TCP and MPTCP
- :mod:`tcpmodels.sim`         ns-3 scenarios (optional extra ``sim``)
- :mod:`tcpmodels.experiments` one campaign per paper -> dataset in ``data/``
- :mod:`tcpmodels.papers`      one module per paper: dataset -> tables, published values, verdicts
- :mod:`tcpmodels.teaching`    figures and widget panels of the teaching notebooks
- :mod:`tcpmodels.report`      executes the notebooks -> reports/index.html; ``tcpmodels init``
- :mod:`tcpmodels.analyze`     a report on any capture (``tcpmodels analyze``)

and what they build on: ``congestion``, ``stats``, ``datasets``, ``fit``, ``sweep``, ``records``, ``notebook``,
``topology`` (the layer contract, ``.importlinter``, says which may import which).
"""

__version__ = "0.1.0"
