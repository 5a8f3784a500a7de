"""tcpmodels: analytical TCP models, fitted to real captures and checked against the papers.

Subpackages, one job each (see ARCHITECTURE in the README):

- :mod:`tcpmodels.models`      formula models (Mathis, PFTK, BDP, CUBIC, MPTCP LIA, heavy tails, Hurst)
- :mod:`tcpmodels.predict`     history-based throughput predictors (scikit-learn estimators)
- :mod:`tcpmodels.traces`      pcap/pcapng -> packet table -> flows and per-flow metrics
- :mod:`tcpmodels.testbed`     Linux network namespaces running the kernel's own TCP and MPTCP
- :mod:`tcpmodels.sim`         ns-3 scenarios (optional extra ``sim``)
- :mod:`tcpmodels.experiments` one campaign per paper -> dataset in ``data/``
- :mod:`tcpmodels.papers`      one module per paper: dataset -> tables, published values, verdicts
"""

__version__ = "0.1.0"
