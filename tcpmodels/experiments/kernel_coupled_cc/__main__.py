"""``python -m tcpmodels.experiments.kernel_coupled_cc`` (see :mod:`tcpmodels.experiments.kernel_coupled_cc.cli`)."""

from tcpmodels.experiments.kernel_coupled_cc.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
